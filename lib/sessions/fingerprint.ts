// Sessions that end when their user's password changes outside jwt-login: the adapter's password fingerprint, hashed per session, recorded and compared.
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Settings } from '../config/settings.js'
import { safeEqual, sha256Base64url } from '../core/crypto.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'

/**
 * The user's password fingerprint as the adapter answers it, told apart
 * from a user without a password (`null`); `undefined` when the adapter has
 * no `passwordFingerprint`. It stays in memory: sessions keep `sealed`.
 */
export async function fingerprintOf (ctx: Pick<JwtLoginContext, 'users'>, user: unknown): Promise<string | undefined> {
  if (ctx.users.passwordFingerprint === undefined) return undefined
  const value = await ctx.users.passwordFingerprint(user)
  return value === null ? 'none' : `password:${value}`
}

/**
 * What a session records of a fingerprint (and its access tokens carry, as
 * `pfp`): a SHA-256 over the session's id and the value, so that neither
 * the store nor a token shows the value, no two sessions share one, and no
 * signing key is involved (a session outlives any key rotation).
 */
export function sealed (sessionId: string, fingerprint: string): string {
  return sha256Base64url(`jwt-login password fingerprint\n${sessionId}\n${fingerprint}`)
}

/**
 * After jwt-login itself changed the user's password for a session it keeps
 * (`PUT /account/password`): that session records the new fingerprint, so
 * its refresh goes on. The user is read again, as the adapter now has it.
 */
export async function keepFingerprint (ctx: JwtLoginContext, settings: Settings, userId: number, sessionId: string): Promise<void> {
  if (ctx.users.passwordFingerprint === undefined) return
  const user: unknown = await ctx.users.findById(userId)
  if (user === null) return
  await ctx.tokens.recordFingerprint(settings, sessionId, sealed(sessionId, await fingerprintOf(ctx, user) as string))
}

/**
 * The fingerprint to record again for a session that recorded `recorded`
 * (`undefined`: a session from before the adapter had one, which records it
 * now). When the user's password changed since, `refusal` answers; with
 * `end` (a refresh, where the session's own record is what was compared)
 * the session ends too (`session.ended`, reason `password_changed_outside`).
 * An access token's copy (`pfp`) is only refused: a password change through
 * jwt-login that kept the session recorded the new fingerprint there, and
 * the session's next refresh decides, so a check of an access token costs
 * no second read. At a refresh, a user that differs is read again past the
 * user cache first (another instance may have cached it before a change
 * made through jwt-login), so a stale copy ends nothing.
 */
export async function checkFingerprint (
  ctx: JwtLoginContext,
  call: Call,
  session: { userId: number, sessionId: string, recorded: string | undefined },
  user: unknown,
  refusal: JwtLoginErrorCode,
  end = true
): Promise<string | undefined> {
  const fingerprint = await fingerprintOf(ctx, user)
  if (fingerprint === undefined) return session.recorded
  const now = sealed(session.sessionId, fingerprint)
  if (session.recorded === undefined || safeEqual(now, session.recorded)) return now
  // an access token's copy is refused at once, with no second read: the session's next refresh decides
  if (!end) throw new JwtLoginError(refusal)
  ctx.forgetUser(session.userId)
  const fresh: unknown = await ctx.users.findById(session.userId)
  const again = fresh === null ? undefined : await fingerprintOf(ctx, fresh)
  if (again !== undefined && safeEqual(sealed(session.sessionId, again), session.recorded)) return session.recorded
  await ctx.tokens.revokeSession(call.settings, session.sessionId)
  ctx.events.emit('session.ended', { userId: session.userId, sessionId: session.sessionId, reason: 'password_changed_outside' })
  throw new JwtLoginError(refusal)
}
