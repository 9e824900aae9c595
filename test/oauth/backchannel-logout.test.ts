/**
 * OpenID Connect Back-Channel Logout 1.0, relying-party side, against the
 * real `oidc-provider`: the provider's own logout (the browser's "sign me
 * out" at the provider) POSTs its logout token to the plugin, which listens
 * on loopback; hand-signed tokens (the provider's key) for what the provider
 * never sends.
 */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { SignJWT, type JWTPayload } from 'jose'
import t, { type Test } from 'tap'
import jwtLogin, { type JwtLoginEventMap, type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { sha256Base64url } from '../../lib/core/crypto.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { claimsOf, errorOf, login, multipart, post, PREFIX } from '../helpers/http.js'
import { buildOAuthApp, collect, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, closedUrl, newSigningKey, startIdp, type TestAccount, type TestClient } from '../helpers/oidc-provider.js'

const idp = await startIdp({ backchannelLogout: true })
t.teardown(() => idp.close())

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const logoutPath = (provider: string): string => `${PREFIX}/oauth/${provider}/backchannel-logout`
const nowS = (): number => Math.floor(Date.now() / 1000)

/** Every provider of the tests: idp1 (sid) and idp2 (sub only) with back-channel logout; `plain` without; `off` disabled. */
function allProviders (): ReturnType<typeof providers> & Record<string, unknown> {
  const on = providers(idp, { idp1: { backchannelLogout: true }, idp2: { backchannelLogout: true } })
  return { ...on, plain: { ...on.idp1, backchannelLogout: false }, off: { ...on.idp1, enabled: false } }
}

interface Rp {
  app: FastifyInstance
  store: MemoryStore
  aliceId: number
  ended: Array<JwtLoginEventMap['session.ended']>
}

/** The plugin listening on loopback, where the provider's back-channel calls go. */
async function startRp (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<Rp> {
  const store = new MemoryStore()
  const { app, users } = await buildOAuthApp(allProviders() as never, { refresh: { enabled: true }, ...settings }, { store, ...options })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  idp.relyingParty(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`)
  const alice = await users.findByEmail(ALICE.email)
  return { app, store, aliceId: users.toPublicUser(alice as NonNullable<typeof alice>).ID, ended: collect(app, 'session.ended') }
}

interface Signed { jwt: string, refresh_token: string, sid: string }

const signed = (res: LightMyRequestResponse): Signed => {
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
  const data = res.json().data
  return { jwt: data.jwt, refresh_token: data.refresh_token, sid: claimsOf(data.jwt).sid as string }
}

/** A sign-in through the provider in `browser` (its provider session), as `client`. */
async function providerSignIn (app: FastifyInstance, browser: Map<string, string>, client: TestClient = CLIENTS.idp1, account: TestAccount = ACCOUNTS.alice): Promise<Signed> {
  const { code } = await idp.code({ client, account, browser })
  return signed(await postToken(app, { provider: client === CLIENTS.idp1 ? 'idp1' : 'idp2', code }))
}

const passwordSignIn = async (app: FastifyInstance): Promise<Signed> => signed(await login(app))

/** Whether the session's access token validates and its refresh token refreshes (a refresh rotates: the caller's copy is updated). */
async function alive (app: FastifyInstance, session: Signed): Promise<[number, number]> {
  const validated = await post(app, '/auth/validate', { JWT: session.jwt })
  const refreshed = await post(app, '/auth/refresh', { refresh_token: session.refresh_token })
  if (refreshed.statusCode === 200) Object.assign(session, { jwt: refreshed.json().data.jwt, refresh_token: refreshed.json().data.refresh_token })
  return [validated.statusCode, refreshed.statusCode]
}
const LIVE: [number, number] = [200, 200]
const ENDED: [number, number] = [401, 401]

/** A logout token for alice's `sub` at idp1, signed with the provider's key; `claims` override (undefined drops one). */
async function logoutToken (claims: JWTPayload = {}, options: Parameters<typeof idp.sign>[1] = {}): Promise<string> {
  return await idp.sign({
    iss: idp.issuer,
    aud: CLIENTS.idp1.client_id,
    iat: nowS(),
    exp: nowS() + 120,
    jti: randomUUID(),
    sub: ACCOUNTS.alice.id,
    events: { [EVENT]: {} },
    ...claims
  }, { typ: 'logout+jwt', ...options })
}

async function postLogout (app: FastifyInstance, provider: string, token: string): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: logoutPath(provider),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ logout_token: token }).toString()
  })
}

/** A 400 of §2.8: exactly `error` and `error_description`. */
function isRefusal (t: Test, res: LightMyRequestResponse, description: RegExp, what: string): void {
  t.equal(res.statusCode, 400, what)
  t.same(Object.keys(res.json()).sort(), ['error', 'error_description'], `${what}: the spec's body`)
  t.equal(res.json().error, 'invalid_request', what)
  t.match(res.json().error_description, description, what)
}

t.test('the provider\'s logout of one provider session ends the local session it started, and only it', async (t) => {
  const rp = await startRp(t)
  const password = await passwordSignIn(rp.app)
  const browserA = new Map<string, string>()
  const browserB = new Map<string, string>()
  const a = await providerSignIn(rp.app, browserA)
  const b = await providerSignIn(rp.app, browserB)
  t.same(await alive(rp.app, a), LIVE, 'a refresh moves the session on (its index entry keeps the provider session)')

  const outcomes = await idp.signOut(browserA)
  t.equal(outcomes.length, 1, 'the provider called the client of that session')
  t.match(outcomes[0], { clientId: CLIENTS.idp1.client_id, accountId: ACCOUNTS.alice.id, error: null }, 'and the plugin answered 200')
  t.same(await alive(rp.app, a), ENDED, 'its access token and its refresh token are refused')
  t.same(rp.ended, [{ userId: rp.aliceId, sessionId: a.sid, reason: 'provider_logout' }])
  t.same(await alive(rp.app, b), LIVE, 'the other provider session of the same user is untouched')
  t.same(await alive(rp.app, password), LIVE, 'and so is the password session')
  t.same((await rp.app.jwtLogin.sessions(rp.aliceId)).map(s => s.id).sort(), [password.sid, b.sid].sort(), 'the index lists the two left')

  const sid = outcomes[0]?.sid as string
  t.equal(await rp.store.get(`oauth-logout:idp1:sid:${sha256Base64url(sid)}`), null, 'the provider session\'s key (by its hash) left with the one session it found')
  t.equal(await rp.store.get(`oauth-logout:idp1:sub:${sha256Base64url(ACCOUNTS.alice.id)}`), String(rp.aliceId), 'the provider user\'s key stays: another session of that user needs it')
  t.equal(await rp.store.get(`oauth-logout:idp1:sid:${sid}`), null, 'never by the sid in clear')

  const again = await idp.signOut(browserB)
  t.match(again, [{ clientId: CLIENTS.idp1.client_id, error: null }])
  t.same(await alive(rp.app, b), ENDED)
  t.same(await alive(rp.app, password), LIVE)
})

t.test('a provider whose logout tokens name the user only (no sid) ends every session of that provider user there', async (t) => {
  const rp = await startRp(t)
  const password = await passwordSignIn(rp.app)
  const viaIdp1 = await providerSignIn(rp.app, new Map())
  const browser = new Map<string, string>()
  const first = await providerSignIn(rp.app, browser, CLIENTS.idp2)
  const second = await providerSignIn(rp.app, new Map(), CLIENTS.idp2)

  const outcomes = await idp.signOut(browser)
  t.match(outcomes, [{ clientId: CLIENTS.idp2.client_id, error: null }])
  t.same(await alive(rp.app, first), ENDED)
  t.same(await alive(rp.app, second), ENDED, 'the user\'s other idp2 session too: the token names no session')
  t.same(rp.ended.map(e => [e.sessionId, e.reason]).sort(), [[first.sid, 'provider_logout'], [second.sid, 'provider_logout']].sort())
  t.same(await alive(rp.app, viaIdp1), LIVE, 'a session of another provider stays')
  t.same(await alive(rp.app, password), LIVE, 'the password session stays')
})

t.test('nothing to end is a success (200), and ends nothing', async (t) => {
  const rp = await startRp(t)
  const password = await passwordSignIn(rp.app)
  // the provider session signed in to the client, but the code never reached the plugin
  const browser = new Map<string, string>()
  await idp.code({ account: ACCOUNTS.alice, browser })
  t.match(await idp.signOut(browser), [{ clientId: CLIENTS.idp1.client_id, error: null }])
  t.same(rp.ended, [])

  const bob = await postLogout(rp.app, 'idp1', await logoutToken({ sub: ACCOUNTS.bob.id }))
  t.equal(bob.statusCode, 200, 'a provider user no session of this server knows')
  t.same(bob.json(), { success: true, data: { message: 'Logged out.' } })
  t.equal(bob.headers['cache-control'], 'no-store')
  t.same(rp.ended, [])
  t.same(await alive(rp.app, password), LIVE)
})

t.test('a hand-signed token naming the user (sub only), as a form or as JSON; typ may be left out', async (t) => {
  const rp = await startRp(t)
  const password = await passwordSignIn(rp.app)
  const first = await providerSignIn(rp.app, new Map())
  const second = await providerSignIn(rp.app, new Map())
  const viaIdp2 = await providerSignIn(rp.app, new Map(), CLIENTS.idp2)

  const form = await postLogout(rp.app, 'idp1', await logoutToken())
  t.same([form.statusCode, form.json()], [200, { success: true, data: { message: 'Logged out.' } }])
  t.same(await alive(rp.app, first), ENDED)
  t.same(await alive(rp.app, second), ENDED)
  t.same(await alive(rp.app, viaIdp2), LIVE, 'idp2\'s session of the same provider user: another client, another provider of the settings')
  t.same(await alive(rp.app, password), LIVE)

  const third = await providerSignIn(rp.app, new Map())
  const untyped = await new SignJWT({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, iat: nowS(), jti: randomUUID(), sub: ACCOUNTS.alice.id, events: { [EVENT]: {} } })
    .setProtectedHeader({ alg: 'RS256', kid: idp.key.kid })
    .sign(idp.key.privateKey)
  const json = await rp.app.inject({ method: 'POST', url: logoutPath('idp1'), payload: { logout_token: untyped } })
  t.equal(json.statusCode, 200, 'JSON, no typ header, no exp')
  t.same(await alive(rp.app, third), ENDED)

  const fourth = await providerSignIn(rp.app, new Map())
  const rest = await rp.app.inject({
    method: 'POST',
    url: `/?rest_route=${logoutPath('idp1')}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ logout_token: await logoutToken({}, { typ: 'LOGOUT+JWT' }) }).toString()
  })
  t.equal(rest.statusCode, 200, 'through ?rest_route=, typ in any case')
  t.same(await alive(rp.app, fourth), ENDED)
})

t.test('a refused token answers the spec\'s 400 and ends nothing', async (t) => {
  const rp = await startRp(t)
  const session = await providerSignIn(rp.app, new Map())
  const otherKey = await newSigningKey(idp.key.kid)
  const strangerKey = await newSigningKey('stranger')
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n-1' })
  const cases: Array<[string, Promise<string> | string, RegExp]> = [
    ['signed with another key under the provider\'s kid', logoutToken({}, { key: otherKey }), /not a JWT signed by the provider/],
    ['signed with a key the provider does not have', logoutToken({}, { key: strangerKey }), /not a JWT signed by the provider/],
    ['not a JWT', 'not-a-jwt', /not a JWT signed by the provider/],
    ['for another audience', logoutToken({ aud: CLIENTS.other.client_id }), /"aud" claim/],
    ['from another issuer', logoutToken({ iss: 'https://issuer.example' }), /"iss" claim/],
    ['issued too long ago', logoutToken({ iat: nowS() - 300, exp: nowS() + 60 }), /"iat" claim/],
    ['issued in the future', logoutToken({ iat: nowS() + 300, exp: nowS() + 600 }), /"iat" claim/],
    ['expired', logoutToken({ iat: nowS() - 30, exp: nowS() - 20 }), /"exp" claim/],
    ['without iat', logoutToken({ iat: undefined }), /"iat" claim/],
    ['without jti', logoutToken({ jti: undefined }), /"jti" claim/],
    ['with a jti that is no string', logoutToken({ jti: 42 as never }), /"jti" claim/],
    ['with a nonce', logoutToken({ nonce: 'n-1' }), /"nonce"/],
    ['without events', logoutToken({ events: undefined }), /no back-channel logout event/],
    ['with events but not the logout event', logoutToken({ events: { 'https://example.com/other-event': {} } }), /no back-channel logout event/],
    ['with a logout event that is no object', logoutToken({ events: { [EVENT]: true } }), /no back-channel logout event/],
    ['with events as an array', logoutToken({ events: [EVENT] }), /no back-channel logout event/],
    ['naming neither sub nor sid', logoutToken({ sub: undefined }), /neither "sub" nor "sid"/],
    ['with a sub that is no string', logoutToken({ sub: 7 as never }), /"sub" claim/],
    ['with an empty sid', logoutToken({ sid: '' }), /"sid" claim/],
    ['typed as an ID token', logoutToken({}, { typ: 'JWT' }), /"typ" header/],
    ['an ID token of the provider (no jti, typ JWT, no event)', idToken, /"jti" claim/]
  ]
  for (const [what, token, description] of cases) {
    isRefusal(t, await postLogout(rp.app, 'idp1', await token), description, what)
  }
  t.same(rp.ended, [], 'nothing ended')
  t.same(await alive(rp.app, session), LIVE, 'the session still validates and refreshes')
  t.equal((await postLogout(rp.app, 'idp1', await logoutToken())).statusCode, 200, 'the same token, unaltered, is taken')
  t.same(await alive(rp.app, session), ENDED)
})

t.test('a token is taken once: a replay is refused and ends nothing, not even a session started since', async (t) => {
  const rp = await startRp(t)
  await providerSignIn(rp.app, new Map())
  const token = await logoutToken()
  t.equal((await postLogout(rp.app, 'idp1', token)).statusCode, 200)
  t.equal(rp.ended.length, 1)
  const later = await providerSignIn(rp.app, new Map())
  isRefusal(t, await postLogout(rp.app, 'idp1', token), /used already/, 'the replay')
  t.equal(rp.ended.length, 1, 'nothing more ended')
  t.same(await alive(rp.app, later), LIVE)

  const both = await Promise.all([postLogout(rp.app, 'idp1', await logoutToken({ jti: 'twice' })), postLogout(rp.app, 'idp1', await logoutToken({ jti: 'twice' }))])
  t.same(both.map(res => res.statusCode).sort(), [200, 400], 'of two tokens with one jti, concurrent, one is taken')
  t.same(await alive(rp.app, later), ENDED)
})

t.test('providers without back-channel logout, disabled or unknown are refused alike; a malformed request too', async (t) => {
  const rp = await startRp(t)
  const session = await providerSignIn(rp.app, new Map())
  const token = await logoutToken()
  for (const provider of ['plain', 'off', 'nope', '__proto__', 'constructor']) {
    isRefusal(t, await postLogout(rp.app, provider, token), /^Back-channel logout is not enabled for this provider\.$/, provider)
  }
  isRefusal(t, await rp.app.inject({ method: 'POST', url: logoutPath('idp1') }), /logout_token parameter is missing/, 'no body')
  isRefusal(t, await postLogout(rp.app, 'idp1', ''), /logout_token parameter is missing/, 'an empty token')
  isRefusal(t, await rp.app.inject({ method: 'POST', url: logoutPath('idp1'), payload: { logout_token: 42 } }), /^The request is malformed: body field `logout_token`: expected string\.$/, 'a number')
  isRefusal(t, await postLogout(rp.app, 'idp1', 'x'.repeat(16385)), /^The request is malformed\.$/, 'too long')
  isRefusal(t, await postLogout(rp.app, 'idp1', `${token}\u0000`), /^The request is malformed\.$/, 'a NUL')
  isRefusal(t, await postLogout(rp.app, 'a.b', token), /^The request is malformed: path parameter `provider`: /, 'a provider name the settings cannot have')
  isRefusal(t, await rp.app.inject({ method: 'POST', url: logoutPath('idp1'), headers: { 'content-type': 'application/json' }, payload: '{"logout_token":' }), /^The request is malformed\.$/, 'broken JSON')
  t.same(rp.ended, [])
  t.same(await alive(rp.app, session), LIVE)
  t.equal((await postLogout(rp.app, 'idp1', token)).statusCode, 200, 'the token was not spent by the refusals')
})

t.test('the route works with authentication off and without the auth code; the per-IP limit counts it', async (t) => {
  const rp = await startRp(t, { authCodes: { requireFor: { oauth: true }, codes: [{ code: 'gate-code-1' }] } as never, limits: { requestsPerIp: { max: 3, window: '1m' } } as never })
  t.same(errorOf(await postToken(rp.app, { provider: 'idp1', code: 'some-code' })), [400, 94], 'the sign-in asks for the auth code')
  t.equal((await postLogout(rp.app, 'idp1', await logoutToken())).statusCode, 200, 'the logout does not')
  t.equal((await postLogout(rp.app, 'idp1', await logoutToken())).statusCode, 200)
  const limited = await postLogout(rp.app, 'idp1', await logoutToken())
  t.same(errorOf(limited), [429, 200], 'the plugin\'s envelope past the limit')
  t.ok(Number(limited.headers['retry-after']) > 0)

  const off = await startRp(t, { authentication: { enabled: false } } as never)
  t.equal((await postLogout(off.app, 'idp1', await logoutToken())).statusCode, 200, 'authentication off: the provider can still end sessions')
})

t.test('a provider that cannot be reached answers 502 (the envelope): the provider may try again', async (t) => {
  const down = await closedUrl()
  const { app } = await buildOAuthApp({ down: { ...providers(idp).idp1, issuer: down, backchannelLogout: true } } as never)
  t.teardown(() => app.close())
  t.same(errorOf(await postLogout(app, 'down', await logoutToken())), [502, 202])
})

t.test('a multipart body that cannot be read (multipart on) answers the envelope at 400', async (t) => {
  const { app } = await buildOAuthApp(allProviders() as never, {}, { multipart: true })
  t.teardown(() => app.close())
  const broken = multipart({ logout_token: 'x' })
  const res = await app.inject({ method: 'POST', url: logoutPath('idp1'), headers: broken.headers, payload: broken.payload.slice(0, -10) })
  t.same(errorOf(res), [400, 203])
  const whole = multipart({ logout_token: await logoutToken() })
  t.equal((await app.inject({ method: 'POST', url: logoutPath('idp1'), headers: whole.headers, payload: whole.payload })).statusCode, 200, 'a whole one is read')
})

t.test('a refusal is logged with its reason, never the token', async (t) => {
  let logs = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logs += String(chunk); done() } })
  const app = Fastify({ logger: { level: 'trace', stream } })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, oauth: { providers: allProviders() as never } } })
  t.teardown(() => app.close())
  const token = await logoutToken({ nonce: 'n' })
  isRefusal(t, await postLogout(app, 'idp1', token), /"nonce"/, 'a nonce')
  t.match(logs, /jwt-login: a back-channel logout token was refused/)
  t.match(logs, /"provider":"idp1"/)
  t.notOk(logs.includes(token), 'the token is not in the logs')
  t.notOk(logs.includes(token.split('.')[1] as string), 'nor its claims')
})
