// Bounds the password hashing of the flows: argon2 runs on libuv's pool, which shares the cores with the event loop.
import { availableParallelism } from 'node:os'
import { performance } from 'node:perf_hooks'
import type { UserAdapter } from '../adapters/users.js'
import type { Settings } from '../config/settings.js'
import { JwtLoginError } from '../core/errors.js'

/** The `passwordHashing` settings as resolved: `0` means sized from the machine. */
export type PasswordHashingSettings = Settings['passwordHashing']

/**
 * Operations that may wait per hash slot in each queue when `maxQueue` (or
 * `maxRegistrationQueue`) is `0`. One verify with `ARGON2_OPTIONS`
 * (argon2id, 19 MiB, 2 passes) took 50 ms (median of 30; 32–86 ms) on the
 * 2-core reference machine, so 48 waiting per slot is 48 × 50 ms ≈ 2.4 s of
 * waiting at most for the last one in the queue, twice that while the other
 * queue takes every other slot.
 */
export const QUEUE_PER_SLOT = 48

/** The mean hash time assumed until one has been timed: the measured verify above. */
const FIRST_MEAN_MS = 50

/** The weight of the newest hash in the moving mean: about the last ten hashes count. */
const NEWEST_WEIGHT = 0.2

/**
 * How an operation waits: a sign-in (a password check) in the sign-ins'
 * queue, refused when it is full; a registration's new password in the new
 * passwords' queue, refused when that one is full (a retry is harmless); a
 * reset completion's new password in the same queue, never refused (its
 * code is already spent).
 */
export type PasswordWorkMode = 'sign-in' | 'registration' | 'new-password'

/** The two queues: sign-ins, and new passwords (registrations and reset completions). */
type Queue = 'signIns' | 'newPasswords'

/** The limits in force: how many hashes at once, and how many may wait in each queue. */
export interface HashingLimits {
  concurrency: number
  maxQueue: number
  maxRegistrationQueue: number
}

/** The settings with `0` resolved: one slot fewer than the cores (at least one), and `QUEUE_PER_SLOT` waiting per slot in each queue. */
export function hashingLimits (settings: PasswordHashingSettings, cores: number): HashingLimits {
  const concurrency = settings.concurrency === 0 ? Math.max(1, cores - 1) : settings.concurrency
  const sized = (max: number): number => max === 0 ? concurrency * QUEUE_PER_SLOT : max
  return { concurrency, maxQueue: sized(settings.maxQueue), maxRegistrationQueue: sized(settings.maxRegistrationQueue) }
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
 * A semaphore over password hashing with two first-in first-out queues;
 * the process has one (`processPasswordWork`), as it has one libuv pool. At
 * most `concurrency` operations run at once; the others wait in their
 * queue, in the order they came: sign-ins in one, new passwords
 * (registrations, reset completions) in the other. A slot given back goes
 * to the queue that did not have the last one when both wait (sign-ins
 * first at the start), so neither can starve the other, and a queue is
 * refused only on its own length: waiting registrations never make a
 * sign-in answer 503 / 228. A `sign-in` that finds `maxQueue` sign-ins
 * waiting, or a `registration` that finds `maxRegistrationQueue` new
 * passwords waiting, is refused at once with 503 / 228 and a `Retry-After`
 * from the slots ahead of it and the recent mean hash time; a `new-password`
 * (a reset completion) always waits. Each operation brings the settings in
 * force when it asks for a slot, so a reload takes effect at once; a slot
 * given back goes to the next in line under the concurrency the latest
 * operation brought.
 */
export class PasswordWork {
  readonly #cores: number
  readonly #now: () => number
  /** Each waiting operation's start, per queue, in arrival order. */
  readonly #queues: Record<Queue, Array<() => void>> = { signIns: [], newPasswords: [] }
  /** The queue that had the last slot given from a queue. */
  #lastServed: Queue = 'newPasswords'
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

  /** Operations waiting for a slot, in both queues. */
  get waiting (): number {
    return this.#queues.signIns.length + this.#queues.newPasswords.length
  }

  /** Sign-ins waiting for a slot. */
  get waitingSignIns (): number {
    return this.#queues.signIns.length
  }

  /** New passwords (registrations, reset completions) waiting for a slot. */
  get waitingNewPasswords (): number {
    return this.#queues.newPasswords.length
  }

  /** This work under one instance's settings, read at each operation. */
  under (settings: () => PasswordHashingSettings): Hashing {
    return async (task, mode) => await this.run(task, mode, settings())
  }

  /**
   * Runs `task` in a slot, after those that came first; the slot is given
   * back however the task ends. Throws `ERR_JWT_LOGIN_BUSY` without running
   * it when its queue is full and `mode` may be refused.
   */
  async run<T> (task: () => Promise<T>, mode: PasswordWorkMode, settings: PasswordHashingSettings): Promise<T> {
    const { concurrency, maxQueue, maxRegistrationQueue } = hashingLimits(settings, this.#cores)
    this.#concurrency = concurrency
    // a reload that raised the concurrency starts those waiting before a newcomer
    this.#startWaiting()
    if (this.#running < concurrency && this.waiting === 0) {
      this.#running++
    } else {
      const queue: Queue = mode === 'sign-in' ? 'signIns' : 'newPasswords'
      const max = mode === 'sign-in' ? maxQueue : mode === 'registration' ? maxRegistrationQueue : Infinity
      if (this.#queues[queue].length >= max) throw this.#busy(queue, concurrency)
      await new Promise<void>(resolve => { this.#queues[queue].push(resolve) })
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

  /** Gives free slots to the first waiting operations, taking turns between the queues; the slot is counted before the operation resumes. */
  #startWaiting (): void {
    while (this.#running < this.#concurrency && this.waiting > 0) {
      const other: Queue = this.#lastServed === 'signIns' ? 'newPasswords' : 'signIns'
      const queue = this.#queues[other].length > 0 ? other : this.#lastServed
      this.#lastServed = queue
      this.#running++
      const start = this.#queues[queue].shift() as () => void
      start()
    }
  }

  /**
   * The refusal: `Retry-After` is the time the slots ahead take at the
   * recent mean, at least a second. Ahead: the queue's own operations, and
   * as many of the other queue's, which take every other slot meanwhile.
   */
  #busy (queue: Queue, concurrency: number): JwtLoginError {
    const own = this.#queues[queue].length
    const other = this.#queues[queue === 'signIns' ? 'newPasswords' : 'signIns'].length
    const seconds = Math.ceil((own + Math.min(own, other)) * this.#meanMs / concurrency / 1000)
    return new JwtLoginError('ERR_JWT_LOGIN_BUSY', { retryAfter: Math.max(1, seconds) })
  }
}

/**
 * How each adapter method runs: a password check as a sign-in, a new
 * user's password as a registration, a new password set as a reset
 * completion's; the rest pass through. A record, so that a method
 * added to the port and not listed here fails the type check.
 */
const MODES: Record<keyof UserAdapter, PasswordWorkMode | null> = {
  findByEmail: null,
  findByLogin: null,
  findById: null,
  verifyPassword: 'sign-in',
  // a sign-in's upgrade writes a new hash: it waits in the new passwords' queue, never refused
  rehashPassword: 'new-password',
  getPasswordHash: null,
  toPublicUser: null,
  setPassword: 'new-password',
  createUser: 'registration',
  deleteUser: null,
  setEmailVerified: null,
  setEmail: null,
  passwordFingerprint: null,
  hasPassword: null,
  findByIdentity: null,
  linkIdentity: null,
  listIdentities: null,
  unlinkIdentity: null
}

type AnyMethod = (...args: unknown[]) => unknown

/**
 * The adapter with its hashing methods run through `hashing`: `verifyPassword`
 * in the sign-ins' queue, `createUser` with a password and `setPassword` in
 * the new passwords' queue (a registration refusable, a reset never); every
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
    const wrapped: AnyMethod = async (...args) => name === 'createUser' && (args[0] as { password?: string }).password === undefined
      ? await call(...args)
      : await hashing(async () => await call(...args), mode as PasswordWorkMode)
    // a method that hashes nothing is the adapter's own, bound (findById is on every authenticated request)
    let own: unknown
    let bound: AnyMethod | undefined
    Object.defineProperty(bounded, name, {
      enumerable: true,
      get: () => {
        const method = methods[name]
        if (typeof method !== 'function') return undefined
        if (mode !== null) return wrapped
        if (method !== own) [own, bound] = [method, (method as AnyMethod).bind(users)]
        return bound
      }
    })
  }
  return bounded as UserAdapter<U>
}

/** The process's one password work: every instance of the plugin shares the libuv pool, so they share its bound. */
export const processPasswordWork = new PasswordWork()
