// The published fault helpers of fastify-jwt-login/conformance: a stalled call, the plan's checks, and the sweep an author runs over their own port with the plugin.
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { Faults, faultyPort, InjectedFault, sweepFaults, type SweepOutcome } from '../../lib/conformance.js'
import { ConsoleMailer, MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET } from '../helpers/app.js'

t.test('stall: the call waits until release, disarm or its time, then runs', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser({ login: 'sam', email: 'sam@example.com', password: 'a long enough password' })
  const port = faultyPort(users)
  const { faults } = port

  faults.arm({ k: 1, mode: 'stall' })
  let answered = false
  const stalled = port.findByLogin('sam').then((user) => { answered = true; return user })
  await sleep(20)
  t.equal(answered, false, 'held')
  t.same(faults.fired, { n: 1, method: 'findByLogin', key: 'sam' })
  faults.release()
  t.equal((await stalled)?.user_login, 'sam', 'released, it runs and answers')

  faults.arm({ k: 1, mode: 'stall' })
  const byDisarm = port.findByEmail('sam@example.com')
  await sleep(5)
  t.equal(faults.disarm(), 1)
  t.equal((await byDisarm)?.user_login, 'sam', 'disarm lets it go')

  faults.arm({ k: 2, mode: 'stall', stallMs: 30 })
  const started = Date.now()
  t.equal(await port.findById(999), null, 'the first call is not the planned one')
  t.equal((await port.findByLogin('sam'))?.user_login, 'sam')
  t.ok(Date.now() - started >= 25, 'the second waited its stallMs')

  faults.arm({ k: 1, mode: 'stall' })
  const rearmed = port.findByLogin('sam')
  faults.arm(null)
  t.equal((await rearmed)?.user_login, 'sam', 'arming again releases what the last plan held')
  faults.disarm()
})

t.test('arm refuses a call that is not counted from 1; a mail call is shown by its recipient only', async (t) => {
  const faults = new Faults()
  t.throws(() => { faults.arm({ k: 0, mode: 'before' }) }, { message: 'the call to fail is counted from 1' })
  t.throws(() => { faults.arm({ k: 1.5, mode: 'before' }) }, TypeError)
  const mailer = faultyPort(new ConsoleMailer(() => {}), faults)
  faults.arm({ k: 1, mode: 'before' })
  const refused = await mailer.send({ to: 'ann@example.com', subject: 'Your code', text: 'secret 123456' }).catch((error: unknown) => error)
  t.type(refused, InjectedFault)
  t.equal((refused as InjectedFault).message, 'injected fault (before) at call 1: send to=ann@example.com')
  t.notMatch(faults.describe(), '123456', 'never the message')
  faults.disarm()
})

t.test('sweepFaults: a sign-in through the plugin over an author\'s adapter, with its k-th call failing, before and after it runs', async (t) => {
  const faults = new Faults()
  let users = new MemoryUserAdapter()
  const app = Fastify()
  t.teardown(() => app.close())
  // the plugin sees the wrapper; the sweep's reset puts a fresh adapter behind it
  const adapter = faultyPort({
    findByEmail: async (email: string) => await users.findByEmail(email),
    findByLogin: async (login: string) => await users.findByLogin(login),
    findById: async (id: number) => await users.findById(id),
    verifyPassword: async (user: never, password: string) => await users.verifyPassword(user, password),
    toPublicUser: (user: never) => users.toPublicUser(user)
  }, faults)
  await app.register(jwtLogin, { users: adapter, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  const signIn = async (): Promise<{ status: number, code?: number }> => {
    const reply = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: 'ann@example.com', password: 'a long enough password' } })
    return { status: reply.statusCode, code: reply.json().data?.errorCode }
  }
  const seen: Array<SweepOutcome<{ status: number, code?: number }>> = []
  const outcomes = await sweepFaults({
    faults,
    reset: async () => {
      users = new MemoryUserAdapter()
      await users.addUser({ login: 'ann', email: 'ann@example.com', password: 'a long enough password' })
    },
    run: signIn,
    check: async (outcome) => {
      seen.push(outcome)
      t.ok(outcome.fired !== null, `k=${outcome.plan.k} ${outcome.plan.mode}: the planned call was made\n${outcome.calls}`)
      t.same(outcome.result, { status: 503, code: 201 }, `k=${outcome.plan.k} ${outcome.plan.mode}: 503 / 201, never a 500`)
      t.same(await signIn(), { status: 200, code: undefined }, 'and the next sign-in works')
    }
  })
  t.equal(outcomes.length, seen.length)
  t.ok(outcomes.length >= 4, `${outcomes.length / 2} calls, each failed before and after`)
  t.same([...new Set(outcomes.map(outcome => outcome.plan.mode))], ['before', 'after'])
  t.equal(faults.armed, false, 'disarmed at the end')
})

t.test('sweepFaults: a run that throws is an outcome; modes and the missing reset are the caller\'s', async (t) => {
  const faults = new Faults()
  const port = faultyPort({ read: async () => 'value' }, faults)
  const outcomes = await sweepFaults({ faults, modes: ['before'], run: async () => await port.read(), check: () => {} })
  t.equal(outcomes.length, 1)
  t.type(outcomes[0]?.error, InjectedFault)
  t.equal(outcomes[0]?.result, undefined)
  t.match(outcomes[0]?.calls, '1 → read:  <= fault')
})
