import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { envelope, JwtLoginError } from '../core/errors.js'
import { loggedError } from '../adapters/guard.js'

/** Maps anything thrown inside the plugin to a jwt-login error; no client input becomes a 500. */
export function toJwtLoginError (error: FastifyError | JwtLoginError): JwtLoginError {
  if (error instanceof JwtLoginError) return error
  if (error.validation !== undefined) return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
  return new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
}

/** Answers an error in the envelope, with its `Retry-After` and `WWW-Authenticate`. */
export function sendError (reply: FastifyReply, error: JwtLoginError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
  if (error.wwwAuthenticate !== undefined) reply.header('www-authenticate', error.wwwAuthenticate)
  return reply.code(error.statusCode).send(envelope(error))
}

/** Request fields that hold a secret or a personal datum: always cut out of a logged message, however short. */
const SECRET_FIELDS = new Set(['password', 'password_hash', 'new_password', 'code', 'email', 'username', 'login', 'jwt', 'refresh_token', 'id_token', 'code_verifier', 'nonce', 'csrf_token'])
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
 * The values a request brought (its body's and query's fields, its
 * `Authorization` header, its cookies in cookie mode): cut out of a logged
 * error's message, in case a dependency echoed them. The secret fields
 * always; other fields only when long enough to be worth hiding.
 */
function requestValues (request: FastifyRequest, authCodeNames: ReadonlySet<string>): unknown[] {
  return [...fieldValues(request.body, authCodeNames), ...fieldValues(request.query, authCodeNames), request.headers.authorization, request.cookies]
}

/**
 * The error handler of the plugin's routes. `bodyFault(request)` says that
 * the failure came from reading the body (busboy's errors carry no status),
 * so it is the client's (400). Dependency failures are logged once, here,
 * as `{ type, code, message }` without the request's values: never a stack.
 */
export function setErrorHandling (instance: FastifyInstance, bodyFault: (request: FastifyRequest) => boolean, authCodeNames: () => ReadonlySet<string>): void {
  instance.setErrorHandler((error: FastifyError | JwtLoginError, request, reply) => {
    const mapped = bodyFault(request)
      ? new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
      : toJwtLoginError(error)
    if (mapped.statusCode >= 500) request.log.error({ err: loggedError(mapped, requestValues(request, authCodeNames())) }, 'jwt-login: dependency failed')
    return sendError(reply, mapped)
  })
}

/** The success envelope, `{ success: true, data }`, as the routes' response schemas type it. */
export function succeed<T> (data: T): { success: true, data: T } {
  return { success: true, data }
}
