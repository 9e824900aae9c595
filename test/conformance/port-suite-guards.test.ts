// What keeps the two-factor, passkey and mailer suites safe to point at a port: they refuse users they did not make, say when `supports` claimed a method the port lacks, let concurrent calls finish before `destroy`, and tag the default recipient per run.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import {
  mailerRules, mailerSuite, passkeyPortRules, passkeyPortSuite, twoFactorPortRules, twoFactorPortSuite,
  type MailerFixture, type PasskeyPortFixture, type TestFunction, type TwoFactorPortFixture
} from '../../lib/conformance.js'
import type { Mailer, MailMessage, PasskeyUse, StoredPasskey, TwoFactorMethod, TwoFactorPort } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore } from '../../lib/testing.js'
import { runSuite } from '../helpers/conformance.js'

// ---- users the suites did not make

/**
 * A two-factor port on a database with real users: the method may be kept
 * on the user's record (`methodOf` reads it there), and every write the
 * suite makes is logged, as it must make none.
 */
class LoggedWrites extends MemoryTwoFactorStore {
  constructor (readonly writes: string[]) {
    super()
  }

  override async methodOf (userId: number, user?: { method?: TwoFactorMethod }): Promise<TwoFactorMethod | null> {
    return user?.method ?? await super.methodOf(userId)
  }

  override async setTotpSecret (userId: number, secret: string): Promise<void> {
    this.writes.push('setTotpSecret')
    await super.setTotpSecret(userId, secret)
  }

  override async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    this.writes.push('replaceBackupCodes')
    await super.replaceBackupCodes(userId, codeHashes)
  }

  override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    this.writes.push('consumeBackupCode')
    return await super.consumeBackupCode(userId, codeHash, claim)
  }

  override async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
    this.writes.push('setMethod')
    await super.setMethod(userId, method)
  }
}

/** A real user `user` finds: what they hold (put there past the log) and how the refusal names it. */
interface RealUser {
  what: string
  named: string
  find: (port: MemoryTwoFactorStore, userId: number) => Promise<{ id: number, method?: TwoFactorMethod }>
}

const REAL_USERS: RealUser[] = [
  {
    what: 'two-factor on, in the port',
    named: 'the method email',
    find: async (port, userId) => {
      port.enable(userId, 'email')
      return { id: userId }
    }
  },
  { what: 'two-factor on, on the user\'s record', named: 'the method passkey', find: async (_port, userId) => ({ id: userId, method: 'passkey' }) },
  {
    what: 'a TOTP secret, two-factor off',
    named: 'a TOTP secret',
    find: async (port, userId) => {
      await MemoryTwoFactorStore.prototype.setTotpSecret.call(port, userId, 'JBSWY3DPEHPK3PXP')
      return { id: userId }
    }
  },
  {
    what: 'backup codes left, two-factor off',
    named: 'backup codes \\(2 unused\\)',
    find: async (port, userId) => {
      await MemoryTwoFactorStore.prototype.replaceBackupCodes.call(port, userId, ['first-hash', 'second-hash'])
      return { id: userId }
    }
  }
]

t.test('the two-factor suite refuses a user who has two-factor state, before writing anything', async (t) => {
  for (const { what, named, find } of REAL_USERS) {
    const writes: string[] = []
    const run = await runSuite(async test => {
      await twoFactorPortSuite({
        test,
        create: async () => {
          const port = new LoggedWrites(writes)
          return { port, user: async (userId: number) => await find(port, userId) }
        }
      })
    })
    t.strictSame(run.passed, [], `${what}: no rule passes`)
    t.equal(run.failed.size, twoFactorPortRules.length, `${what}: every rule fails`)
    for (const error of run.failed.values()) {
      t.match(error.message, new RegExp(`seen: user \\d+ already has two-factor state \\(${named}\\): the suite only writes to users it made`), `${what}: the refusal`)
    }
    t.strictSame(writes, [], `${what}: nothing written`)
  }
})

/** A credential a real user registered before the suite came. */
function registered (userId: number): StoredPasskey {
  return {
    id: `real-${userId}`,
    userId,
    publicKey: 'pQECAyYgASFYIA',
    counter: 0,
    transports: ['internal'],
    deviceType: 'multiDevice',
    backupEligible: true,
    backedUp: true,
    aaguid: '00000000-0000-0000-0000-000000000000',
    name: 'Their phone',
    createdAt: new Date('2024-01-01T00:00:00.000Z'),
    lastUsedAt: null
  }
}

t.test('the passkey suite refuses a user who has credentials, before writing anything', async (t) => {
  const writes: string[] = []
  const run = await runSuite(async test => {
    await passkeyPortSuite({
      test,
      create: async () => {
        const port = new class extends MemoryPasskeyStore {
          override async create (passkey: StoredPasskey): Promise<boolean> {
            writes.push('create')
            return await super.create(passkey)
          }

          override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
            writes.push('recordUse')
            await super.recordUse(credentialId, use)
          }

          override async rename (userId: number, credentialId: string, name: string): Promise<boolean> {
            writes.push('rename')
            return await super.rename(userId, credentialId, name)
          }

          override async delete (userId: number, credentialId: string): Promise<boolean> {
            writes.push('delete')
            return await super.delete(userId, credentialId)
          }
        }()
        // `user` finds an existing user, who registered a passkey before
        return { port, user: async (userId: number) => { await MemoryPasskeyStore.prototype.create.call(port, registered(userId)) } }
      }
    })
  })
  t.strictSame(run.passed, [], 'no rule passes')
  t.equal(run.failed.size, passkeyPortRules.length, 'every rule fails')
  for (const error of run.failed.values()) t.match(error.message, /seen: user \d+ already has credentials \(1\): the suite only writes to users it made/)
  t.strictSame(writes, [], 'nothing written')
})

// ---- a `supports` that claims too much

/** MemoryTwoFactorStore's required methods only. */
function withoutOptional (): TwoFactorPort {
  const full = new MemoryTwoFactorStore()
  return {
    methodOf: full.methodOf.bind(full),
    getTotpSecret: full.getTotpSecret.bind(full),
    setTotpSecret: full.setTotpSecret.bind(full),
    consumeBackupCode: full.consumeBackupCode.bind(full),
    replaceBackupCodes: full.replaceBackupCodes.bind(full)
  }
}

t.test('a rule whose capability `supports` claimed but the port lacks fails, naming the method', async (t) => {
  const twoFactor = await runSuite(async test => {
    await twoFactorPortSuite({ test, supports: { setMethod: true, countBackupCodes: true }, create: async () => ({ port: withoutOptional(), user: async (id: number) => ({ id }) }) })
  })
  const needing = twoFactorPortRules.filter(rule => rule.needs !== undefined)
  t.ok(needing.length > 0)
  t.strictSame([...twoFactor.failed.keys()], needing.map(rule => `TwoFactorPort: ${rule.name}`), 'the two-factor rules that need an optional method fail, alone')
  for (const rule of needing) {
    t.match(twoFactor.failed.get(`TwoFactorPort: ${rule.name}`)?.message, `seen: the two-factor port has no ${rule.needs?.[0]}, though \`supports\` says it provides it`, rule.name)
  }
  const mailer = await runSuite(async test => {
    await mailerSuite({ test, supports: { refuse: true }, create: async () => ({ ...goodMailbox(), refuse: undefined }) })
  })
  const refusing = mailerRules.filter(rule => rule.needs?.includes('refuse') === true)
  t.strictSame([...mailer.failed.keys()], refusing.map(rule => `Mailer: ${rule.name}`), 'the mailer rules that need refuse fail, alone')
  for (const error of mailer.failed.values()) t.match(error.message, 'seen: the fixture has no refuse, though `supports` says it provides it')
})

// ---- concurrent calls all settle before `destroy`

/**
 * Counts the calls in flight. When calls overlap, the second rejects at
 * once (a connection reset) while every other takes a few milliseconds: a
 * rule that gave up at the first rejection would leave them running.
 */
class Overlaps {
  inFlight = 0
  #rejected = false

  async call<T> (body: () => Promise<T>): Promise<T> {
    const overlapping = this.inFlight > 0
    this.inFlight++
    try {
      if (overlapping && !this.#rejected) {
        this.#rejected = true
        throw new Error('connection reset')
      }
      await sleep(5)
      return await body()
    } finally {
      this.inFlight--
    }
  }
}

/** A port, and the calls of it that `Overlaps` watches. */
interface Watched<Made> {
  made: Made
  overlaps: Overlaps
}

/** Runs a suite on ports from `make`, answering the failed rules and how many calls were in flight at each `destroy`. */
async function inFlightAtDestroy<Made extends object> (
  suite: (options: { test: TestFunction, create: () => Promise<Made>, destroy: (made: Made) => void }) => Promise<void>,
  make: () => Watched<Made>
): Promise<{ failed: string[], inFlight: number[] }> {
  const watched = new WeakMap<object, Overlaps>()
  const inFlight: number[] = []
  const run = await runSuite(async test => {
    await suite({
      test,
      create: async () => {
        const { made, overlaps } = make()
        watched.set(made, overlaps)
        return made
      },
      destroy: (made) => { inFlight.push(watched.get(made)?.inFlight ?? -1) }
    })
  })
  return { failed: [...run.failed.keys()], inFlight }
}

t.test('a concurrency rule that meets a rejection waits for the other calls before it fails', async (t) => {
  const twoFactor = await inFlightAtDestroy<TwoFactorPortFixture>(twoFactorPortSuite, () => {
    const overlaps = new Overlaps()
    const port = new class extends MemoryTwoFactorStore {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        return await overlaps.call(async () => await super.consumeBackupCode(userId, codeHash, claim))
      }
    }()
    return { made: { port, user: async (id: number) => ({ id }) }, overlaps }
  })
  t.strictSame(twoFactor.failed, ['TwoFactorPort: of concurrent consumes of one code exactly one resolves true'])
  t.ok(twoFactor.inFlight.every(count => count === 0), 'two-factor: no call in flight at destroy')
  const passkeys = await inFlightAtDestroy<PasskeyPortFixture>(passkeyPortSuite, () => {
    const overlaps = new Overlaps()
    const port = new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        return await overlaps.call(async () => await super.create(passkey))
      }

      override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
        await overlaps.call(async () => { await super.recordUse(credentialId, use) })
      }
    }()
    return { made: { port }, overlaps }
  })
  t.strictSame(passkeys.failed, ['PasskeyPort: of concurrent creates of one id exactly one is stored', 'PasskeyPort: of concurrent uses the greatest counter stays'])
  t.ok(passkeys.inFlight.every(count => count === 0), 'passkeys: no call in flight at destroy')
  const mailers = await inFlightAtDestroy<MailerFixture>(mailerSuite, () => {
    const overlaps = new Overlaps()
    const fixture = goodMailbox()
    const good = fixture.mailer
    return { made: { ...fixture, mailer: { send: async (message: MailMessage) => { await overlaps.call(async () => { await good.send(message) }) } } }, overlaps }
  })
  t.strictSame(mailers.failed, ['Mailer: concurrent sends each arrive once'])
  t.ok(mailers.inFlight.every(count => count === 0), 'mailer: no call in flight at destroy')
})

// ---- the mailer's default recipient

/** A good mailer and its mailbox, which can refuse the next message. */
function goodMailbox (): Required<MailerFixture> {
  const messages: MailMessage[] = []
  let refusals = 0
  const mailer: Mailer = {
    async send (message) {
      await sleep(0)
      if (refusals > 0) {
        refusals--
        throw new Error('550 mailbox unavailable')
      }
      messages.push(structuredClone(message))
    }
  }
  return { mailer, delivered: async () => messages, refuse: () => { refusals++ } }
}

t.test('the default recipient has a +tag of its own on every run', async (t) => {
  const runs: string[][] = []
  for (let n = 0; n < 2; n++) {
    const boxes: MailerFixture[] = []
    const run = await runSuite(async test => {
      await mailerSuite({
        test,
        create: async () => {
          const box = goodMailbox()
          boxes.push(box)
          return box
        }
      })
    })
    t.strictSame([...run.failed.keys()], [], 'every rule passes')
    runs.push([...new Set((await Promise.all(boxes.map(async box => await box.delivered()))).flat().map(message => message.to))])
  }
  const [first, second] = runs as [string[], string[]]
  t.equal(first.length, 1, 'one recipient in a run')
  t.match(first[0], /^jwt-login-conformance\+[0-9a-f]{8}@example\.com$/)
  t.equal(second.length, 1, 'one recipient in the next run')
  t.not(second[0], first[0], 'another tag on the next run')
})
