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
 * Failure counters with temporary lockouts: each failure counts in a fixed
 * window; reaching `max` locks the subject until the window ends.
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
}
