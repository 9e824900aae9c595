import type { Call, JwtLoginContext, SignInResult } from '../context/context.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import { countInWindow } from '../services/limits.js'
import type { TokenClaims, TokenKind, VerifiedToken } from '../tokens/service.js'
import type { PublicUser } from '../adapters/users.js'

export interface NewSession {
  sessionId: string
  tokens: { jwt: string, refresh_token?: string }
  /**
   * Adds the session to its user's index once the sign-in is final, and
   * ends the user's oldest sessions beyond `sessions.maxPerUser` (one read,
   * one compare-and-set, and a revocation for each ended one).
   */
  record: () => Promise<void>
}

/**
 * Issues the final token (and a refresh token when enabled) for a new
 * session. Its only store call is the one write of the session's refresh
 * family, so a flow can prepare the session before it spends a single-use
 * secret, and nothing can fail after the secret is spent: the session joins
 * its user's index (`record`) only once the sign-in is final, so a sign-in
 * that fails ends no other session. The session starts at `startedAt`
 * (default: when the request started).
 */
export async function prepareSession (ctx: JwtLoginContext, call: Call, user: PublicUser, startedAt: number = call.startedAt): Promise<NewSession> {
  const { settings } = call
  const sessionId = ctx.tokens.newSessionId(startedAt)
  const { token } = ctx.tokens.sign(settings, user, 'access', { sessionId })
  const family = settings.refresh.enabled
  const record = async (): Promise<void> => {
    const evicted = await ctx.sessions.add({
      userId: user.ID,
      sessionId,
      endsAt: ctx.clock() + (family ? settings.refresh.lifetimeMs : settings.tokens.lifetimeMs),
      family,
      max: settings.sessions.maxPerUser
    }, {
      live: async (ids) => await ctx.tokens.liveSessions(ids),
      end: async (id) => { await ctx.tokens.revokeSession(settings, id) }
    })
    for (const id of evicted) ctx.events.emit('session.evicted', { userId: user.ID, sessionId: id, reason: 'max_per_user' })
  }
  if (!family) return { sessionId, tokens: { jwt: token }, record }
  return { sessionId, tokens: { jwt: token, refresh_token: await ctx.tokens.issueRefreshToken(settings, user.ID, sessionId) }, record }
}

/**
 * Counts a sign-in on `limits.signInsPerAccount`, under `key`: per account
 * for a sign-in that starts a session, per account and client for one that
 * starts a two-factor challenge (so whoever holds only the password cannot
 * spend the account's own count and lock its owner out). Over the limit,
 * 429 / 200 with `Retry-After`.
 */
export async function countSignIn (ctx: Pick<JwtLoginContext, 'store' | 'events'>, call: Call, userId: number, key: string): Promise<void> {
  const retryAfter = await countInWindow(ctx.store, key, call.settings.limits.signInsPerAccount)
  if (retryAfter === null) return
  ctx.events.emit('signin.limited', { userId, ip: call.ip })
  throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter })
}

/** The key of the per-account sign-in count. */
export const signInKey = (userId: number): string => `signins:${userId}`

/**
 * The end of every first factor (password or provider): a user with
 * two-factor on gets a challenge (the gate counts it per account and
 * client); everyone else is counted per account and gets a session, recorded
 * in the user's index before the answer (a failure there forgets the
 * session and answers 503: nothing single-use was spent). Both start at
 * `startedAt` (default: when the sign-in request did).
 */
export async function completeSignIn (ctx: JwtLoginContext, call: Call, user: unknown, startedAt: number = call.startedAt): Promise<SignInResult> {
  const publicUser = ctx.users.toPublicUser(user)
  if (ctx.secondFactor !== null) {
    const challenge = await ctx.secondFactor(user, publicUser, { ...call, startedAt })
    if (challenge !== null) return challenge
  }
  await countSignIn(ctx, call, publicUser.ID, signInKey(publicUser.ID))
  const session = await prepareSession(ctx, call, publicUser, startedAt)
  try {
    await session.record()
  } catch (error) {
    await ctx.tokens.discardSession(session.sessionId)
    throw error
  }
  return session.tokens
}

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
 * public API: signature and claims, then `admitVerified`.
 */
export async function authenticateToken (ctx: JwtLoginContext, call: Call, token: string, kind: TokenKind = 'access'): Promise<Authenticated> {
  return await admitVerified(ctx, ctx.tokens.verify(call.settings, token, kind))
}

/** The checks after the signature, for every kind of token: revocation (401 / 55), then its user (401 / 24 when gone). */
export async function admitVerified (ctx: JwtLoginContext, verified: VerifiedToken): Promise<Authenticated> {
  if (await ctx.tokens.isRevoked(verified.payload)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
  const user = await ctx.users.findById(Number(verified.payload.sub))
  if (user === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_USER_GONE')
  return { verified, user, publicUser: ctx.users.toPublicUser(user) }
}

/** Reports a token refused with 401 to the audit events; the error then answers. */
async function audited<T> (ctx: JwtLoginContext, call: Call, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof JwtLoginError && error.statusCode === 401) {
      ctx.events.emit('validation.failed', { ip: call.ip, errorCode: error.errorCode })
    }
    throw error
  }
}

export interface ValidateAnswer {
  user: PublicUser
  /** The user's roles beside the user, as Simple JWT Login 4.x answers. */
  roles: string[]
  jwt: Array<{ token: string, header: Record<string, unknown>, payload: TokenClaims, expire_in: number }>
}

/** `/auth/validate`: reads only (revocation, the user); a failure changes nothing. */
export async function validateToken (ctx: JwtLoginContext, call: Call, token: string): Promise<ValidateAnswer> {
  const { verified, publicUser } = await audited(ctx, call, authenticateToken(ctx, call, token))
  const { header, payload } = verified
  return {
    user: publicUser,
    roles: publicUser.roles,
    jwt: [{ token, header, payload, expire_in: Math.max(0, payload.exp - Math.floor(ctx.clock() / 1000)) }]
  }
}

/**
 * `/auth/revoke`: reads (the token's checks), then one write that ends the
 * session, its access tokens and its refresh token together. A failed write
 * changed nothing and its retry finishes the job; once written, the token is
 * revoked (55).
 */
export async function revokeToken (ctx: JwtLoginContext, call: Call, token: string): Promise<{ message: string, sessionId: string }> {
  const { verified, publicUser } = await audited(ctx, call, authenticateToken(ctx, call, token))
  const claims = verified.payload
  await ctx.tokens.revoke(call.settings, claims)
  ctx.forgetUser(publicUser.ID)
  ctx.events.emit('token.revoked', { userId: publicUser.ID, sessionId: claims.sid, jti: claims.jti, ip: call.ip })
  return { message: 'Token was revoked.', sessionId: claims.sid }
}

/**
 * `/auth/revoke` through the refresh cookie (cookie mode, no JWT given):
 * ends the cookie's session, its access tokens with it. One read, one write.
 */
export async function revokeRefreshSession (ctx: JwtLoginContext, call: Call, refreshToken: string): Promise<{ message: string }> {
  const { userId, sessionId } = await ctx.tokens.endSessionOf(call.settings, refreshToken)
  ctx.forgetUser(userId)
  ctx.events.emit('token.revoked', { userId, sessionId, ip: call.ip })
  return { message: 'Token was revoked.' }
}

/**
 * `/auth/refresh`: rotates a refresh token; the new access token stays in
 * the same session. The user is looked up before the rotation is written, so
 * a user database that fails changes nothing: the client's retry, however
 * late, rotates as a first use would (never a reuse that ends the session).
 * A user gone ends the session instead of rotating it.
 */
export async function refreshSession (ctx: JwtLoginContext, call: Call, refreshToken: string): Promise<{ jwt: string, refresh_token: string }> {
  const rotated = await ctx.tokens.rotateRefreshToken(call.settings, refreshToken, async (userId, sessionId) => {
    const user = await ctx.users.findById(userId)
    if (user !== null) return user
    await ctx.tokens.revokeSession(call.settings, sessionId)
    // 24 as for a JWT, but a refresh token is no Bearer token: no WWW-Authenticate
    throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_USER_GONE')
  }, (reuse) => {
    ctx.events.emit('refresh.reused', { userId: reuse.uid, sessionId: reuse.sid, ip: call.ip })
  })
  const { token } = ctx.tokens.sign(call.settings, ctx.users.toPublicUser(rotated.user), 'access', { sessionId: rotated.sessionId })
  ctx.events.emit('token.refreshed', { userId: rotated.userId, sessionId: rotated.sessionId, ip: call.ip })
  return { jwt: token, refresh_token: rotated.refreshToken }
}
