// A user's lock (`lockUser`), as the user's cutoff entry holds it: read on every sign-in, and with the cutoff on every request.

/** A user's lock as the cutoff holds it: every session that started before its end has ended, and no sign-in starts one. */
export interface LockRecord { u: number | null, a: number }

/** A user's lock: until when (`null`: until `unlockUser`), and since when (ms). */
export interface UserLock { until: number | null, lockedAt: number }

/** How long an indefinite lock is stored: until `unlockUser`, in practice (100 years). */
export const LOCK_KEPT_MS = 100 * 365 * 86_400_000

/** When a lock ends (ms): its `until`, or never. */
export const lockEnd = (lock: LockRecord): number => lock.u ?? Number.POSITIVE_INFINITY

/** The lock a cutoff entry holds, while it holds at `now`; `null` otherwise. */
export function lockIn (raw: string | null, now: number): UserLock | null {
  // the bare time: no lock (a lock is always written as a record)
  if (raw === null || !raw.startsWith('{')) return null
  const { l } = JSON.parse(raw) as { l?: LockRecord }
  return l === undefined || lockEnd(l) <= now ? null : { until: l.u, lockedAt: l.a }
}
