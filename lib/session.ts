import type { JwtLoginContext, SignInResult } from './context.js'
import { JwtLoginError } from './errors.js'
import type { TokenClaims, TokenKind, VerifiedToken } from './tokens.js'
import type { PublicUser } from './users.js'

export interface NewSession {
  sessionId: string
  tokens: { jwt: string, refresh_token?: string }
}

/**
 * Issues the final token (and a refresh token when enabled) for a new
 * session. Its only store call is the one write of the session's refresh
 * family, so a flow can prepare the session before it spends a single-use
 * secret, and nothing can fail after the secret is spent.
 */
export async function prepareSession (ctx: JwtLoginContext, user: PublicUser, startedAt?: number): Promise<NewSession> {
  const sessionId = ctx.tokens.newSessionId(startedAt)
  const { token } = ctx.tokens.sign(ctx.settings.current, user, 'access', { sessionId })
  if (!ctx.settings.current.refresh.enabled) return { sessionId, tokens: { jwt: token } }
  return { sessionId, tokens: { jwt: token, refresh_token: await ctx.tokens.issueRefreshToken(ctx.settings.current, user.ID, sessionId) } }
}

/** A new session's tokens. */
export async function issueSession (ctx: JwtLoginContext, user: PublicUser, startedAt?: number): Promise<{ jwt: string, refresh_token?: string }> {
  return (await prepareSession(ctx, user, startedAt)).tokens
}

/**
 * The end of every first factor (password or provider): a user with
 * two-factor on gets a challenge, everyone else a session. `startedAt` is
 * when the sign-in request began; the session (or challenge) starts then.
 */
export async function completeSignIn (ctx: JwtLoginContext, user: unknown, ip: string, startedAt: number = ctx.clock()): Promise<SignInResult> {
  const publicUser = ctx.users.toPublicUser(user)
  if (ctx.secondFactor !== null) {
    const challenge = await ctx.secondFactor(user, publicUser, ip, startedAt)
    if (challenge !== null) return challenge
  }
  return await issueSession(ctx, publicUser, startedAt)
}

export interface Authenticated {
  verified: VerifiedToken
  user: unknown
  publicUser: PublicUser
}

/** Verifies a token of `kind`, checks revocation, and loads its user (401 / 24 when gone). */
export async function authenticateToken (ctx: JwtLoginContext, token: string, kind: TokenKind = 'access'): Promise<Authenticated> {
  const verified = ctx.tokens.verify(ctx.settings.current, token, kind)
  if (await ctx.tokens.isRevoked(verified.payload)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
  const user = await ctx.users.findById(Number(verified.payload.sub))
  if (user === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_USER_GONE')
  return { verified, user, publicUser: ctx.users.toPublicUser(user) }
}

export interface ValidateAnswer {
  user: PublicUser
  jwt: Array<{ token: string, header: Record<string, unknown>, payload: TokenClaims, expire_in: number }>
}

export function describe (ctx: JwtLoginContext, auth: Authenticated): ValidateAnswer {
  const { token, header, payload } = auth.verified
  return {
    user: auth.publicUser,
    jwt: [{ token, header, payload, expire_in: Math.max(0, payload.exp - Math.floor(ctx.clock() / 1000)) }]
  }
}

/**
 * Rotates a refresh token; the new access token stays in the same session.
 * Order: the rotation (one compare-and-set), then the user lookup. A failed
 * lookup after the rotation answers 503, and the client's retry of the same
 * token within the reuse interval gets the same successor.
 */
export async function refreshSession (ctx: JwtLoginContext, refreshToken: string, ip: string): Promise<{ jwt: string, refresh_token: string }> {
  const rotated = await ctx.tokens.rotateRefreshToken(ctx.settings.current, refreshToken, (reuse) => {
    ctx.events.emit('refresh.reused', { userId: reuse.uid, sessionId: reuse.sid, ip })
  })
  const user = await ctx.users.findById(rotated.userId)
  if (user === null) {
    await ctx.tokens.revokeSession(ctx.settings.current, rotated.sessionId)
    // 24 as for a JWT, but a refresh token is no Bearer token: no WWW-Authenticate
    throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_USER_GONE')
  }
  const { token } = ctx.tokens.sign(ctx.settings.current, ctx.users.toPublicUser(user), 'access', { sessionId: rotated.sessionId })
  ctx.events.emit('token.refreshed', { userId: rotated.userId, sessionId: rotated.sessionId, ip })
  return { jwt: token, refresh_token: rotated.refreshToken }
}
