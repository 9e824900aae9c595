import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { envelope, JwtLoginError } from './errors.js'
import { loggedError } from './port-errors.js'

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

/**
 * The values a request brought (its body's and query's fields, its
 * `Authorization` header, its cookies in cookie mode): cut out of a logged
 * error's message, in case a dependency echoed them.
 */
function requestValues (request: FastifyRequest): unknown[] {
  return [request.body, request.query, request.headers.authorization, request.cookies]
}

/**
 * The error handler of the plugin's routes. `bodyFault(request)` says that
 * the failure came from reading the body (busboy's errors carry no status),
 * so it is the client's (400). Dependency failures are logged once, here,
 * as `{ type, code, message }` without the request's values: never a stack.
 */
export function setErrorHandling (instance: FastifyInstance, bodyFault: (request: FastifyRequest) => boolean): void {
  instance.setErrorHandler((error: FastifyError | JwtLoginError, request, reply) => {
    const mapped = bodyFault(request)
      ? new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
      : toJwtLoginError(error)
    if (mapped.statusCode >= 500) request.log.error({ err: loggedError(mapped, requestValues(request)) }, 'jwt-login: dependency failed')
    return sendError(reply, mapped)
  })
}
