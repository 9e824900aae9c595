import type { StoreLogger } from './types.js'

/** At most one log line per this many ms about a failure that keeps coming back. */
export const STORE_ERROR_LOG_INTERVAL_MS = 10_000

/**
 * One error line for a burst of the same failure (a lost connection, a
 * failing sweep), then at most one per interval, each with the count of
 * failures not logged since the last. Only the error's message and code are
 * logged, never connection settings. Without a logger the line goes to stderr.
 */
export class RateLimitedLine {
  #lastAt = -Infinity
  #notLogged = 0

  constructor (readonly message: string) {}

  /** The failures seen since the last line, not logged. */
  get notLogged (): number {
    return this.#notLogged
  }

  /** Logs `error` unless a line went out within the interval; answers whether it did. */
  report (log: StoreLogger | null, error: Error): boolean {
    const now = Date.now()
    if (now - this.#lastAt < STORE_ERROR_LOG_INTERVAL_MS) {
      this.#notLogged++
      return false
    }
    const details = { err: { message: error.message, code: (error as NodeJS.ErrnoException).code }, notLogged: this.#notLogged }
    this.#lastAt = now
    this.#notLogged = 0
    if (log === null) console.error(this.message, details)
    else log.error(details, this.message)
    return true
  }
}
