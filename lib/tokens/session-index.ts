import type { Clock } from '../core/clock.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'

/**
 * One session in its user's index: its id, when it ends at the latest (ms),
 * and `1` when it has a refresh family (which a refresh keeps alive past
 * that time, so it leaves the index only once its family is gone).
 */
type Entry = [sessionId: string, endsAt: number, family: 0 | 1]

/** The store key of a user's session index: one entry per user, however many sessions. */
export const sessionIndexKey = (userId: number): string => `sessions:user:${userId}`

function parse (raw: string | null): Entry[] {
  return raw === null ? [] : JSON.parse(raw) as Entry[]
}

export interface NewIndexEntry {
  userId: number
  sessionId: string
  endsAt: number
  family: boolean
  /** The most live sessions the user may hold. */
  max: number
}

/** What the index asks of the token state. */
export interface SessionState {
  /** Whether each refresh family is still there (not ended, not expired). */
  live: (sessionIds: string[]) => Promise<boolean[]>
  /** Ends a session; it must be ended before the index forgets it, so the bound never lapses silently. */
  end: (sessionId: string) => Promise<void>
}

/**
 * The sessions of each user, so that one user holds at most `max` live
 * sessions: one store entry per user, changed by compare-and-set (one key,
 * so it works on every store, a Redis Cluster included), holding only ids
 * and end times. It grows with live sessions, never with requests.
 */
export class SessionIndex {
  readonly #store: StateStore
  readonly #clock: Clock

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /**
   * Adds a session whose sign-in is final. Sessions without a refresh
   * family leave the index when they expire; when the user would hold more
   * than `max`, the families are checked (one read) and those gone leave
   * it, then the sessions that joined first, still over the bound, are
   * ended and answered. The new session is never one of them.
   */
  async add (entry: NewIndexEntry, state: SessionState): Promise<string[]> {
    let evicted: string[] = []
    await updateEntry(this.#store, sessionIndexKey(entry.userId), 'the session index', async (raw) => {
      const now = this.#clock()
      let entries = parse(raw).filter(([, endsAt, family]) => family === 1 || endsAt > now)
      if (entries.length >= entry.max) entries = await this.#withoutEnded(entries, state)
      // in the order they joined, the new one last: the oldest sign-ins go first, never the new one
      // (a session from an ID token or a second step may have started before others)
      evicted = entries.splice(0, Math.max(0, entries.length + 1 - entry.max)).map(([id]) => id)
      for (const id of evicted) await state.end(id)
      entries.push([entry.sessionId, entry.endsAt, entry.family ? 1 : 0])
      const ttlMs = Math.max(...entries.map(([, endsAt]) => endsAt)) - now
      return { value: JSON.stringify(entries), ttlMs: Math.max(1, ttlMs) }
    })
    return evicted
  }

  /** The entries whose refresh family is still there, and every entry without one. */
  async #withoutEnded (entries: Entry[], state: SessionState): Promise<Entry[]> {
    const families = entries.filter(([, , family]) => family === 1)
    const live = await state.live(families.map(([id]) => id))
    const gone = new Set(families.filter((_, i) => live[i] !== true).map(([id]) => id))
    return entries.filter(([id]) => !gone.has(id))
  }
}
