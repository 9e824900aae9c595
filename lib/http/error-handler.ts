import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { envelope, JwtLoginError, type FieldDetail } from '../core/errors.js'
import { loggedError } from '../adapters/guard.js'
import type { Settings } from '../config/settings.js'
import { en } from '../i18n/catalogues/en.js'
import { fieldPhrase, type Messages } from '../i18n/messages.js'
import { stateOf, type RequestState } from './gates.js'
import { logDependencyFailure } from './fallback-log.js'

/** Where a request's field sits, as the schema check names it. */
const PLACES: Record<string, FieldDetail['place']> = { body: 'body', querystring: 'querystring', params: 'params', headers: 'headers' }

/**
 * Which field failed the schema check, and how (`username`, in the body:
 * `expected string`). The schema's own words, never the value sent.
 */
export function malformedField (error: FastifyError): FieldDetail | undefined {
  const [first] = error.validation ?? []
  if (first === undefined) return undefined
  const field = first.instancePath.split('/').filter(part => part !== '').join('.')
  if (field === '') return undefined
  const how = first.message ?? 'is not valid'
  return { place: PLACES[error.validationContext ?? ''] ?? 'other', field, reason: `${how.charAt(0).toLowerCase()}${how.slice(1)}` }
}

/** Maps anything thrown inside the plugin to a jwt-login error; no client input becomes a 500. */
export function toJwtLoginError (error: FastifyError | JwtLoginError): JwtLoginError {
  if (error instanceof JwtLoginError) return error
  if (error.validation !== undefined) {
    const field = malformedField(error)
    return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error, field, detail: field === undefined ? undefined : fieldPhrase(en, field) })
  }
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
  return new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
}

/** The language of a request, within its settings snapshot (the current settings on a host route). */
export function localeOf (request: FastifyRequest, messages: Messages, settings: Settings): string {
  return messages.localeOf(stateIfTaken(request)?.call ?? { acceptLanguage: request.headers['accept-language'], settings })
}

/**
 * Answers an error in the envelope, its message in the request's language,
 * with its `Retry-After` and `WWW-Authenticate`.
 */
export function sendError (reply: FastifyReply, error: JwtLoginError, messages: Messages, settings: Settings): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
  if (error.wwwAuthenticate !== undefined) reply.header('www-authenticate', error.wwwAuthenticate)
  const locale = localeOf(reply.request, messages, settings)
  return reply.code(error.statusCode).header('content-language', locale).send(envelope(error, messages.error(locale, error)))
}

/** Request fields that hold a secret or a personal datum: always cut out of a logged message, however short. */
const SECRET_FIELDS = new Set(['password', 'password_hash', 'new_password', 'code', 'email', 'username', 'login', 'jwt', 'refresh_token', 'id_token', 'code_verifier', 'nonce', 'csrf_token', 'device_token', 'logout_token'])
/** Other fields are cut only from this length: a client could send `q=e` to blank out every `e` of the line. */
const MIN_CUT_LENGTH = 6

/** The string fields of a body or a query worth cutting out of a log line. */
function fieldValues (fields: unknown, authCodeNames: ReadonlySet<string>): string[] {
  if (fields === null || typeof fields !== 'object') return []
  return Object.entries(fields).flatMap(([name, value]) => {
    if (typeof value !== 'string') return []
    const secret = SECRET_FIELDS.has(name.toLowerCase()) || authCodeNames.has(name)
    return secret || value.length >= MIN_CUT_LENGTH ? [value] : []
  })
}

/**
 * The request's state, or `null` when a host's own `onRequest` hook failed
 * before the plugin's took the settings snapshot.
 */
function stateIfTaken (request: FastifyRequest): RequestState | null {
  return stateOf(request) as RequestState | null
}

/** The names of the auth-code parameters in the request's settings snapshot (none without a snapshot). */
function authCodeNamesOf (state: RequestState | null): ReadonlySet<string> {
  if (state === null) return new Set()
  const { parameter, oauthParameter } = state.call.settings.authCodes
  return new Set([parameter, oauthParameter])
}

const BEARER_TOKEN = /^Bearer\s+(\S+)/i

/** The `Authorization` header whole and, after `Bearer `, the bare token: a dependency may quote either. */
function authorizationValues (header: string | undefined): string[] {
  if (header === undefined) return []
  const token = BEARER_TOKEN.exec(header)?.[1]
  return token === undefined ? [header] : [header, token]
}

/**
 * The values a request brought (its body's and query's fields, its
 * `Authorization` header, the token and the refresh cookie the gate read,
 * the trusted-device token of a sign-in):
 * cut out of a logged error's message, in case a dependency echoed them.
 * The secret fields always; other fields only when long enough to be worth
 * hiding. The cookie is taken from the gate, as @fastify/cookie is
 * registered without its hook (`request.cookies` stays empty).
 */
function requestValues (request: FastifyRequest): unknown[] {
  const state = stateIfTaken(request)
  const names = authCodeNamesOf(state)
  return [
    ...fieldValues(request.body, names),
    ...fieldValues(request.query, names),
    ...authorizationValues(request.headers.authorization),
    state?.token,
    state?.refreshCookie,
    state?.call.deviceToken
  ]
}

/**
 * The error handler of the plugin's routes. `bodyFault(request)` says that
 * the failure came from reading the body (busboy's errors carry no status),
 * so it is the client's (400). Dependency failures are logged once, here,
 * as `{ type, code, message }` without the request's values: never a stack.
 */
export function setErrorHandling (instance: FastifyInstance, bodyFault: (request: FastifyRequest) => boolean, messages: Messages, settings: () => Settings): void {
  instance.setErrorHandler((error: FastifyError | JwtLoginError, request, reply) => {
    const mapped = bodyFault(request)
      ? new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
      : toJwtLoginError(error)
    // a sign-in refused while password checks queue is load, not a failure: its 503 is not logged as one
    if (mapped.statusCode >= 500 && mapped.code !== 'ERR_JWT_LOGIN_BUSY') logDependencyFailure(request, loggedError(mapped, requestValues(request)))
    return sendError(reply, mapped, messages, settings())
  })
}

/** The success envelope, `{ success: true, data }`, as the routes' response schemas type it. */
export function succeed<T> (data: T): { success: true, data: T } {
  return { success: true, data }
}
