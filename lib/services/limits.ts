import { sha256Base64url } from '../core/crypto.js'
import type { ResolvedLimit } from '../config/settings.js'
import { readMany } from '../store/read.js'
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

/**
 * A subject whose attempts are counted before the check they guard. `reset`:
 * a success also forgives the failures before it (an account). `release`: a
 * success gives back its own attempt only (a client, whose failures may be
 * on other accounts).
 */
export interface Reservable extends Counted {
  onSuccess: 'reset' | 'release'
}

/** One attempt counted on one subject, to settle when its outcome is known. */
export interface Hold {
  readonly subject: Reservable
  /** The attempts the subject holds with this one: unsettled, or failed and not forgiven. */
  readonly counted: number
  /** When the window ends on the limiter's clock (never later than in the store). */
  readonly expiresAt: number
}

/** The attempt may go ahead (`holds` to settle later), or is refused for `retryAfter` seconds. */
export type Reservation = { ok: true, holds: Hold[] } | { ok: false, retryAfter: number }

/** A credit expires up to this long (at most a tenth of the window) before its counter, so it never outlives it. */
const CREDIT_MARGIN_MS = 1000

interface Peek {
  credit: number
  counted: number
  lockedUntil: number
}

/** Attempts less credits; a credit larger than the attempts it was read against is left over from an ended window and ignored. */
function net (attempts: number, credit: number): number {
  return credit <= attempts ? attempts - credit : attempts
}

function count (raw: string | null): number {
  return Number(raw ?? 0)
}

/**
 * Attempt counters with temporary lockouts, in fixed windows.
 *
 * `reserve` counts an attempt before it is checked: `fails:<key>` (the
 * attempts) is incremented atomically first, so of any number of concurrent
 * attempts at most `max` per window go ahead. Its outcome is settled later
 * with more atomic counters, read as credits before the next increment: an
 * attempt that was not evaluated (refused, or a dependency failed) or a
 * success is given back (`released:<key>`); a failure is counted
 * (`failed:<key>`), and on a `reset` subject a success forgives the failures
 * counted so far (`forgiven:<key>`, the one value that is set rather than
 * incremented: a lost update forgives less, never more). The subject then
 * holds its unsettled attempts and its unforgiven failures.
 *
 * A refused attempt locks the subjects over their limit (`lock:<key>`, until
 * the window ends): while a subject is locked and at its limit, attempts are
 * refused without being counted.

 */
export class AttemptLimiter {
  readonly #store: StateStore
  readonly #now: () => number

  constructor (store: StateStore, now: () => number) {
    this.#store = store
    this.#now = now
  }

  /**
   * Counts one attempt on every subject before it is checked, or refuses it
   * when any subject is over its limit. A refused attempt is not counted.
   */
  async reserve (subjects: Reservable[]): Promise<Reservation> {
    const start = this.#now()
    const peeks = await this.#peek(subjects)
    // locked and at the limit: refused without counting, so a flood against a locked subject adds nothing
    const locked = peeks.filter((peek, i) => peek.counted >= (subjects[i] as Reservable).limit.max && peek.lockedUntil > this.#now())
    if (locked.length > 0) return this.#refusal(Math.max(...locked.map(peek => peek.lockedUntil)))

    const counts = await Promise.allSettled(subjects.map(async (s, i) => await this.#count(s, (peeks[i] as Peek).credit, start)))
    const holds = counts.flatMap(c => c.status === 'fulfilled' ? [c.value] : [])
    const failure = counts.find(c => c.status === 'rejected')
    if (failure !== undefined) {
      // counted on some subjects only: those are given back before the error goes on
      await this.release(holds)
      throw failure.reason
    }
    const over = holds.filter(h => h.counted > h.subject.limit.max)
    if (over.length === 0) return { ok: true, holds }
    try {
      await Promise.all(over.map(async h => await this.#store.set(`lock:${h.subject.key}`, String(h.expiresAt), Math.max(1, h.expiresAt - this.#now()))))
    } finally {
      await this.release(holds)
    }
    return this.#refusal(Math.max(...over.map(h => h.expiresAt)))
  }

  /** The attempt failed: it stays counted on every subject, and a `reset` subject records it as a failure a success may forgive. */
  async failed (holds: Hold[]): Promise<void> {
    await Promise.all(holds.filter(h => h.subject.onSuccess === 'reset').map(async h => await this.#credit(h, 'failed')))
  }

  /**
   * The attempt succeeded: it is given back, and a `reset` subject forgives
   * the failures counted so far. Best effort, like `release`: the success
   * stands whatever the bookkeeping does (what cannot be given back stays
   * counted until its window ends).
   */
  async succeeded (holds: Hold[]): Promise<void> {
    await Promise.allSettled(holds.map(async h => {
      await this.#credit(h, 'released')
      if (h.subject.onSuccess === 'reset') await this.#forgive(h)
    }))
  }

  /**
   * Gives back attempts that were not evaluated (refused, or a dependency
   * failed). Best effort: what cannot be given back stays counted.
   */
  async release (holds: Hold[]): Promise<void> {
    await Promise.allSettled(holds.map(async h => await this.#credit(h, 'released')))
  }

  #refusal (until: number): Reservation {
    return { ok: false, retryAfter: Math.max(1, Math.ceil((until - this.#now()) / 1000)) }
  }

  /**
   * Every subject's credits, attempts and lock in one read (one MGET on
   * Redis). The credits are listed before the attempts, so a store without
   * `getMany` asks for them first and they cannot cover attempts the count has not seen.
   */
  async #peek (subjects: Reservable[]): Promise<Peek[]> {
    const names = ['released', 'forgiven', 'lock', 'fails']
    const values = await readMany(this.#store, subjects.flatMap(s => names.map(name => `${name}:${s.key}`)))
    return subjects.map((subject, i) => {
      const [released, forgiven, lock, attempts] = values.slice(i * names.length, (i + 1) * names.length)
      // a `release` subject is never forgiven: a stray credit there counts for nothing
      const credit = count(released ?? null) + (subject.onSuccess === 'reset' ? count(forgiven ?? null) : 0)
      return { credit, counted: net(count(attempts ?? null), credit), lockedUntil: count(lock ?? null) }
    })
  }

  /** `credit` was read before the increment: it covers only the attempts counted before this one. */
  async #count (subject: Reservable, credit: number, start: number): Promise<Hold> {
    const { count: attempts, ttlMs } = await this.#store.increment(`fails:${subject.key}`, subject.limit.windowMs)
    return { subject, counted: net(attempts - 1, credit) + 1, expiresAt: start + ttlMs }
  }

  /** How long a credit for the hold's window may live; 0 or less when the window is (nearly) over. */
  #creditTtl (hold: Hold): number {
    return hold.expiresAt - this.#now() - Math.min(CREDIT_MARGIN_MS, hold.subject.limit.windowMs / 10)
  }

  async #credit (hold: Hold, counter: 'released' | 'failed'): Promise<void> {
    const ttlMs = this.#creditTtl(hold)
    if (ttlMs > 0) await this.#store.increment(`${counter}:${hold.subject.key}`, ttlMs)
  }

  /** Forgives the failures recorded so far, as a success always has: it clears the account's failures. */
  async #forgive (hold: Hold): Promise<void> {
    const failures = await this.#store.get(`failed:${hold.subject.key}`)
    const ttlMs = this.#creditTtl(hold)
    if (failures !== null && ttlMs > 0) await this.#store.set(`forgiven:${hold.subject.key}`, failures, ttlMs)
  }
}
