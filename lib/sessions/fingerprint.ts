// Sessions that end when their user's password changes outside jwt-login: the keyed hash of the adapter's password fingerprint, recorded and compared.
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Settings } from '../config/settings.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import { CodeHasher } from '../services/code-hash.js'

const hasher = new CodeHasher('password fingerprint')

/** What is hashed: the value, told apart from a user without a password (`null`). */
const marked = (value: string | null): string => value === null ? 'none' : `password:${value}`

/**
 * The keyed hash of the user's password fingerprint, to record in a new
 * session (and its access tokens); `undefined` when the adapter has no
 * `passwordFingerprint`. Under the first signing key: `matches` tries every
 * key, so a session outlives a key rotation while its key stays configured.
 */
export async function fingerprintOf (ctx: Pick<JwtLoginContext, 'users'>, settings: Settings, user: unknown): Promise<string | undefined> {
  if (ctx.users.passwordFingerprint === undefined) return undefined
  return hasher.first(settings.tokens, marked(await ctx.users.passwordFingerprint(user)))
}

/**
 * The fingerprint to record again for a session that recorded `recorded`
 * (`undefined`: a session from before the adapter had one, which records it
 * now). When the user's password changed since, `refusal` answers; with
 * `end` (a refresh, where the session's own record is what was compared)
 * the session ends too (`session.ended`, reason `password_changed_outside`).
 * An access token's copy (`pfp`) is only refused: a password change through
 * jwt-login that kept the session recorded the new fingerprint there, and
 * the session's next refresh decides.
 */
/**
 * After jwt-login itself changed the user's password for a session it keeps
 * (`PUT /account/password`): that session records the new fingerprint, so
 * its refresh goes on. The user is read again, as the adapter now has it.
 */
export async function keepFingerprint (ctx: JwtLoginContext, settings: Settings, userId: number, sessionId: string): Promise<void> {
  if (ctx.users.passwordFingerprint === undefined) return
  const user: unknown = await ctx.users.findById(userId)
  if (user === null) return
  await ctx.tokens.recordFingerprint(settings, sessionId, await fingerprintOf(ctx, settings, user) as string)
}

export async function checkFingerprint (
  ctx: JwtLoginContext,
  call: Call,
  session: { userId: number, sessionId: string, recorded: string | undefined },
  user: unknown,
  refusal: JwtLoginErrorCode,
  end = true
): Promise<string | undefined> {
  const { settings } = call
  if (ctx.users.passwordFingerprint === undefined) return session.recorded
  const value = marked(await ctx.users.passwordFingerprint(user))
  if (session.recorded === undefined) return hasher.first(settings.tokens, value)
  if (hasher.matches(settings.tokens, { hash: session.recorded }, value)) return session.recorded
  if (!end) throw new JwtLoginError(refusal)
  await ctx.tokens.revokeSession(settings, session.sessionId)
  ctx.events.emit('session.ended', { userId: session.userId, sessionId: session.sessionId, reason: 'password_changed_outside' })
  throw new JwtLoginError(refusal)
}
