import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { generateBackupCodes, MemoryStore, type StateStore } from '../../lib/index.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { Faults, faultyStore, measure, ruledStore } from '../helpers/faults.js'
import { redisStore } from '../helpers/redis-store.js'
import { buildTwoFactorApp, PREFIX, type TwoFactorApp } from '../helpers/two-factor.js'

/** How the next calls of `consumeBackupCode` fail: before the host deletes anything, or after it committed the delete. */
type HostFailure = 'before-delete' | 'after-delete'

/** A host whose connection may drop around its UPDATE: the failures queued are used one per call. */
class DroppingPort extends MemoryTwoFactorStore {
  readonly failures: HostFailure[] = []
  asked = 0

  override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    this.asked++
    const failure = this.failures.shift()
    if (failure === 'before-delete') {
      throw new Error('connection reset before the UPDATE was sent')
    }
    const deleted = await super.consumeBackupCode(userId, codeHash, claim)
    if (failure === 'after-delete') {
      throw new Error('connection reset after COMMIT')
    }
    return deleted
  }
}

const backends: Array<{ name: string, make: (t: Test) => Promise<StateStore> }> = [
  {
    name: 'memory',
    make: async (t) => {
      const store = new MemoryStore()
      t.teardown(async () => { await store.close() })
      return store
    }
  },
  { name: 'redis', make: async (t) => redisStore(t, '2fa-backup-retry').store }
]

interface Rig extends TwoFactorApp {
  port: DroppingPort
  codes: string[]
  validate: (jwt: string) => Promise<LightMyRequestResponse>
}

/** A host that ignores the claim (deletes the code, as the port's contract before it took one). */
class ForgetfulPort extends DroppingPort {
  readonly #codes = new Map<number, Set<string>>()
  override async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    await super.replaceBackupCodes(userId, codeHashes)
    this.#codes.set(userId, new Set(codeHashes))
  }

  override async consumeBackupCode (userId: number, codeHash: string): Promise<boolean> {
    const failure = this.failures.shift()
    if (failure === 'before-delete') throw new Error('connection reset before the DELETE was sent')
    const deleted = this.#codes.get(userId)?.delete(codeHash) ?? false
    if (failure === 'after-delete') throw new Error('connection reset after COMMIT')
    return deleted
  }
}

/** Bob with backup codes as his method, on a host whose port is a DroppingPort. */
async function rig (t: Test, store: StateStore, port: DroppingPort = new DroppingPort()): Promise<Rig> {
  const built = await buildTwoFactorApp({ plugin: { store, twoFactor: { port } } })
  t.teardown(() => built.app.close())
  port.enable(built.bobId, 'backup_codes')
  const codes = await built.app.jwtLogin.twoFactor?.regenerateBackupCodes(built.bobId) as string[]
  const validate = async (jwt: string): Promise<LightMyRequestResponse> => await built.app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: jwt } })
  return { ...built, port, codes, validate }
}

function answer (res: LightMyRequestResponse): { status: number, errorCode?: number } {
  const body = res.json()
  return body.success === true ? { status: res.statusCode } : { status: res.statusCode, errorCode: body.data.errorCode }
}

const UNAVAILABLE = { status: 503, errorCode: 201 }
const WRONG = { status: 401, errorCode: 109 }
const CLOSED = { status: 401, errorCode: 107 }

for (const backend of backends) {
  t.test(`${backend.name}: defect 8 — a host that deletes the code and then throws: the retry of the same challenge signs in`, async (t) => {
    const { interim, submit, port, bobId, codes, validate } = await rig(t, await backend.make(t))
    for (let round = 0; round < 5; round++) {
      const code = codes[round] as string
      const token = await interim()
      port.failures.push('after-delete')
      t.same(answer(await submit({ JWT: token, code })), UNAVAILABLE, `round ${round}: the host's failure answers 503 / 201`)
      t.equal(port.backupCodesLeft(bobId), 9 - round, 'the host had spent the code')

      t.same(answer(await submit({ JWT: await interim(), code })), WRONG, 'a new sign-in presenting the code meanwhile is refused: the host keeps who spent it')

      const retry = await submit({ JWT: token, code })
      t.equal(retry.statusCode, 200, 'the same interim token and code sign in')
      t.equal((await validate(retry.json().data.jwt as string)).statusCode, 200, 'with a final token that validates')

      t.same(answer(await submit({ JWT: await interim(), code })), WRONG, 'the code is spent for every later sign-in')
      t.same(answer(await submit({ JWT: token, code })), CLOSED, 'and the challenge is used')
    }
    t.equal(port.backupCodesLeft(bobId), 5)
  })

  t.test(`${backend.name}: a host that throws before deleting, twice: the third try deletes the code and signs in`, async (t) => {
    const { interim, submit, port, bobId, codes } = await rig(t, await backend.make(t))
    const token = await interim()
    port.failures.push('before-delete', 'before-delete')
    t.same(answer(await submit({ JWT: token, code: codes[0] })), UNAVAILABLE)
    t.same(answer(await submit({ JWT: token, code: codes[0] })), UNAVAILABLE, 'the retry asks the host again, and it throws again')
    t.equal(port.backupCodesLeft(bobId), 10, 'nothing was deleted yet')
    t.equal((await submit({ JWT: token, code: codes[0] })).statusCode, 200)
    t.equal(port.backupCodesLeft(bobId), 9)
    t.equal(port.asked, 3)
  })

  t.test(`${backend.name}: a wrong code whose claim lost its answer before the host was asked is refused on the retry`, async (t) => {
    const faults = new Faults()
    const { interim, submit, port } = await rig(t, faultyStore(await backend.make(t), faults))
    const wrong = generateBackupCodes(1).codes[0] as string
    // where the claim is written in the second step: measured on a challenge of its own
    const probe = await interim()
    const { result, calls } = await measure(faults, async () => await submit({ JWT: probe, code: wrong }))
    t.same(answer(result), WRONG)
    const claim = calls.find(c => c.method === 'compareAndSet' && c.key.startsWith('2fa:backup-claim:'))
    if (claim === undefined) throw new Error(`no claim among the calls:\n${faults.describe()}`)

    for (const mode of ['after', 'before'] as const) {
      const token = await interim()
      const asked = port.asked
      faults.arm({ k: claim.n, mode })
      t.same(answer(await submit({ JWT: token, code: wrong })), UNAVAILABLE, `${mode}: the claim's write fails`)
      t.equal(faults.fired?.method, 'compareAndSet')
      faults.disarm()
      t.equal(port.asked, asked, 'the host was not asked')
      t.same(answer(await submit({ JWT: token, code: wrong })), WRONG, `${mode}: the retry is refused`)
    }
  })

  t.test(`${backend.name}: a host that throws for a code it never had: the retry is a wrong code`, async (t) => {
    const { interim, submit, port } = await rig(t, await backend.make(t))
    const token = await interim()
    port.failures.push('before-delete')
    const never = generateBackupCodes(1).codes[0] as string
    t.same(answer(await submit({ JWT: token, code: never })), UNAVAILABLE)
    t.same(answer(await submit({ JWT: token, code: never })), WRONG, 'no outage of the host turns a wrong code into a right one')
  })

  t.test(`${backend.name}: a port that ignores the claim: after a commit and a throw the code is lost, a wrong one never passes`, async (t) => {
    const { interim, submit, port, codes } = await rig(t, await backend.make(t), new ForgetfulPort())
    const token = await interim()
    port.failures.push('after-delete')
    t.same(answer(await submit({ JWT: token, code: codes[0] })), UNAVAILABLE)
    t.same(answer(await submit({ JWT: token, code: codes[0] })), WRONG, 'fails closed: the code the host deleted is lost')
    port.failures.push('before-delete')
    const never = generateBackupCodes(1).codes[0] as string
    t.same(answer(await submit({ JWT: token, code: never })), UNAVAILABLE)
    t.same(answer(await submit({ JWT: token, code: never })), WRONG)
    t.equal((await submit({ JWT: token, code: codes[1] })).statusCode, 200, 'another code signs in')
  })

  t.test(`${backend.name}: a claim that cannot be deleted once the host answered: the answer stands`, async (t) => {
    const store = ruledStore(await backend.make(t))
    const { interim, submit, bobId, port, codes } = await rig(t, store)
    store.rule = (method, key) => method === 'delete' && key.startsWith('2fa:backup-claim:')
    t.equal((await submit({ JWT: await interim(), code: codes[0] })).statusCode, 200)
    t.same(answer(await submit({ JWT: await interim(), code: generateBackupCodes(1).codes[0] })), WRONG)
    t.equal(port.backupCodesLeft(bobId), 9)
  })
}
