import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { JwtFields, LoginBody, LoginReply, RefreshBody, RefreshReply, RevokeReply, ValidateReply } from '../../schemas/auth.js'
import { clearRefreshCookie, cookieMode, cookieOfSession, deliver, deviceCookieOf } from '../http/browser.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginError } from '../core/errors.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import { auditLoginGate, passwordLogin } from '../login/flow.js'
import { present, stringField } from '../http/fields.js'
import { succeed } from '../http/error-handler.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import type { Settings } from '../config/settings.js'
import { TOKEN_REFUSALS, validateToken } from '../sessions/authenticate.js'
import { refreshSession } from '../sessions/refresh.js'
import { signOut } from '../sessions/sign-out.js'

const LOGIN: RouteGate = {
  authCode: 'auth',
  authCodeFrom: 'body',
  audit: auditLoginGate,
  refreshCookie: 'issues',
  errors: ['ERR_JWT_LOGIN_LOGIN_MISSING', 'ERR_JWT_LOGIN_PASSWORD_MISSING', 'ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED', 'ERR_JWT_LOGIN_WRONG_CREDENTIALS', 'ERR_JWT_LOGIN_BUSY', 'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', 'ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED', 'ERR_JWT_LOGIN_USER_LOCKED']
}
const VALIDATE: RouteGate = { feature: 'validate', authCode: 'validate', authCodeFrom: 'body-or-query', token: 'access', errors: TOKEN_REFUSALS }
const REFRESH: RouteGate = {
  feature: 'refresh',
  authCode: 'refresh',
  authCodeFrom: 'body-or-query',
  refreshCookie: 'reads',
  errors: ['ERR_JWT_LOGIN_INTERIM_TOKEN_USED', 'ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING', 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID', 'ERR_JWT_LOGIN_REFRESH_USER_GONE', 'ERR_JWT_LOGIN_USER_LOCKED']
}
const REVOKE: RouteGate = {
  feature: 'revoke',
  authCode: 'revoke',
  authCodeFrom: 'body-or-query',
  token: 'access',
  refreshCookie: 'ends',
  errors: [...TOKEN_REFUSALS, 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID']
}

const LOGIN_DOC: RouteDoc = {
  tags: ['tokens'],
  operationId: 'jwtLoginAuth',
  summary: 'Sign in with a password',
  description: 'Exactly one of `email`, `username` or `login`, and exactly one of `password` or `password_hash` (when allowed). ' +
    'Answers a JWT (and a refresh token when refresh is on); for a user with two-factor on, an interim JWT with `two_factor_required: true` for `POST /auth/2fa`.'
}
const VALIDATE_DOC = (method: string): RouteDoc => ({
  tags: ['tokens'],
  operationId: method === 'GET' ? 'jwtLoginValidateGet' : 'jwtLoginValidate',
  summary: 'Validate a JWT',
  description: 'The token in `Authorization: Bearer` or the `JWT` field. Answers its header, its claims, the seconds it has left and its user.'
})
const REFRESH_DOC: RouteDoc = {
  tags: ['tokens'],
  operationId: 'jwtLoginRefresh',
  summary: 'Trade a refresh token for a new JWT and refresh token',
  description: 'The refresh token is rotated: the old one is spent (a reuse after the grace interval ends the session). ' +
    'In cookie mode (`refresh.cookie`) it may come from the refresh cookie instead, with the CSRF token, and the new one goes back into the cookie.'
}
const REVOKE_DOC: RouteDoc = {
  tags: ['tokens'],
  operationId: 'jwtLoginRevoke',
  summary: 'Revoke a JWT and its session',
  description: 'Ends the session of the token: its access tokens and its refresh token. ' +
    'In cookie mode the refresh cookie is cleared, and without a JWT the cookie (with the CSRF token) names the session to end.'
}

/** `POST /auth`: the body's fields into a login. */
function loginRoute (app: TypedScope, ctx: JwtLoginContext): void {
  app.post('/auth', {
    config: { jwtLogin: LOGIN },
    schema: { ...LOGIN_DOC, body: LoginBody, response: { 200: LoginReply } }
  }, async (request, reply) => {
    const { body } = request
    const state = stateOf(request)
    const deviceToken = present(body.device_token) ?? deviceCookieOf(request, state.call.settings)
    // kept in the request's state, so an error line cuts it out like the other credentials
    if (deviceToken !== undefined) state.call = { ...state.call, deviceToken }
    const { call } = state
    const input = {
      email: present(body.email),
      username: present(body.username),
      login: present(body.login),
      password: present(body.password),
      passwordHash: present(body.password_hash)
    }
    return succeed(deliver(reply, call.settings, await passwordLogin(ctx, call, input)))
  })
}

/**
 * `/auth/validate`: it takes a signed token and spends nothing guessable, so
 * it skips the per-IP request limit; it sets and reads no cookie, so it is
 * registered outside the cookie routes' scope.
 */
export function validateRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const validate = async (request: FastifyRequest): Promise<Static<typeof ValidateReply>> => {
    const { call, token } = stateOf(request)
    return succeed(await validateToken(ctx, call, token as string))
  }
  app.get('/auth/validate', { config: { jwtLogin: VALIDATE, rateLimit: false }, schema: { ...VALIDATE_DOC('GET'), querystring: JwtFields, response: { 200: ValidateReply } } }, validate)
  app.post('/auth/validate', { config: { jwtLogin: VALIDATE, rateLimit: false }, schema: { ...VALIDATE_DOC('POST'), body: JwtFields, response: { 200: ValidateReply } } }, validate)
}

/**
 * `/auth` (password login), `/auth/refresh`, `/auth/revoke`: the routes that
 * set and read the refresh cookie. Refresh and revoke take a token that
 * cannot be guessed, so they skip the per-IP request limit.
 */
export function authRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  loginRoute(app, ctx)

  // not counted per IP, like validate and revoke: a refresh token cannot be guessed, and checking one is one store read (less than counting it)
  app.post('/auth/refresh', {
    config: { jwtLogin: REFRESH, rateLimit: false },
    schema: { ...REFRESH_DOC, body: RefreshBody, response: { 200: RefreshReply } }
  }, async (request, reply) => {
    const { call, refreshCookie } = stateOf(request)
    const input = { refreshToken: present(request.body.refresh_token) ?? refreshCookie, jwt: stringField(request.body, 'JWT') }
    const data = await forgetDeadCookie(reply, call.settings, refreshCookie, refreshSession(ctx, call, input))
    return succeed(deliver(reply, call.settings, data))
  })

  app.post('/auth/revoke', {
    config: { jwtLogin: REVOKE, rateLimit: false },
    schema: { ...REVOKE_DOC, body: JwtFields, response: { 200: RevokeReply } }
  }, async (request, reply) => {
    // the gate gave the cookie (sign-out ends the browser's session), or else the JWT
    const { call, token, refreshCookie } = stateOf(request)
    const { message, sessionId } = await forgetDeadCookie(reply, call.settings, refreshCookie, signOut(ctx, call, { token, refreshToken: refreshCookie }))
    // the browser forgets the cookie of that session, not one a later sign-in put there
    if (refreshCookie !== undefined || (cookieMode(call.settings) && cookieOfSession(request, sessionId))) clearRefreshCookie(reply, call.settings)
    return { success: true as const, message, data: token === undefined ? { message } : { message, jwt: [token] } }
  })
}

/**
 * A refresh cookie refused as invalid (401), or as a session its user's
 * lock ended (403 / 251: the session never comes back), is cleared from the
 * browser, so it stops sending it.
 */
async function forgetDeadCookie<T> (reply: FastifyReply, settings: Settings, cookie: string | undefined, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    const { statusCode, code } = error as JwtLoginError
    if (cookie !== undefined && (statusCode === 401 || code === 'ERR_JWT_LOGIN_USER_LOCKED')) clearRefreshCookie(reply, settings)
    throw error
  }
}
