import { JwtLoginError } from '../errors.js'
import type { Clock } from '../clock.js'
import type { StateStore } from './types.js'

export interface MemoryStoreOptions {
  /** Most entries kept at once (default 100 000). */
  maxEntries?: number
  /** How often expired entries are swept, in ms (default 60 000). */
  sweepIntervalMs?: number
  /** Time source in ms since the epoch; defaults to `Date.now`. */
  clock?: Clock
}

interface Entry {
  value: string
  expiresAt: number
}

/**
 * The default store: one process, bounded, expired entries swept. When it is
 * full of live entries it refuses new ones (the request fails closed with
 * 503) rather than evicting state such as a revocation.
 */
export class MemoryStore implements StateStore {
  readonly #entries = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #clock: Clock
  readonly #timer: NodeJS.Timeout

  constructor (options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000
    this.#clock = options.clock ?? Date.now
    this.#timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000)
    this.#timer.unref()
  }

  /** Number of live and not yet swept entries. */
  get size (): number {
    return this.#entries.size
  }

  /** Drops every expired entry. Runs on a timer; callable directly. */
  sweep (): void {
    const now = this.#clock()
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key)
    }
  }

  #live (key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.#clock()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  #put (key: string, entry: Entry): void {
    if (!this.#entries.has(key) && this.#entries.size >= this.#maxEntries) {
      this.sweep()
      if (this.#entries.size >= this.#maxEntries) {
        throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('memory store is full') })
      }
    }
    this.#entries.set(key, entry)
  }

  async get (key: string): Promise<string | null> {
    return this.#live(key)?.value ?? null
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    this.#put(key, { value, expiresAt: this.#clock() + ttlMs })
  }

  async consume (key: string): Promise<string | null> {
    const entry = this.#live(key)
    if (entry === undefined) return null
    this.#entries.delete(key)
    return entry.value
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    const now = this.#clock()
    const entry = this.#live(key)
    if (entry === undefined) {
      this.#put(key, { value: '1', expiresAt: now + ttlMs })
      return { count: 1, ttlMs }
    }
    const count = Number(entry.value) + 1
    entry.value = String(count)
    return { count, ttlMs: entry.expiresAt - now }
  }

  async delete (key: string): Promise<void> {
    this.#entries.delete(key)
  }

  async close (): Promise<void> {
    clearInterval(this.#timer)
    this.#entries.clear()
  }
}
