// The refusal of every sign-in of a locked user (`lockUser`): from the user's cutoff entry, read along with what the sign-in reads already (or, in `completeSignIn`, on its own).
import type { JwtLoginContext } from '../context/context.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import type { Reservable, Reservation } from '../services/limits.js'
import { stateKeys } from '../tokens/revocation.js'
import { lockIn } from '../tokens/user-lock.js'

/**
 * The store key a sign-in reads along to know its user's lock: the user's
 * cutoff entry; for an identifier that names nobody, a decoy that never
 * holds one, so a known and an unknown account cost the same read.
 */
export const lockKey = (userId: number | null): string => stateKeys.userCutoff(userId ?? 'none')

/**
 * Refuses a sign-in whose user's cutoff entry, as read (`undefined`: not
 * there in the read), holds a lock now: 403 / 251, whether its credentials
 * were right or not.
 */
export function refuseLockedIn (ctx: Pick<JwtLoginContext, 'clock'>, cutoff: string | null | undefined): void {
  if (lockIn(cutoff ?? null, ctx.clock()) !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
}

/**
 * A locked user's attempt at a password or an email code (`lockUser`, its
 * cutoff read with the counts): 403 / 251 before the credential is looked
 * at, right or wrong, so no password hashing is done. It does not count
 * on the account's limits (its holds there are given back): no guess is checked while the lock holds,
 * so there is nothing to slow, and counting would let whoever knows the
 * account's name fill its limit during the lock and shut its owner out
 * (429) once it is lifted. It stays counted on the client's limit, as a
 * failure: one address cannot probe names for locks without bound. The
 * same when the counts refused the attempt, unless the client's own limit
 * did (429 then, as for any account).
 */
export async function refuseLockedAttempt (ctx: Pick<JwtLoginContext, 'clock' | 'limiter' | 'events'>, reservation: Reservation, client: Reservable, ip: string, cutoff: string | null | undefined): Promise<void> {
  if ((!reservation.ok && reservation.refusedBy.includes(client.key)) || lockIn(cutoff ?? null, ctx.clock()) === null) return
  if (reservation.ok) await ctx.limiter.release(reservation.holds.filter(h => h.subject !== client))
  ctx.events.emit('login.failed', { ip, reason: 'locked', errorCode: errorNumber('ERR_JWT_LOGIN_USER_LOCKED') })
  throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
}
