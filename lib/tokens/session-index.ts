// Each user's session index: one store entry per user listing their sessions, how each began, kept within `sessions.maxPerUser`.
import type { SessionOrigin } from '../adapters/second-factor.js'
import type { Clock } from '../core/clock.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import { sessionEnded, stateKeys } from './revocation.js'
import { sessionStart } from './session-id.js'
import { decodeSession } from './session-record.js'

/** The longest `User-Agent` a session keeps (characters); a longer one is cut there. */
export const USER_AGENT_MAX_LENGTH = 256

/**
 * One session in its user's index, as stored: its id, when it ends at the
 * latest (ms), `1` when it has a refresh family (which a refresh keeps alive
 * past that time, so it leaves the index only once its family is gone), then
 * how it began. Entries written before 0.3 have the first three only.
 */
type Entry = [
  sessionId: string, endsAt: number, family: 0 | 1,
  method?: string, ip?: string, userAgent?: string, providerSubject?: string, providerSession?: string
]

/** How an impersonation session began: the host's `impersonate`, for `actorId`. */
export interface ImpersonationOrigin {
  method: 'impersonation'
  actorId: number
}

/** How a session of the index began: a sign-in, or an impersonation. */
export type IndexedOrigin = SessionOrigin | ImpersonationOrigin

/** The head of an impersonation entry's method (`impersonation:<actor id>`): an older reader sees a password session. */
const IMPERSONATION = 'impersonation:'

/** Whether an entry is an impersonation's: it neither counts towards `sessions.maxPerUser` nor is ended to keep within it. */
const impersonation = (entry: Entry): boolean => entry[3]?.startsWith(IMPERSONATION) === true

/** The actor of an impersonation's entry (as its method names it), or `undefined` for another entry. */
const actorOf = (entry: Entry): string | undefined => impersonation(entry) ? (entry[3] as string).slice(IMPERSONATION.length) : undefined

/** A live session of the index, decoded. */
export interface IndexedSession {
  id: string
  /** When the sign-in that started it began (ms). */
  startedAt: number
  /** When its refresh token last rotated (ms), or `null`. */
  lastRefreshedAt: number | null
  origin: IndexedOrigin | null
  /** The client's address at sign-in, as the request gave it (`null` for an entry from before 0.3). */
  ip: string | null
  userAgent: string | null
}

/** The store key of a user's session index: one entry per user, however many sessions (`null`: a key no user has, read for an unknown one). */
export const sessionIndexKey = (userId: number | null): string => `sessions:user:${userId ?? 'none'}`

/**
 * The store keys that find a user from a provider's logout token: by the
 * hash of its `sub`, by the hash of its `sid`. Each lives as long as the
 * sessions it finds; a session key leaves with its last session.
 */
export const providerLogoutKeys = {
  subject: (provider: string, hash: string) => `oauth-logout:${provider}:sub:${hash}`,
  session: (provider: string, hash: string) => `oauth-logout:${provider}:sid:${hash}`
}

function parse (raw: string | null): Entry[] {
  return raw === null ? [] : JSON.parse(raw) as Entry[]
}

function encodeMethod (origin: IndexedOrigin): string {
  if (origin.method === 'impersonation') return `${IMPERSONATION}${origin.actorId}`
  const first = origin.method === 'provider' ? `provider:${origin.provider as string}` : origin.method
  return origin.secondFactor === undefined ? first : `${first}+${origin.secondFactor}`
}

function decodeMethod (method: string | undefined): IndexedOrigin | null {
  if (method === undefined) return null
  if (method.startsWith(IMPERSONATION)) return { method: 'impersonation', actorId: Number(method.slice(IMPERSONATION.length)) }
  const plus = method.indexOf('+')
  const first = plus === -1 ? method : method.slice(0, plus)
  const secondFactor = plus === -1 ? undefined : method.slice(plus + 1)
  const origin: SessionOrigin = first.startsWith('provider:') ? { method: 'provider', provider: first.slice('provider:'.length) } : { method: first === 'passkey' || first === 'email' ? first : 'password' }
  if (secondFactor !== undefined) origin.secondFactor = secondFactor
  return origin
}

/** The provider of a provider session's method, or `undefined`. */
function providerOf (method: string | undefined): string | undefined {
  const origin = decodeMethod(method)
  return origin?.method === 'provider' ? origin.provider : undefined
}

export interface NewIndexEntry {
  userId: number
  sessionId: string
  endsAt: number
  family: boolean
  origin: IndexedOrigin
  ip: string
  userAgent: string | undefined
}

/** Ends a session; it must be ended before the index forgets it, so the bound never lapses silently. */
export type EndSession = (sessionId: string) => Promise<void>

/** What an update of the index dropped, and what it kept. */
interface Left { dropped: Entry[], kept: Entry[] }
const NOTHING_LEFT: Left = { dropped: [], kept: [] }

/** One entry read with its session's state: whether it still counts, and its session record's rotation time. */
interface Read { entry: Entry, live: boolean, rotatedAt: number | null }

/**
 * The sessions of each user: one store entry per user, changed by
 * compare-and-set (one key, so it works on every store, a Redis Cluster
 * included), holding each session's id, end time and how it began. It grows
 * with live sessions, never with requests, and holds at most
 * `sessions.maxPerUser` of them. Whether a listed session is still live is
 * read from the token state itself (its entry and its user's cutoff), so a
 * session ended by any path, even one whose index write then failed, is
 * never listed.
 */
export class SessionIndex {
  readonly #store: StateStore
  readonly #clock: Clock

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /**
   * Adds a session before its sign-in is final, ending none (so a sign-in
   * that then fails ends no other session): one compare-and-set, and for a
   * provider session its provider's logout keys beside it. Entries of
   * sessions without a refresh family leave once expired. Answers how many
   * entries the index holds now (impersonations aside); over the bound (only then), `trim` follows
   * once the sign-in is final. Concurrent sign-ins that each joined within
   * the bound may leave it over by a few until the next sign-in trims.
   * `known`: the index as the flow read it already (with its other reads).
   */
  async add (entry: NewIndexEntry, known?: string | null): Promise<number> {
    let count = 0
    const { origin } = entry
    const added: Entry = [entry.sessionId, entry.endsAt, entry.family ? 1 : 0, encodeMethod(origin), entry.ip, (entry.userAgent ?? '').slice(0, USER_AGENT_MAX_LENGTH)]
    if (origin.method !== 'impersonation' && origin.providerSubject !== undefined) added.push(origin.providerSubject, origin.providerSession ?? '')
    // the provider's logout keys beside the index write, in the same round trip
    await Promise.all([
      updateEntry(this.#store, sessionIndexKey(entry.userId), 'the session index', (raw) => {
        const now = this.#clock()
        const entries = parse(raw).filter(([id, endsAt, family]) => id !== entry.sessionId && (family === 1 || endsAt > now))
        entries.push(added)
        count = entries.filter(one => !impersonation(one)).length
        return { value: JSON.stringify(entries), ttlMs: ttlOf(entries, now) }
      }, known),
      this.#writeLookups(entry.userId, added, entry.endsAt)
    ])
    return count
  }

  /**
   * Keeps the user within `max` live sessions: the sessions that ended
   * leave the index (one read of their state), then those that joined first,
   * still over the bound, are ended (`end`, before the index forgets them)
   * and answered. The session that joined last is never one of them, nor an
   * impersonation's (short-lived, made by the host): those neither count
   * nor are ended, so acting as a user never signs the user out.
   */
  async trim (userId: number, max: number, end: EndSession): Promise<string[]> {
    let evicted: string[] = []
    let left: Left = NOTHING_LEFT
    await updateEntry(this.#store, sessionIndexKey(userId), 'the session index', async (raw) => {
      const all = parse(raw)
      if (all.filter(entry => !impersonation(entry)).length <= max) return null
      const live = (await this.#read(userId, all)).filter(read => read.live).map(read => read.entry)
      // in the order they joined: the oldest sign-ins go first (a session from an ID token or a
      // second step may have started before others, so the order is the index's, not the ids')
      const own = live.filter(entry => !impersonation(entry))
      const dropped = own.slice(0, Math.max(0, own.length - max))
      const entries = live.filter(entry => !dropped.includes(entry))
      evicted = dropped.map(([id]) => id)
      for (const id of evicted) await end(id)
      left = { dropped: all.filter(entry => !entries.includes(entry)), kept: entries }
      if (entries.length === 0) return { value: '[]', ttlMs: 1 }
      return { value: JSON.stringify(entries), ttlMs: ttlOf(entries, this.#clock()) }
    })
    await this.#dropLookups(left)
    return evicted
  }

  /**
   * Moves a refreshed session's end (its refresh family slides with each
   * rotation), so the index and its provider's logout keys outlive it: one
   * compare-and-set, and the session's logout keys written again. A session
   * missing from the index (written before it listed every session) joins
   * it, without its origin.
   */
  async extend (userId: number, sessionId: string, endsAt: number): Promise<void> {
    let moved: Entry | undefined
    await updateEntry(this.#store, sessionIndexKey(userId), 'the session index', (raw) => {
      const entries = parse(raw)
      moved = entries.find(([id]) => id === sessionId)
      if (moved === undefined) {
        moved = [sessionId, endsAt, 1]
        entries.push(moved)
      } else if (moved[1] >= endsAt) {
        return null
      }
      moved[1] = endsAt
      return { value: JSON.stringify(entries), ttlMs: ttlOf(entries, this.#clock()) }
    })
    await this.#writeLookups(userId, moved as unknown as Entry, endsAt)
  }

  /** The provider's logout keys of a provider session's entry, kept until `endsAt` (none for other entries). */
  async #writeLookups (userId: number, entry: Entry, endsAt: number): Promise<void> {
    const provider = providerOf(entry[3])
    const [, , , , , , subject, session] = entry
    if (provider === undefined || subject === undefined) return
    const ttlMs = Math.max(1, endsAt - this.#clock())
    const userValue = String(userId)
    await Promise.all([
      this.#store.set(providerLogoutKeys.subject(provider, subject), userValue, ttlMs),
      session === undefined || session === '' ? undefined : this.#store.set(providerLogoutKeys.session(provider, session), userValue, ttlMs)
    ])
  }

  /**
   * The user's live sessions, oldest sign-in first: two reads (the index,
   * then every session's entry with the user's cutoff in one `getMany`).
   */
  async list (userId: number): Promise<IndexedSession[]> {
    const entries = parse(await this.#store.get(sessionIndexKey(userId)))
    const read = await this.#read(userId, entries)
    return read.filter(one => one.live).map(({ entry, rotatedAt }) => {
      const [id, , , method, ip, userAgent, providerSubject, providerSession] = entry
      const origin = decodeMethod(method)
      if (origin !== null && origin.method !== 'impersonation' && providerSubject !== undefined) {
        origin.providerSubject = providerSubject
        if (providerSession !== '') origin.providerSession = providerSession
      }
      // an impersonation's entry has no address: the host's call made it
      return { id, startedAt: sessionStart(id), lastRefreshedAt: rotatedAt, origin, ip: ip === undefined || ip === '' ? null : ip, userAgent: userAgent === undefined || userAgent === '' ? null : userAgent }
    })
  }

  /**
   * Forgets the sessions `drop` names (they must have ended already): one
   * compare-and-set, none when none of them is there. Tidying only: an ended
   * session is never listed, and leaves at the next sign-in over the bound.
   */
  async forget (userId: number, drop: (sessionId: string) => boolean): Promise<void> {
    let left: Left = NOTHING_LEFT
    await updateEntry(this.#store, sessionIndexKey(userId), 'the session index', (raw) => {
      const entries = parse(raw)
      const kept = entries.filter(([id]) => !drop(id))
      left = { dropped: entries.filter(([id]) => drop(id)), kept }
      if (kept.length === entries.length) return null
      if (kept.length === 0) return { value: '[]', ttlMs: 1 }
      return { value: JSON.stringify(kept), ttlMs: ttlOf(kept, this.#clock()) }
    })
    await this.#dropLookups(left)
  }

  /**
   * Deletes the provider-session logout keys of entries that left the index
   * when no entry left holds that provider session (best effort: a key
   * missed expires with the session it found). The provider-user keys stay:
   * other sessions of that user may need them, and they are one per user.
   */
  async #dropLookups ({ dropped, kept }: Left): Promise<void> {
    const sessionOf = (entry: Entry): string | null => {
      const provider = providerOf(entry[3])
      const session = entry[7]
      return provider === undefined || session === undefined || session === '' ? null : providerLogoutKeys.session(provider, session)
    }
    const held = new Set(kept.map(sessionOf))
    const keys = new Set(dropped.map(sessionOf).filter((key): key is string => key !== null && !held.has(key)))
    await Promise.all([...keys].map(async key => { await this.#store.delete(key).catch(() => {}) }))
  }

  /**
   * Each entry with whether its session is live: one `getMany` of their
   * token state, the user's cutoff and the cutoffs of the impersonations'
   * actors (which end them too).
   */
  async #read (userId: number, entries: Entry[]): Promise<Read[]> {
    if (entries.length === 0) return []
    const actors = [...new Set(entries.map(entry => actorOf(entry)).filter(actor => actor !== undefined))]
    const values = await readMany(this.#store, [...entries.map(([id]) => stateKeys.session(id)), stateKeys.userCutoff(userId), ...actors.map(actor => stateKeys.userCutoff(actor))])
    const cutoff = values[entries.length] as string | null
    const actorCutoffs = new Map(actors.map((actor, i) => [actor, values[entries.length + 1 + i] as string | null]))
    const now = this.#clock()
    return entries.map((entry, i) => {
      const [id, endsAt, family] = entry
      const state = values[i] as string | null
      const actor = actorOf(entry)
      const ended = sessionEnded(id, state, cutoff) || (actor !== undefined && sessionEnded(id, null, actorCutoffs.get(actor) as string | null))
      const live = !ended && (family === 1 ? state !== null : endsAt > now)
      const rotatedAt = family === 1 && live ? decodeSession(state as string).rotatedAt ?? null : null
      return { entry, live, rotatedAt }
    })
  }
}

/** The index lives as long as its longest-lived session. */
function ttlOf (entries: Entry[], now: number): number {
  return Math.max(1, Math.max(...entries.map(([, endsAt]) => endsAt)) - now)
}
