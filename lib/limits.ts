import { createHash } from 'node:crypto'
import { JwtLoginError, type JwtLoginErrorCode } from './errors.js'
import type { ResolvedLimit } from './settings.js'
import type { StateStore } from './store/types.js'

/** Counter keys never hold an identifier in clear: an email in a store key is personal data. */
export function subjectKey (scope: string, subject: string): string {
  return `${scope}:${createHash('sha256').update(subject).digest('base64url')}`
}

export interface Counted {
  key: string
  limit: ResolvedLimit
}

/**
 * A subject whose attempts are counted before the check they guard. What a
 * success gives back: `reset` forgives every attempt counted before it (an
 * account: a success clears its failures), `release` only its own attempt
 * (a client, whose other attempts may be failures on other accounts).
 */
export interface Reservable extends Counted {
  onSuccess: 'reset' | 'release'
}

/** One attempt counted on one subject. */
export interface Hold {
  readonly subject: Reservable
  /** The attempt's place in the subject's window: 1 for the first. */
  readonly position: number
  /** The attempts the subject holds with this one, less those given back. */
  readonly counted: number
  /** When the window ends on the limiter's clock (never later than in the store). */
  readonly expiresAt: number
}

/** The attempt may go ahead (`holds` to settle later), or is refused for `retryAfter` seconds. */
export type Reservation = { ok: true, holds: Hold[] } | { ok: false, retryAfter: number }

/** A credit expires up to this long (and at most a tenth of the window) before its counter, so it never outlives it. */
const CREDIT_MARGIN_MS = 1000

/** `cleared:<key>` is `<watermark>:<released>`: attempts up to the watermark are forgiven, and `released` later ones were given back. */
function parseCleared (raw: string | null): { watermark: number, released: number } {
  const [watermark = 0, released = 0] = raw === null ? [] : raw.split(':').map(Number)
  return { watermark, released }
}

/**
 * Attempt counters with temporary lockouts, in fixed windows.
 *
 * `reserve`, `succeed` and `release` count an attempt before it is checked:
 * `fails:<key>` is incremented first (atomically), so of any number of
 * concurrent attempts at most `max` per window go ahead; an attempt that
 * turns out not to be a failure is given back afterwards as a credit
 * (`cleared:<key>` for `reset` subjects, `released:<key>` for `release`
 * subjects), read before the next increment. A lost credit update only leaves
 * more attempts counted, never fewer.
 *
 * `assertOpen`, `fail` and `reset` count failures after the check and lock
 * with `lock:<key>` on reaching `max`.
 */
export class AttemptLimiter {
  readonly #store: StateStore
  readonly #now: () => number

  constructor (store: StateStore, now: () => number) {
    this.#store = store
    this.#now = now
  }

  /** Throws 429 (`errorCode`) with `Retry-After` when any subject is locked. */
  async assertOpen (subjects: Counted[], code: JwtLoginErrorCode = 'ERR_JWT_LOGIN_RATE_LIMITED'): Promise<void> {
    const locks = await Promise.all(subjects.map(async s => await this.#store.get(`lock:${s.key}`)))
    let until = 0
    for (const lock of locks) if (lock !== null) until = Math.max(until, Number(lock))
    if (until > this.#now()) {
      throw new JwtLoginError(code, { retryAfter: Math.max(1, Math.ceil((until - this.#now()) / 1000)) })
    }
  }

  /** Counts one failure for each subject; returns whether any reached its limit. */
  async fail (subjects: Counted[]): Promise<boolean> {
    const results = await Promise.all(subjects.map(async s => {
      const { count, ttlMs } = await this.#store.increment(`fails:${s.key}`, s.limit.windowMs)
      if (count >= s.limit.max) {
        await this.#store.set(`lock:${s.key}`, String(this.#now() + ttlMs), ttlMs)
        return true
      }
      return false
    }))
    return results.includes(true)
  }

  /** Forgets the failures of a subject (after a success). */
  async reset (subject: Counted): Promise<void> {
    await this.#store.delete(`fails:${subject.key}`)
  }

  /**
   * Counts one attempt on every subject before it is checked. Over any
   * subject's `max`, the attempt is refused; it then stays counted only on
   * the subjects that refused it.
   */
  async reserve (subjects: Reservable[]): Promise<Reservation> {
    const holds = await Promise.all(subjects.map(async s => await this.#hold(s)))
    const over = holds.filter(h => h.counted > h.subject.limit.max)
    if (over.length === 0) return { ok: true, holds }
    await this.release(holds.filter(h => !over.includes(h)))
    const waitMs = Math.max(...over.map(h => h.expiresAt - this.#now()))
    return { ok: false, retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) }
  }

  /** After a success: a `reset` subject forgives every attempt counted before this one, a `release` subject this one. */
  async succeed (holds: Hold[]): Promise<void> {
    await Promise.all(holds.map(async h => h.subject.onSuccess === 'reset' ? await this.#clear(h, true) : await this.#giveBack(h)))
  }

  /**
   * Gives back attempts that were not evaluated (refused on another subject,
   * or a dependency failed). Best effort: what cannot be given back stays counted.
   */
  async release (holds: Hold[]): Promise<void> {
    await Promise.allSettled(holds.map(async h => h.subject.onSuccess === 'reset' ? await this.#clear(h, false) : await this.#giveBack(h)))
  }

  async #hold (subject: Reservable): Promise<Hold> {
    const start = this.#now()
    // the credit is read before the increment: it can then only cover attempts counted before this one
    const credit = await this.#credit(subject)
    const { count, ttlMs } = await this.#store.increment(`fails:${subject.key}`, subject.limit.windowMs)
    // a credit as large as the count is left over from an ended window: ignored
    return { subject, position: count, counted: credit < count ? count - credit : count, expiresAt: start + ttlMs }
  }

  async #credit (subject: Reservable): Promise<number> {
    if (subject.onSuccess === 'release') return Number(await this.#store.get(`released:${subject.key}`) ?? 0)
    const { watermark, released } = parseCleared(await this.#store.get(`cleared:${subject.key}`))
    return watermark + released
  }

  /** How long a credit for the hold's window may live; 0 or less when the window is (nearly) over. */
  #creditTtl (hold: Hold): number {
    return hold.expiresAt - this.#now() - Math.min(CREDIT_MARGIN_MS, hold.subject.limit.windowMs / 10)
  }

  async #giveBack (hold: Hold): Promise<void> {
    const ttlMs = this.#creditTtl(hold)
    if (ttlMs > 0) await this.#store.increment(`released:${hold.subject.key}`, ttlMs)
  }

  /** Forgives every attempt up to the hold (`all`) or the hold's alone: read, then write. */
  async #clear (hold: Hold, all: boolean): Promise<void> {
    const ttlMs = this.#creditTtl(hold)
    if (ttlMs <= 0) return
    const key = `cleared:${hold.subject.key}`
    const { watermark, released } = parseCleared(await this.#store.get(key))
    // a later success has forgiven this attempt already
    if (hold.position <= watermark) return
    await this.#store.set(key, all ? `${hold.position}:0` : `${watermark}:${released + 1}`, ttlMs)
  }
}
