import type { FastifyRequest } from 'fastify'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'

export type Fields = Record<string, unknown>

const NONE: Fields = Object.freeze({})

function isFields (value: unknown): value is Fields {
  return typeof value === 'object' && value !== null
}

/** The body as an object of fields (JSON, form-encoded and multipart all end up here); none when there is no body. */
export function bodyOf (request: FastifyRequest): Fields {
  return isFields(request.body) ? request.body : NONE
}

/** The query string's fields. */
export function queryOf (request: FastifyRequest): Fields {
  return isFields(request.query) ? request.query : NONE
}

/** The longest value `present` takes unless told otherwise: the schemas' `Field`. */
export const MAX_FIELD_LENGTH = 4096

/**
 * The one rule for a field's value: absent or empty is `undefined`; a value
 * that is no string, longer than `maxLength` characters (4096 unless the
 * field's schema allows more) or holds a NUL is a malformed request (400 / 203).
 */
export function present (value: unknown, maxLength = MAX_FIELD_LENGTH): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || value.length > maxLength || value.includes('\u0000')) {
    throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  }
  return value
}

/**
 * A field by name, under `present`'s rule. For fields the route schema does
 * not name (the configurable auth-code parameter, the `JWT` field beside a
 * refresh token); a named field is read from the typed body with `present`.
 */
export function stringField (fields: Fields, name: string, maxLength = MAX_FIELD_LENGTH): string | undefined {
  return Object.hasOwn(fields, name) ? present(fields[name], maxLength) : undefined
}

const BEARER = /^Bearer\s+(\S+)\s*$/i
/** One whole JWT: three base64url parts, the token `bearer.allowBareToken` takes without the scheme. */
const BARE_JWT = /^\s*([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)\s*$/

/** How the `Authorization` header is read (the `bearer` settings group). */
export interface BearerDelivery {
  enabled: boolean
  allowBareToken: boolean
}

/**
 * The token of an `Authorization: Bearer <token>` header, or with
 * `allowBareToken` of an `Authorization: <jwt>` one (one whole JWT, as
 * Simple JWT Login takes it); any other value throws `malformed`.
 */
export function parseBearer (header: string, malformed: JwtLoginErrorCode, allowBareToken = false): string {
  const match = BEARER.exec(header) ?? (allowBareToken ? BARE_JWT.exec(header) : null)
  if (match === null) throw new JwtLoginError(malformed)
  return match[1] as string
}

/** The token from the `Authorization` header, when that delivery is on. */
export function bearerToken (request: FastifyRequest, bearer: BearerDelivery): string | undefined {
  const header = request.headers.authorization
  if (!bearer.enabled || header === undefined) return undefined
  return parseBearer(header, 'ERR_JWT_LOGIN_BAD_REQUEST', bearer.allowBareToken)
}

/**
 * The JWT from the `JWT` field (body, then query) or the `Authorization`
 * header. Both given and different is a malformed request. An API key
 * (a value that starts with `<keyPrefix>_`) never signs in to the plugin's
 * routes: 403 / 260.
 */
export function presentedJwt (request: FastifyRequest, bearer: BearerDelivery, keyPrefix: string): string | undefined {
  const field = stringField(bodyOf(request), 'JWT') ?? stringField(queryOf(request), 'JWT')
  const header = bearerToken(request, bearer)
  if (field !== undefined && header !== undefined && field !== header) {
    throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  }
  const token = field ?? header
  if (token?.startsWith(`${keyPrefix}_`) === true) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED')
  return token
}
