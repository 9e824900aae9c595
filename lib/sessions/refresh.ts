// Refresh: a refresh token traded for a new access token and refresh token in the same session.
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { refuseInterimToken } from './authenticate.js'
import { checkFingerprint } from './fingerprint.js'
import { sessionStart } from '../tokens/session-id.js'

/** `/auth/refresh` as the route read it: the refresh token (the field, or else the cookie) and a `JWT` field if any. */
export interface RefreshInput {
  refreshToken: string | undefined
  jwt: string | undefined
}

/**
 * `/auth/refresh`: rotates a refresh token; the new access token stays in
 * the same session. The user is looked up before the rotation is written, so
 * a user database that fails changes nothing: the client's retry, however
 * late, rotates as a first use would (never a reuse that ends the session).
 * A user gone ends the session instead of rotating it, and so does a
 * password changed outside jwt-login (`passwordFingerprint`).
 */
export async function refreshSession (ctx: JwtLoginContext, call: Call, input: RefreshInput): Promise<{ jwt: string, refresh_token: string }> {
  // an interim token offered as the refresh token (or as the JWT) is 110 before anything else
  refuseInterimToken(ctx, call, input.refreshToken ?? input.jwt)
  const { refreshToken } = input
  if (refreshToken === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING')
  const rotated = await ctx.tokens.rotateRefreshToken<unknown>(call.settings, refreshToken, async (userId, sessionId, recorded) => {
    const user: unknown = await ctx.users.findById(userId)
    if (user !== null) {
      // a password changed outside jwt-login (the adapter's fingerprint moved) ends the session: 401 / 27, as for an ended session
      return { user, fingerprint: await checkFingerprint(ctx, call, { userId, sessionId, recorded }, user, 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID') }
    }
    await ctx.tokens.revokeSession(call.settings, sessionId)
    ctx.events.emit('session.ended', { userId, sessionId, reason: 'user_gone' })
    // 24 as for a JWT, but a refresh token is no Bearer token: no WWW-Authenticate
    throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_USER_GONE')
  }, (reuse) => {
    ctx.events.emit('refresh.reused', { userId: reuse.uid, sessionId: reuse.sid, ip: call.ip })
    ctx.events.emit('session.ended', { userId: reuse.uid, sessionId: reuse.sid, reason: 'reuse' })
  })
  // the session's sign-in is when its user last authenticated (a step-up's token is its own, and is not carried on)
  const auth = rotated.amr === undefined ? undefined : { at: sessionStart(rotated.sessionId), methods: rotated.amr }
  const { token } = ctx.tokens.sign(call.settings, ctx.users.toPublicUser(rotated.user), 'access', { sessionId: rotated.sessionId, auth, fingerprint: rotated.fingerprint })
  if (rotated.retried === true) ctx.telemetry.retried()
  ctx.events.emit('token.refreshed', { userId: rotated.userId, sessionId: rotated.sessionId, ip: call.ip })
  return { jwt: token, refresh_token: rotated.refreshToken }
}
