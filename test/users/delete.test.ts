// DELETE /users through the routes: the switch, the user gone with every session and token of theirs, the recent sign-in it needs, the token's forms, the auth code, the adapter's deleteUser failing or missing, cookie mode and the events.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { REFRESH_COOKIE } from '../../lib/http/browser.js'
import jwtLogin, {
  JwtLoginSettingsError, MemoryStore, type JwtLoginOptions, type SettingsInput
} from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, PREFIX } from '../helpers/http.js'
import { buildTwoFactorApp } from '../helpers/two-factor.js'
import { adapterWithout, assertNotLogged, collect, KEYS, loggingHost, registrationError } from '../helpers/users.js'

const DELETED = 'User was successfully deleted.'
const MINUTE = 60_000
const REAUTHENTICATE = 'Bearer error="insufficient_user_authentication"'
/** A second user, who stays through alice's deletion. */
const CAROL = { login: 'carol', email: 'carol@example.com', password: 'carol keeps a long password too', displayName: 'Carol Example' }

/** `users.delete` on, with these settings of its own. */
const on = (remove: Record<string, unknown> = {}): Partial<SettingsInput> => ({ users: { delete: { enabled: true, ...remove } } })
const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })

interface Tokens { jwt: string, refresh_token?: string, csrf_token?: string }
interface Who { email: string, password: string }

interface Kit {
  app: FastifyInstance
  users: MemoryUserAdapter
  clock: ReturnType<typeof testClock>
  /** Every line the host's logger wrote, at trace level. */
  lines: string[]
  aliceId: number
  carolId: number
  /** A password sign-in's answer (alice unless told). */
  signIn: (who?: Who) => Promise<LightMyRequestResponse>
  /** A password sign-in's tokens; throws unless it answers 200. */
  tokens: (who?: Who) => Promise<Tokens>
  /** `DELETE /users` with these headers, body and query string. */
  remove: (headers?: Record<string, string>, payload?: Record<string, unknown>, query?: string) => Promise<LightMyRequestResponse>
  validate: (jwt: string) => Promise<[number, number | undefined]>
}

/** A host logging at trace level into `lines`, alice and carol signed up, the plugin with these settings over the HS256 key. */
async function buildKit (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}, users = new MemoryUserAdapter()): Promise<Kit> {
  const alice = await users.addUser(ALICE)
  const carol = await users.addUser(CAROL)
  const { app, clock, lines } = await loggingHost(t, users, settings, options)
  const signIn = async (who: Who = ALICE): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: who.email, password: who.password } })
  return {
    app,
    users,
    clock,
    lines,
    aliceId: alice.ID,
    carolId: carol.ID,
    signIn,
    tokens: async (who) => {
      const res = await signIn(who)
      if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
      return res.json().data
    },
    remove: async (headers = {}, payload, query = '') =>
      await app.inject({ method: 'DELETE', url: `${PREFIX}/users${query}`, headers, ...(payload === undefined ? {} : { payload }) }),
    validate: async (jwt) => errorOf(await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: jwt } }))
  }
}

/** The Set-Cookie line of the refresh cookie, or `undefined`. */
function refreshCookieLine (res: LightMyRequestResponse): string | undefined {
  const header = res.headers['set-cookie']
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header]
  return all.find(line => line.startsWith(`${REFRESH_COOKIE}=`))
}

t.test('off by default: 403 / 39 with a good token, and the user stays', async (t) => {
  const kit = await buildKit(t)
  t.equal(kit.app.jwtLogin.settings.users.delete.enabled, false, 'the default')
  const { jwt } = await kit.tokens()
  t.same(errorOf(await kit.remove(bearer(jwt))), [403, 39])
  t.same(errorOf(await kit.remove()), [403, 39], 'the switch is checked before the token')
  t.ok(await kit.users.findById(kit.aliceId))
  t.same(await kit.validate(jwt), [200, undefined], 'the token still works')
})

t.test('on: a fresh token deletes its own user; every session, access and refresh token of theirs ends; user.deleted and session.ended', async (t) => {
  const kit = await buildKit(t, { ...on(), refresh: { enabled: true } })
  const deleted = collect(kit.app, 'user.deleted')
  const ended = collect(kit.app, 'session.ended')
  const failed = collect(kit.app, 'validation.failed')
  const first = await kit.tokens()
  const other = await kit.tokens()
  const carol = await kit.tokens(CAROL)

  const res = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: bearer(first.jwt), remoteAddress: '192.0.2.44' })
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(res.json(), { success: true, data: { message: DELETED, id: kit.aliceId } })
  t.equal(await kit.users.findById(kit.aliceId), null, 'the user is gone')
  t.equal(await kit.users.findByEmail(ALICE.email), null)
  t.strictSame(deleted, [{ userId: kit.aliceId, ip: '192.0.2.44' }])
  t.strictSame(ended, [{ userId: kit.aliceId, sessionId: null, reason: 'user_deleted' }])

  t.same(errorOf(await kit.remove(bearer(first.jwt))), [401, 55], 'the same token again: revoked (its sessions ended before the user went)')
  t.same(await kit.validate(first.jwt), [401, 55], 'and at validate')
  t.same(await kit.validate(other.jwt), [401, 55], 'another session\'s token too')
  for (const session of [first, other]) {
    const refreshed = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: session.refresh_token } })
    t.same(errorOf(refreshed), [401, 51], 'its refresh token is refused')
  }
  t.same(errorOf(await kit.signIn()), [401, 48], 'the password signs in no more')
  t.same(await kit.validate(carol.jwt), [200, undefined], 'another user\'s session lives on')
  t.ok(await kit.users.findById(kit.carolId))
  t.strictSame(failed.map(event => event.errorCode), [55, 55, 55], 'each refused access token is reported (the route and validate twice)')
})

t.test('a token of a user deleted elsewhere (not through the route) is 401 / 24', async (t) => {
  const kit = await buildKit(t, on())
  const { jwt } = await kit.tokens()
  await kit.users.removeUser(kit.aliceId)
  t.same(errorOf(await kit.remove(bearer(jwt))), [401, 24])
})

t.test('a sign-in older than users.delete.recentAuth: 401 / 220 with WWW-Authenticate; the user stays and signs in; a step-up renews it', async (t) => {
  const kit = await buildKit(t, on())
  const deleted = collect(kit.app, 'user.deleted')
  const ended = collect(kit.app, 'session.ended')
  const old = (await kit.tokens()).jwt
  kit.clock.advance(10 * MINUTE + 1000)
  const res = await kit.remove(bearer(old))
  t.same(errorOf(res), [401, 220])
  t.equal(res.headers['www-authenticate'], REAUTHENTICATE)
  t.ok(await kit.users.findById(kit.aliceId), 'the user stays')
  t.strictSame([deleted, ended], [[], []], 'no session ended')
  t.same(await kit.validate(old), [200, undefined], 'the token itself is still good')
  t.equal((await kit.signIn()).statusCode, 200, 'and the password signs in')

  const stepped = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/step-up`, payload: { password: ALICE.password }, headers: bearer(old) })
  t.equal(stepped.statusCode, 200, stepped.body)
  const renewed = stepped.json().data.jwt as string
  t.equal(claimsOf(renewed).sid, claimsOf(old).sid, 'the same session')
  t.equal((await kit.remove(bearer(renewed))).statusCode, 200, 'a step-up makes the token recent')
  t.equal(await kit.users.findById(kit.aliceId), null)
})

t.test('ten minutes (the default) to the millisecond is still recent', async (t) => {
  const kit = await buildKit(t, on())
  const jwt = (await kit.tokens()).jwt
  kit.clock.advance(10 * MINUTE)
  t.equal((await kit.remove(bearer(jwt))).statusCode, 200)
  t.equal(await kit.users.findById(kit.aliceId), null)
})

t.test('recentAuth is a setting: with 30m a twenty-minute-old sign-in deletes; with 1m a two-minute-old one does not', async (t) => {
  const relaxed = await buildKit(t, on({ recentAuth: '30m' }))
  const token = (await relaxed.tokens()).jwt
  relaxed.clock.advance(20 * MINUTE)
  t.same(errorOf(await relaxed.remove(bearer(token))), [401, 14], 'the access token itself lasts 15 minutes')
  const longLived = await buildKit(t, { ...on({ recentAuth: '30m' }), tokens: { ...KEYS.tokens, lifetime: '1h' } })
  const lasting = (await longLived.tokens()).jwt
  longLived.clock.advance(20 * MINUTE)
  t.equal((await longLived.remove(bearer(lasting))).statusCode, 200)

  const strict = await buildKit(t, on({ recentAuth: '1m' }))
  const recent = (await strict.tokens()).jwt
  strict.clock.advance(2 * MINUTE)
  t.same(errorOf(await strict.remove(bearer(recent))), [401, 220])
})

t.test('the token: missing 400 / 53; Bearer, the JWT field of the body or of the query all work; a bad one is refused', async (t) => {
  const kit = await buildKit(t, on())
  t.same(errorOf(await kit.remove()), [400, 53], 'no token')
  t.same(errorOf(await kit.remove({}, { JWT: null })), [400, 53], 'a null JWT is a missing one')
  t.same(errorOf(await kit.remove({ authorization: 'Basic YWxpY2U6cHc=' })), [400, 203], 'an Authorization header that is not Bearer')
  const forged = `${(await kit.tokens()).jwt.slice(0, -4)}AAAA`
  t.same(errorOf(await kit.remove(bearer(forged))), [401, 11], 'a bad signature')
  t.ok(await kit.users.findById(kit.aliceId), 'nobody deleted so far')

  t.equal((await kit.remove(bearer((await kit.tokens()).jwt))).statusCode, 200, 'Bearer')
  t.equal((await kit.remove({}, { JWT: (await kit.tokens(CAROL)).jwt })).statusCode, 200, 'JWT in the body')
  t.equal(await kit.users.findById(kit.carolId), null)

  const third = await buildKit(t, on())
  t.equal((await third.remove({}, undefined, `?JWT=${(await third.tokens()).jwt}`)).statusCode, 200, 'JWT in the query')
  t.equal(await third.users.findById(third.aliceId), null)
})

t.test('requireAuthCode: without 400 / 94, wrong 401 / 27; the code in the body or the query', async (t) => {
  const kit = await buildKit(t, { ...on({ requireAuthCode: true }), authCodes: { codes: [{ code: 'delete-ok' }] } })
  const alice = (await kit.tokens()).jwt
  t.same(errorOf(await kit.remove(bearer(alice))), [400, 94])
  t.same(errorOf(await kit.remove(bearer(alice), { AUTH_KEY: 'wrong' })), [401, 27])
  t.same(errorOf(await kit.remove(bearer(alice), undefined, '?AUTH_KEY=wrong')), [401, 27])
  t.ok(await kit.users.findById(kit.aliceId), 'still there')
  t.same(await kit.validate(alice), [200, undefined], 'and signed in')
  t.equal((await kit.remove(bearer(alice), { AUTH_KEY: 'delete-ok' })).statusCode, 200, 'in the body')
  t.equal((await kit.remove(bearer((await kit.tokens(CAROL)).jwt), undefined, '?AUTH_KEY=delete-ok')).statusCode, 200, 'in the query')
  t.equal(await kit.users.findById(kit.carolId), null)
  assertNotLogged(t, kit.lines, ['delete-ok'])
})

/** A memory adapter whose deleteUser fails as a database would, quoting the user, until `failing` is off. */
class FailingDelete extends MemoryUserAdapter {
  failing = true

  override async deleteUser (user: MemoryUser): Promise<void> {
    if (!this.failing) return await super.deleteUser(user)
    throw Object.assign(new Error(`deadlock deleting ${user.user_email} (${user.passwordHash})`), { code: 'ER_LOCK_DEADLOCK' })
  }
}

t.test('deleteUser throwing: 503 / 226; the user stays, signed out everywhere; a new sign-in works and a retry deletes', async (t) => {
  const users = new FailingDelete()
  const kit = await buildKit(t, { ...on(), refresh: { enabled: true } }, {}, users)
  const deleted = collect(kit.app, 'user.deleted')
  const ended = collect(kit.app, 'session.ended')
  const first = await kit.tokens()
  const other = await kit.tokens()
  const res = await kit.remove(bearer(first.jwt))
  t.same(errorOf(res), [503, 226])
  t.ok(await users.findById(kit.aliceId), 'the user stays')
  t.same(await kit.validate(first.jwt), [401, 55], 'the old token is refused: the sessions ended')
  t.same(await kit.validate(other.jwt), [401, 55], 'every session')
  t.same(errorOf(await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: other.refresh_token } })), [401, 51], 'and their refresh tokens')
  t.strictSame(deleted, [], 'no user.deleted')
  t.strictSame(ended, [{ userId: kit.aliceId, sessionId: null, reason: 'user_deleted' }])
  const log = kit.lines.join('')
  t.match(log, 'users.deleteUser failed: Error (ER_LOCK_DEADLOCK)', 'the failure is logged, naming the method')
  const hash = (await users.findById(kit.aliceId))?.passwordHash as string
  assertNotLogged(t, kit.lines, [ALICE.email, hash, first.jwt, ALICE.password])

  kit.clock.advance(1000)
  const fresh = await kit.tokens()
  t.same(await kit.validate(fresh.jwt), [200, undefined], 'a new sign-in works')
  users.failing = false
  t.equal((await kit.remove(bearer(fresh.jwt))).statusCode, 200, 'the retry deletes')
  t.equal(await users.findById(kit.aliceId), null)
  t.strictSame(deleted, [{ userId: kit.aliceId, ip: '127.0.0.1' }])
})

/** A memory store whose compareAndSet fails while `failing` is on: the store is down for writes. */
class FailingWrites extends MemoryStore {
  failing = false

  override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    if (this.failing) throw new Error('store unavailable')
    return await super.compareAndSet(key, expected, value, ttlMs)
  }
}

t.test('the store failing while the sessions end: 503 / 201, the user and the token stay', async (t) => {
  const clock = testClock()
  const store = new FailingWrites({ clock })
  const users = new MemoryUserAdapter()
  const kit = await buildKit(t, on(), { store, clock }, users)
  const deleted = collect(kit.app, 'user.deleted')
  const { jwt } = await kit.tokens()
  store.failing = true
  t.same(errorOf(await kit.remove(bearer(jwt))), [503, 201])
  store.failing = false
  t.ok(await users.findById(kit.aliceId), 'the user stays')
  t.same(await kit.validate(jwt), [200, undefined], 'still signed in')
  t.strictSame(deleted, [])
})

t.test('an adapter without deleteUser: registration is refused at users/delete/enabled, and so is a reload that switches it on', async (t) => {
  const users = new MemoryUserAdapter()
  const error = await registrationError(on(), adapterWithout(users, 'deleteUser'))
  t.ok(error instanceof JwtLoginSettingsError, 'a JwtLoginSettingsError')
  t.equal((error as JwtLoginSettingsError).path, 'users/delete/enabled')
  t.match((error as Error).message, /deleteUser/)
  t.equal(await registrationError({}, adapterWithout(users, 'deleteUser')), null, 'off, the method is not needed')

  await users.addUser(ALICE)
  let next: Partial<SettingsInput> = KEYS
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: adapterWithout(users, 'deleteUser'), settings: async () => structuredClone(next) as SettingsInput, settingsTtl: '1h' })
  await app.ready()
  next = { ...KEYS, ...on() }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'users/delete/enabled' })
  const jwt = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).json().data.jwt as string
  t.same(errorOf(await app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: bearer(jwt) })), [403, 39], 'the last good settings stay: still off')
})

t.test('cookie mode: the answer clears the refresh cookie, whose session has ended', async (t) => {
  const kit = await buildKit(t, { ...on(), refresh: { enabled: true, cookie: { enabled: true } } })
  const signIn = await kit.signIn()
  const line = refreshCookieLine(signIn) as string
  const cookie = line.slice(REFRESH_COOKIE.length + 1, line.indexOf(';'))
  const { jwt, csrf_token: csrf } = signIn.json().data as Tokens

  const res = await kit.remove({ ...bearer(jwt), cookie: `${REFRESH_COOKIE}=${cookie}` })
  t.equal(res.statusCode, 200, res.body)
  const cleared = refreshCookieLine(res)
  t.ok(cleared !== undefined, 'a Set-Cookie for the refresh cookie')
  t.match(cleared, new RegExp(`^${REFRESH_COOKIE}=;`), 'empty')
  const expires = /Expires=([^;]+)/.exec(cleared as string)?.[1]
  t.ok((cleared as string).includes('Max-Age=0') || (expires !== undefined && Date.parse(expires) <= Date.now()), 'Max-Age=0, or Expires in the past')
  t.match(cleared, /Path=\//)

  const refreshed = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: {}, headers: { cookie: `${REFRESH_COOKIE}=${cookie}`, 'x-csrf-token': csrf as string } })
  t.equal(refreshed.statusCode, 401, 'the cookie\'s refresh token is refused')

  const plain = await buildKit(t, { ...on(), refresh: { enabled: true } })
  const answer = await plain.remove(bearer((await plain.tokens()).jwt))
  t.equal(answer.statusCode, 200)
  t.equal(answer.headers['set-cookie'], undefined, 'outside cookie mode no cookie is touched')
})

t.test('an interim (two-factor) token cannot delete: 401 / 110, the user stays', async (t) => {
  const kit = await buildTwoFactorApp({ settings: on() })
  t.teardown(() => kit.app.close())
  const interim = await kit.interim()
  t.equal(claimsOf(interim).typ, 'interim')
  const res = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: bearer(interim) })
  t.same(errorOf(res), [401, 110])
  t.ok(await kit.users.findById(kit.bobId), 'bob stays')
})
