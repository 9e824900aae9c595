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
   * creates the counter with `ttlMs`; later ones keep its expiry. `get`,
   * `getMany` and `readAndIncrement` read a counter as its count, a string of
   * decimal digits.
   */
  increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }>
  /**
   * Writes `value` under `key` for `ttlMs` only when the value there now is
   * `expected` (`null`: only when the key is absent or expired), in one atomic
   * step, and answers whether it wrote. Of concurrent calls that expect what
   * the key holds (`null` when it holds nothing), exactly one writes.
   */
  compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean>
  /** Removes `key`; absent keys are fine. */
  delete (key: string): Promise<void>
  /**
   * `true` when calls made without waiting for one another take effect in
   * the order they were made (one connection to one server, as a single
   * Redis; or in process). The attempt limiter then sends its read and its
   * count together, in one round trip; without it (a Redis Cluster,
   * PostgreSQL's pool, or not said), the count waits for the read. A store
   * with `readAndIncrement` (see `AtomicBatch`) is asked for that instead,
   * ordered or not.
   */
  readonly ordered?: boolean
  /**
   * Optional: the database the store keeps its entries in, as OpenTelemetry
   * names it (`redis`, `postgresql`): the `db.system` attribute of the
   * spans of its calls.
   */
  readonly system?: string
  /**
   * Optional: reads some keys, then counts others, in one atomic call (see
   * `AtomicBatch`, which says what an implementation must guarantee). The
   * attempt limiter uses it whenever the store has it.
   */
  readAndIncrement? (read: readonly string[], increments: readonly BatchIncrement[], options?: ReadAndIncrementOptions): Promise<ReadAndIncrementResult>
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

/** One counter a `readAndIncrement` adds one to: as `increment` does, with `ttlMs` for a new one. */
export interface BatchIncrement {
  key: string
  ttlMs: number
}

export interface ReadAndIncrementOptions {
  /**
   * A condition on the increments: while any of `keys` holds a number
   * greater than `now` (ms since the epoch, the caller's clock), nothing is
   * counted (see `AtomicBatch`). The attempt limiter names its subjects'
   * `lock:` keys, so an attempt on a locked subject writes nothing.
   */
  unlessAbove?: { keys: readonly string[], now: number }
}

export interface ReadAndIncrementResult {
  /** The values of the keys read, in their order (`null`: absent or expired), as they were before the increments. */
  values: Array<string | null>
  /** Each increment's new count and time left, in their order; `null` for one the `unlessAbove` condition held back. */
  counts: Array<{ count: number, ttlMs: number } | null>
}

/**
 * An optional capability of a state store, beside `StateStore`: reads and
 * counts in one call, so the attempt limiter reads a subject's counters and
 * counts its attempt in one round trip on any store, ordered or not. The
 * plugin uses it whenever the store has the method (a function named
 * `readAndIncrement`), and falls back to `getMany` and `increment` otherwise.
 * An adapter that offers it must guarantee:
 * - every key of `read` is read before any counter of `increments` is
 *   counted, and no write made after an increment is seen by the reads
 *   (the credits a caller reads then cover only the attempts counted
 *   before its own); the reads of keys in different atomic units (a Redis
 *   Cluster's hash slots) need not be one snapshot;
 * - each increment is atomic as `increment` is, and the increments of one
 *   call are made together: on one Redis or in one SQL statement, of two
 *   concurrent calls that count the same counters, one counts all of them
 *   before the other (on a Redis Cluster this holds within a hash slot);
 * - with `unlessAbove`, when one of its keys holds a number greater than
 *   `now` at the time of the reads, no counter is incremented (`counts`
 *   all `null`); where the call spans several atomic units, at least no
 *   counter in the unit of such a key (the caller gives back any other);
 * - the keys of `increments` are distinct, and any of them may also be read;
 * - it fails as a whole or answers for every key (a partial failure is an
 *   error). Where the call spans several atomic units, the counts of a unit
 *   that succeeded before another failed may stay: they only ever count one
 *   attempt more, so the limits fail closed, and a retry counts anew.
 */
export interface AtomicBatch {
  readAndIncrement (read: readonly string[], increments: readonly BatchIncrement[], options?: ReadAndIncrementOptions): Promise<ReadAndIncrementResult>
}

/** A pino-compatible logger (the Fastify logger is one): an object, then a message. */
export interface StoreLogger {
  error (details: object, message: string): void
  warn (details: object, message: string): void
  debug? (details: object, message: string): void
}
