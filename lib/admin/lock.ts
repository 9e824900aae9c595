// Locking a user (support staff, a compromised account): the lock is state in the store, in the user's cutoff entry, so every instance sees it on the next request.
// Calls: lockUser: users.findById, the user's key index (read), then one compare-and-set of the cutoff (the lock, the moved cutoff and
//        the end of the user's API keys together); the user cache forgets the user; then the keys' index moves to a new generation.
//        Trusted devices need no write: the lock's cutoff ends them (`cutoffTime`), and the cutoff an unlock leaves keeps them ended.
//        unlockUser: one compare-and-set of the cutoff. The sign-ins' refusal is sessions/lock.ts.
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import type { Settings } from '../config/settings.js'
import type { UserLock } from '../tokens/revocation.js'
import { endApiKeys, keysEnd, keysUntidied } from '../sessions/api-keys.js'

/** The options of `lockUser`. */
export interface LockOptions {
  /** When the lock ends by itself (a `Date` or ms since the epoch, in the future); without it, at `unlockUser`. */
  until?: Date | number
  /** Why (support's note): in the `user.locked` event only, never stored. 1 to 500 characters. */
  reason: string
}

/** The options of `unlockUser`. */
export interface UnlockOptions {
  /** Why: in the `user.unlocked` event only. */
  reason?: string
}

/** A user id the host passes: a positive whole number. */
export function userIdOf (userId: unknown, path: string): number {
  if (typeof userId !== 'number' || !Number.isSafeInteger(userId) || userId < 1) throw new JwtLoginSettingsError(path, 'must be a user id (a whole number of 1 or more)', 'option')
  return userId
}

/** A reason the host gives: 1 to 500 characters. */
export function reasonOf (reason: unknown, path: string): string {
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 500) throw new JwtLoginSettingsError(path, 'must be a text of 1 to 500 characters', 'option')
  return reason
}

/** `until` as ms, in the future; `null` without it. */
function untilOf (until: Date | number | undefined, now: number): number | null {
  if (until === undefined) return null
  const ms = until instanceof Date ? until.getTime() : until
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= now) throw new JwtLoginSettingsError('lockUser/until', 'must be a Date or a time (ms since the epoch) in the future', 'option')
  return ms
}

/**
 * Locks a user: every session and trusted device ends on the next request,
 * on every instance, and every sign-in answers 403 / 251 until `until` or
 * `unlockUser`; a lock on a locked user replaces it. Rejects with
 * `JwtLoginSettingsError` for bad options or a user the adapter does not
 * know, and changes nothing then. Tells `session.ended` (every session,
 * reason `locked`) and `user.locked` once the lock is written; when the
 * keys' index cannot be changed after it, rejects with 503 / 201 saying so:
 * the lock holds and the keys no longer work, and `lockUser` again finishes it.
 */
export async function lockUser (ctx: JwtLoginContext, settings: Settings, userId: number, options: LockOptions): Promise<UserLock> {
  const id = userIdOf(userId, 'lockUser/userId')
  const reason = reasonOf(options?.reason, 'lockUser/reason')
  const until = untilOf(options.until, ctx.clock())
  // two independent reads at once: the user, and the end of the keys the lock writes with it
  const [user, ends] = await Promise.all([ctx.users.findById(id), keysEnd(ctx, id, ctx.clock() + 1)])
  if (user === null) throw new JwtLoginSettingsError('lockUser/userId', 'is not a user the adapter finds', 'option')
  const lock = await ctx.tokens.lockUser(settings, id, until, ends)
  // the lock holds from here: the cached copy goes (the next request of the user reads the host's record again), and it is told
  ctx.forgetUser(id)
  ctx.events.emit('session.ended', { userId: id, sessionId: null, reason: 'locked' })
  ctx.events.emit('user.locked', { userId: id, reason, until: until === null ? null : new Date(until).toISOString() })
  // after the lock, so a key created meanwhile ends too; the keys the lock's write ended stay ended if this fails
  await endApiKeys(ctx, id, 'locked').catch((error: unknown) => { throw keysUntidied(error) })
  return lock
}

/** Lifts a user's lock; answers whether one held (`user.unlocked` then). Sessions from before stay ended. */
export async function unlockUser (ctx: JwtLoginContext, settings: Settings, userId: number, options?: UnlockOptions): Promise<boolean> {
  const id = userIdOf(userId, 'unlockUser/userId')
  const reason = options?.reason === undefined ? null : reasonOf(options.reason, 'unlockUser/reason')
  const held = await ctx.tokens.unlockUser(settings, id)
  if (held) ctx.events.emit('user.unlocked', { userId: id, reason })
  return held
}
