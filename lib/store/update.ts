import { setTimeout as sleep } from 'node:timers/promises'
import { JwtLoginError } from '../core/errors.js'
import type { StateStore } from './types.js'

/** Updates that keep losing to concurrent ones give up after this many tries (503). */
const ATTEMPTS = 12

/** The longest pause (ms) before a try after a lost race. */
const MAX_PAUSE_MS = 128

/** What an update writes: the new value and its time to live, or `null` to leave the entry as it is. */
export type NextValue = { value: string, ttlMs: number } | null

/**
 * Changes one entry by compare-and-set from the value read: `next` is asked
 * with the value there now (`null`: absent) and answers what to write. A
 * concurrent writer in between makes it read and ask again, after a random
 * pause that doubles with each lost race (full jitter: writers that collided
 * spread out instead of colliding again), so no writer's change is lost, on
 * one instance or many; after `ATTEMPTS` lost races (pauses of about 0.4 s
 * on average, 0.77 s at most: twenty first sign-ins of one user at once,
 * spread over instances of a Redis Cluster, all get their session into the
 * user's index) it fails closed (503 / 201, naming `what`).
 * One key, so it holds on every store, a Redis Cluster included. `known`:
 * the entry's value as the caller read it already, for the first try.
 * Answers the entry's value once changed (or as read, when left as it was).
 */
export async function updateEntry (store: StateStore, key: string, what: string, next: (raw: string | null) => Promise<NextValue> | NextValue, known?: string | null): Promise<string | null> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(Math.random() * Math.min(MAX_PAUSE_MS, 2 ** attempt))
    // the first try may start from a value read earlier, with other reads (one round trip fewer); a stale one only loses the compare-and-set
    const raw = attempt === 0 && known !== undefined ? known : await store.get(key)
    const written = await next(raw)
    if (written === null) return raw
    if (await store.compareAndSet(key, raw, written.value, written.ttlMs)) return written.value
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error(`${what} kept changing`) })
}
