import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie'
import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { CodeHasher } from '../services/code-hash.js'
import { JwtLoginError } from '../core/errors.js'
import { bodyOf, stringField } from './fields.js'
import type { Settings } from '../config/settings.js'
import { trimPrefix } from './rest-route.js'
import { refreshTokenSession } from '../tokens/refresh.js'

/**
 * Browser apps: CORS from the `cors` settings, and the refresh token in an
 * httpOnly cookie (`refresh.cookie`) with its CSRF defence. Everything here
 * reads the request's settings snapshot, so both follow a reload.
 */

/** The refresh cookie: `__Host-` makes the browser insist on `Secure`, `Path=/` and no `Domain`. */
export const REFRESH_COOKIE = '__Host-jwt-login-refresh'

/** Where a request that the cookie authenticates carries its CSRF token: this header, or the `csrf_token` field. */
export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = 'csrf_token'

/** What the routes need from a browser: their methods, the headers they read, and `Retry-After` readable on a 429. */
const CORS_ALLOWED = {
  methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['content-type', 'authorization', CSRF_HEADER],
  exposedHeaders: ['retry-after']
}
const CORS_OFF: FastifyCorsOptions = { origin: false }

/** Whether the refresh token travels in the cookie: refresh on, and its cookie setting on. */
export function cookieMode (settings: Settings): boolean {
  return settings.refresh.enabled && settings.refresh.cookie.enabled
}

/**
 * The CORS answer of one request, from its settings snapshot: the origin
 * echoed when it is one of `cors.origins` (exact match, never a wildcard),
 * otherwise no CORS header at all.
 */
function corsFor (settings: Settings, origin: string | undefined): FastifyCorsOptions {
  const { cors } = settings
  if (!cors.enabled || origin === undefined || !cors.origins.includes(origin)) return CORS_OFF
  return {
    ...CORS_ALLOWED,
    origin,
    credentials: cors.credentials,
    maxAge: Math.floor(cors.maxAgeMs / 1000),
    // an OPTIONS from an allowed origin without Access-Control-Request-Method gets the same answer, never a text/plain 400
    strictPreflight: false
  }
}

/**
 * @fastify/cors (when `cors.enabled` is on at registration) in the plugin's
 * scope, so the host's other routes are untouched. Off, no CORS route or
 * hook is added: a host's own preflight handling keeps every path. A host
 * that registered it itself keeps its own (a second registration would
 * clash on its decorators): its @fastify/cors then answers the preflights,
 * and a warning says the `cors` settings are not used.
 */
export async function registerBrowserSupport (instance: FastifyInstance, prefix: string, settingsOf: (request: FastifyRequest) => Settings, initial: Settings, log: FastifyBaseLogger): Promise<void> {
  if (instance.hasPlugin('@fastify/cors')) {
    if (initial.cors.enabled) log.warn('jwt-login: the host registered @fastify/cors itself, so the cors settings are not used; list the allowed pages in cors.origins only (see docs/browser-apps.md)')
  } else if (initial.cors.enabled) {
    const under = `${trimPrefix(prefix)}/`
    // @fastify/cors's catch-all preflight route would be `<prefix>*`, which also takes host paths such as `<prefix>-admin/x`
    instance.addHook('onRoute', (route) => {
      if (route.method === 'OPTIONS' && route.url === `${prefix}*`) route.url = `${under}*`
    })
    await instance.register(fastifyCors, {
      delegator: (request, callback) => { callback(null, corsFor(settingsOf(request), request.headers.origin)) }
    })
  }
}

/**
 * @fastify/cookie in the scope of the routes that set or read the refresh
 * and device cookies, and only there: its `onSend` hook runs on no other
 * route (validate, the host's routes). Registered without its parsing hook:
 * the two routes that read a cookie parse it themselves. A host that
 * registered it itself keeps its own.
 */
export async function registerCookies (instance: FastifyInstance): Promise<void> {
  if (!instance.hasPlugin('@fastify/cookie')) await instance.register(fastifyCookie, { hook: false })
}

/**
 * Every attribute of the refresh cookie, stated: a host's own @fastify/cookie
 * merges its `parseOptions` under these, and a `domain` there would make
 * browsers drop a `__Host-` cookie, a `signed` one would append a signature
 * the routes do not strip.
 */
function cookieOptions (settings: Settings): CookieSerializeOptions & { signed: false } {
  return {
    httpOnly: true,
    secure: true,
    path: '/',
    sameSite: settings.refresh.cookie.sameSite,
    domain: undefined,
    expires: undefined,
    partitioned: false,
    priority: undefined,
    signed: false,
    encode: encodeURIComponent
  }
}

/** The refresh token of the request's cookie, or `undefined`. */
export function refreshCookieOf (request: FastifyRequest): string | undefined {
  const header = request.headers.cookie
  if (header === undefined) return undefined
  const value = request.server.parseCookie(header)[REFRESH_COOKIE]
  return value === undefined || value === '' ? undefined : value
}

/** Tells the browser to forget the refresh cookie (sign-out, or a cookie that no longer works). */
export function clearRefreshCookie (reply: FastifyReply, settings: Settings): void {
  reply.clearCookie(REFRESH_COOKIE, cookieOptions(settings))
}

const csrfHasher = new CodeHasher('csrf token')

/**
 * The CSRF token of a session: an HMAC of its id under the first signing
 * key. It stays the same for the whole session (rotations included), a page
 * cannot compute it, and it checks under every configured key, so a key
 * rotation does not break it while the old key is still listed.
 */
export function csrfTokenFor (settings: Settings, sessionId: string): string {
  return csrfHasher.first(settings.tokens, `csrf:${sessionId}`)
}

/** The CSRF token a request carries: the `X-CSRF-Token` header, or the `csrf_token` field. */
function presentedCsrf (request: FastifyRequest): string | undefined {
  const header = request.headers[CSRF_HEADER]
  return typeof header === 'string' && header !== '' ? header : stringField(bodyOf(request), CSRF_FIELD)
}

/**
 * The refresh cookie as the request's credential, in cookie mode. Without a
 * token of its own (`own`), the request must carry the cookie's CSRF token
 * (403 / 209, checked under every key in constant time, before any store
 * work). With one: `reads` (refresh) uses its own token; `ends` (revoke,
 * sign-out) takes the cookie when the CSRF token matches it, so a sign-out
 * with an expired JWT still ends the cookie's session, and otherwise lets the
 * JWT speak (a tab whose CSRF token is stale, the cookie having been
 * replaced by a sign-in in another tab).
 */
export function cookieCredential (request: FastifyRequest, settings: Settings, use: 'reads' | 'ends', own: string | undefined): string | undefined {
  const cookie = refreshCookieOf(request)
  if (cookie === undefined || (own !== undefined && use === 'reads')) return undefined
  const csrf = presentedCsrf(request)
  const matches = csrf !== undefined && csrfHasher.matches(settings.tokens, { hash: csrf }, `csrf:${refreshTokenSession(cookie)}`)
  if (matches) return cookie
  if (own === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_CSRF_TOKEN_INVALID')
  return undefined
}

/** Whether the request's refresh cookie, if any, belongs to `sessionId`: sign-out by a JWT clears only its own session's cookie. */
export function cookieOfSession (request: FastifyRequest, sessionId: string): boolean {
  const cookie = refreshCookieOf(request)
  return cookie === undefined || refreshTokenSession(cookie) === sessionId
}

/**
 * In cookie mode, a request that may set or use the cookie must come from
 * an allowed page. With an `Origin`: one of `cors.origins`, or the host's own
 * origin. Without one, only a client that is no browser (no
 * `Sec-Fetch-Site`) sending a POST, or the host's own pages
 * (`Sec-Fetch-Site: same-origin`): a link, a redirect or an `<img>` from
 * another page sends no `Origin` on a GET, and `GET /oauth/token?code=<the
 * attacker's>` would otherwise replace the visitor's cookie with the
 * attacker's session (login CSRF).
 */
export function checkOrigin (request: FastifyRequest, settings: Settings): void {
  const { origin } = request.headers
  if (origin === undefined) {
    const site = request.headers['sec-fetch-site']
    if (site === undefined ? request.method === 'POST' : site === 'same-origin') return
  } else if (settings.cors.origins.includes(origin) || origin === `${request.protocol}://${request.host}`) {
    return
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED')
}

/** An answer that holds a session's tokens, as the flows give it. */
export interface Issued { jwt: string, refresh_token?: string, device_token?: string }

/** The trusted-device cookie (`twoFactor.rememberDevice` in cookie mode): httpOnly, `__Host-` like the refresh cookie. */
export const DEVICE_COOKIE = '__Host-jwt-login-device'

/** The trusted-device token of the request's cookie, in cookie mode, or `undefined`. */
export function deviceCookieOf (request: FastifyRequest, settings: Settings): string | undefined {
  const header = request.headers.cookie
  if (!cookieMode(settings) || header === undefined) return undefined
  const value = request.server.parseCookie(header)[DEVICE_COOKIE]
  return value === undefined || value === '' ? undefined : value
}

/**
 * The answer of a route that issues tokens. In cookie mode the refresh token
 * goes into the cookie (`HttpOnly`, `Secure`, `Path=/`, `SameSite` by the
 * setting, for the refresh lifetime) and the body carries the session's CSRF
 * token in its place, and a trusted device's token goes into the device
 * cookie; otherwise the answer is unchanged.
 */
export function deliver<T extends Issued> (reply: FastifyReply, settings: Settings, data: T): T | (Omit<T, 'refresh_token'> & { csrf_token: string }) {
  if (!cookieMode(settings)) return data
  if (data.device_token !== undefined) {
    // the device token too goes into an httpOnly cookie, for as long as the device is trusted
    const { device_token: deviceToken, ...withoutDevice } = data
    reply.setCookie(DEVICE_COOKIE, deviceToken, { ...cookieOptions(settings), maxAge: Math.floor(settings.twoFactor.rememberDevice.lifetimeMs / 1000) })
    return deliver(reply, settings, withoutDevice as T)
  }
  if (data.refresh_token === undefined) return data
  const { refresh_token: refreshToken, ...rest } = data
  reply.setCookie(REFRESH_COOKIE, refreshToken, { ...cookieOptions(settings), maxAge: Math.floor(settings.refresh.lifetimeMs / 1000) })
  return { ...rest, csrf_token: csrfTokenFor(settings, refreshTokenSession(refreshToken)) }
}
