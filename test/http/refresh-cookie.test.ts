import fastifyCookie from '@fastify/cookie'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { randomUUID } from 'node:crypto'
import { randomNonce } from 'openid-client'
import t from 'tap'
import { csrfTokenFor, REFRESH_COOKIE } from '../../lib/http/browser.js'
import jwtLogin, { JwtLoginSettingsError, MemoryStore, type SettingsInput } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, HS_SECRET, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, login, post } from '../helpers/http.js'
import { buildOAuthApp, collect, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

const COOKIE = { refresh: { enabled: true, cookie: { enabled: true } } } satisfies Partial<SettingsInput>
const APP_ORIGIN = 'https://app.example.com'
const CORS = { enabled: true, origins: [APP_ORIGIN], credentials: true }
/** The host's own origin as `inject` reaches it: `Host: localhost:80` over plain HTTP. */
const OWN_ORIGIN = 'http://localhost:80'
const K1 = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
const K2_SECRET = 'a-second-test-secret-of-at-least-32-bytes!!'

/** What a browser app holds after a sign-in in cookie mode: the JWT, the CSRF token, and (in the cookie jar) the refresh token. */
interface Browser { jwt: string, csrf: string, cookie: string }

/** The Set-Cookie header of the refresh cookie, or `undefined`. */
function setCookieOf (res: LightMyRequestResponse): string | undefined {
  const header = res.headers['set-cookie']
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header]
  return all.find(line => line.startsWith(`${REFRESH_COOKIE}=`))
}

/** The value the answer put into the refresh cookie, or `undefined` when it set none. */
function cookieValueOf (res: LightMyRequestResponse): string | undefined {
  const line = setCookieOf(res)
  return line?.slice(REFRESH_COOKIE.length + 1, line.indexOf(';'))
}

/** The attributes of the refresh cookie's Set-Cookie line, name and value left out. */
function attributesOf (res: LightMyRequestResponse): string[] {
  return (setCookieOf(res) ?? '').split('; ').slice(1)
}

/** Whether the answer tells the browser to forget the refresh cookie. */
function clearsCookie (res: LightMyRequestResponse): boolean {
  return cookieValueOf(res) === '' && attributesOf(res).includes('Max-Age=0')
}

const jar = (value: string): Record<string, string> => ({ cookie: `${REFRESH_COOKIE}=${value}` })

/** A browser app's sign-in: the answer, checked, as the app would keep it. */
async function signIn (app: FastifyInstance, headers: Record<string, string> = {}): Promise<Browser> {
  const res = await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, headers)
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
  const cookie = cookieValueOf(res)
  if (cookie === undefined) throw new Error('sign-in set no refresh cookie')
  return { jwt: res.json().data.jwt, csrf: res.json().data.csrf_token, cookie }
}

/** A refresh the way the app makes it: the cookie, and the CSRF token in X-CSRF-Token. */
async function refresh (app: FastifyInstance, cookie: string, csrf?: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await post(app, '/auth/refresh', {}, { ...jar(cookie), ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }), ...headers })
}

async function revokeWithCookie (app: FastifyInstance, cookie: string, csrf?: string): Promise<LightMyRequestResponse> {
  return await post(app, '/auth/revoke', {}, { ...jar(cookie), ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) })
}

const sidOf = (refreshToken: string): string => refreshToken.slice(0, refreshToken.indexOf('.'))
/** The CSRF token jwt-login would answer for `sessionId` under key k1, for refresh tokens no sign-in handed out as cookies. */
const csrfUnder = (sessionId: string): string => csrfTokenFor(resolveSettings(K1), sessionId)

t.test('cookie mode: /auth answers the jwt and a csrf_token, the refresh token goes into a __Host- cookie', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const res = await login(app)
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.same(Object.keys(data).sort(), ['csrf_token', 'jwt'], 'no refresh_token in the body')
  t.match(data.csrf_token, /^[A-Za-z0-9_-]{43}$/)

  const value = cookieValueOf(res) as string
  t.match(value, /^[0-9a-z]+-[0-9a-f-]{36}\.[A-Za-z0-9_-]{65}\.\d+$/, '<session id>.<secret>.<user id>')
  t.equal(sidOf(value), claimsOf(data.jwt).sid, 'the session of the jwt')
  t.notOk(res.body.includes(value.split('.')[1] as string), 'the secret is not in the body')
  const attributes = attributesOf(res)
  for (const attribute of ['HttpOnly', 'Secure', 'Path=/', 'SameSite=Strict', `Max-Age=${14 * 24 * 3600}`]) {
    t.ok(attributes.includes(attribute), attribute)
  }
  t.notOk(attributes.some(a => a.toLowerCase().startsWith('domain')), 'no Domain: __Host- forbids it')
})

t.test('cookie mode: sameSite lax and the refresh lifetime show in the cookie', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true, lifetime: '2h', cookie: { enabled: true, sameSite: 'lax' } } })
  t.teardown(() => app.close())
  const res = await login(app)
  t.equal(res.statusCode, 200)
  t.ok(attributesOf(res).includes('SameSite=Lax'))
  t.notOk(attributesOf(res).includes('SameSite=Strict'))
  t.ok(attributesOf(res).includes('Max-Age=7200'))
})

t.test('refresh through the cookie and X-CSRF-Token rotates the cookie; the csrf_token stays the session\'s', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(COOKIE, { clock })
  t.teardown(() => app.close())
  const refreshed = collect(app, 'token.refreshed')
  const first = await signIn(app)
  clock.advance(1000)

  const res = await refresh(app, first.cookie, first.csrf)
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.same(Object.keys(data).sort(), ['csrf_token', 'jwt'], 'no refresh_token in the body')
  t.equal(data.csrf_token, first.csrf, 'the same csrf token for the whole session')
  t.not(data.jwt, first.jwt)
  t.equal(claimsOf(data.jwt).sid, claimsOf(first.jwt).sid, 'same session')
  const second = cookieValueOf(res) as string
  t.ok(second !== undefined && second !== first.cookie, 'a new refresh token in the cookie')
  t.equal(sidOf(second), sidOf(first.cookie))
  t.ok(attributesOf(res).includes('HttpOnly') && attributesOf(res).includes('Secure'), 'the rotated cookie keeps its attributes')
  t.same(refreshed, [{ userId: 1, sessionId: sidOf(first.cookie), ip: '127.0.0.1' }])

  // the CSRF token in the body instead of the header: JSON, then a form
  const json = await post(app, '/auth/refresh', { csrf_token: first.csrf }, jar(second))
  t.equal(json.statusCode, 200, json.body)
  const third = cookieValueOf(json) as string
  t.not(third, second)
  const form = await app.inject({
    method: 'POST',
    url: '/jwt-login/v1/auth/refresh',
    headers: { ...jar(third), 'content-type': 'application/x-www-form-urlencoded' },
    payload: `csrf_token=${first.csrf}`
  })
  t.equal(form.statusCode, 200, form.body)
  // an empty header is no token: the field is read
  const fourth = cookieValueOf(form) as string
  const empty = await post(app, '/auth/refresh', { csrf_token: first.csrf }, { ...jar(fourth), 'x-csrf-token': '' })
  t.equal(empty.statusCode, 200, empty.body)
  t.equal(empty.json().data.csrf_token, first.csrf)
})

t.test('refresh with the cookie but no CSRF token: 403 / 209 and nothing changed', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(COOKIE, { clock })
  t.teardown(() => app.close())
  const reused = collect(app, 'refresh.reused')
  const first = await signIn(app)

  const bare = await refresh(app, first.cookie)
  t.same(errorOf(bare), [403, 209])
  t.equal(setCookieOf(bare), undefined, 'the cookie is left alone')
  const emptyField = await post(app, '/auth/refresh', { csrf_token: '' }, jar(first.cookie))
  t.same(errorOf(emptyField), [403, 209], 'an empty csrf_token is none')

  // past the reuse interval: were the refused tries a use, this would be a reuse that ends the session
  clock.advance(60_000)
  const res = await refresh(app, first.cookie, first.csrf)
  t.equal(res.statusCode, 200, 'the same cookie still refreshes')
  t.same(reused, [], 'no reuse was seen')
  t.equal((await post(app, '/auth/validate', { JWT: first.jwt })).statusCode, 200, 'the session lives')
})

t.test('another session\'s csrf_token, or a forged one, is refused with 209', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const mine = await signIn(app)
  const theirs = await signIn(app)
  t.not(mine.csrf, theirs.csrf, 'each session has its own csrf token')

  t.same(errorOf(await refresh(app, mine.cookie, theirs.csrf)), [403, 209])
  t.same(errorOf(await refresh(app, mine.cookie, mine.csrf.slice(0, -1) + (mine.csrf.endsWith('A') ? 'B' : 'A'))), [403, 209], 'one character changed')
  t.same(errorOf(await refresh(app, mine.cookie, 'x')), [403, 209], 'a short token')
  t.same(errorOf(await revokeWithCookie(app, mine.cookie, theirs.csrf)), [403, 209], 'revoke checks it too')
  t.equal((await refresh(app, mine.cookie, mine.csrf)).statusCode, 200)
  t.equal((await refresh(app, theirs.cookie, theirs.csrf)).statusCode, 200)
})

t.test('Origin: a page not in cors.origins, and not the host\'s own, may neither set nor use the cookie (403 / 208)', async (t) => {
  const { app } = await buildApp({ ...COOKIE, cors: CORS })
  t.teardown(() => app.close())
  const succeeded = collect(app, 'login.succeeded')
  const failed = collect(app, 'login.failed')
  const foreign = { origin: 'https://evil.example.com' }

  const denied = await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, foreign)
  t.same(errorOf(denied), [403, 208])
  t.equal(setCookieOf(denied), undefined, 'no cookie set')
  t.same(succeeded, [], 'the login did not happen')
  t.same(failed, [], 'nor counted as a failed one')
  const wrongPassword = await post(app, '/auth', { email: ALICE.email, password: 'wrong' }, foreign)
  t.same(errorOf(wrongPassword), [403, 208], 'refused before the password is looked at')
  t.same(failed, [])

  const session = await signIn(app)
  const refused = await refresh(app, session.cookie, session.csrf, foreign)
  t.same(errorOf(refused), [403, 208])
  t.equal(setCookieOf(refused), undefined, 'the cookie is untouched')
  for (const origin of ['null', 'https://localhost:80', 'http://localhost', `${APP_ORIGIN}/`, 'https://app.example.com.evil.example']) {
    t.same(errorOf(await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin })), [403, 208], origin)
  }
})

t.test('Origin: a refusal on /auth/refresh and /auth/revoke leaves the session working', async (t) => {
  const { app } = await buildApp({ ...COOKIE, cors: CORS })
  t.teardown(() => app.close())
  const session = await signIn(app)
  const foreign = { origin: 'https://evil.example.com' }
  t.same(errorOf(await refresh(app, session.cookie, session.csrf, foreign)), [403, 208])
  const revoke = await post(app, '/auth/revoke', {}, { ...jar(session.cookie), 'x-csrf-token': session.csrf, ...foreign })
  t.same(errorOf(revoke), [403, 208])
  t.equal(setCookieOf(revoke), undefined)
  t.equal((await refresh(app, session.cookie, session.csrf)).statusCode, 200, 'the cookie still works')
})

t.test('Origin: one of cors.origins, the host\'s own origin, or none at all is allowed', async (t) => {
  const { app } = await buildApp({ ...COOKIE, cors: CORS })
  t.teardown(() => app.close())
  for (const origin of [APP_ORIGIN, OWN_ORIGIN]) {
    const session = await signIn(app, { origin })
    const res = await refresh(app, session.cookie, session.csrf, { origin })
    t.equal(res.statusCode, 200, `${origin}: ${res.body}`)
    const revoked = await revokeWithCookie(app, cookieValueOf(res) as string, session.csrf)
    t.equal(revoked.statusCode, 200, origin)
  }
  const session = await signIn(app)
  t.same(errorOf(await refresh(app, session.cookie)), [403, 209], 'without Origin the CSRF token is still needed')
  t.equal((await refresh(app, session.cookie, session.csrf)).statusCode, 200)
})

t.test('Origin: cors.origins count in cookie mode with cors off too; outside cookie mode Origin is not checked', async (t) => {
  const listed = await buildApp({ ...COOKIE, cors: { enabled: false, origins: [APP_ORIGIN] } })
  t.teardown(() => listed.app.close())
  const session = await signIn(listed.app, { origin: APP_ORIGIN })
  t.equal((await refresh(listed.app, session.cookie, session.csrf, { origin: APP_ORIGIN })).statusCode, 200)
  t.same(errorOf(await post(listed.app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin: 'https://evil.example.com' })), [403, 208])

  const bearer = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => bearer.app.close())
  const res = await post(bearer.app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin: 'https://evil.example.com' })
  t.equal(res.statusCode, 200, 'without the cookie there is nothing to forge')
  const refreshed = await post(bearer.app, '/auth/refresh', { refresh_token: res.json().data.refresh_token }, { origin: 'https://evil.example.com' })
  t.equal(refreshed.statusCode, 200)
})

t.test('cookie mode: a refresh_token in the body is still taken, without a CSRF token, and its successor goes into the cookie', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)

  const res = await post(app, '/auth/refresh', { refresh_token: session.cookie })
  t.equal(res.statusCode, 200, res.body)
  t.same(Object.keys(res.json().data).sort(), ['csrf_token', 'jwt'])
  t.equal(res.json().data.csrf_token, session.csrf)
  const next = cookieValueOf(res) as string
  t.ok(next !== undefined && next !== session.cookie, 'the new refresh token is in the cookie')

  // a cookie beside the field: the field is the credential, no CSRF token needed
  const both = await post(app, '/auth/refresh', { refresh_token: next }, jar('not-the-one-used'))
  t.equal(both.statusCode, 200, both.body)

  // a body token refused: no cookie was used, so none is cleared
  const bad = await post(app, '/auth/refresh', { refresh_token: 'garbage' }, jar(cookieValueOf(both) as string))
  t.same(errorOf(bad), [401, 51])
  t.equal(setCookieOf(bad), undefined, 'the cookie is not cleared for a token it did not carry')
})

t.test('revoke with the JWT ends the session and clears the cookie', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)
  const res = await post(app, '/auth/revoke', {}, { authorization: `Bearer ${session.jwt}` })
  t.equal(res.statusCode, 200, res.body)
  t.ok(clearsCookie(res), `cleared: ${setCookieOf(res) ?? 'no Set-Cookie'}`)
  t.ok(attributesOf(res).includes('Path=/') && attributesOf(res).includes('Secure'), 'cleared with the attributes it was set with')
  t.same(errorOf(await refresh(app, session.cookie, session.csrf)), [401, 51], 'its refresh token went with it')

  // a JWT and a cookie: the JWT names the session, no CSRF token needed
  const other = await signIn(app)
  const both = await post(app, '/auth/revoke', { JWT: other.jwt }, jar(other.cookie))
  t.equal(both.statusCode, 200, both.body)
  t.ok(clearsCookie(both))
  t.same(errorOf(await post(app, '/auth/validate', { JWT: other.jwt })), [401, 55])
})

t.test('revoke with only the cookie and the CSRF token ends that session and clears the cookie', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const revoked = collect(app, 'token.revoked')
  const session = await signIn(app)
  const bystander = await signIn(app)

  const res = await revokeWithCookie(app, session.cookie, session.csrf)
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json(), { success: true, message: 'Token was revoked.', data: { message: 'Token was revoked.' } }, 'no data.jwt: the cookie ended the session')
  t.ok(clearsCookie(res))
  t.same(errorOf(await post(app, '/auth/validate', { JWT: session.jwt })), [401, 55], 'its JWT is revoked')
  const dead = await refresh(app, session.cookie, session.csrf)
  t.same(errorOf(dead), [401, 51], 'its refresh token too')
  t.ok(clearsCookie(dead), 'a refresh with a dead cookie clears it')

  t.equal(revoked.length, 1)
  t.strictSame(revoked[0], { userId: 1, sessionId: sidOf(session.cookie), ip: '127.0.0.1' }, 'token.revoked names the user and session')
  t.notOk(Object.hasOwn(revoked[0] as object, 'jti'), 'no jti: no JWT was presented')

  const again = await revokeWithCookie(app, session.cookie, session.csrf)
  t.same(errorOf(again), [401, 51], 'an ended session cannot be ended again')
  t.ok(clearsCookie(again))
  t.equal(revoked.length, 1)
  t.equal((await refresh(app, bystander.cookie, bystander.csrf)).statusCode, 200, 'other sessions live on')
})

t.test('revoke with the cookie but no CSRF token is 403 / 209 and the session lives; no credential at all is 400 / 53', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)
  const res = await revokeWithCookie(app, session.cookie)
  t.same(errorOf(res), [403, 209])
  t.equal(setCookieOf(res), undefined)
  t.equal((await post(app, '/auth/validate', { JWT: session.jwt })).statusCode, 200)
  t.equal((await refresh(app, session.cookie, session.csrf)).statusCode, 200)

  const none = await post(app, '/auth/revoke', {})
  t.same(errorOf(none), [400, 53])
  t.same(errorOf(await post(app, '/auth/revoke', {}, jar(''))), [400, 53], 'an empty cookie is none')
  t.same(errorOf(await post(app, '/auth/revoke', {}, { cookie: 'other=1' })), [400, 53], 'another cookie is none')
})

t.test('revoke through the cookie: the previous token may end the session; an older one, garbage or an unknown session is 401 / 51', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(COOKIE, { clock })
  t.teardown(() => app.close())
  const session = await signIn(app)
  const t0 = session.cookie
  const t1 = cookieValueOf(await refresh(app, t0, session.csrf)) as string
  const t2 = cookieValueOf(await refresh(app, t1, session.csrf)) as string
  t.equal(new Set([t0, t1, t2]).size, 3, 'three rotations')

  const stale = await revokeWithCookie(app, t0, session.csrf)
  t.same(errorOf(stale), [401, 51], 'older than the previous token')
  t.ok(clearsCookie(stale))
  const sid = sidOf(t0)
  const garbage = await revokeWithCookie(app, `${sid}.garbage`, session.csrf)
  t.same(errorOf(garbage), [401, 51], 'not a refresh token of the session')
  t.ok(clearsCookie(garbage))
  const abc = await revokeWithCookie(app, 'abc', csrfUnder(''))
  t.same(errorOf(abc), [401, 51], 'not a refresh token at all')
  t.ok(clearsCookie(abc))
  const otherSid = `${clock.now.toString(36)}-${randomUUID()}`
  const unknown = await revokeWithCookie(app, `${otherSid}.${'A'.repeat(43)}`, csrfUnder(otherSid))
  t.same(errorOf(unknown), [401, 51], 'a session that does not exist')
  t.ok(clearsCookie(unknown))
  t.equal((await post(app, '/auth/validate', { JWT: session.jwt })).statusCode, 200, 'none of that ended the session')

  // t1 is the previous token: a client whose last rotation answer was lost still signs out
  const previous = await revokeWithCookie(app, t1, session.csrf)
  t.equal(previous.statusCode, 200, previous.body)
  t.ok(clearsCookie(previous))
  t.same(errorOf(await refresh(app, t2, session.csrf)), [401, 51], 'the current token went with it')
  t.same(errorOf(await post(app, '/auth/validate', { JWT: session.jwt })), [401, 55])
})

t.test('revoke through the cookie with the current token of a session that never rotated', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)
  const res = await revokeWithCookie(app, session.cookie, session.csrf)
  t.equal(res.statusCode, 200)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: session.jwt })), [401, 55])
})

t.test('refresh with a dead cookie is 401 / 51 and clears it; a user gone (24) clears it too', async (t) => {
  const { app, users } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)
  await app.jwtLogin.revoke(session.jwt)
  const res = await refresh(app, session.cookie, session.csrf)
  t.same(errorOf(res), [401, 51])
  t.ok(clearsCookie(res), `cleared: ${setCookieOf(res) ?? 'no Set-Cookie'}`)

  const next = await signIn(app)
  await users.removeUser(1)
  const gone = await refresh(app, next.cookie, next.csrf)
  t.same(errorOf(gone), [401, 24])
  t.ok(clearsCookie(gone))
})

t.test('a cookie replayed after its rotation (past the reuse interval) is a reuse: the session ends and the cookie is cleared', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(COOKIE, { clock })
  t.teardown(() => app.close())
  const reused = collect(app, 'refresh.reused')
  const session = await signIn(app)
  const current = cookieValueOf(await refresh(app, session.cookie, session.csrf)) as string
  clock.advance(30_001)
  const replay = await refresh(app, session.cookie, session.csrf)
  t.same(errorOf(replay), [401, 51])
  t.ok(clearsCookie(replay))
  t.same(reused, [{ userId: 1, sessionId: sidOf(session.cookie), ip: '127.0.0.1' }])
  t.same(errorOf(await refresh(app, current, session.csrf)), [401, 51], 'the current cookie went with the session')
})

t.test('a host that registered @fastify/cookie itself: the plugin uses it, and the host\'s cookies still work', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyCookie)
  await app.register(jwtLogin, { users, settings: { ...K1, ...COOKIE } })
  app.get('/theme', async (request) => ({ theme: request.cookies.theme ?? null }))
  await app.ready()
  const session = await signIn(app)
  const res = await refresh(app, session.cookie, session.csrf)
  t.equal(res.statusCode, 200, res.body)
  t.ok(attributesOf(res).includes('HttpOnly'))
  const theme = await app.inject({ url: '/theme', headers: { cookie: `theme=dark; ${REFRESH_COOKIE}=${session.cookie}` } })
  t.same(theme.json(), { theme: 'dark' }, 'the host\'s own parsing hook still runs')
})

t.test('/auth/2fa in cookie mode sets the cookie and answers the csrf_token', async (t) => {
  const { app, clock, secret, login: loginBob, submit } = await buildTwoFactorApp({ settings: COOKIE })
  t.teardown(() => app.close())
  const first = await loginBob()
  t.equal(first.statusCode, 200)
  t.equal(first.json().data.two_factor_required, true)
  t.equal(setCookieOf(first), undefined, 'no cookie before the second factor')
  const interim = first.json().data.jwt as string

  const foreign = await submit({ JWT: interim, code: await totpAt(secret, clock.now) }, { origin: 'https://evil.example.com' })
  t.same(errorOf(foreign), [403, 208], 'the second step sets the cookie: Origin is checked')

  const res = await submit({ JWT: interim, code: await totpAt(secret, clock.now) })
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.notOk(Object.hasOwn(data, 'refresh_token'))
  t.type(data.csrf_token, 'string')
  const cookie = cookieValueOf(res) as string
  t.equal(sidOf(cookie), claimsOf(data.jwt).sid)
  t.ok(attributesOf(res).includes('HttpOnly'))
  t.equal((await refresh(app, cookie, data.csrf_token)).statusCode, 200, 'the cookie refreshes with the csrf token')
})

t.test('POST /oauth/token in cookie mode sets the cookie and answers the csrf_token', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const { app } = await buildOAuthApp(providers(idp), COOKIE)
  t.teardown(() => app.close())
  const nonce = randomNonce()
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce })

  const foreign = await post(app, '/oauth/token', { provider: 'idp1', id_token: idToken, nonce }, { origin: 'https://evil.example.com' })
  t.same(errorOf(foreign), [403, 208])

  const res = await postToken(app, { provider: 'idp1', id_token: idToken, nonce })
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.notOk(Object.hasOwn(data, 'refresh_token'))
  t.type(data.csrf_token, 'string')
  t.equal(data.user.user_email, ALICE.email)
  const cookie = cookieValueOf(res) as string
  t.equal(sidOf(cookie), claimsOf(data.jwt).sid)
  t.equal((await refresh(app, cookie, data.csrf_token)).statusCode, 200)
})

t.test('cookie mode needs refresh on: without it /auth answers the jwt alone and sets no cookie', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: false, cookie: { enabled: true } } })
  t.teardown(() => app.close())
  const res = await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin: 'https://evil.example.com' })
  t.equal(res.statusCode, 200, 'not cookie mode: Origin is not checked')
  t.same(Object.keys(res.json().data), ['jwt'])
  t.equal(setCookieOf(res), undefined)
  const revoke = await post(app, '/auth/revoke', { JWT: res.json().data.jwt })
  t.equal(revoke.statusCode, 200)
  t.equal(setCookieOf(revoke), undefined, 'no cookie to clear')
})

t.test('cookie mode off (the default): refresh_token in the body, no cookie, and a refresh cookie is ignored', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  const res = await login(app)
  t.same(Object.keys(res.json().data).sort(), ['jwt', 'refresh_token'])
  t.equal(res.headers['set-cookie'], undefined)
  const token = res.json().data.refresh_token as string

  const cookieOnly = await refresh(app, token, csrfUnder(sidOf(token)))
  t.same(errorOf(cookieOnly), [400, 51], 'the cookie is not read: the refresh token is missing')
  const revoke = await revokeWithCookie(app, token, csrfUnder(sidOf(token)))
  t.same(errorOf(revoke), [400, 53], 'nor by revoke')
  const body = await post(app, '/auth/refresh', { refresh_token: token })
  t.equal(body.statusCode, 200)
  t.equal(body.headers['set-cookie'], undefined)
  t.ok(typeof body.json().data.refresh_token === 'string')
  const revoked = await post(app, '/auth/revoke', { JWT: body.json().data.jwt })
  t.equal(revoked.statusCode, 200)
  t.equal(revoked.headers['set-cookie'], undefined, 'revoke clears no cookie outside cookie mode')
})

/** The plugin on an async settings source the test changes, as a host's admin screen would. */
async function buildLive (initial: SettingsInput, store?: MemoryStore): Promise<{ app: FastifyInstance, source: { current: SettingsInput } }> {
  const source = { current: initial }
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, settings: async () => source.current, ...(store === undefined ? {} : { store }) })
  await app.ready()
  return { app, source }
}

t.test('a settings reload that turns cookie mode on changes the next /auth answer', async (t) => {
  const { app, source } = await buildLive({ ...K1, refresh: { enabled: true } })
  t.teardown(() => app.close())
  const before = await login(app)
  t.ok(Object.hasOwn(before.json().data, 'refresh_token'))
  t.equal(setCookieOf(before), undefined)

  source.current = { ...K1, ...COOKIE }
  await app.jwtLogin.reloadSettings()
  const after = await login(app)
  t.same(Object.keys(after.json().data).sort(), ['csrf_token', 'jwt'])
  t.ok(cookieValueOf(after) !== undefined, 'the cookie is set')
  // the session begun before the reload is now refreshed the browser way
  const old = before.json().data.refresh_token as string
  t.equal((await refresh(app, old, csrfUnder(sidOf(old)))).statusCode, 200)

  source.current = { ...K1, refresh: { enabled: true } }
  await app.jwtLogin.reloadSettings()
  t.ok(Object.hasOwn((await login(app)).json().data, 'refresh_token'), 'and off again')
})

t.test('key rotation: a csrf_token checks while its key is listed, and not once it is gone', async (t) => {
  // keys change only with a restart (a reload that changes them is refused), so each key list is its own instance on one store
  const store = new MemoryStore()
  const k1 = { kid: 'k1', secret: HS_SECRET }
  const k2 = { kid: 'k2', secret: K2_SECRET }
  const a = await buildLive({ tokens: { keys: [k1] }, ...COOKIE }, store)
  t.teardown(() => a.app.close())
  a.source.current = { tokens: { keys: [k2, k1] }, ...COOKIE }
  await t.rejects(a.app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'tokens/keys' }, 'no key rotation through a reload')
  a.source.current = { tokens: { keys: [k1] }, ...COOKIE }

  const session = await signIn(a.app)
  const b = await buildLive({ tokens: { keys: [k2, k1] }, ...COOKIE }, store)
  t.teardown(() => b.app.close())
  const res = await refresh(b.app, session.cookie, session.csrf)
  t.equal(res.statusCode, 200, `the k1 token checks under [k2, k1]: ${res.body}`)
  const underK2 = res.json().data.csrf_token as string
  t.not(underK2, session.csrf, 'the answer carries the token under the new first key')
  const cookie = cookieValueOf(res) as string

  const c = await buildLive({ tokens: { keys: [k2] }, ...COOKIE }, store)
  t.teardown(() => c.app.close())
  t.same(errorOf(await refresh(c.app, cookie, session.csrf)), [403, 209], 'k1 removed: its token no longer checks')
  const last = await refresh(c.app, cookie, underK2)
  t.equal(last.statusCode, 200, 'the k2 token does')
  t.equal(last.json().data.csrf_token, underK2)
})

/** What a registration was refused with, or `null` when it was not (the app is then closed). */
async function refusalOf (building: Promise<{ app: FastifyInstance }>): Promise<unknown> {
  return await building.then(async ({ app }) => { await app.close(); return null }, (error: unknown) => error)
}

t.test('refused settings: cookie mode across origins without cors.credentials; origins not as browsers send them', async (t) => {
  const crossOrigin = { ...COOKIE, cors: { enabled: true, origins: [APP_ORIGIN], credentials: false } }
  const refused = await refusalOf(buildApp(crossOrigin))
  t.type(refused, JwtLoginSettingsError)
  t.match(refused, { path: 'cors/credentials', message: /cors\/credentials/ })

  // each part of the rule matters: cors off, no origins, or cookie mode off is accepted
  for (const settings of [
    { ...COOKIE, cors: { enabled: false, origins: [APP_ORIGIN], credentials: false } },
    { ...COOKIE, cors: { enabled: true, origins: [], credentials: false } },
    { refresh: { enabled: true }, cors: { enabled: true, origins: [APP_ORIGIN], credentials: false } }
  ]) {
    const { app } = await buildApp(settings)
    const res = await post(app, '/auth', { email: ALICE.email, password: ALICE.password })
    t.equal(res.statusCode, 200, `accepted and serving: ${JSON.stringify(settings)}`)
    await app.close()
  }

  for (const origin of [`${APP_ORIGIN}/`, 'https://APP.example.com', `${APP_ORIGIN}/path`, '*', 'https://app.example.com:443', 'https://not a host']) {
    const error = await refusalOf(buildApp({ cors: { enabled: true, origins: [origin], credentials: true } }))
    t.type(error, JwtLoginSettingsError, origin)
    t.match(error, { path: 'cors/origins/0', message: /cors\/origins\/0/ }, origin)
  }
})

t.test('refused on reload too: the last good settings stay', async (t) => {
  const { app, source } = await buildLive({ ...K1, ...COOKIE })
  t.teardown(() => app.close())
  source.current = { ...K1, ...COOKIE, cors: { enabled: true, origins: [APP_ORIGIN] } }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'cors/credentials' })
  t.equal((await signIn(app, { origin: OWN_ORIGIN })).csrf.length, 43, 'cookie mode still answers')
  t.same(errorOf(await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin: APP_ORIGIN })), [403, 208], 'the refused origins are not in force')
})

t.test('sign-out with an expired JWT, the cookie and the CSRF token ends the cookie\'s session and clears the cookie', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(COOKIE, { clock })
  t.teardown(() => app.close())
  const session = await signIn(app)
  clock.advance(60 * 60 * 1000)
  const res = await post(app, '/auth/revoke', {}, { ...jar(session.cookie), authorization: `Bearer ${session.jwt}`, 'x-csrf-token': session.csrf })
  t.equal(res.statusCode, 200, 'the cookie names the session: the expired JWT is not what is checked')
  t.ok(clearsCookie(res))
  t.same(errorOf(await refresh(app, session.cookie, session.csrf)), [401, 51], 'the session is over')

  const other = await signIn(app)
  const withoutCsrf = await post(app, '/auth/revoke', {}, { ...jar(other.cookie), authorization: `Bearer ${session.jwt}` })
  t.same(errorOf(withoutCsrf), [401, 14], 'without the CSRF token the JWT is the credential, and it has expired')
  t.equal(setCookieOf(withoutCsrf), undefined, 'the cookie stays')
  t.equal((await refresh(app, other.cookie, other.csrf)).statusCode, 200)
})

t.test('revoke through the cookie of a session that a user cutoff ended: 401 / 51, cleared, and no event', async (t) => {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  const { app } = await buildApp(COOKIE, { clock, store })
  t.teardown(() => app.close())
  const revoked = collect(app, 'token.revoked')
  const session = await signIn(app)
  clock.advance(1000)
  await store.set(stateKeys.userCutoff(1), String(clock.now), 60_000)
  const res = await revokeWithCookie(app, session.cookie, session.csrf)
  t.same(errorOf(res), [401, 51])
  t.ok(clearsCookie(res))
  t.same(revoked, [])
})

t.test('cookie mode with refresh off is inactive: cors without credentials is accepted', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: false, cookie: { enabled: true } }, cors: { enabled: true, origins: [APP_ORIGIN], credentials: false } })
  t.teardown(() => app.close())
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password }, { origin: APP_ORIGIN })).statusCode, 200)
})

t.test('sign-out from a tab whose CSRF token is stale (another tab signed in since): the JWT speaks, and the other session\'s cookie stays', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const tab1 = await signIn(app)
  const tab2 = await signIn(app)
  // the browser holds tab 2's cookie now; tab 1 still has its JWT and CSRF token
  const res = await post(app, '/auth/revoke', {}, { ...jar(tab2.cookie), authorization: `Bearer ${tab1.jwt}`, 'x-csrf-token': tab1.csrf })
  t.equal(res.statusCode, 200, res.body)
  t.equal(setCookieOf(res), undefined, "tab 2's cookie is not cleared")
  t.same(errorOf(await post(app, '/auth/validate', { JWT: tab1.jwt })), [401, 55], "tab 1's session ended")
  t.equal((await refresh(app, tab2.cookie, tab2.csrf)).statusCode, 200, "tab 2's session lives")

  const own = await post(app, '/auth/revoke', {}, { ...jar(tab2.cookie), authorization: `Bearer ${tab2.jwt}` })
  t.equal(own.statusCode, 200)
  t.ok(clearsCookie(own), 'a JWT of the cookie\'s own session clears it')
})

t.test('a refresh cookie of a session its user\'s lock ended answers 403 / 251 and is cleared', async (t) => {
  const { app } = await buildApp(COOKIE)
  t.teardown(() => app.close())
  const session = await signIn(app)
  await app.jwtLogin.lockUser(1, { reason: 'compromised' })
  const res = await refresh(app, session.cookie, session.csrf)
  t.same(errorOf(res), [403, 251])
  t.ok(clearsCookie(res), 'the session never comes back: the cookie goes')
})
