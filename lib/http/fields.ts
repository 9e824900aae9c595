import type { FastifyRequest } from 'fastify'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'

export type Fields = Record<string, unknown>

/** The body as an object of fields (JSON, form-encoded and multipart all end up here). */
export function bodyOf (request: FastifyRequest): Fields {
  // the routes' preValidation hook and body schemas make it an object
  return request.body as Fields
}

export function queryOf (request: FastifyRequest): Fields {
  return request.query as Fields
}

/**
 * A string field or `undefined` when absent or empty. Fields the route schema
 * does not name (such as the configurable auth-code parameter) are checked here.
 */
export function stringField (fields: Fields, name: string): string | undefined {
  if (!Object.hasOwn(fields, name)) return undefined
  const value = fields[name]
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || value.length > 4096 || value.includes('\u0000')) {
    throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  }
  return value
}

const BEARER = /^Bearer\s+(\S+)\s*$/i

/** The token of an `Authorization: Bearer <token>` header; any other value throws `malformed`. */
export function parseBearer (header: string, malformed: JwtLoginErrorCode): string {
  const match = BEARER.exec(header)
  if (match === null) throw new JwtLoginError(malformed)
  return match[1] as string
}

/** The token from `Authorization: Bearer`, when that delivery is on. */
export function bearerToken (request: FastifyRequest, enabled: boolean): string | undefined {
  const header = request.headers.authorization
  if (!enabled || header === undefined) return undefined
  return parseBearer(header, 'ERR_JWT_LOGIN_BAD_REQUEST')
}

/**
 * The JWT from the `JWT` field (body, then query) or the Bearer header. Both
 * given and different is a malformed request.
 */
export function presentedJwt (request: FastifyRequest, bearerEnabled: boolean): string | undefined {
  const field = stringField(bodyOf(request), 'JWT') ?? stringField(queryOf(request), 'JWT')
  const header = bearerToken(request, bearerEnabled)
  if (field !== undefined && header !== undefined && field !== header) {
    throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  }
  return field ?? header
}
