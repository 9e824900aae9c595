import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { type UserCacheOptions } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { cacheUsers } from '../../lib/services/user-cache.js'
import type { UserAdapter } from '../../lib/adapters/users.js'
import { ALICE, buildHost, HS_SECRET, testClock } from '../helpers/app.js'
import { errorCode, login, loginTokens, post } from '../helpers/http.js'
import { buildResetApp, codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp } from '../helpers/smtp.js'

/** Memory users that count `findById` calls; a lookup can be made to fail or to wait. */
class CountingUsers extends MemoryUserAdapter {
  lookups = 0
  failing = false
  hold: Promise<void> | null = null

  override async findById (id: number): Promise<MemoryUser | null> {
    this.lookups++
    if (this.hold !== null) await this.hold
    if (this.failing) throw new Error('database down')
    return await super.findById(id)
  }
}

function hostRoutes (app: FastifyInstance): void {
  app.get('/private', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ user: request.jwtLogin?.user.user_login }))
}

interface CacheApp {
  app: FastifyInstance
  users: CountingUsers
  clock: ReturnType<typeof testClock>
}

async function cacheApp (t: Test, userCache?: UserCacheOptions): Promise<CacheApp> {
  const users = new CountingUsers()
  await users.addUser(ALICE)
  const clock = testClock()
  const { app } = await buildHost(hostRoutes, {}, { users, clock, ...(userCache === undefined ? {} : { userCache }) })
  t.teardown(() => app.close())
  return { app, users, clock }
}

async function validate (app: FastifyInstance, jwt: string): Promise<LightMyRequestResponse> {
  return await post(app, '/auth/validate', { JWT: jwt })
}

function statusOf (res: LightMyRequestResponse): { status: number, errorCode: number | undefined } {
  return { status: res.statusCode, errorCode: res.statusCode === 200 ? undefined : errorCode(res) }
}

t.test('without the option every validate asks the adapter, and forgetUser is a no-op', async (t) => {
  const { app, users } = await cacheApp(t)
  const { jwt } = await loginTokens(app)
  for (let i = 0; i < 3; i++) t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 3)
  app.jwtLogin.forgetUser(1)
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 4)
})

t.test('with a ttl: one lookup per user and ttl, on the plugin clock, shared with the host hook', async (t) => {
  const { app, users, clock } = await cacheApp(t, { ttl: 5 })
  const { jwt } = await loginTokens(app)
  t.equal(users.lookups, 0, 'login looks the user up by email')
  for (let i = 0; i < 5; i++) t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 1)
  const hooked = await app.inject({ method: 'GET', url: '/private', headers: { authorization: `Bearer ${jwt}` } })
  t.same(hooked.json(), { user: 'alice' })
  t.equal(users.lookups, 1, 'the authenticate hook reads the same cache')

  clock.advance(4999)
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 1, 'still fresh just before the ttl')
  clock.advance(1)
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 2, 'asked again once the ttl has passed')
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 2)

  app.jwtLogin.forgetUser(1)
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 3, 'asked again after forgetUser')
})

t.test('revocation goes to the store on every request and drops the user from the cache', async (t) => {
  const { app, users } = await cacheApp(t, { ttl: 30 })
  const first = (await loginTokens(app)).jwt
  const second = (await loginTokens(app)).jwt
  const third = (await loginTokens(app)).jwt
  t.equal((await validate(app, first)).statusCode, 200)
  t.equal((await validate(app, second)).statusCode, 200)
  t.equal(users.lookups, 1)

  t.equal((await post(app, '/auth/revoke', { JWT: first })).statusCode, 200)
  t.same(statusOf(await validate(app, first)), { status: 401, errorCode: 55 }, 'refused although its user is cached')
  t.equal(users.lookups, 1, 'a revoked token is refused before any user lookup')
  t.equal((await validate(app, second)).statusCode, 200)
  t.equal(users.lookups, 2, 'the user is looked up again after the revoke')

  await app.jwtLogin.revoke(second)
  t.same(statusOf(await validate(app, second)), { status: 401, errorCode: 55 })
  t.equal((await validate(app, third)).statusCode, 200)
  t.equal(users.lookups, 3, 'fastify.jwtLogin.revoke drops it too')
})

t.test('a password reset drops the user from the cache', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const users = new CountingUsers()
  await users.addUser(ALICE)
  const clock = testClock()
  const { app } = await buildResetApp(smtp.port, {}, {}, { users, clock, userCache: { ttl: '30s' } })
  t.teardown(() => app.close())
  const before = (await loginTokens(app)).jwt
  t.equal((await validate(app, before)).statusCode, 200)
  t.equal(users.lookups, 1)
  // the cutoff ends sessions started before it, to the ms: on a frozen clock the login would share its ms
  clock.advance(1000)

  t.equal((await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })).statusCode, 200)
  const code = codeIn((await smtp.nextMessage()).text)
  const reset = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200, reset.body)
  t.same(statusOf(await validate(app, before)), { status: 401, errorCode: 55 }, 'the old session ended')

  const after = await login(app, { email: ALICE.email, password: NEW_PASSWORD })
  t.equal(after.statusCode, 200)
  t.equal((await validate(app, after.json().data.jwt)).statusCode, 200)
  t.equal(users.lookups, 2, 'looked up again after the password changed')
})

t.test('max bounds the entries: the oldest goes first', async (t) => {
  const { app, users } = await cacheApp(t, { ttl: 30, max: 2 })
  const bob = await users.addUser({ login: 'bob', email: 'bob@example.com', password: ALICE.password })
  const carol = await users.addUser({ login: 'carol', email: 'carol@example.com', password: ALICE.password })
  const alice = await users.findByEmail(ALICE.email) as MemoryUser
  users.lookups = 0
  const token = (user: MemoryUser): string => app.jwtLogin.sign(users.toPublicUser(user))
  const [a, b, c] = [token(alice), token(bob), token(carol)]
  const seen = async (jwt: string): Promise<number> => {
    t.equal((await validate(app, jwt)).statusCode, 200)
    return users.lookups
  }

  t.equal(await seen(a), 1)
  t.equal(await seen(b), 2)
  t.equal(await seen(a), 2, 'alice and bob fit')
  t.equal(await seen(b), 2)
  t.equal(await seen(c), 3, 'carol pushes out the oldest, alice')
  t.equal(await seen(b), 3)
  t.equal(await seen(c), 3)
  t.equal(await seen(a), 4, 'alice was dropped; she now pushes out bob')
  t.equal(await seen(c), 4)
  t.equal(await seen(b), 5)
})

t.test('concurrent validates on a cold cache make one lookup', async (t) => {
  const { app, users } = await cacheApp(t, { ttl: 5 })
  const { jwt } = await loginTokens(app)
  let release = (): void => {}
  users.hold = new Promise((resolve) => { release = resolve })
  let answered = 0
  const pending = Array.from({ length: 5 }, async () => await validate(app, jwt).finally(() => { answered++ }))
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(answered, 0, 'every request waits on the lookup')
  t.equal(users.lookups, 1, 'one lookup for all five')
  release()
  for (const res of await Promise.all(pending)) t.equal(res.statusCode, 200)
  t.equal(users.lookups, 1)
})

t.test('a lookup that fails answers 503 and is not kept', async (t) => {
  const { app, users } = await cacheApp(t, { ttl: 5 })
  const { jwt } = await loginTokens(app)
  users.failing = true
  t.same(statusOf(await validate(app, jwt)), { status: 503, errorCode: 201 })
  t.same(statusOf(await validate(app, jwt)), { status: 503, errorCode: 201 })
  t.equal(users.lookups, 2, 'the failure was not kept: the next request asked again')
  users.failing = false
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal((await validate(app, jwt)).statusCode, 200)
  t.equal(users.lookups, 3)
})

t.test('a removed user is served from the cache until forgetUser or the ttl', async (t) => {
  const { app, users, clock } = await cacheApp(t, { ttl: 10 })
  const bob = await users.addUser({ login: 'bob', email: 'bob@example.com', password: ALICE.password })
  const alice = (await loginTokens(app)).jwt
  const bobs = app.jwtLogin.sign(users.toPublicUser(bob))
  t.equal((await validate(app, alice)).statusCode, 200)
  t.equal((await validate(app, bobs)).statusCode, 200)
  await users.removeUser(1)
  await users.removeUser(bob.ID)

  // the trade-off of the option: the plugin cannot see a change it was not told of
  t.equal((await validate(app, alice)).statusCode, 200, 'alice is still served from the cache')
  t.equal((await validate(app, bobs)).statusCode, 200, 'so is bob')
  app.jwtLogin.forgetUser(1)
  t.same(statusOf(await validate(app, alice)), { status: 401, errorCode: 24 }, 'after forgetUser: gone')
  t.same(statusOf(await validate(app, alice)), { status: 401, errorCode: 24 }, 'an absent user is not kept')
  clock.advance(10_000)
  t.same(statusOf(await validate(app, bobs)), { status: 401, errorCode: 24 }, 'after the ttl: gone')
})

t.test('bad userCache options are refused at registration, naming the field', async (t) => {
  const cases: Array<[unknown, string]> = [
    [null, 'userCache'],
    [5, 'userCache'],
    [{}, 'userCache/ttl'],
    [{ ttl: 0 }, 'userCache/ttl'],
    [{ ttl: -1 }, 'userCache/ttl'],
    [{ ttl: 0.0001 }, 'userCache/ttl'],
    [{ ttl: Number.NaN }, 'userCache/ttl'],
    [{ ttl: 61 }, 'userCache/ttl'],
    [{ ttl: '2m' }, 'userCache/ttl'],
    [{ ttl: 'soon' }, 'userCache/ttl'],
    [{ ttl: '0s' }, 'userCache/ttl'],
    [{ ttl: 5, max: 0 }, 'userCache/max'],
    [{ ttl: 5, max: -3 }, 'userCache/max'],
    [{ ttl: 5, max: 1.5 }, 'userCache/max'],
    [{ ttl: 5, max: '10' }, 'userCache/max']
  ]
  for (const [userCache, path] of cases) {
    const app = Fastify()
    const register = async (): Promise<void> => {
      await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }, userCache: userCache as UserCacheOptions })
    }
    await t.rejects(register(), { name: 'JwtLoginSettingsError', path }, JSON.stringify(userCache) ?? String(userCache))
    await app.close()
  }
  for (const userCache of [{ ttl: 60 }, { ttl: '60s' }, { ttl: '500ms', max: 1 }]) {
    const app = Fastify()
    await t.resolves(async () => { await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }, userCache }) }, JSON.stringify(userCache))
    await app.close()
  }
})

t.test('the wrapper: other methods pass through to the adapter as it is, optional ones stay absent', async (t) => {
  const users = new CountingUsers()
  const alice = await users.addUser(ALICE)
  const cached = cacheUsers<MemoryUser>(users, { ttlMs: 1000, max: 10 }, testClock())
  t.equal(await cached.findByEmail(ALICE.email), alice, 'a class instance keeps its `this` (private fields)')
  t.equal(await cached.findByLogin('alice'), alice)
  t.equal(await cached.verifyPassword(alice, ALICE.password), true)
  t.equal(await cached.getPasswordHash?.(alice), alice.passwordHash)
  t.same(cached.toPublicUser(alice), users.toPublicUser(alice), 'toPublicUser stays synchronous')
  t.equal(typeof cached.setPassword, 'function')
  t.equal(typeof cached.createUser, 'function')
  users.findByLogin = async () => null
  t.equal(await cached.findByLogin('alice'), null, 'a method replaced on the adapter later is the one called')

  const minimal: UserAdapter<MemoryUser> = {
    findByEmail: async (email) => await users.findByEmail(email),
    findByLogin: async () => null,
    findById: async (id) => await users.findById(id),
    verifyPassword: async () => false,
    toPublicUser: (user) => users.toPublicUser(user)
  }
  const bare = cacheUsers(minimal, { ttlMs: 1000, max: 10 }, testClock())
  for (const method of ['setPassword', 'createUser', 'getPasswordHash']) t.notOk(method in bare, `${method} absent`)
})

t.test('the wrapper: shared lookups, forget while a lookup runs, an adapter that throws', async (t) => {
  const users = new CountingUsers()
  const alice = await users.addUser(ALICE)
  const clock = testClock()
  const cached = cacheUsers<MemoryUser>(users, { ttlMs: 1000, max: 10 }, clock)

  const answers = await Promise.all([cached.findById(1), cached.findById(1), cached.findById(1)])
  t.same(answers, [alice, alice, alice])
  t.equal(users.lookups, 1, 'three concurrent misses, one lookup')

  cached.forget(1)
  let release = (): void => {}
  users.hold = new Promise((resolve) => { release = resolve })
  const running = cached.findById(1)
  await new Promise((resolve) => setImmediate(resolve))
  cached.forget(1)
  const next = cached.findById(1)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(users.lookups, 3, 'after forget, a new request does not join the lookup under way')
  release()
  t.equal(await running, alice)
  t.equal(await next, alice)
  users.hold = null
  await cached.findById(1)
  t.equal(users.lookups, 3, 'the later lookup was kept')

  cached.forget(1)
  users.hold = new Promise((resolve) => { release = resolve })
  const stale = cached.findById(1)
  await new Promise((resolve) => setImmediate(resolve))
  cached.forget(1) // the host changed the user while the lookup ran
  release()
  t.equal(await stale, alice)
  users.hold = null
  await cached.findById(1)
  t.equal(users.lookups, 5, 'what a lookup read before a forget is not kept')

  cached.forget(1)
  users.failing = true
  users.hold = new Promise((resolve) => { release = resolve })
  const failing = [cached.findById(1), cached.findById(1)]
  await new Promise((resolve) => setImmediate(resolve))
  cached.forget(1)
  release()
  for (const lookup of failing) await t.rejects(lookup, { message: 'database down' }, 'every sharer gets the failure')
  t.equal(users.lookups, 6)
  users.hold = null
  users.failing = false
  t.equal(await cached.findById(1), alice)
  t.equal(users.lookups, 7, 'a failure is never kept')

  clock.advance(999)
  await cached.findById(1)
  t.equal(users.lookups, 7)
  clock.advance(1)
  await cached.findById(1)
  t.equal(users.lookups, 8, 'an entry lives ttlMs from the start of its lookup')

  let calls = 0
  const throwsAtOnce = { findById: () => { calls++; throw new Error('not a promise') } }
  const throwing = cacheUsers(throwsAtOnce as unknown as UserAdapter, { ttlMs: 1000, max: 10 }, clock)
  await t.rejects(throwing.findById(1), { message: 'not a promise' }, 'a synchronous throw is a rejection')
  await t.rejects(throwing.findById(1), { message: 'not a promise' })
  t.equal(calls, 2, 'and is not kept either')
})
