// A user's cutoff entry as stored: the record, its parse and its writing (a bare time unless it holds more), and the end of the user's API keys it may hold.
import { lockEnd, type LockRecord } from './user-lock.js'

/**
 * A user's cutoff as stored: sessions started before `t` (ms) are ended,
 * but for those `k` keeps (a sign-out everywhere that kept the caller's
 * session), and so are those started before any provisional cutoff in `h`
 * (a password change in progress, by its id), which keeps none. Written as
 * the bare time when there is nothing else, so the check on every request
 * reads a number.
 */
export interface CutoffRecord {
  t: number
  h?: Record<string, number>
  k?: string[]
  /** A lock (`lockUser`): until `u` (ms; `null` until `unlockUser`), from `a`. */
  l?: LockRecord
  /** The user's API keys created before `x[0]` (ms) are ended; kept until `x[1]`, the last of them expires. */
  x?: KeysEnd
}

/** An end of every API key of a user: keys created before `[0]` (ms) are ended; `[1]`: when the last of them expires. */
export type KeysEnd = [before: number, until: number]

/** The record an entry holds, or `null` when there is none. */
export function parseCutoff (raw: string | null): CutoffRecord | null {
  if (raw === null) return null
  return raw.startsWith('{') ? JSON.parse(raw) as CutoffRecord : { t: Number(raw) }
}

/** The entry for a record: the bare time unless it holds a provisional cutoff, a kept session, a lock or an end of keys. */
export function writeCutoff (record: CutoffRecord): string {
  const held = record.h !== undefined && Object.keys(record.h).length > 0
  const kept = record.k !== undefined && record.k.length > 0
  if (!held && !kept && record.l === undefined && record.x === undefined) return String(record.t)
  return JSON.stringify({ t: record.t, h: held ? record.h : undefined, k: kept ? record.k : undefined, l: record.l, x: record.x })
}

/** Two ends of keys as one: the later time, kept the longer; an end whose keys have all expired at `now` is dropped. */
export function mergeKeysEnd (a: KeysEnd | undefined, b: KeysEnd | undefined, now: number): KeysEnd | undefined {
  const ends = [a, b].filter((end): end is KeysEnd => end !== undefined && end[1] > now)
  if (ends.length === 0) return undefined
  return [Math.max(...ends.map(end => end[0])), Math.max(...ends.map(end => end[1]))]
}

/**
 * The time (ms) before which the user's API keys were created that an end
 * of every key ended, from the cutoff entry as stored; 0 when none. The
 * key check reads the entry already: the bare time costs no parse.
 */
export function keysEndedBefore (raw: string | null): number {
  if (raw === null || !raw.startsWith('{')) return 0
  const { x } = JSON.parse(raw) as CutoffRecord
  return x === undefined ? 0 : x[0]
}

/**
 * Whether the cutoff entry (as stored) ends a key of its user created at
 * `createdAt`: the user is locked at `now`, or every key created before a
 * later time was ended. One parse for both; the bare time ends no key.
 */
export function endsKey (raw: string | null, createdAt: number, now: number): boolean {
  if (raw === null || !raw.startsWith('{')) return false
  const { l, x } = JSON.parse(raw) as CutoffRecord
  return (l !== undefined && lockEnd(l) > now) || (x !== undefined && createdAt < x[0])
}
