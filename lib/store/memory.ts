import { JwtLoginError } from '../errors.js'
import type { Clock } from '../clock.js'
import type { StateStore, StoreLogger } from './types.js'

export interface MemoryStoreOptions {
  /** Most state entries (sessions, revocations, codes, challenges) kept at once (default 100 000). */
  maxEntries?: number
  /** Most counters (request rates, failure counts, attempt counts) kept at once (default 100 000). */
  maxCounters?: number
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
 * - counters: when full, the oldest counter is evicted (a warning is logged);
 *   counters are short-lived and losing one costs at most a fresh window.
 */
export class MemoryStore implements StateStore {
  readonly #entries = new Map<string, Entry>()
  readonly #counters = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #maxCounters: number
  readonly #batch: number
  readonly #clock: Clock
  #warn: ((message: string) => void) | null
  readonly #timer: NodeJS.Timeout
  #cursor: { map: Map<string, Entry>, keys: IterableIterator<string> } | null = null
  #nearFullWarned = false
  #lastEvictionWarning = -Infinity

  constructor (options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000
    this.#maxCounters = options.maxCounters ?? 100_000
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
    return this.#entries.size + this.#counters.size
  }

  /** Live and not yet swept entries by kind. */
  get counts (): { state: number, counters: number } {
    return { state: this.#entries.size, counters: this.#counters.size }
  }

  /** Drops every expired entry at once (blocks for the whole map: for tests and maintenance). */
  sweep (): void {
    const now = this.#clock()
    for (const map of [this.#entries, this.#counters]) {
      for (const [key, entry] of map) {
        if (entry.expiresAt <= now) map.delete(key)
      }
    }
  }

  /**
   * Checks the next `sweepBatch` entries for expiry, resuming where the last
   * slice stopped (state first, then counters). Runs on the timer.
   */
  sweepSlice (): void {
    const now = this.#clock()
    let budget = this.#batch
    while (budget > 0) {
      if (this.#cursor === null) this.#cursor = { map: this.#entries, keys: this.#entries.keys() }
      const { map, keys } = this.#cursor
      let next = keys.next()
      while (!next.done && budget > 0) {
        const entry = map.get(next.value)
        if (entry !== undefined && entry.expiresAt <= now) map.delete(next.value)
        budget--
        if (budget > 0) next = keys.next()
      }
      if (!next.done) return
      // this map is done: the counters next, or a new round later
      if (map === this.#counters) {
        this.#cursor = null
        return
      }
      this.#cursor = { map: this.#counters, keys: this.#counters.keys() }
    }
  }

  #find (key: string): { map: Map<string, Entry>, entry: Entry } | undefined {
    const map = this.#entries.has(key) ? this.#entries : this.#counters
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
    if (!this.#entries.has(key) && this.#entries.size >= this.#maxEntries) {
      this.sweepSlice()
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
    if (this.#counters.size >= this.#maxCounters) {
      this.sweepSlice()
      if (this.#counters.size >= this.#maxCounters) {
        // the oldest counter goes: the Map keeps insertion order
        this.#counters.delete(this.#counters.keys().next().value as string)
        const now = this.#clock()
        if (now - this.#lastEvictionWarning >= EVICTION_WARNING_EVERY_MS) {
          this.#lastEvictionWarning = now
          this.#warn?.(`jwt-login: the memory store holds ${this.#maxCounters} counters and evicts the oldest; limits may count from zero again. Raise maxCounters or use a shared store.`)
        }
      }
    }
    this.#counters.set(key, entry)
  }

  async get (key: string): Promise<string | null> {
    return this.#find(key)?.entry.value ?? null
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

  async delete (key: string): Promise<void> {
    this.#entries.delete(key)
    this.#counters.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.#timer)
    this.#entries.clear()
    this.#counters.clear()
    this.#cursor = null
  }
}
