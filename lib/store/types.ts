/**
 * The state-store port. jwt-login keeps only short-lived state here
 * (challenges, codes, session records, revocations, counters), never a
 * user record. Every operation that decides a single use is atomic.
 *
 * Time-to-live values are in milliseconds and always positive.
 */
export interface StateStore {
  /** The value under `key`, or `null` when absent or expired. */
  get (key: string): Promise<string | null>
  /**
   * The values under `keys`, in their order (`null` for each absent or
   * expired one), read in one round trip; the reads need not be atomic
   * together. Optional: without it the plugin reads each key with `get`, in
   * parallel. Revocation checks use it on every authenticated request.
   */
  getMany? (keys: readonly string[]): Promise<Array<string | null>>
  /** Stores `value` under `key` for `ttlMs`, replacing any earlier value. */
  set (key: string, value: string, ttlMs: number): Promise<void>
  /**
   * Reads and deletes `key` in one atomic step. Of several concurrent calls
   * for one key, exactly one receives the value; the others receive `null`.
   */
  consume (key: string): Promise<string | null>
  /**
   * Adds one to the counter under `key` atomically and returns the new count
   * and the time left (ms) before the counter expires. The first increment
   * creates the counter with `ttlMs`; later ones keep its expiry.
   */
  increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }>
  /**
   * Writes `value` under `key` for `ttlMs` only when the value there now is
   * `expected` (`null`: only when the key is absent or expired), in one atomic
   * step, and answers whether it wrote. Of concurrent calls that expect the
   * same value, at most one writes.
   */
  compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean>
  /** Removes `key`; absent keys are fine. */
  delete (key: string): Promise<void>
  /**
   * `true` when calls made without waiting for one another take effect in
   * the order they were made (one connection to one server, as a single
   * Redis; or in process). The attempt limiter then sends its read and its
   * count together, in one round trip; without it (a Redis Cluster,
   * PostgreSQL's pool, or not said), the count waits for the read.
   */
  readonly ordered?: boolean
  /** Releases connections or timers the store owns. */
  close? (): Promise<void>
  /**
   * Gives the store a logger for what it has to say outside any request
   * (a lost connection, a server that keeps nothing on disk). The plugin
   * calls it with the Fastify logger at registration; a logger the store was
   * built with stays.
   */
  attachLogger? (log: StoreLogger): void
}

/** A pino-compatible logger (the Fastify logger is one): an object, then a message. */
export interface StoreLogger {
  error (details: object, message: string): void
  warn (details: object, message: string): void
  debug? (details: object, message: string): void
}
