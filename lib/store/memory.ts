import { JwtLoginError } from '../core/errors.js'
import type { Clock } from '../core/clock.js'
import type { AtomicBatch, BatchIncrement, ReadAndIncrementOptions, ReadAndIncrementResult, StateStore, StoreLogger } from './types.js'

export interface MemoryStoreOptions {
  /** Most state entries (sessions, revocations, codes, challenges) kept at once (default 100 000). */
  maxEntries?: number
  /** Most counters (request rates, failure counts, attempt counts) kept at once (default 100 000). */
  maxCounters?: number
  /**
   * Which counters may be evicted when the counters are full (default: the
   * per-IP request rates, `rate:*`). Lockout and attempt counters never are:
   * losing one would lift a lockout.
   */
  evictable?: (key: string) => boolean
  /** How often a slice of the entries is checked for expiry, in ms (default 1 000). */
  sweepIntervalMs?: number
  /** Entries checked per slice (default 10 000), so a sweep never holds the event loop long. */
  sweepBatch?: number
  /** Time source in ms since the epoch; defaults to `Date.now`. */
  clock?: Clock
  /** Told when the store nears its bound or starts evicting counters; without it, the logger the plugin attaches is. */
  onWarning?: (message: string) => void
}

interface Entry {
  value: string
  expiresAt: number
}

/** Share of `maxEntries` at which a warning is logged, and below which it is armed again. */
const WARN_AT = 0.8
const REARM_AT = 0.7
const EVICTION_WARNING_EVERY_MS = 60_000

/**
 * The default store: one process, bounded, expired entries swept a slice at
 * a time. State (sessions, revocations, single-use secrets) and counters are
 * kept apart, each with its own bound, so a flood of counters never crowds
 * out a revocation:
 * - state: when full of live entries, a new one is refused (the request
 *   fails closed with 503); nothing is ever evicted.
 * - counters: when full, the oldest evictable counter (a request rate) is
 *   evicted and a warning logged; losing one only starts a client's window
 *   again. Lockout and attempt counters are never evicted: with none
 *   evictable left, a new counter is refused (503), as state is.
 */
export class MemoryStore implements StateStore, AtomicBatch {
  /** In process: every call takes effect when it is made, so in the order made. */
  readonly ordered = true
  /** In process: no database of the OpenTelemetry names. */
  readonly system = 'memory'
  readonly #entries = new Map<string, Entry>()
  readonly #counters = new Map<string, Entry>()
  readonly #evictable = new Map<string, Entry>()
  readonly #isEvictable: (key: string) => boolean
  readonly #maxEntries: number
  readonly #maxCounters: number
  readonly #batch: number
  readonly #clock: Clock
  #warn: ((message: string) => void) | null
  readonly #timer: NodeJS.Timeout
  #cursor: { map: Map<string, Entry>, entries: IterableIterator<[string, Entry]> } | null = null
  #nearFullWarned = false
  #lastEvictionWarning = -Infinity
  #lastFullSweep = -Infinity

  constructor (options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000
    this.#maxCounters = options.maxCounters ?? 100_000
    this.#isEvictable = options.evictable ?? ((key) => key.startsWith('rate:'))
    this.#batch = options.sweepBatch ?? 10_000
    this.#clock = options.clock ?? Date.now
    this.#warn = options.onWarning ?? null
    this.#timer = setInterval(() => { this.sweepSlice() }, options.sweepIntervalMs ?? 1000)
    this.#timer.unref()
  }

  /** The plugin's logger takes the warnings, unless the store was built with `onWarning`. */
  attachLogger (log: StoreLogger): void {
    this.#warn ??= (message) => { log.warn({ store: 'memory', ...this.counts }, message) }
  }

  /** Number of live and not yet swept entries, state and counters together. */
  get size (): number {
    return this.#entries.size + this.#counters.size + this.#evictable.size
  }

  /** Live and not yet swept entries by kind. */
  get counts (): { state: number, counters: number } {
    return { state: this.#entries.size, counters: this.#counters.size + this.#evictable.size }
  }

  /** The entries of each kind as a share of their bound (0 to 1): the `jwt_login.memory_store.usage` gauge. */
  get usage (): { state: number, counters: number } {
    return { state: this.#entries.size / this.#maxEntries, counters: (this.#counters.size + this.#evictable.size) / this.#maxCounters }
  }

  /** Drops every expired entry at once (blocks for the whole map: for tests and maintenance). */
  sweep (): void {
    const now = this.#clock()
    for (const map of [this.#entries, this.#counters, this.#evictable]) this.#sweepMap(map, now)
  }

  #sweepMap (map: Map<string, Entry>, now: number): void {
    for (const [key, entry] of map) {
      if (entry.expiresAt <= now) map.delete(key)
    }
  }

  /**
   * Checks the next `sweepBatch` entries for expiry, resuming where the last
   * slice stopped (state first, then the counters). Runs on the timer. It
   * walks the entries themselves, in the map's order: looking each key up
   * again would cost a cache miss per entry in a large map (a slice of a
   * million sessions took some 5 ms so, against 0.2 ms), a stall of the event
   * loop every second that requests would see in their latency.
   */
  sweepSlice (): void {
    const now = this.#clock()
    let budget = this.#batch
    while (budget > 0) {
      if (this.#cursor === null) this.#cursor = { map: this.#entries, entries: this.#entries.entries() }
      const { map, entries } = this.#cursor
      let next = entries.next()
      while (!next.done && budget > 0) {
        const [key, entry] = next.value
        if (entry.expiresAt <= now) map.delete(key)
        budget--
        if (budget > 0) next = entries.next()
      }
      if (!next.done) return
      // this map is done: the next one, or a new round later
      const following = map === this.#entries ? this.#counters : map === this.#counters ? this.#evictable : null
      if (following === null) {
        this.#cursor = null
        return
      }
      this.#cursor = { map: following, entries: following.entries() }
    }
  }

  #mapOf (key: string): Map<string, Entry> {
    if (this.#entries.has(key)) return this.#entries
    return this.#counters.has(key) ? this.#counters : this.#evictable
  }

  #find (key: string): { map: Map<string, Entry>, entry: Entry } | undefined {
    const map = this.#mapOf(key)
    const entry = map.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.#clock()) {
      map.delete(key)
      return undefined
    }
    return { map, entry }
  }

  #putState (key: string, entry: Entry): void {
    this.#counters.delete(key)
    this.#evictable.delete(key)
    if (!this.#entries.has(key) && this.#entries.size >= this.#maxEntries) {
      // full: look through all the state for expired entries, at most once a second
      const now = this.#clock()
      if (now - this.#lastFullSweep >= 1000) {
        this.#lastFullSweep = now
        this.#sweepMap(this.#entries, now)
      }
      if (this.#entries.size >= this.#maxEntries) {
        throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('memory store is full') })
      }
    }
    this.#entries.set(key, entry)
    this.#watchFill()
  }

  #watchFill (): void {
    const fill = this.#entries.size / this.#maxEntries
    if (!this.#nearFullWarned && fill >= WARN_AT) {
      this.#nearFullWarned = true
      this.#warn?.(`jwt-login: the memory store holds ${this.#entries.size} of at most ${this.#maxEntries} state entries; when it is full, sign-ins answer 503. Raise maxEntries or use a shared store.`)
    } else if (this.#nearFullWarned && fill < REARM_AT) {
      this.#nearFullWarned = false
    }
  }

  #putCounter (key: string, entry: Entry): void {
    if (this.#counters.size + this.#evictable.size >= this.#maxCounters) {
      const now = this.#clock()
      if (now - this.#lastFullSweep >= 1000) {
        this.#lastFullSweep = now
        this.#sweepMap(this.#counters, now)
        this.#sweepMap(this.#evictable, now)
      }
      if (this.#counters.size + this.#evictable.size >= this.#maxCounters) {
        if (this.#evictable.size === 0) {
          this.#warnEvery(now, `jwt-login: the memory store holds ${this.#maxCounters} counters, none of them evictable; new counters are refused (503). Raise maxCounters or use a shared store.`)
          throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('memory store counters are full') })
        }
        // the oldest request rate goes: the Map keeps insertion order
        this.#evictable.delete(this.#evictable.keys().next().value as string)
        this.#warnEvery(now, `jwt-login: the memory store holds ${this.#maxCounters} counters and evicts the oldest request rates; a client's request window may start again. Raise maxCounters or use a shared store.`)
      }
    }
    ;(this.#isEvictable(key) ? this.#evictable : this.#counters).set(key, entry)
  }

  #warnEvery (now: number, message: string): void {
    if (now - this.#lastEvictionWarning < EVICTION_WARNING_EVERY_MS) return
    this.#lastEvictionWarning = now
    this.#warn?.(message)
  }

  /**
   * A live entry's value, or `null`: the reads' lookup, which validate makes
   * on every request (one `get` per map until found, nothing allocated). An
   * expired entry is dropped, as `#find` drops it.
   */
  #valueAt (key: string, now: number): string | null {
    const entry = this.#entries.get(key) ?? this.#counters.get(key) ?? this.#evictable.get(key)
    if (entry === undefined) return null
    if (entry.expiresAt <= now) {
      this.#entries.delete(key)
      this.#counters.delete(key)
      this.#evictable.delete(key)
      return null
    }
    return entry.value
  }

  async get (key: string): Promise<string | null> {
    return this.#valueAt(key, this.#clock())
  }

  async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    const now = this.#clock()
    return keys.map(key => this.#valueAt(key, now))
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    this.#putState(key, { value, expiresAt: this.#clock() + ttlMs })
  }

  async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    const current = this.#find(key)?.entry.value ?? null
    if (current !== expected) return false
    this.#putState(key, { value, expiresAt: this.#clock() + ttlMs })
    return true
  }

  async consume (key: string): Promise<string | null> {
    const found = this.#find(key)
    if (found === undefined) return null
    found.map.delete(key)
    return found.entry.value
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    return this.#incrementNow(key, ttlMs)
  }

  #incrementNow (key: string, ttlMs: number): { count: number, ttlMs: number } {
    const now = this.#clock()
    const found = this.#find(key)
    if (found === undefined) {
      this.#putCounter(key, { value: '1', expiresAt: now + ttlMs })
      return { count: 1, ttlMs }
    }
    const count = Number(found.entry.value) + 1
    found.entry.value = String(count)
    return { count, ttlMs: found.entry.expiresAt - now }
  }

  /** In process and without an `await`, nothing runs between the reads and the increments: the whole call is one atomic step. */
  async readAndIncrement (read: readonly string[], increments: readonly BatchIncrement[], options: ReadAndIncrementOptions = {}): Promise<ReadAndIncrementResult> {
    const now = this.#clock()
    const values = read.map(key => this.#valueAt(key, now))
    const held = options.unlessAbove
    if (held !== undefined && held.keys.some(key => Number(this.#valueAt(key, now)) > held.now)) {
      return { values, counts: increments.map(() => null) }
    }
    return { values, counts: increments.map(({ key, ttlMs }) => this.#incrementNow(key, ttlMs)) }
  }

  async delete (key: string): Promise<void> {
    this.#entries.delete(key)
    this.#counters.delete(key)
    this.#evictable.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.#timer)
    this.#entries.clear()
    this.#counters.clear()
    this.#evictable.clear()
    this.#cursor = null
  }
}
