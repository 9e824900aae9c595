// Issue 34: registrations wait for a hash in their own queue: 80 of them waiting never make a sign-in answer 503 / 228; past their own bound they are refused themselves.
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import type { NewUser } from '../../lib/adapters/users.js'
import { processPasswordWork } from '../../lib/services/password-work.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorOf, login, PREFIX } from '../helpers/http.js'

/** Memory users whose creations wait for the test while `hold` is set. */
class HeldUsers extends MemoryUserAdapter {
  creations = 0
  hold: Promise<void> | null = null

  override async createUser (input: NewUser): Promise<MemoryUser> {
    this.creations++
    if (this.hold !== null) await this.hold
    return await super.createUser(input)
  }
}

/** Waits (a few event-loop turns at most) until `condition` holds. */
async function until (condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 5000; turn++) {
    if (condition()) return
    await new Promise(resolve => setImmediate(resolve))
  }
  throw new Error(`never happened: ${what}`)
}

async function heldApp (passwordHashing: Record<string, number>): Promise<{ app: Awaited<ReturnType<typeof buildApp>>['app'], users: HeldUsers, release: () => void }> {
  const users = new HeldUsers()
  await users.addUser(ALICE)
  let release!: () => void
  users.hold = new Promise(resolve => { release = resolve })
  const { app } = await buildApp({
    passwordHashing,
    users: { register: { enabled: true, perIp: { max: 1000 } } },
    limits: { loginPerIp: { max: 1000 }, loginPerAccount: { max: 1000 }, signInsPerAccount: { max: 1000 } }
  }, { users })
  return { app, users, release: () => { users.hold = null; release() } }
}

const register = async (app: Awaited<ReturnType<typeof buildApp>>['app'], i: number): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: { email: `new${i}@example.com`, password: `a long enough password ${i}` } })

t.test('80 registrations waiting for a hash and 10 sign-ins (the sign-ins\' bound): no sign-in is refused, and every one goes through', async (t) => {
  const { app, users, release } = await heldApp({ concurrency: 1, maxQueue: 10, maxRegistrationQueue: 100 })
  t.teardown(() => app.close())
  const registrations = Array.from({ length: 80 }, async (_, i) => await register(app, i))
  await until(() => users.creations === 1 && processPasswordWork.waiting === 79, 'one registration holds the slot, 79 wait')
  let early = 0
  const signIns = Array.from({ length: 10 }, async () => { const res = await login(app); early++; return res })
  // each sign-in either queued or was answered at once (refused)
  await until(() => processPasswordWork.waiting - 79 + early === 10, 'the ten sign-ins queued or answered')
  t.equal(early, 0, 'none was answered before a slot was free')
  release()
  const answered = await Promise.all(signIns)
  t.same(answered.map(errorOf), answered.map(() => [200, undefined]), 'no sign-in answered 503 / 228')
  t.same((await Promise.all(registrations)).map(res => res.statusCode), registrations.map(() => 200), 'every registration went through')
  t.same([processPasswordWork.running, processPasswordWork.waiting], [0, 0])
})

t.test('a registration that finds passwordHashing.maxRegistrationQueue waiting answers 503 / 228 with Retry-After and creates no one; sign-ins still pass', async (t) => {
  const { app, users, release } = await heldApp({ concurrency: 1, maxQueue: 1, maxRegistrationQueue: 1 })
  t.teardown(() => app.close())
  const first = register(app, 1)
  await until(() => users.creations === 1, 'the first registration holds the slot')
  const second = register(app, 2)
  await until(() => processPasswordWork.waiting === 1, 'the second waits')
  const refused = await register(app, 3)
  t.same(errorOf(refused), [503, 228])
  t.equal(refused.headers['retry-after'], '1')
  const signIn = login(app)
  await until(() => processPasswordWork.waiting === 2, 'a sign-in queues beside the full new passwords\' queue')
  release()
  t.same([(await first).statusCode, (await second).statusCode, (await signIn).statusCode], [200, 200, 200])
  t.equal(await users.findByEmail('new3@example.com'), null, 'the refused registration created no one')
  t.equal((await register(app, 3)).statusCode, 200, 'a retry goes through')
})
