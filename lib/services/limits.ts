import { throwFirstFailure } from '../core/settled.js'
import type { ResolvedLimit } from '../config/settings.js'
import { batchOf, readMany } from '../store/read.js'
import type { ReadAndIncrementResult, StateStore } from '../store/types.js'
import { count, counterKey, net, PEEKED, subjectKey, type Counted, type Peek } from './counters.js'

export { counterKey, countInWindow, subjectKey, type Counted } from './counters.js'

/**
 * A subject whose attempts are counted before the check they guard. `reset`:
 * a success also forgives the failures before it (an account). `release`: a
 * success gives back its own attempt only (a client, whose failures may be
 * on other accounts).
 */
export interface Reservable extends Counted {
  onSuccess: 'reset' | 'release'
}

/** One attempt counted on one subject, to settle when its outcome is known. */
export interface Hold {
  readonly subject: Reservable
  /** The attempts the subject holds with this one: unsettled, or failed and not forgiven. */
  readonly counted: number
  /** When the window ends on the limiter's clock (never later than in the store). */
  readonly expiresAt: number
  /** A `reset` subject's failures as read with the count: what a success forgives (`null`: none). */
  readonly failures: string | null
}

/**
 * The attempt may go ahead (`holds` to settle later; `read`: the values of
 * the keys asked to be read along, in their order), or is refused for
 * `retryAfter` seconds by the subjects `refusedBy` (their keys; `read` then too).
 */
export type Reservation = { ok: true, holds: Hold[], read: Array<string | null> } | { ok: false, retryAfter: number, refusedBy: string[], read: Array<string | null> }

/** A credit expires up to this long (at most a tenth of the window) before its counter, so it never outlives it. */
const CREDIT_MARGIN_MS = 1000

/** The holds of the counts that succeeded. */
function fulfilled (counts: Array<PromiseSettledResult<Hold>>): Hold[] {
  return counts.flatMap(c => c.status === 'fulfilled' ? [c.value] : [])
}

/** The keys read for `subjects`: each one's credits, lock and attempts, and a `reset` subject's failures. */
function peekKeys (subjects: Reservable[]): string[] {
  return subjects.flatMap(s => [...PEEKED.map(name => counterKey(name, s)), ...(s.onSuccess === 'reset' ? [counterKey('failed', s)] : [])])
}

/**
 * Attempt counters with temporary lockouts, in fixed windows.
 *
 * `reserve` counts an attempt before it is checked: `fails:<key>` (the
 * attempts) is incremented atomically first, so of any number of concurrent
 * attempts at most `max` per window go ahead. Its outcome is settled later
 * with more atomic counters, read as credits before the next increment: an
 * attempt that was not evaluated (refused, or a dependency failed) or a
 * success is given back (`released:<key>`); a failure is counted
 * (`failed:<key>`), and on a `reset` subject a success forgives the failures
 * counted so far (`forgiven:<key>`, the one value that is set rather than
 * incremented: a lost update forgives less, never more). The subject then
 * holds its unsettled attempts and its unforgiven failures.
 *
 * A refused attempt locks the subjects over their limit (`lock:<key>`, until
 * the window ends): while a subject is locked and at its limit, attempts are
 * refused and leave no count (on an ordered store without `readAndIncrement`
 * they are counted in the round trip that reads the lock, and given back).
 * Every counter key names its subject as a hash tag (`fails:{<key>}`).
 */
export class AttemptLimiter {
  readonly #store: StateStore
  readonly #now: () => number
  /** The store's atomic batch, bound once here rather than looked up and bound on every attempt; `null` without one. */
  readonly #batch: ReturnType<typeof batchOf>
  /** Told each subject a refused attempt locks out (its key), for the lockout counter. */
  readonly #onLockout: (subjectKey: string) => void

  constructor (store: StateStore, now: () => number, onLockout: (subjectKey: string) => void = () => {}) {
    this.#store = store
    this.#now = now
    this.#batch = batchOf(store)
    this.#onLockout = onLockout
  }

  /**
   * Counts one attempt on every subject before it is checked, or refuses it
   * when any subject is over its limit; `alsoRead` are read in the same round
   * trip (a flow's own reads, to save it one). On a store with
   * `readAndIncrement` (`AtomicBatch`: the memory store, Redis, a Redis
   * Cluster, PostgreSQL), the read and the counts are one call, which counts
   * nothing while a subject is locked. On another store whose calls take
   * effect in the order made (`ordered`), the read and the count travel
   * together: the store reads before it counts, so the credits cover only
   * earlier attempts, and an attempt a lock refuses is given back. Elsewhere
   * the count waits for the read (a locked subject's attempt is refused
   * without being counted), and the last subject counts only once the others
   * let the attempt through.
   */
  async reserve (subjects: Reservable[], alsoRead: readonly string[] = []): Promise<Reservation> {
    const start = this.#now()
    const peeked = peekKeys(subjects)
    const keys = [...peeked, ...alsoRead]
    if (this.#batch !== null) return await this.#batched(this.#batch, subjects, keys, peeked.length, start)
    if (this.#store.ordered !== true) {
      const values = await readMany(this.#store, keys)
      const read = values.slice(peeked.length)
      const peeks = this.#peeks(subjects, values)
      const locked = this.#locked(subjects, peeks, read)
      if (locked !== null) return locked
      if (subjects.length === 1) return await this.#counted(await this.#count(subjects, peeks, start), read)
      // the last subject (an account, found by the caller's lookup) only counts attempts the others let
      // through: counted together, calls that overtake one another could rank one attempt low on one
      // subject and high on another, and the attempts refused on either would leave both short of their limit
      const early = await this.#counted(await this.#count(subjects.slice(0, -1), peeks, start), read)
      if (!early.ok) return early
      let late: Reservation
      try {
        late = await this.#counted(await this.#count(subjects.slice(-1), peeks.slice(-1), start), read)
      } catch (error) {
        await this.release(early.holds)
        throw error
      }
      if (late.ok) return { ok: true, holds: [...early.holds, ...late.holds], read }
      await this.release(early.holds)
      return late
    }
    const [reads, counts] = await Promise.all([
      Promise.allSettled([readMany(this.#store, keys)]),
      this.#count(subjects, null, start)
    ])
    const [values] = reads
    if (values.status === 'rejected') {
      await this.release(fulfilled(counts))
      throw values.reason
    }
    const peeks = this.#peeks(subjects, values.value)
    // the read came first: the credits cover the attempts before this one
    const netted = counts.map((c, i): PromiseSettledResult<Hold> => c.status === 'rejected'
      ? c
      : { status: 'fulfilled', value: { ...c.value, counted: net(c.value.counted - 1, (peeks[i] as Peek).credit) + 1, failures: (peeks[i] as Peek).failures } })
    const own = values.value.slice(peeked.length)
    const locked = this.#locked(subjects, peeks, own)
    if (locked !== null) {
      // locked and at the limit: refused, and what was counted is given back, so a flood against a locked subject adds nothing
      await this.release(fulfilled(netted))
      return locked
    }
    return await this.#counted(netted, own)
  }

  /**
   * The read and the counts in one call of the store's `readAndIncrement`,
   * held back while a subject is locked (`lock:` above now), so an attempt
   * on a locked subject writes nothing. A lock whose subject is no longer at
   * its limit (a success since gave attempts back) holds the count back
   * too: the attempt is then read and counted again without the condition.
   * Counts made beside a lock (on a cluster the condition holds only within
   * a subject's hash slot) are given back.
   */
  async #batched (batch: NonNullable<ReturnType<typeof batchOf>>, subjects: Reservable[], keys: string[], peeked: number, start: number): Promise<Reservation> {
    const increments = subjects.map(s => ({ key: counterKey('fails', s), ttlMs: s.limit.windowMs }))
    let answer = await batch(keys, increments, { unlessAbove: { keys: subjects.map(s => counterKey('lock', s)), now: start } })
    let peeks = this.#peeks(subjects, answer.values)
    let locked = this.#locked(subjects, peeks, answer.values.slice(peeked))
    if (locked === null && answer.counts.includes(null)) {
      await this.release(this.#netted(subjects, peeks, answer.counts, start))
      answer = await batch(keys, increments)
      peeks = this.#peeks(subjects, answer.values)
      locked = this.#locked(subjects, peeks, answer.values.slice(peeked))
    }
    const holds = this.#netted(subjects, peeks, answer.counts, start)
    if (locked !== null) {
      await this.release(holds)
      return locked
    }
    return await this.#counted(holds.map(value => ({ status: 'fulfilled', value })), answer.values.slice(peeked))
  }

  /** The holds of the counts made, each netted of the credits read with it (read first, they cover the attempts before it). */
  #netted (subjects: Reservable[], peeks: Peek[], counts: ReadAndIncrementResult['counts'], start: number): Hold[] {
    return counts.flatMap((c, i) => c === null
      ? []
      : [{ subject: subjects[i] as Reservable, counted: net(c.count - 1, (peeks[i] as Peek).credit) + 1, expiresAt: start + c.ttlMs, failures: (peeks[i] as Peek).failures }])
  }

  /** The attempt failed: it stays counted on every subject, and a `reset` subject records it as a failure a success may forgive. */
  async failed (holds: Hold[]): Promise<void> {
    await Promise.all(holds.filter(h => h.subject.onSuccess === 'reset').map(async h => await this.#credit(h, 'failed')))
  }

  /**
   * The attempt succeeded: it is given back, and a `reset` subject forgives
   * the failures counted before it (as read with its count). Best effort,
   * like `release`: the success stands whatever the bookkeeping does (what
   * cannot be given back stays counted until its window ends).
   */
  async succeeded (holds: Hold[]): Promise<void> {
    await Promise.allSettled(holds.flatMap(h => [
      this.#credit(h, 'released'),
      ...(h.subject.onSuccess === 'reset' ? [this.#forgive(h)] : [])
    ]))
  }

  /**
   * Gives back attempts that were not evaluated (refused, or a dependency
   * failed). Best effort: what cannot be given back stays counted.
   */
  async release (holds: Hold[]): Promise<void> {
    await Promise.allSettled(holds.map(async h => await this.#credit(h, 'released')))
  }

  #refusal (until: number, refusedBy: Reservable[], read: Array<string | null>): Reservation {
    return { ok: false, retryAfter: Math.max(1, Math.ceil((until - this.#now()) / 1000)), refusedBy: refusedBy.map(s => s.key), read }
  }

  /** A refusal when a subject is locked and at its limit, else `null`; `read`: the caller's own reads, answered with it. */
  #locked (subjects: Reservable[], peeks: Peek[], read: Array<string | null>): Reservation | null {
    const now = this.#now()
    const locked = subjects.filter((subject, i) => (peeks[i] as Peek).counted >= subject.limit.max && (peeks[i] as Peek).lockedUntil > now)
    if (locked.length === 0) return null
    return this.#refusal(Math.max(...locked.map(s => (peeks[subjects.indexOf(s)] as Peek).lockedUntil)), locked, read)
  }

  /**
   * Every subject's credits, attempts, lock and failures, from one read (one
   * MGET on Redis). The credits are listed before the attempts, so a store
   * without `getMany` asks for them first and they cannot cover attempts
   * the count has not seen.
   */
  #peeks (subjects: Reservable[], values: Array<string | null>): Peek[] {
    let at = 0
    return subjects.map((subject) => {
      const [released, forgiven, lock, attempts, failures] = values.slice(at, at += PEEKED.length + (subject.onSuccess === 'reset' ? 1 : 0))
      // a `release` subject is never forgiven: a stray credit there counts for nothing
      const credit = count(released ?? null) + (subject.onSuccess === 'reset' ? count(forgiven ?? null) : 0)
      return { credit, counted: net(count(attempts ?? null), credit), lockedUntil: count(lock ?? null), failures: failures ?? null }
    })
  }

  /**
   * Counts the attempt on every subject at once. With `peeks` (read before),
   * each hold says how many attempts its subject holds; without, the raw
   * count, for the caller to net once the read is in.
   */
  async #count (subjects: Reservable[], peeks: Peek[] | null, start: number): Promise<Array<PromiseSettledResult<Hold>>> {
    return await Promise.allSettled(subjects.map(async (subject, i) => {
      const { count: attempts, ttlMs } = await this.#store.increment(counterKey('fails', subject), subject.limit.windowMs)
      const peek = peeks?.[i]
      // the credit was read before the increment: it covers only the attempts counted before this one
      return { subject, counted: peek === undefined ? attempts : net(attempts - 1, peek.credit) + 1, expiresAt: start + ttlMs, failures: peek?.failures ?? null }
    }))
  }

  /** The counts in: a failed one gives back the others; a subject over its limit is locked, and every attempt given back. */
  async #counted (counts: Array<PromiseSettledResult<Hold>>, read: Array<string | null>): Promise<Reservation> {
    const holds = fulfilled(counts)
    const failure = counts.find((c): c is PromiseRejectedResult => c.status === 'rejected')
    if (failure !== undefined) {
      // counted on some subjects only: those are given back before the error goes on
      await this.release(holds)
      throw failure.reason
    }
    const over = holds.filter(h => h.counted > h.subject.limit.max)
    if (over.length === 0) return { ok: true, holds, read }
    for (const hold of over) this.#onLockout(hold.subject.key)
    // the locks and the attempts given back, together
    throwFirstFailure(await Promise.allSettled([
      ...over.map(async h => await this.#store.set(counterKey('lock', h.subject), String(h.expiresAt), Math.max(1, h.expiresAt - this.#now()))),
      this.release(holds)
    ]))
    return this.#refusal(Math.max(...over.map(h => h.expiresAt)), over.map(h => h.subject), read)
  }

  /** How long a credit for the hold's window may live; 0 or less when the window is (nearly) over. */
  #creditTtl (hold: Hold): number {
    return hold.expiresAt - this.#now() - Math.min(CREDIT_MARGIN_MS, hold.subject.limit.windowMs / 10)
  }

  async #credit (hold: Hold, counter: 'released' | 'failed'): Promise<void> {
    const ttlMs = this.#creditTtl(hold)
    if (ttlMs > 0) await this.#store.increment(counterKey(counter, hold.subject), ttlMs)
  }

  /** Forgives the failures read with the count, as a success always has: it clears the account's failures. */
  async #forgive (hold: Hold): Promise<void> {
    const ttlMs = this.#creditTtl(hold)
    if (hold.failures !== null && ttlMs > 0) await this.#store.set(counterKey('forgiven', hold.subject), hold.failures, ttlMs)
  }
}

/** One counter per account, whichever identifier named it; an unknown identifier counts a decoy that never refuses. */
export function accountSubject (userId: number | null, limit: ResolvedLimit): Reservable {
  return userId === null
    ? { key: subjectKey('login:user', 'none'), limit: { max: Infinity, windowMs: limit.windowMs }, onSuccess: 'reset' }
    : { key: subjectKey('login:user', String(userId)), limit, onSuccess: 'reset' }
}
