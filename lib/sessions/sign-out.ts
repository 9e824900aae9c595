// Sign-out: a session ended by its access token or by its refresh token (the refresh cookie).
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { audited, authenticateToken } from './authenticate.js'

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
  ctx.events.emit('session.ended', { userId: publicUser.ID, sessionId: claims.sid, reason: 'sign_out' })
  return { message: ctx.messages.text(call, 'tokenRevoked'), sessionId: claims.sid }
}

/**
 * `/auth/revoke` through the refresh cookie (cookie mode, no JWT given):
 * ends the cookie's session, its access tokens with it. Two reads (the
 * session, then its user's cutoff) and one write.
 */
async function revokeRefreshSession (ctx: JwtLoginContext, call: Call, refreshToken: string): Promise<{ message: string, sessionId: string }> {
  const { userId, sessionId } = await ctx.tokens.endSessionOf(call.settings, refreshToken)
  ctx.forgetUser(userId)
  ctx.events.emit('token.revoked', { userId, sessionId, ip: call.ip })
  ctx.events.emit('session.ended', { userId, sessionId, reason: 'sign_out' })
  return { message: ctx.messages.text(call, 'tokenRevoked'), sessionId }
}

/** `/auth/revoke` as the route's gate read it: the access token, or the refresh cookie's token (CSRF checked). */
export interface SignOutInput {
  token: string | undefined
  refreshToken: string | undefined
}

/**
 * `/auth/revoke`: a refresh token given (the browser's session, by its
 * cookie) ends its session; otherwise the access token's session ends.
 * Answers the session that ended.
 */
export async function signOut (ctx: JwtLoginContext, call: Call, input: SignOutInput): Promise<{ message: string, sessionId: string }> {
  if (input.refreshToken !== undefined) return await revokeRefreshSession(ctx, call, input.refreshToken)
  if (input.token === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_JWT_MISSING')
  return await revokeToken(ctx, call, input.token)
}
