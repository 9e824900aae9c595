/**
 * Issue 43: `fastify.jwtLogin.health()` reads the store and the host's ports
 * once each, all at once, each within its deadline, and never throws for
 * what it finds: a store that is down, a port that hangs or fails. What a
 * port threw is never quoted; a hanging check keeps no process alive.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { JwtLoginError, MemoryStore, type HealthOptions, type HealthReport, type JwtLoginOptions, type StateStore } from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { buildApp } from '../helpers/app.js'
import { stderrDuring } from '../helpers/log-recorder.js'
import { closedPort } from '../helpers/net.js'

const QUIET = { error: () => {}, warn: () => {} }
const HEALTH_EMAIL = 'health-check@jwt-login.invalid'

/** An app on memory users (alice) with `options`, closed at teardown. */
async function appWith (t: Test, options: Partial<JwtLoginOptions> = {}): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const built = await buildApp({}, options)
  t.teardown(() => built.app.close())
  return built
}

/** A promise that never settles. */
const never = async (): Promise<never> => await new Promise<never>(() => {})

/**
 * `app.jwtLogin.health(options)`, the event loop held while it runs: a read
 * that never settles holds nothing, and the deadline's timer is unref'd, so
 * without this the test's process could end before the deadline passed.
 */
async function healthOf (app: FastifyInstance, options?: HealthOptions): Promise<HealthReport> {
  const hold = setInterval(() => {}, 1000)
  try {
    return await app.jwtLogin.health(options)
  } finally {
    clearInterval(hold)
  }
}

/** The report's checks by name: healthy, or the problem. */
function summary (report: HealthReport): Record<string, true | string> {
  return Object.fromEntries(report.checks.map(check => [check.name, check.healthy ? true : check.problem as string]))
}

/** A memory store whose `get` a test replaces once the app is ready (the check at `ready()` reads it too). */
function storeWithGet (t: Test): { store: StateStore, replaceGet: (get: StateStore['get']) => void } {
  const memory = new MemoryStore()
  t.teardown(() => memory.close())
  let get: StateStore['get'] = memory.get.bind(memory)
  const store: StateStore = {
    get: async (key) => await get(key),
    set: memory.set.bind(memory),
    consume: memory.consume.bind(memory),
    increment: memory.increment.bind(memory),
    compareAndSet: memory.compareAndSet.bind(memory),
    delete: memory.delete.bind(memory)
  }
  return { store, replaceGet: (replaced) => { get = replaced } }
}

t.test('the in-memory defaults are healthy: the store and the users, nothing else', async (t) => {
  const { app } = await appWith(t)
  const report = await healthOf(app)
  t.equal(report.healthy, true)
  t.same(report.checks.map(check => check.name), ['store', 'users'])
  for (const check of report.checks) {
    t.equal(check.healthy, true, check.name)
    t.ok(Number.isInteger(check.durationMs) && check.durationMs >= 0, `${check.name} took ${check.durationMs} ms`)
    t.notOk('problem' in check, `${check.name} has no problem`)
  }
  t.match(await healthOf(app, { deadlineMs: 5000 }), { healthy: true, checks: [{ name: 'store', healthy: true, durationMs: Number }, { name: 'users', healthy: true, durationMs: Number }] }, 'a deadline of its own')
})

t.test('the users are read through the adapter\'s guard, never the user cache', async (t) => {
  const users = new MemoryUserAdapter()
  const asked: string[] = []
  const findByEmail = users.findByEmail.bind(users)
  users.findByEmail = async (email) => { asked.push(email); return await findByEmail(email) }
  const built = await buildApp({}, { users, userCache: { ttl: '1m', max: 10 } })
  t.teardown(() => built.app.close())
  t.equal((await healthOf(built.app)).healthy, true)
  t.equal((await healthOf(built.app)).healthy, true)
  t.same(asked, [HEALTH_EMAIL, HEALTH_EMAIL], 'each call asks the adapter, for an address no user can have')
})

t.test('a Redis store at a closed port: the store is unhealthy, named, and the answer comes quickly', async (t) => {
  const store = new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log: QUIET })
  t.teardown(() => store.close())
  let app: FastifyInstance | undefined
  const stderr = await stderrDuring(async () => { app = (await appWith(t, { store, startDegraded: true })).app })
  t.match(stderr, /started anyway \(startDegraded\)/, 'the app started degraded')
  const started = performance.now()
  const report = await healthOf(app as FastifyInstance)
  const elapsed = performance.now() - started
  t.ok(elapsed < 1500, `answered in ${Math.round(elapsed)} ms, within the 1 s deadline and a margin`)
  t.equal(report.healthy, false)
  t.match(summary(report), { store: /^its server (cannot be reached|did not answer in time)/, users: true })
  t.ok((report.checks[0]?.durationMs ?? Infinity) <= 1500)
})

t.test('a store that hangs or throws: its problem, in the words of the check at ready(), without a URL\'s password', async (t) => {
  const { store, replaceGet } = storeWithGet(t)
  const { app } = await appWith(t, { store })
  replaceGet(never)
  t.match(summary(await healthOf(app, { deadlineMs: 50 })), { store: /did not answer in time.*within 50 ms/, users: true })

  replaceGet(async () => { throw new Error('cannot reach redis://admin:hunter2@cache:6379') })
  const problem = summary(await healthOf(app)).store as string
  t.match(problem, /^a read failed \(Error cannot reach redis:\/\/\[redacted\]@cache:6379\)$/)
  t.notMatch(problem, /hunter2/)

  // what it threw cannot even be read: a plain problem, still no throw
  const unreadable = Object.defineProperty(new Error('x'), 'code', { get () { throw new Error('a getter that throws') } })
  replaceGet(async () => { throw unreadable })
  t.same(summary(await healthOf(app)), { store: 'a read failed (what the store threw could not be read)', users: true })
})

t.test('an adapter whose findByEmail never settles: the users are unhealthy after the deadline, and the answer comes then', async (t) => {
  const users = new MemoryUserAdapter()
  users.findByEmail = never
  const { app } = await appWith(t, { users })
  const started = performance.now()
  const report = await healthOf(app, { deadlineMs: 200 })
  const elapsed = performance.now() - started
  t.ok(elapsed >= 190 && elapsed < 1000, `answered in ${Math.round(elapsed)} ms`)
  t.same(summary(report), { store: true, users: 'did not answer within 200 ms' })
  t.equal(report.healthy, false)
  t.ok((report.checks[1]?.durationMs ?? 0) >= 190)
})

t.test('the checks run at once: a hanging store and hanging users cost one deadline, not two', async (t) => {
  const users = new MemoryUserAdapter()
  users.findByEmail = never
  const { store, replaceGet } = storeWithGet(t)
  const { app } = await appWith(t, { users, store })
  replaceGet(never)
  const started = performance.now()
  const report = await healthOf(app, { deadlineMs: 500 })
  const elapsed = performance.now() - started
  t.ok(elapsed < 950, `answered in ${Math.round(elapsed)} ms, not the 1000 ms of one check after the other`)
  t.match(summary(report), { store: /within 500 ms/, users: 'did not answer within 500 ms' })
})

t.test('a port that throws: its class and code only, never its message', async (t) => {
  const users = new MemoryUserAdapter()
  const { app } = await appWith(t, { users })
  const problemOf = async (thrown: unknown): Promise<string> => {
    users.findByEmail = async () => { throw thrown }
    return summary(await healthOf(app)).users as string
  }
  const secret = 'postgres://app:s3cr3t-password@db/users alice@example.com'
  const plain = await problemOf(new Error(secret))
  t.equal(plain, 'failed (Error)')
  t.notMatch(plain, /s3cr3t|alice/)

  class DatabaseError extends Error {}
  t.equal(await problemOf(Object.assign(new DatabaseError(secret), { code: 'ECONNREFUSED' })), 'failed (DatabaseError ECONNREFUSED)')
  t.equal(await problemOf(Object.assign(new DatabaseError(secret), { code: 57014 })), 'failed (DatabaseError 57014)', 'a number code')
  t.equal(await problemOf(Object.assign(new Error('boom'), { code: `login ${secret} refused` })), 'failed (Error)', 'a code that reads like a message is left out')
  t.equal(await problemOf('a string with s3cr3t'), 'failed (string)', 'not even an error')
  t.equal(await problemOf(new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')), 'failed (JwtLoginError ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE)', 'a jwt-login error keeps its code')

  users.findByEmail = () => { throw new TypeError(secret) }
  t.same(summary(await healthOf(app)), { store: true, users: 'failed (TypeError)' }, 'thrown before a promise')
  users.findByEmail = async () => ({ ID: 7 }) as never
  t.same(summary(await healthOf(app)), { store: true, users: true }, 'a user found is an answer too')
})

t.test('passkeys: checked only with the passkeys option, by a credential id no authenticator makes', async (t) => {
  const port = new MemoryPasskeyStore()
  const asked: string[] = []
  const findById = port.findById.bind(port)
  port.findById = async (id) => { asked.push(id); return await findById(id) }
  const { app } = await appWith(t, { passkeys: { port } })
  t.same(summary(await healthOf(app)), { store: true, users: true, passkeys: true })
  t.same(asked, ['health-check'])

  port.findById = async () => { throw Object.assign(new Error('credential table gone'), { code: '42P01' }) }
  const failed = await healthOf(app)
  t.same(summary(failed), { store: true, users: true, passkeys: 'failed (Error 42P01)' })
  t.equal(failed.healthy, false)

  port.findById = never
  t.same(summary(await healthOf(app, { deadlineMs: 20 })), { store: true, users: true, passkeys: 'did not answer within 20 ms' })
})

t.test('two-factor: never checked (no read of the port is safe for a user who does not exist), so its port is not called', async (t) => {
  const port = new MemoryTwoFactorStore()
  const called: string[] = []
  const spied = new Proxy(port, {
    get (target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver)
      return typeof value === 'function' ? (...args: unknown[]) => { called.push(String(name)); return (value as (...a: unknown[]) => unknown).apply(target, args) } : value
    }
  })
  const { app } = await appWith(t, { twoFactor: { port: spied } })
  t.same(summary(await healthOf(app)), { store: true, users: true })
  t.same(called, [])
})

t.test('a deadlineMs that is not a positive finite number is refused with a TypeError naming it', async (t) => {
  const { app } = await appWith(t)
  for (const deadlineMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '1000', null]) {
    await t.rejects(healthOf(app, { deadlineMs: deadlineMs as number }), { name: 'TypeError', message: /deadlineMs must be a positive finite number/ }, String(deadlineMs))
  }
  t.equal((await healthOf(app, { deadlineMs: 2 ** 31 - 1 })).healthy, true, 'the longest a timer waits')
  t.equal((await healthOf(app, { deadlineMs: 0.5 })).checks.length, 2, 'a fraction of a ms')
  t.equal((await healthOf(app, {})).healthy, true, 'no deadline: the default')
})

t.test('a check that hangs keeps no process alive', async (t) => {
  const loaders = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')
  const script = fileURLToPath(new URL('../fixtures/health-hang.ts', import.meta.url))
  const child = spawn(process.execPath, [...loaders, script], { stdio: ['ignore', 'pipe', 'inherit'] })
  // a process that waits out the 600 s deadline is killed well before it, and fails below
  const kill = setTimeout(() => { child.kill() }, 100_000)
  let closedAt = 0
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += String(chunk)
    if (closedAt === 0 && stdout.includes('closed')) closedAt = performance.now()
  })
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(kill)
  const lingered = performance.now() - closedAt
  t.equal(stdout.trim(), 'closed')
  t.equal(code, 0, 'it ended by itself')
  t.ok(closedAt > 0 && lingered < 10_000, `it ended ${Math.round(lingered)} ms after the app closed, a health check with a 600 s deadline still pending`)
})
