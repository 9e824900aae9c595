// Issue 24: a host that created Fastify without a logger still sees a failing dependency: the first one each minute is printed to stderr.
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { MemoryStore, type JwtLoginOptions, type StateStore, type StoreLogger } from '../../lib/index.js'
import { FALLBACK_INTERVAL_MS, hasNoLogger } from '../../lib/http/fallback-log.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from '../helpers/app.js'
import { errorOf, login } from '../helpers/http.js'
import { stderrDuring } from '../helpers/log-recorder.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

/** A memory store whose `getMany` (every authenticated request) and `increment` (request counts) fail while `failing.message` is set. */
function failingStore (t: Test): { store: StateStore, failing: { message: string | null } } {
  const memory = new MemoryStore()
  t.teardown(() => memory.close())
  const failing: { message: string | null } = { message: null }
  const store: StateStore = {
    get: memory.get.bind(memory),
    set: memory.set.bind(memory),
    consume: memory.consume.bind(memory),
    increment: async (key, ttlMs) => {
      if (failing.message !== null) throw new Error(failing.message)
      return await memory.increment(key, ttlMs)
    },
    compareAndSet: memory.compareAndSet.bind(memory),
    delete: memory.delete.bind(memory),
    getMany: async (keys) => {
      if (failing.message !== null) throw Object.assign(new Error(failing.message), { code: 'ECONNRESET' })
      return await memory.getMany(keys)
    }
  }
  return { store, failing }
}

/** A host with the plugin (alice seeded) and a protected route, readied. */
async function host (t: Test, options: Partial<JwtLoginOptions>, fastify: FastifyInstance = Fastify()): Promise<FastifyInstance> {
  t.teardown(() => fastify.close())
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  await fastify.register(jwtLogin, { users, settings: { tokens: TOKENS }, ...options })
  fastify.get('/private', { preHandler: fastify.jwtLogin.authenticate }, async () => ({ ok: true }))
  await fastify.ready()
  return fastify
}

async function validate (app: FastifyInstance, jwt: string): Promise<[number, number | undefined]> {
  return errorOf(await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: jwt } }))
}

t.test('Fastify 5 without a logger is told from one with a logger, even a silent one', async (t) => {
  t.ok(hasNoLogger(Fastify().log), 'Fastify()')
  t.ok(hasNoLogger(Fastify({ logger: false }).log), 'logger: false')
  t.notOk(hasNoLogger(Fastify({ logger: true }).log), 'logger: true')
  t.notOk(hasNoLogger(Fastify({ logger: { level: 'silent' } }).log), 'a silent pino logger is a choice')
  // a logger of the host's own (pino-shaped), passed as loggerInstance
  const own = { level: 'info', info () {}, error () {}, debug () {}, fatal () {}, warn () {}, trace () {}, silent () {}, child () { return { ...own } } }
  t.notOk(hasNoLogger(Fastify({ loggerInstance: own as never }).log), 'loggerInstance')
})

t.test('without a logger: the first failure of each minute is printed, one line, then a count of the others', async (t) => {
  const clock = testClock()
  const { store, failing } = failingStore(t)
  const app = await host(t, { store, clock })
  const { jwt } = (await login(app)).json().data
  failing.message = 'connection reset by peer\n    at Socket.read (node:net:1:1)'
  const first = await stderrDuring(async () => {
    t.same(await validate(app, jwt), [503, 201])
    t.same(await validate(app, jwt), [503, 201])
    clock.advance(FALLBACK_INTERVAL_MS - 1)
    t.same(await validate(app, jwt), [503, 201])
  })
  t.equal(first, 'jwt-login: dependency failed (POST /jwt-login/v1/auth/validate): Error ECONNRESET connection reset by peer at Socket.read (node:net:1:1) (further failures this minute are not printed; pass a logger to Fastify to see all)\n', 'one line, its message on one line')

  clock.advance(1)
  const next = await stderrDuring(async () => {
    const res = await app.inject({ method: 'GET', url: '/private', headers: { authorization: `Bearer ${jwt}` } })
    t.same(errorOf(res), [503, 201], 'the host\'s authenticate hook')
  })
  t.equal(next, 'jwt-login: dependency failed (GET /private): Error ECONNRESET connection reset by peer at Socket.read (node:net:1:1) [2 not printed since the last line] (further failures this minute are not printed; pass a logger to Fastify to see all)\n', 'a minute later, the next one, with the count of those not printed')
})

t.test('a failure outside any route (the request count of a path not found) names no route, and never the URL', async (t) => {
  const { store, failing } = failingStore(t)
  const app = await host(t, { store })
  failing.message = 'down'
  const stderr = await stderrDuring(async () => {
    t.same(errorOf(await app.inject({ method: 'GET', url: '/jwt-login/v1/no-such-route?password=hunter2-secret' })), [503, 201])
  })
  t.equal(stderr, 'jwt-login: dependency failed (GET an unknown path): Error down (further failures this minute are not printed; pass a logger to Fastify to see all)\n')
})

t.test('with a logger: nothing is printed, and the log has every failure (the authenticate hook\'s too)', async (t) => {
  const lines: Array<Record<string, any>> = []
  const logged = Fastify({ logger: { level: 'error', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  const { store, failing } = failingStore(t)
  const app = await host(t, { store }, logged)
  const { jwt } = (await login(app)).json().data
  failing.message = 'down'
  const stderr = await stderrDuring(async () => {
    await validate(app, jwt)
    await validate(app, jwt)
    await app.inject({ method: 'GET', url: '/private', headers: { authorization: `Bearer ${jwt}` } })
  })
  t.equal(stderr, '')
  t.equal(lines.length, 3)
  t.match(lines, Array(3).fill({ level: 50, msg: 'jwt-login: dependency failed', err: { type: 'Error', code: 'ECONNRESET', message: 'down' } }))
  t.notOk(JSON.stringify(lines).includes('Socket'), 'no stack')
})

t.test('a password, an email or a token the dependency echoes never reaches stderr', async (t) => {
  const { store, failing } = failingStore(t)
  class Echoing extends MemoryUserAdapter {
    override async verifyPassword (): Promise<boolean> {
      throw new Error(`hash check failed for ${ALICE.email} with ${ALICE.password}`)
    }
  }
  const users = new Echoing()
  await users.addUser(ALICE)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users, store, settings: { tokens: TOKENS } })
  app.get('/private', { preHandler: app.jwtLogin.authenticate }, async () => ({ ok: true }))
  await app.ready()
  const stderr = await stderrDuring(async () => {
    t.same(errorOf(await login(app)), [503, 201])
  })
  t.match(stderr, /^jwt-login: dependency failed \(POST \/jwt-login\/v1\/auth\): HostPortError users\.verifyPassword failed: Error: hash check failed for \[redacted\] with \[redacted\]/)
  t.notOk(stderr.includes(ALICE.password))
  t.notOk(stderr.includes(ALICE.email))

  // a token, on a new app (a new minute): the store's driver quotes it
  const second = Fastify()
  t.teardown(() => second.close())
  const plain = new MemoryUserAdapter()
  await plain.addUser(ALICE)
  await second.register(jwtLogin, { users: plain, store, settings: { tokens: TOKENS } })
  second.get('/private', { preHandler: second.jwtLogin.authenticate }, async () => ({ ok: true }))
  await second.ready()
  const { jwt } = (await login(second)).json().data
  failing.message = `cannot read the session of ${jwt as string}`
  const printed = await stderrDuring(async () => {
    await second.inject({ method: 'GET', url: '/private', headers: { authorization: `Bearer ${jwt as string}` } })
  })
  t.match(printed, 'jwt-login: dependency failed (GET /private): Error ECONNRESET cannot read the session of [redacted]')
  t.notOk(printed.includes(jwt), 'the token is cut out')
})

t.test('the store\'s own lines (attachLogger) go to stderr without a logger, to the logger with one', async (t) => {
  const given: StoreLogger[] = []
  const memory = new MemoryStore()
  t.teardown(() => memory.close())
  const store: StateStore = {
    get: memory.get.bind(memory),
    set: memory.set.bind(memory),
    consume: memory.consume.bind(memory),
    increment: memory.increment.bind(memory),
    compareAndSet: memory.compareAndSet.bind(memory),
    delete: memory.delete.bind(memory),
    attachLogger: (log) => { given.push(log) }
  }
  await host(t, { store })
  const log = given[0] as StoreLogger
  const stderr = await stderrDuring(async () => {
    log.error({ err: { message: 'ECONNREFUSED', code: 'ECONNREFUSED' }, notLogged: 0 }, 'jwt-login: the Redis store cannot reach Redis;\nrequests that need it answer 503')
    log.warn({ store: 'memory', state: 80 }, 'jwt-login: the memory store is 80 % full')
    log.debug?.({}, 'not printed')
  })
  t.equal(stderr, 'jwt-login: the Redis store cannot reach Redis; requests that need it answer 503 {"err":{"message":"ECONNREFUSED","code":"ECONNREFUSED"},"notLogged":0}\n' +
    'jwt-login: the memory store is 80 % full {"store":"memory","state":80}\n')
  const circular: Record<string, unknown> = {}
  circular.self = circular
  t.equal(await stderrDuring(async () => { log.warn(circular, 'details that cannot be written') }), 'details that cannot be written\n')

  const logged = Fastify({ logger: { level: 'error', stream: { write: () => {} } } })
  await host(t, { store }, logged)
  t.equal(given[1], logged.log, 'with a logger, the store gets Fastify\'s')
})
