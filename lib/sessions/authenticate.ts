// The one check of a presented token (signature and claims, revocation, its user), and validate built on it.
import type { Static } from '@sinclair/typebox'
import type { ValidateReply } from '../../schemas/auth.js'
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import type { TokenClaims, TokenKind, VerifiedToken } from '../tokens/jwt.js'
import { checkFingerprint } from './fingerprint.js'

export interface Authenticated {
  verified: VerifiedToken
  user: unknown
  publicUser: PublicUser
}

/** Every refusal of `authenticateToken`: the token's form, key, signature, claims and kind, its revocation, its user. */
export const TOKEN_REFUSALS: readonly JwtLoginErrorCode[] = [
  'ERR_JWT_LOGIN_TOKEN_MALFORMED',
  'ERR_JWT_LOGIN_TOKEN_DECODE',
  'ERR_JWT_LOGIN_TOKEN_ALGORITHM',
  'ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN',
  'ERR_JWT_LOGIN_TOKEN_SIGNATURE',
  'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID',
  'ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID',
  'ERR_JWT_LOGIN_TOKEN_EXPIRED',
  'ERR_JWT_LOGIN_INTERIM_TOKEN_USED',
  'ERR_JWT_LOGIN_TOKEN_REVOKED',
  'ERR_JWT_LOGIN_TOKEN_USER_GONE'
]

/**
 * The one check of a presented token, for the routes, the host hook and the
 * public API: signature and claims, then `admitVerified`; an access token
 * that carries its session's password fingerprint (`pfp`, with
 * `sessions.checkPasswordOnValidate`) is refused once its user's password
 * changed (401 / 55, as a revoked token); its session's next refresh ends it.
 * An impersonation token (`act`) sets the call's `actorId` once its
 * signature and claims held, so the request's events carry it.
 */
export async function authenticateToken (ctx: JwtLoginContext, call: Call, token: string, kind: TokenKind = 'access'): Promise<Authenticated> {
  const verified = ctx.tokens.verify(call.settings, token, kind)
  // an impersonation token whose signature held: the request's events name its actor from here on, its refusals too
  const { act } = verified.payload
  if (act !== undefined) call.actorId = Number(act.sub)
  // admitVerified's checks, here rather than awaited from it: the path of every authenticated request
  refuseRevoked(await ctx.tokens.isRevoked(verified.payload))
  const { pfp, sub, sid } = verified.payload
  const user = existing(await ctx.users.findById(Number(sub)))
  const publicUser = ctx.users.toPublicUser(user)
  if (typeof pfp === 'string') await checkFingerprint(ctx, call, { userId: Number(sub), sessionId: sid, recorded: pfp }, user, 'ERR_JWT_LOGIN_TOKEN_REVOKED', false)
  return { verified, user, publicUser }
}

/** The checks after the signature, for every kind of token: revocation (401 / 55), then its user (401 / 24 when gone). */
export async function admitVerified (ctx: JwtLoginContext, verified: VerifiedToken): Promise<Authenticated> {
  refuseRevoked(await ctx.tokens.isRevoked(verified.payload))
  const user = existing(await ctx.users.findById(Number(verified.payload.sub)))
  return { verified, user, publicUser: ctx.users.toPublicUser(user) }
}

/** A token whose session ended (or whose user's cutoff is past its start): 401 / 55. */
function refuseRevoked (revoked: boolean): void {
  if (revoked) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
}

/** The token's user, or 401 / 24 when the adapter finds none. */
function existing<U> (user: U | null): U {
  if (user === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_USER_GONE')
  return user
}

/**
 * Refuses a token whose user authenticated longer than `maxAgeMs` ago
 * (`auth_time`), or never said when (a token from `sign()`): 401 / 220,
 * answered by a step-up (`POST /auth/step-up`).
 */
export function requireRecentAuth (claims: TokenClaims, maxAgeMs: number, now: number): void {
  if (typeof claims.auth_time !== 'number' || claims.auth_time * 1000 + maxAgeMs < now) throw new JwtLoginError('ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED')
}

/** Reports a token refused with 401 to the audit events; the error then answers. */
export async function audited<T> (ctx: JwtLoginContext, call: Call, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    throw reported(ctx, call, error)
  }
}

/** `audited`'s report of a refusal: answers the error, to throw on. */
function reported (ctx: JwtLoginContext, call: Call, error: unknown): unknown {
  if (error instanceof JwtLoginError && error.statusCode === 401) {
    ctx.events.emit('validation.failed', { ip: call.ip, errorCode: error.errorCode })
  }
  return error
}

/** `/auth/validate`'s answer: the user, the user's roles beside it (as Simple JWT Login 4.x answers), and the token read (a list of one, or with `validate.jwtAsObject` the object, as 4.0 answers). */
export type ValidateAnswer = Static<typeof ValidateReply>['data']

/** `/auth/validate`: reads only (revocation, the user); a failure changes nothing. */
export async function validateToken (ctx: JwtLoginContext, call: Call, token: string): Promise<ValidateAnswer> {
  let authenticated: Authenticated
  try {
    authenticated = await authenticateToken(ctx, call, token)
  } catch (error) {
    throw reported(ctx, call, error)
  }
  const { verified: { header, payload }, publicUser } = authenticated
  const validated = { token, header, payload, expire_in: Math.max(0, payload.exp - Math.floor(ctx.clock() / 1000)) }
  return { user: publicUser, roles: publicUser.roles, jwt: call.settings.validate.jwtAsObject ? validated : [validated] }
}

/**
 * Refuses an interim token offered where a final token or a refresh token
 * belongs (401 / 110). Anything else is left to the route's own checks.
 */
export function refuseInterimToken (ctx: JwtLoginContext, call: Call, value: string | undefined): void {
  if (value === undefined || value.split('.').length !== 3) return
  try {
    ctx.tokens.verify(call.settings, value, 'interim')
  } catch {
    return
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_USED')
}
