// Bounds the password hashing of the flows: argon2 runs on libuv's pool, which shares the cores with the event loop.
import { availableParallelism } from 'node:os'
import { performance } from 'node:perf_hooks'
import type { UserAdapter } from '../adapters/users.js'
import type { Settings } from '../config/settings.js'
import { JwtLoginError } from '../core/errors.js'

/** The `passwordHashing` settings as resolved: `0` means sized from the machine. */
export type PasswordHashingSettings = Settings['passwordHashing']

/**
 * Sign-ins that may wait per hash slot when `maxQueue` is `0`. One verify
 * with `ARGON2_OPTIONS` (argon2id, 19 MiB, 2 passes) took 50 ms (median of
 * 30; 32–86 ms) on the 2-core reference machine, so 48 waiting per slot is
 * 48 × 50 ms ≈ 2.4 s of waiting at most for the last one in the queue.
 */
export const QUEUE_PER_SLOT = 48

/** The mean hash time assumed until one has been timed: the measured verify above. */
const FIRST_MEAN_MS = 50

/** The weight of the newest hash in the moving mean: about the last ten hashes count. */
const NEWEST_WEIGHT = 0.2

/** Whether an operation may be refused when the queue is full (a sign-in), or always waits (a password change already decided). */
export type PasswordWorkMode = 'refusable' | 'waits'

/** The limits in force: how many hashes at once, and how many sign-ins may wait. */
export interface HashingLimits {
  concurrency: number
  maxQueue: number
}

/** The settings with `0` resolved: one slot fewer than the cores (at least one), and `QUEUE_PER_SLOT` waiting per slot. */
export function hashingLimits (settings: PasswordHashingSettings, cores: number): HashingLimits {
  const concurrency = settings.concurrency === 0 ? Math.max(1, cores - 1) : settings.concurrency
  return { concurrency, maxQueue: settings.maxQueue === 0 ? concurrency * QUEUE_PER_SLOT : settings.maxQueue }
}

/** Runs a password operation in a slot, under the settings of the instance that asks. */
export type Hashing = <T>(task: () => Promise<T>, mode: PasswordWorkMode) => Promise<T>

/** What a `PasswordWork` reads besides the settings; tests replace both. */
export interface PasswordWorkParts {
  /** The cores the auto sizes count (default `os.availableParallelism()`). */
  cores?: number
  /** A monotonic clock in ms for timing hashes (default `performance.now`): wall time, never the plugin's clock, which a test may move. */
  now?: () => number
}

/**
 * A semaphore over password hashing with a first-in first-out queue; the
 * process has one (`processPasswordWork`), as it has one libuv pool. At most
 * `concurrency` operations run at once; the others wait in the order they
 * came. A `refusable` operation (a sign-in) that finds `maxQueue` waiting is
 * refused at once with 503 / 228 and a `Retry-After` from the queue's depth
 * and the recent mean hash time; a `waits` operation (a reset's or a
 * registration's new password) always waits. Each operation brings the
 * settings in force when it asks for a slot, so a reload takes effect at
 * once; a slot given back goes to the next in line under the concurrency
 * the latest operation brought.
 */
export class PasswordWork {
  readonly #cores: number
  readonly #now: () => number
  /** Each waiting operation's start, in arrival order. */
  readonly #waiting: Array<() => void> = []
  #running = 0
  #concurrency = 1
  #meanMs = FIRST_MEAN_MS

  constructor ({ cores = availableParallelism(), now = () => performance.now() }: PasswordWorkParts = {}) {
    this.#cores = cores
    this.#now = now
  }

  /** Operations holding a slot. */
  get running (): number {
    return this.#running
  }

  /** Operations waiting for a slot. */
  get waiting (): number {
    return this.#waiting.length
  }

  /** This work under one instance's settings, read at each operation. */
  under (settings: () => PasswordHashingSettings): Hashing {
    return async (task, mode) => await this.run(task, mode, settings())
  }

  /**
   * Runs `task` in a slot, after those that came first; the slot is given
   * back however the task ends. Throws `ERR_JWT_LOGIN_BUSY` without running
   * it when `mode` is `refusable` and the queue is full.
   */
  async run<T> (task: () => Promise<T>, mode: PasswordWorkMode, settings: PasswordHashingSettings): Promise<T> {
    const { concurrency, maxQueue } = hashingLimits(settings, this.#cores)
    this.#concurrency = concurrency
    // a reload that raised the concurrency starts those waiting before a newcomer
    this.#startWaiting()
    if (this.#running < concurrency && this.#waiting.length === 0) {
      this.#running++
    } else {
      if (mode === 'refusable' && this.#waiting.length >= maxQueue) throw this.#busy(concurrency)
      await new Promise<void>(resolve => { this.#waiting.push(resolve) })
    }
    const startedAt = this.#now()
    try {
      const result = await task()
      this.#meanMs += NEWEST_WEIGHT * (this.#now() - startedAt - this.#meanMs)
      return result
    } finally {
      this.#running--
      this.#startWaiting()
    }
  }

  /** Gives free slots to the first waiting operations; the slot is counted before the operation resumes. */
  #startWaiting (): void {
    while (this.#running < this.#concurrency && this.#waiting.length > 0) {
      this.#running++
      const start = this.#waiting.shift() as () => void
      start()
    }
  }

  /** The refusal: `Retry-After` is the time the queue ahead takes at the recent mean, at least a second. */
  #busy (concurrency: number): JwtLoginError {
    const seconds = Math.ceil(this.#waiting.length * this.#meanMs / concurrency / 1000)
    return new JwtLoginError('ERR_JWT_LOGIN_BUSY', { retryAfter: Math.max(1, seconds) })
  }
}

/**
 * How each adapter method runs: a password check is refusable, a new
 * password's hash waits, the rest pass through. A record, so that a method
 * added to the port and not listed here fails the type check.
 */
const MODES: Record<keyof UserAdapter, PasswordWorkMode | null> = {
  findByEmail: null,
  findByLogin: null,
  findById: null,
  verifyPassword: 'refusable',
  getPasswordHash: null,
  toPublicUser: null,
  setPassword: 'waits',
  createUser: 'waits',
  deleteUser: null
}

type AnyMethod = (...args: unknown[]) => unknown

/**
 * The adapter with its hashing methods run through `hashing`: `verifyPassword`
 * refusable, `setPassword` and `createUser` with a password waiting; every
 * other method passed through. Each call goes to the adapter's method as it
 * is at the time of the call, with the adapter as `this`; an optional
 * method it lacks stays absent (the flows check for it).
 */
export function boundUsers<U> (users: UserAdapter<U>, hashing: Hashing): UserAdapter<U> {
  const methods = users as unknown as Record<string, unknown>
  const bounded = {}
  for (const [name, mode] of Object.entries(MODES)) {
    const call: AnyMethod = (...args) => (methods[name] as AnyMethod).apply(users, args)
    // a user a provider's sign-in creates has no password: nothing to hash, no slot taken
    const wrapped: AnyMethod = mode === null
      ? call
      : async (...args) => name === 'createUser' && (args[0] as { password?: string }).password === undefined
        ? await call(...args)
        : await hashing(async () => await call(...args), mode)
    Object.defineProperty(bounded, name, {
      enumerable: true,
      get: () => typeof methods[name] === 'function' ? wrapped : undefined
    })
  }
  return bounded as UserAdapter<U>
}

/** The process's one password work: every instance of the plugin shares the libuv pool, so they share its bound. */
export const processPasswordWork = new PasswordWork()
