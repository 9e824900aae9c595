/**
 * `npm run test:browser` (not part of `npm test`), after swagger-ui.ts: the
 * Simple JWT Login JavaScript SDK (npm `simple-jwt-login`) on a page of one
 * origin calling the plugin on another, in the system Chromium through
 * playwright-core (`CHROMIUM_PATH`, default /usr/bin/chromium; playwright's
 * own browser downloads are not used).
 *
 * The page is `http://localhost:<page port>` and the API
 * `http://localhost:<api port>`: cross-origin (CORS applies) but same-site
 * (cookies are not port-scoped, and `SameSite=Strict` still sends them).
 * Chromium counts `http://localhost` as a secure context, so it keeps the
 * `Secure` `__Host-` refresh cookie over plain http (the run checks it): no
 * certificate is needed. Two origins are not in `cors.origins`:
 * `http://127.0.0.1:<page port>` (another site: the browser must block the
 * calls) and `http://localhost:<other port>` (the same site, so the cookie
 * goes along: the API must refuse it on its `Origin`).
 *
 * The API has the alias `/wp-json/simple-jwt-login/v1`, so the SDK's default
 * namespace (`/?rest_route=/simple-jwt-login/v1/…`) reaches it: the sign-ins
 * and the register and delete calls use it, the other calls name
 * `/jwt-login/v1`.
 *
 * The SDK is bundled for the page at run time with esbuild (no CDN). It
 * sends every call as a synchronous XHR when given a callback, and never
 * sets `withCredentials`: a page using the refresh cookie must set it itself,
 * as PAGE_SCRIPT does by wrapping `XMLHttpRequest.prototype.open`.
 */
import { rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { build } from 'esbuild'
import Fastify, { type FastifyInstance } from 'fastify'
import type { BrowserContext, Cookie, Page } from 'playwright-core'
import jwtLogin, { type Mailer, type MailMessage, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { CHROMIUM, chromiumFound, launchChromium, newProfile, PREFIX as NAMESPACE, TIMEOUT } from './kit.js'

/** The SDK's default namespace (`/simple-jwt-login/v1`): the page passes `''`, and the SDK keeps its default. */
const SDK_DEFAULT = ''
const ALIAS = '/wp-json/simple-jwt-login/v1'
const REFRESH_COOKIE = '__Host-jwt-login-refresh'
const USER = { login: 'sam', email: 'sam@example.test', password: 'first passphrase of sam', roles: ['editor'] }
const NEWCOMER = { email: 'newcomer@example.test', password: 'passphrase of the newcomer' }
const NEW_PASSWORD = 'second passphrase of sam'
const SECRET = 'browser-test-secret-that-is-at-least-32-bytes'

/**
 * The page's helpers (plain JS: it runs in Chromium as written, never
 * transpiled). `jl.sdk` makes one SDK call with a callback and answers the
 * status and the parsed body; `jl.raw` is a bare async XHR (headers the SDK
 * cannot send, response headers it hides); `jl.seen` is every response text
 * an XHR of the page received.
 */
const PAGE_SCRIPT = `
window.jl = (() => {
  const seen = []
  let credentials = false
  let last = null
  const open = XMLHttpRequest.prototype.open
  XMLHttpRequest.prototype.open = function (...args) {
    open.apply(this, args)
    // The SDK never sets withCredentials. Without it the browser neither sends
    // nor stores the refresh cookie on a cross-origin call: a page using
    // refresh.cookie sets it on every XHR, as here.
    if (credentials) this.withCredentials = true
    last = this
  }
  const send = XMLHttpRequest.prototype.send
  XMLHttpRequest.prototype.send = function (body) {
    try {
      return send.call(this, body)
    } finally {
      if (this.readyState === 4) seen.push(this.responseText)
      else this.addEventListener('loadend', () => { seen.push(this.responseText) })
    }
  }
  const parse = (text) => { try { return JSON.parse(text) } catch { return null } }
  const sdk = (api, namespace, method, params) => {
    const client = new SJL.SimpleJwtLogin(api, namespace)
    let answer = null
    client.withCallback((body, status) => { answer = { status, body } })
    try {
      client[method](params)
    } catch (error) {
      return { status: last.status, body: null, threw: String(error) }
    }
    if (answer === null) return { status: last.status, body: null, threw: 'the callback was not called' }
    // on an error status the SDK hands over the text as body.response
    return { status: answer.status, body: answer.body.error === 'true' ? parse(answer.body.response) : answer.body }
  }
  const raw = (method, url, headers, body) => new Promise((resolve) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method, url)
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    xhr.addEventListener('loadend', () => {
      resolve({ status: xhr.status, body: parse(xhr.responseText), retryAfter: xhr.getResponseHeader('Retry-After') })
    })
    xhr.send(body)
  })
  return {
    sdk,
    raw,
    setCredentials: (on) => { credentials = on },
    cookies: () => document.cookie,
    seen: () => seen.slice()
  }
})()
`

const PAGE_HTML = '<!doctype html><meta charset="utf-8"><title>SJL SDK</title><script src="/sdk.js"></script><script src="/page.js"></script>'

type Fields = Record<string, string>
/** An SDK call's parameters: its interfaces type the fields a caller leaves out as `null`. */
type Params = Record<string, string | null>
type SdkMethod = 'authenticate' | 'validateToken' | 'refreshToken' | 'revokeToken' | 'resetPassword' | 'changePassword' | 'registerUser' | 'deleteUser'

/** One call's outcome as the page saw it. */
interface Answer {
  status: number
  body: { success?: boolean, data?: Record<string, unknown> } | null
  threw?: string
  retryAfter?: string | null
}

/** What PAGE_SCRIPT puts on `window.jl`. */
interface PageHelpers {
  sdk: (api: string, namespace: string, method: SdkMethod, params: Params) => Answer
  raw: (method: string, url: string, headers: Fields, body: string | null) => Promise<Answer>
  setCredentials: (on: boolean) => void
  cookies: () => string
  seen: () => string[]
}

/** The pass/fail record, printed as TAP-like lines. */
class Checks {
  passed = 0
  failed = 0

  check (name: string, pass: boolean, detail?: unknown): void {
    if (pass) {
      this.passed++
      console.log(`ok - ${name}`)
    } else {
      this.failed++
      console.log(`not ok - ${name}`)
      if (detail !== undefined) console.log(`  # ${JSON.stringify(detail)}`)
    }
  }
}

/** A mailer that keeps the reset mails in memory, so the test can hand the code to the page. */
class MailBox implements Mailer {
  readonly messages: MailMessage[] = []

  async send (message: MailMessage): Promise<void> {
    this.messages.push(message)
  }

  /** The code of the next reset mail (mail goes out after the answer, so this waits a little). */
  async nextCode (after: number): Promise<string> {
    const deadline = Date.now() + 5000
    while (this.messages.length <= after && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    const code = /reset code is: (\S+)/.exec(this.messages[after]?.text ?? '')?.[1]
    if (code === undefined) throw new Error('no reset mail with a code arrived')
    return code
  }
}

/** The SDK's CommonJS build as one script defining `window.SJL`. */
async function bundleSdk (): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('simple-jwt-login')
  const result = await build({ entryPoints: [entry], bundle: true, format: 'iife', globalName: 'SJL', platform: 'browser', write: false, logLevel: 'silent' })
  const file = result.outputFiles[0]
  if (file === undefined) throw new Error('esbuild produced no output')
  return file.text
}

/** The page server: the HTML page, the bundled SDK and the page's helpers. */
async function startPageServer (sdk: string): Promise<Server> {
  const files: Record<string, [string, string]> = {
    '/': ['text/html; charset=utf-8', PAGE_HTML],
    '/sdk.js': ['text/javascript; charset=utf-8', sdk],
    '/page.js': ['text/javascript; charset=utf-8', PAGE_SCRIPT]
  }
  const server = createServer((request, response) => {
    const file = files[request.url ?? '']
    response.writeHead(file === undefined ? 404 : 200, { 'content-type': file?.[0] ?? 'text/plain' })
    response.end(file?.[1] ?? 'not found')
  })
  // loopback only; Chromium resolves `localhost` to the loopback addresses itself
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/** The settings the API reads on each reload: the page's origin allowed with credentials, reset, register and delete on, refresh in the body or the cookie. */
function settingsFor (pageOrigin: string, cookie: boolean, requestsPerIp = 300): SettingsInput {
  return {
    tokens: { keys: [{ kid: 'k1', secret: SECRET }] },
    refresh: { enabled: true, cookie: { enabled: cookie, sameSite: 'strict' } },
    resetPassword: { enabled: true },
    users: { register: { enabled: true, signIn: true }, delete: { enabled: true } },
    cors: { enabled: true, origins: [pageOrigin], credentials: true },
    limits: { requestsPerIp: { max: requestsPerIp, window: '1m' } }
  }
}

/** One answer of the API as the server sent it: enough to tell a CORS refusal from a network failure. */
interface Served {
  method: string
  origin: string | undefined
  /** Whether the request carried the refresh cookie. */
  cookie: boolean
  status: number
  allowOrigin: unknown
  body: unknown
}

interface Api {
  app: FastifyInstance
  users: MemoryUserAdapter
  mail: MailBox
  served: Served[]
  /** Switches the settings and reloads them now. */
  use: (settings: SettingsInput) => Promise<void>
}

/** The API host: Fastify with the plugin on memory users (one seeded) and the alias, settings from an async source so each mode is a reload. */
async function startApi (initial: SettingsInput): Promise<Api> {
  let current = initial
  const users = new MemoryUserAdapter()
  await users.addUser(USER)
  const mail = new MailBox()
  const served: Served[] = []
  const app = Fastify()
  app.addHook('onSend', async (request, reply, payload) => {
    served.push({ method: request.method, origin: request.headers.origin, cookie: request.headers.cookie?.includes(`${REFRESH_COOKIE}=`) === true, status: reply.statusCode, allowOrigin: reply.getHeader('access-control-allow-origin'), body: payload })
    return payload
  })
  await app.register(jwtLogin, { users, mailer: mail, aliases: [ALIAS], settings: async () => current })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const use = async (settings: SettingsInput): Promise<void> => {
    current = settings
    await app.jwtLogin.reloadSettings()
  }
  return { app, users, mail, served, use }
}

function portOf (server: { address: () => AddressInfo | string | null }): number {
  return (server.address() as AddressInfo).port
}

/** The page's side of the test: SDK calls and bare XHRs run in the page. */
class Browserside {
  constructor (readonly page: Page, readonly api: string) {}

  /** One SDK call, under `/jwt-login/v1` unless told `namespace` (`SDK_DEFAULT`: the SDK's own). */
  async sdk (method: SdkMethod, params: Params, namespace = NAMESPACE): Promise<Answer> {
    return await this.page.evaluate(([api, name, verb, fields]) => (globalThis as unknown as { jl: PageHelpers }).jl.sdk(api, name, verb, fields), [this.api, namespace, method, params] as const)
  }

  /** A bare XHR; a `Fields` body is sent as JSON, a string as it is. */
  async raw (method: string, path: string, headers: Fields, body: Fields | string | null): Promise<Answer> {
    const args = [method, `${this.api}${path}`, headers, body === null || typeof body === 'string' ? body : JSON.stringify(body)] as const
    return await this.page.evaluate(([verb, url, fields, text]) => (globalThis as unknown as { jl: PageHelpers }).jl.raw(verb, url, fields, text), args)
  }

  async setCredentials (on: boolean): Promise<void> {
    await this.page.evaluate((flag) => { (globalThis as unknown as { jl: PageHelpers }).jl.setCredentials(flag) }, on)
  }

  async documentCookie (): Promise<string> {
    return await this.page.evaluate(() => (globalThis as unknown as { jl: PageHelpers }).jl.cookies())
  }

  async seen (): Promise<string[]> {
    return await this.page.evaluate(() => (globalThis as unknown as { jl: PageHelpers }).jl.seen())
  }
}

function dataOf (answer: Answer): Record<string, unknown> {
  return answer.body?.data ?? {}
}

function isJwt (value: unknown): value is string {
  return typeof value === 'string' && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value)
}

/** Bearer mode (refresh token in the body): login, validate both ways, refresh, revoke. */
async function bearerFlow (t: Checks, side: Browserside): Promise<void> {
  const login = await side.sdk('authenticate', { email: USER.email, username: null, password: USER.password, password_hash: null }, SDK_DEFAULT)
  const { jwt, refresh_token: refreshToken } = dataOf(login)
  t.check('bearer: SDK authenticate (POST /?rest_route=/simple-jwt-login/v1/auth, username and password_hash null) answers a jwt and a refresh_token', login.status === 200 && isJwt(jwt) && typeof refreshToken === 'string', login)
  const valid = await side.sdk('validateToken', { JWT: String(jwt) })
  const user = dataOf(valid).user as { user_email?: string } | undefined
  const roles = dataOf(valid).roles
  t.check('bearer: SDK validateToken (GET, JWT in the query) answers data.user and data.roles', valid.status === 200 && user?.user_email === USER.email && JSON.stringify(roles) === JSON.stringify(USER.roles), valid)
  const header = await side.raw('GET', `${NAMESPACE}/auth/validate`, { Authorization: `Bearer ${String(jwt)}` }, null)
  t.check('bearer: a bare XHR to GET /jwt-login/v1/auth/validate with Authorization: Bearer (preflighted) is answered', header.status === 200 && (dataOf(header).user as { user_email?: string } | undefined)?.user_email === USER.email, header)
  const refreshed = await side.sdk('refreshToken', { refresh_token: String(refreshToken) })
  const next = dataOf(refreshed).jwt
  t.check('bearer: SDK refreshToken given refresh_token answers a new jwt and refresh_token', refreshed.status === 200 && isJwt(next) && next !== jwt && typeof dataOf(refreshed).refresh_token === 'string', refreshed)
  const revoked = await side.sdk('revokeToken', { JWT: String(next) })
  t.check('bearer: SDK revokeToken succeeds', revoked.status === 200 && revoked.body?.success === true, revoked)
  const after = await side.sdk('validateToken', { JWT: String(next) })
  t.check('bearer: the revoked jwt then fails SDK validateToken with 401', after.status === 401 && after.body?.success === false, after)
}

/** Password reset through the SDK: the code mailed (read on the Node side) is handed to the page for the PUT. */
async function resetFlow (t: Checks, side: Browserside, mail: MailBox): Promise<void> {
  const before = mail.messages.length
  const asked = await side.sdk('resetPassword', { email: USER.email })
  t.check('reset: SDK resetPassword (POST /user/reset_password) succeeds', asked.status === 200 && asked.body?.success === true, asked)
  const code = await mail.nextCode(before)
  const changed = await side.sdk('changePassword', { email: USER.email, code, new_password: NEW_PASSWORD })
  t.check('reset: SDK changePassword (PUT, preflighted) with the mailed code succeeds', changed.status === 200 && changed.body?.success === true, changed)
  const login = await side.sdk('authenticate', { email: USER.email, username: null, password: NEW_PASSWORD, password_hash: null }, SDK_DEFAULT)
  t.check('reset: SDK authenticate with the new password answers a jwt', login.status === 200 && isJwt(dataOf(login).jwt), login)
}

/**
 * Register and delete through the SDK's default namespace (register answers
 * the new user's JWT: `users.register.signIn`), and a sign-in by the alias path.
 */
async function usersFlow (t: Checks, side: Browserside, users: MemoryUserAdapter): Promise<void> {
  const profile = { user_login: null, user_nicename: null, display_name: null, nickname: null, first_name: null, last_name: null, locale: null }
  const registered = await side.sdk('registerUser', { email: NEWCOMER.email, password: NEWCOMER.password, ...profile }, SDK_DEFAULT)
  const jwt = dataOf(registered).jwt
  const user = dataOf(registered).user as { user_email?: string } | undefined
  t.check('users: SDK registerUser (POST /?rest_route=/simple-jwt-login/v1/users, profile fields null) answers the new user and its jwt', registered.status === 200 && user?.user_email === NEWCOMER.email && isJwt(jwt), registered)
  const login = await side.sdk('authenticate', { email: NEWCOMER.email, username: null, password: NEWCOMER.password, password_hash: null }, SDK_DEFAULT)
  t.check('users: the new user signs in with SDK authenticate and the password it registered with', login.status === 200 && isJwt(dataOf(login).jwt), login)
  const byPath = await side.raw('POST', `${ALIAS}/auth`, { 'Content-Type': 'application/json' }, { email: NEWCOMER.email, password: NEWCOMER.password })
  t.check(`users: a bare XHR to POST ${ALIAS}/auth (the alias path, preflighted) answers a jwt`, byPath.status === 200 && isJwt(dataOf(byPath).jwt), byPath)
  const deleted = await side.sdk('deleteUser', { JWT: String(jwt) }, SDK_DEFAULT)
  const gone = await users.findByEmail(NEWCOMER.email) === null
  t.check('users: SDK deleteUser (DELETE /?rest_route=/simple-jwt-login/v1/users, preflighted) with the new user\'s own jwt succeeds, and the user is gone', deleted.status === 200 && deleted.body?.success === true && gone, { deleted, gone })
  const after = await side.sdk('validateToken', { JWT: String(jwt) })
  t.check('users: the deleted user\'s jwt then fails SDK validateToken with 401', after.status === 401 && after.body?.success === false, after)
}

/** The refresh cookie as Chromium stores it for the API, or `undefined`. */
async function refreshCookie (context: BrowserContext, api: string): Promise<Cookie | undefined> {
  return (await context.cookies(api)).find((cookie) => cookie.name === REFRESH_COOKIE)
}

/** Cookie mode, sign-in and refresh: the body has the CSRF token, the cookie the refresh token, out of the page's reach. */
async function cookieSignIn (t: Checks, side: Browserside, context: BrowserContext, tokens: Set<string>): Promise<{ jwt: string, csrf: string }> {
  const login = await side.sdk('authenticate', { email: USER.email, username: null, password: NEW_PASSWORD, password_hash: null }, SDK_DEFAULT)
  const data = dataOf(login)
  t.check('cookie: SDK authenticate answers jwt and csrf_token and no refresh_token', login.status === 200 && isJwt(data.jwt) && typeof data.csrf_token === 'string' && !('refresh_token' in data), login)
  const cookie = await refreshCookie(context, side.api)
  if (cookie !== undefined) tokens.add(cookie.value)
  const attributes = { httpOnly: cookie?.httpOnly, secure: cookie?.secure, sameSite: cookie?.sameSite, path: cookie?.path, domain: cookie?.domain }
  t.check(`cookie: Chromium stored ${REFRESH_COOKIE} for the API with HttpOnly, Secure, SameSite=Strict, Path=/ (over http://localhost)`, cookie !== undefined && cookie.httpOnly && cookie.secure && cookie.sameSite === 'Strict' && cookie.path === '/', attributes)
  const visible = await side.documentCookie()
  t.check('cookie: document.cookie on the page holds neither the cookie nor its value', !visible.includes(REFRESH_COOKIE) && (cookie === undefined || !visible.includes(cookie.value)), visible)
  const csrf = String(data.csrf_token)
  const refreshed = await side.sdk('refreshToken', { csrf_token: csrf })
  t.check('cookie: SDK refreshToken given csrf_token (cookie sent by withCredentials) answers a new jwt, no refresh_token', refreshed.status === 200 && isJwt(dataOf(refreshed).jwt) && dataOf(refreshed).jwt !== data.jwt && !('refresh_token' in dataOf(refreshed)), refreshed)
  const rotated = await refreshCookie(context, side.api)
  if (rotated !== undefined) tokens.add(rotated.value)
  const viaHeader = await side.raw('POST', `${NAMESPACE}/auth/refresh`, { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, {})
  t.check('cookie: a bare XHR refresh with the CSRF token in X-CSRF-Token (preflighted) answers a jwt', viaHeader.status === 200 && isJwt(dataOf(viaHeader).jwt), viaHeader)
  const rotatedAgain = await refreshCookie(context, side.api)
  if (rotatedAgain !== undefined) tokens.add(rotatedAgain.value)
  const noCsrf = await side.sdk('refreshToken', {})
  t.check('cookie: SDK refreshToken without the CSRF token is refused 403 errorCode 209', noCsrf.status === 403 && dataOf(noCsrf).errorCode === 209, noCsrf)
  await side.setCredentials(false)
  const noCredentials = await side.sdk('refreshToken', { csrf_token: csrf })
  await side.setCredentials(true)
  t.check('cookie: without withCredentials the browser sends no cookie: SDK refreshToken is refused 400 errorCode 51', noCredentials.status === 400 && dataOf(noCredentials).errorCode === 51, noCredentials)
  return { jwt: String(dataOf(viaHeader).jwt), csrf }
}

/** Cookie mode, sign-out: revoke with the jwt, then revoke by the cookie alone (CSRF token needed). */
async function cookieSignOut (t: Checks, side: Browserside, context: BrowserContext, jwt: string, tokens: Set<string>): Promise<void> {
  const revoked = await side.sdk('revokeToken', { JWT: jwt })
  t.check('cookie: SDK revokeToken with the jwt succeeds and clears the cookie', revoked.status === 200 && await refreshCookie(context, side.api) === undefined, revoked)
  const after = await side.sdk('refreshToken', { csrf_token: 'anything' })
  t.check('cookie: SDK refreshToken after the revoke is refused (400 errorCode 51: no cookie)', after.status === 400 && dataOf(after).errorCode === 51, after)

  const login = await side.sdk('authenticate', { email: USER.email, username: null, password: NEW_PASSWORD, password_hash: null }, SDK_DEFAULT)
  const cookie = await refreshCookie(context, side.api)
  if (cookie !== undefined) tokens.add(cookie.value)
  const noCsrf = await side.sdk('revokeToken', {})
  t.check('cookie: SDK revokeToken with neither jwt nor CSRF token is refused 403 errorCode 209', noCsrf.status === 403 && dataOf(noCsrf).errorCode === 209, noCsrf)
  const byCookie = await side.sdk('revokeToken', { csrf_token: String(dataOf(login).csrf_token) })
  t.check('cookie: SDK revokeToken with only csrf_token revokes the cookie\'s session and clears the cookie', byCookie.status === 200 && await refreshCookie(context, side.api) === undefined, byCookie)
  const stale = await side.raw('GET', `/?rest_route=${NAMESPACE}/auth/validate&JWT=${String(dataOf(login).jwt)}`, {}, null)
  t.check('cookie: the jwt of the session revoked by the cookie then fails validate with 401', stale.status === 401, stale)
}

/**
 * A page on another port of localhost (same site, so the browser sends the
 * `SameSite=Strict` cookie; not in `cors.origins`) posts a form to
 * /auth/refresh with credentials: a simple request, so no preflight stops
 * it. Even with the right CSRF token the API refuses it on its `Origin`
 * (403, errorCode 208), and the page cannot read the answer.
 */
async function sameSiteOtherOrigin (t: Checks, context: BrowserContext, pageUrl: string, api: Api, apiBase: string, csrf: string): Promise<void> {
  const page = await context.newPage()
  const origin = new URL(pageUrl).origin
  try {
    await page.goto(pageUrl)
    const side = new Browserside(page, apiBase)
    await side.setCredentials(true)
    const form = await side.raw('POST', `/?rest_route=${NAMESPACE}/auth/refresh`, { 'Content-Type': 'application/x-www-form-urlencoded' }, `csrf_token=${encodeURIComponent(csrf)}`)
    t.check(`cookie: from ${origin} (same site, not allowed) a credentialed form POST to refresh is unreadable to the page (status 0)`, form.status === 0, form)
    const answers = api.served.filter((answer) => answer.origin === origin)
    const refused = answers.length === 1 && answers[0]?.method === 'POST' && answers[0].cookie && answers[0].status === 403 && JSON.parse(String(answers[0].body)).data?.errorCode === 208
    t.check('cookie: the API refused that POST on its Origin with 403 errorCode 208, though it carried the cookie (and the right CSRF token)', refused, answers)
  } finally {
    await page.close()
  }
}

/** No response the page received held a refresh token value the cookie carried. */
async function neverInBodies (t: Checks, side: Browserside, tokens: Set<string>): Promise<void> {
  const seen = await side.seen()
  const leaked = [...tokens].filter((token) => seen.some((text) => text.includes(token)))
  t.check(`cookie: none of the ${seen.length} response bodies the page received held any of the ${tokens.size} refresh cookie values`, tokens.size >= 3 && leaked.length === 0, { tokens: tokens.size, leaked: leaked.length })
}

/** A page on an origin not in `cors.origins`: no CORS headers come back, so the browser blocks the SDK's call (status 0). */
async function disallowedOrigin (t: Checks, context: BrowserContext, pageUrl: string, api: Api, apiBase: string): Promise<void> {
  const page = await context.newPage()
  const origin = new URL(pageUrl).origin
  try {
    await page.goto(pageUrl)
    const side = new Browserside(page, apiBase)
    const login = await side.sdk('authenticate', { email: USER.email, username: null, password: NEW_PASSWORD, password_hash: null }, SDK_DEFAULT)
    // the SDK's synchronous XHR throws a NetworkError from send(): its callback is never called
    t.check(`cors: from ${origin} (not allowed) the SDK call is blocked by the browser (status 0, the SDK method throws)`, login.status === 0 && login.body === null && login.threw !== undefined, login)
    const answers = api.served.filter((answer) => answer.origin === origin)
    t.check('cors: the API answered that origin\'s preflight with no Access-Control-Allow-Origin, and the POST was never sent', answers.length > 0 && answers.every((answer) => answer.method === 'OPTIONS' && answer.allowOrigin === undefined), answers)
  } finally {
    await page.close()
  }
}

/**
 * A 429 from the per-IP limit: `Retry-After` is exposed, so the page reads it.
 * The sign-in route counts toward `limits.requestsPerIp` (refresh does not:
 * a refresh token cannot be guessed); an unknown address locks no account.
 */
async function retryAfter (t: Checks, side: Browserside, api: Api, pageOrigin: string): Promise<void> {
  await api.use(settingsFor(pageOrigin, false, 2))
  let answer: Answer = { status: -1, body: null }
  for (let tries = 0; tries < 10 && answer.status !== 429; tries++) {
    answer = await side.raw('POST', `/?rest_route=${NAMESPACE}/auth`, { 'Content-Type': 'application/json' }, { email: 'nobody@example.invalid', password: 'not the password' })
  }
  t.check('limits: a 429 reaches the page with Retry-After readable by xhr.getResponseHeader', answer.status === 429 && Number(answer.retryAfter) >= 1, answer)
}

/** The checks in order: bearer mode, reset, register and delete, cookie mode (a settings reload), a disallowed origin, then the rate limit. */
async function runChecks (t: Checks, context: BrowserContext, api: Api, [pagePort, otherPort]: [number, number], apiBase: string): Promise<void> {
  const pageOrigin = `http://localhost:${pagePort}`
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(TIMEOUT)
  await page.goto(`${pageOrigin}/`)
  const side = new Browserside(page, apiBase)
  await bearerFlow(t, side)
  await resetFlow(t, side, api.mail)
  await usersFlow(t, side, api.users)

  await api.use(settingsFor(pageOrigin, true))
  await side.setCredentials(true)
  const tokens = new Set<string>()
  const session = await cookieSignIn(t, side, context, tokens)
  await sameSiteOtherOrigin(t, context, `http://localhost:${otherPort}/`, api, apiBase, session.csrf)
  await cookieSignOut(t, side, context, session.jwt, tokens)
  await neverInBodies(t, side, tokens)

  await disallowedOrigin(t, context, `http://127.0.0.1:${pagePort}/`, api, apiBase)
  await retryAfter(t, side, api, pageOrigin)
}

async function run (): Promise<number> {
  if (!chromiumFound()) return 1
  const sdk = await bundleSdk()
  // the page's server, and a second one for another origin of the same site
  const pages = await startPageServer(sdk)
  const others = await startPageServer(sdk)
  const pagePort = portOf(pages)
  const api = await startApi(settingsFor(`http://localhost:${pagePort}`, false))
  const apiBase = `http://localhost:${portOf(api.app.server)}`
  const profile = await newProfile()
  const t = new Checks()
  try {
    console.log(`page at http://localhost:${pagePort}, API at ${apiBase}, in ${CHROMIUM}`)
    const context = await launchChromium(profile)
    try {
      await runChecks(t, context, api, [pagePort, portOf(others)], apiBase)
    } finally {
      await context.close()
    }
  } catch (error) {
    t.check('the run finished without an exception', false, String(error))
  } finally {
    await api.app.close()
    await new Promise((resolve) => pages.close(resolve))
    await new Promise((resolve) => others.close(resolve))
    await rm(profile, { recursive: true, force: true })
  }
  console.log(`# ${t.passed} passed, ${t.failed} failed`)
  return t.failed === 0 ? 0 : 1
}

process.exitCode = await run()
