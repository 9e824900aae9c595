// The published fault helpers of fastify-jwt-login/conformance: a stalled call, the plan's checks, and the sweep an author runs over their own port with the plugin.
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { Faults, faultyPort, InjectedFault, StalledRunError, sweepFaults, type SweepOutcome } from '../../lib/conformance.js'
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
  const any = faultyPort({ take: async (value: unknown) => value }, faults)
  faults.arm()
  await any.take({ id: 'cred-1' })
  await any.take(true)
  t.equal(faults.describe(), '1 → take:object\n2 → take:boolean', 'another argument is shown by its type only')
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

t.test('sweepFaults with stall: needs stallMs; the stalled call is held until check has judged the run; an action without a deadline is told so', async (t) => {
  const faults = new Faults()
  const world: string[] = []
  const port = faultyPort({ write: async (value: string) => { world.push(value) } }, faults)
  await t.rejects(sweepFaults({ faults, modes: ['stall'], run: async () => {}, check: () => {} }), { name: 'TypeError', message: /needs stallMs/ })
  await t.rejects(sweepFaults({ faults, modes: ['stall'], stallMs: 0, run: async () => {}, check: () => {} }), TypeError)

  // an action with its own deadline of 20 ms: it gives up, the late write lands only after check
  const withDeadline = async (): Promise<string> => await Promise.race([port.write('late').then(() => 'written'), sleep(20).then(() => 'gave up')])
  const judged: string[][] = []
  const outcomes = await sweepFaults({
    faults,
    modes: ['stall'],
    stallMs: 1000,
    reset: async () => { world.length = 0 },
    run: withDeadline,
    check: ({ result }) => { judged.push([result as string, ...world]) }
  })
  t.same(judged, [['gave up']], 'check saw the answer before the late write')
  t.same(world, ['late'], 'then the held call ran')
  t.equal(outcomes[0]?.drifted, false)

  // an action that waits forever on its call
  const stuck = await sweepFaults({ faults, modes: ['stall'], stallMs: 30, reset: async () => { world.length = 0 }, run: async () => { await port.write('stuck') }, check: () => {} })
  t.type(stuck[0]?.error, StalledRunError)
  t.match(stuck[0]?.error, { message: 'the action still waited on the stalled call after 30 ms: it has no deadline of its own' })
  t.same(world, ['stuck'], 'released after check, and awaited')
})

t.test('sweepFaults: a path that changes between runs is marked drifted, and the sweep goes on while a fault still lands', async (t) => {
  const faults = new Faults()
  let cached = false
  const port = faultyPort({ load: async () => 'v', save: async () => {} }, faults)
  // the first run loads, then saves; later runs find the value cached (state reset does not put back) and save three times
  const run = async (): Promise<void> => {
    if (!cached) {
      await port.load()
      await port.save()
      cached = true
      return
    }
    await port.save()
    await port.save()
    await port.save()
  }
  const outcomes = await sweepFaults({ faults, modes: ['before'], run, check: () => {} })
  t.same(outcomes.map(outcome => [outcome.plan.k, outcome.fired?.method ?? null, outcome.drifted]), [
    [1, 'save', false],
    [2, 'save', true],
    [3, 'save', true],
    [4, null, true]
  ], 'the unfaulted run made two calls; the sweep went on to the third that later runs made, and stopped where none landed')

  // an action that goes on after a failed call has more calls to fail than the unfaulted run counted
  let first = true
  const tolerant = faultyPort({ ping: async () => {} }, faults)
  const onward = async (): Promise<void> => {
    await tolerant.ping().catch(() => {})
    if (!first) await tolerant.ping().catch(() => {})
    first = false
  }
  const more = await sweepFaults({ faults, modes: ['after'], run: onward, check: () => {} })
  t.same(more.map(outcome => [outcome.plan.k, outcome.fired !== null, outcome.drifted]), [[1, true, false], [2, true, false]], 'the second call, past the one of the unfaulted run, was failed too')
})

t.test('sweepFaults over an action that makes no call runs nothing', async (t) => {
  const faults = new Faults()
  const outcomes = await sweepFaults({ faults, run: async () => 'nothing', check: () => { t.fail('no run to judge') } })
  t.same(outcomes, [])
})
