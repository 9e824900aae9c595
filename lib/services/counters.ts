// The attempt limiter's keys and counts: subjects hashed, one subject's counters under one hash tag.
import { sha256Base64url } from '../core/crypto.js'
import type { ResolvedLimit } from '../config/settings.js'
import type { StateStore } from '../store/types.js'

/** Counter keys never hold an identifier in clear: an email in a store key is personal data. */
export function subjectKey (scope: string, subject: string): string {
  return `${scope}:${sha256Base64url(subject)}`
}

/**
 * One fixed-window count: `key` counted once in its window. Answers `null`
 * within `limit`, else the seconds until the window ends (`Retry-After`).
 */
export async function countInWindow (store: StateStore, key: string, limit: ResolvedLimit): Promise<number | null> {
  const { count, ttlMs } = await store.increment(key, limit.windowMs)
  return count <= limit.max ? null : Math.max(1, Math.ceil(ttlMs / 1000))
}

export interface Counted {
  key: string
  limit: ResolvedLimit
}

/** The entries read per subject before it is counted, in this order; a `reset` subject's failures after them. */
export const PEEKED = ['released', 'forgiven', 'lock', 'fails'] as const

export interface Peek {
  credit: number
  counted: number
  lockedUntil: number
  failures: string | null
}

/** Attempts less credits; a credit larger than the attempts it was read against is left over from an ended window and ignored. */
export function net (attempts: number, credit: number): number {
  return credit <= attempts ? attempts - credit : attempts
}

export function count (raw: string | null): number {
  return Number(raw ?? 0)
}

export type Counter = typeof PEEKED[number] | 'failed'

/**
 * The key of one of a subject's counters: `fails:{login:user:<h>}`. The
 * subject is a hash tag, so on a Redis Cluster all its counters share one
 * hash slot and one script reads and counts them together.
 */
export function counterKey (counter: Counter, subject: Pick<Counted, 'key'>): string {
  return `${counter}:{${subject.key}}`
}
