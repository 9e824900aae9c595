// API keys as stored: one record per key (the hash of its secret, never the key) and one index per user, changed by compare-and-set, which says which keys live.
import type { Clock } from '../core/clock.js'
import { randomToken, sha256Base64url } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import { keysEndedBefore, type KeysEnd } from './cutoff-record.js'
import { stateKeys } from './revocation.js'

/** Store keys of the API keys. */
export const apiKeyKeys = {
  /** One key: its user, name, scopes, hash, times (JSON); lives until the key expires. */
  record: (id: string) => `api-key:${id}`,
  /** A user's live keys (JSON `{ g, k }`): the truth of which keys live. */
  index: (userId: number) => `api-keys:user:${userId}`,
  /** When a key was last used (ms), written about once a minute, apart from the record. */
  used: (id: string) => `api-key-used:${id}`,
  /** A key's requests in the window of `apiKeys.limits.perKey`. */
  uses: (id: string) => `api-key-uses:${id}`
}

/** Bytes of a key's id (16 base64url characters) and of its secret (43 characters: 256 bits). */
const ID_BYTES = 12
const SECRET_BYTES = 32

/** How long an index without keys is kept: it holds the generation a creation in flight compares (far longer than one takes). */
const EMPTY_INDEX_MS = 60 * 60 * 1000

/** Tries of a creation that a concurrent end of every key (another generation) sent back. */
const CREATE_ATTEMPTS = 3

/** A key as stored: user, name, scopes, SHA-256 of the secret (base64url), created at and expires at (ms). */
export interface KeyRecord { u: number, n: string, s: string[], h: string, c: number, e: number }

/**
 * A user's index: `g` counts the ends of every key (sign-out everywhere,
 * lock, deletion), so a creation that read an earlier generation never
 * writes; `k` each live key's id and expiry, in the order created.
 */
interface KeyIndex { g: number, k: Array<[id: string, expiresAt: number]> }

/** A key of the user's listing: never its secret or hash. */
export interface ApiKeyInfo {
  id: string
  name: string
  scopes: string[]
  createdAt: number
  expiresAt: number
  /** When it was last used (to about the window of `apiKeys.limits.perKey`, a minute by default), or `null`. */
  lastUsedAt: number | null
}

/** What creating a key needs; `check` runs after the index is read (see `ApiKeys.create`). */
export interface NewApiKey {
  userId: number
  name: string
  scopes: string[]
  lifetimeMs: number
  prefix: string
  max: number
  check: () => Promise<void>
}

/** The parts of a presented key. */
export interface ParsedKey { id: string, secret: string }

/** A key: `<prefix>_<id>_<secret>`, the id 16 and the secret 43 base64url characters (which may hold `_`: the lengths split it). */
const KEY = /^([a-z][a-z0-9]{1,15})_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/

/** The id and secret of a key with `prefix`, or `null` for anything else. */
export function parseApiKey (key: string, prefix: string): ParsedKey | null {
  const match = KEY.exec(key)
  if (match === null || match[1] !== prefix) return null
  return { id: match[2] as string, secret: match[3] as string }
}

/** Whether a value presented as a credential is meant as a key of `prefix` (starts with `<prefix>_`). */
export const looksLikeApiKey = (value: string, prefix: string): boolean => value.startsWith(`${prefix}_`)

/** The hash stored for a secret: SHA-256 (a 256-bit random secret needs no slow hash, and no key that a rotation would change). */
export const secretHash = (secret: string): string => sha256Base64url(secret)

/** A record as stored, or `null`. */
export function decodeRecord (raw: string | null): KeyRecord | null {
  return raw === null ? null : JSON.parse(raw) as KeyRecord
}

function parseIndex (raw: string | null): KeyIndex {
  return raw === null ? { g: 0, k: [] } : JSON.parse(raw) as KeyIndex
}

/** Whether the index (as stored) holds the key `id`, unexpired at `now`. */
export function indexHolds (raw: string | null, id: string, now: number): boolean {
  return parseIndex(raw).k.some(([kept, expiresAt]) => kept === id && expiresAt > now)
}

/** Whether the index holds `max` keys unexpired at `now`: no place for another. */
const full = (index: KeyIndex, now: number, max: number): boolean => index.k.filter(([, until]) => until > now).length >= max

/** The index written: its keys unexpired at `now`, kept as long as the last of them, and at least `EMPTY_INDEX_MS`. */
function written (index: KeyIndex, now: number): { value: string, ttlMs: number } {
  const k = index.k.filter(([, expiresAt]) => expiresAt > now)
  return { value: JSON.stringify({ g: index.g, k }), ttlMs: Math.max(EMPTY_INDEX_MS, ...k.map(([, expiresAt]) => expiresAt - now)) }
}

/** A creation sent back by an end of every key between its read of the index and its write. */
const ENDED = new Error('the user\'s keys ended meanwhile')

/**
 * Each user's API keys. A key lives while its record holds the hash of its
 * secret and its user's index lists it: the index is changed by
 * compare-and-set only (one key: every store, a Redis Cluster included), so
 * `maxPerUser` holds exactly under concurrent creations, and an end of
 * every key (a new generation) refuses a creation that read the index
 * before it.
 */
export class ApiKeys {
  readonly #store: StateStore
  readonly #clock: Clock

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /**
   * Creates a key and answers it (the only time it is seen) with its
   * listing fields. Calls: the index read; `check` (the caller's reads: its
   * session and the user's lock, after the index, so an end of every key
   * that wrote the user's cutoff before the index is seen by one or the
   * other); the record written; the index's compare-and-set, refused when
   * the generation changed (tried again from the read, up to 3 times) or
   * the user holds `max` keys (409 / 257). A failed write first takes the
   * key out of the index, had it been written; then the record is deleted,
   * as after a refused one (best effort: a record its index does not list
   * never works). Should the index keep the key (that too failed), so does
   * the record: the key is listed, for the user to delete, never a place
   * nobody sees.
   */
  async create (request: NewApiKey): Promise<{ key: string, info: ApiKeyInfo }> {
    const id = randomToken(ID_BYTES)
    const secret = randomToken(SECRET_BYTES)
    const indexKey = apiKeyKeys.index(request.userId)
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const raw = await this.#store.get(indexKey)
      const read = parseIndex(raw)
      await request.check()
      const createdAt = this.#clock()
      const expiresAt = createdAt + request.lifetimeMs
      if (full(read, createdAt, request.max)) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_LIMIT')
      const record: KeyRecord = { u: request.userId, n: request.name, s: request.scopes, h: secretHash(secret), c: createdAt, e: expiresAt }
      await this.#store.set(apiKeyKeys.record(id), JSON.stringify(record), request.lifetimeMs)
      try {
        await updateEntry(this.#store, indexKey, 'the user\'s API keys', (current) => {
          const index = parseIndex(current)
          const now = this.#clock()
          if (index.g !== read.g) throw ENDED
          if (full(index, now, request.max)) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_LIMIT')
          return written({ g: read.g, k: [...index.k, [id, expiresAt]] }, now)
        }, raw)
        return { key: `${request.prefix}_${id}_${secret}`, info: { id, name: request.name, scopes: request.scopes, createdAt, expiresAt, lastUsedAt: null } }
      } catch (error) {
        // a write whose answer was lost may have listed the key: it leaves the index first (the index decides), so it holds no place
        const refused = error === ENDED || (error as JwtLoginError).code === 'ERR_JWT_LOGIN_API_KEY_LIMIT'
        // the record goes only once the index is known not to list the key: a listed key keeps its record, so the
        // user sees it and can delete it (its secret was never shown: nobody can use it), rather than a hidden place
        const unlisted = refused || await this.#forget(request.userId, id).then(() => true, () => false)
        if (unlisted) await this.#store.delete(apiKeyKeys.record(id)).catch(() => {})
        if (error === ENDED) continue
        throw error
      }
    }
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the user\'s API keys kept ending') })
  }

  /**
   * The user's live keys, oldest first: two reads (the index, then every
   * record with its last use, and the user's cutoff, in one `getMany`). A key
   * an end of every key ended is not listed, whatever the index still holds.
   */
  async list (userId: number): Promise<ApiKeyInfo[]> {
    const now = this.#clock()
    const ids = parseIndex(await this.#store.get(apiKeyKeys.index(userId))).k.filter(([, expiresAt]) => expiresAt > now).map(([id]) => id)
    if (ids.length === 0) return []
    const values = await readMany(this.#store, [...ids.flatMap(id => [apiKeyKeys.record(id), apiKeyKeys.used(id)]), stateKeys.userCutoff(userId)])
    const endedBefore = keysEndedBefore(values[2 * ids.length] ?? null)
    return ids.flatMap((id, i) => {
      const record = decodeRecord(values[2 * i] ?? null)
      if (record === null || record.u !== userId || record.e <= now || record.c < endedBefore) return []
      const used = values[2 * i + 1] ?? null
      return [{ id, name: record.n, scopes: record.s, createdAt: record.c, expiresAt: record.e, lastUsedAt: used === null ? null : Number(used) }]
    })
  }

  /**
   * Ends one key of the user; answers `false`, changing nothing, when the
   * index does not list it (another user's, ended, unknown: alike), or when
   * a concurrent call took it out first. The index decides: it forgets the
   * key first (one compare-and-set: the key stops working, and holds no
   * place), then the record and its last use are deleted (tidying, best
   * effort: a record its index does not list never works, and expires with
   * its key).
   */
  async revoke (userId: number, id: string): Promise<boolean> {
    if (!await this.#forget(userId, id)) return false
    await Promise.all([this.#store.delete(apiKeyKeys.record(id)), this.#store.delete(apiKeyKeys.used(id))]).catch(() => {})
    return true
  }

  /** The index without the key `id`: one compare-and-set, none when it does not list it. Answers whether this call took it out while it was live. */
  async #forget (userId: number, id: string): Promise<boolean> {
    let live = false
    await updateEntry(this.#store, apiKeyKeys.index(userId), 'the user\'s API keys', (raw) => {
      const index = parseIndex(raw)
      const now = this.#clock()
      live = index.k.some(([kept, expiresAt]) => kept === id && expiresAt > now)
      const kept = index.k.filter(([kept]) => kept !== id)
      return kept.length === index.k.length ? null : written({ g: index.g, k: kept }, now)
    })
    return live
  }

  /**
   * What an end of every key of the user at `at` (ms) writes in the user's
   * cutoff: keys created before `at` are ended until the last live one
   * expires; `undefined` when the user holds no live key (the cutoff entry
   * stays a bare time then). One read of the index.
   */
  async endAt (userId: number, at: number): Promise<KeysEnd | undefined> {
    const now = this.#clock()
    const live = parseIndex(await this.#store.get(apiKeyKeys.index(userId))).k.filter(([, expiresAt]) => expiresAt > now)
    return live.length === 0 ? undefined : [at, Math.max(...live.map(([, expiresAt]) => expiresAt))]
  }

  /**
   * Ends every key of the user: one compare-and-set of the index to a new
   * generation with no key (from then on no key of the user works, and no
   * creation that read the index before writes), then the records are
   * deleted (tidying: `tidy` is told of a failure; a record its index does
   * not list never works, and expires with its key). Answers the ids ended.
   */
  async endAll (userId: number, tidy: (error: unknown) => void): Promise<string[]> {
    let ended: string[] = []
    await updateEntry(this.#store, apiKeyKeys.index(userId), 'the user\'s API keys', (raw) => {
      const index = parseIndex(raw)
      const now = this.#clock()
      ended = index.k.filter(([, expiresAt]) => expiresAt > now).map(([id]) => id)
      return written({ g: index.g + 1, k: [] }, now)
    })
    await Promise.all(ended.flatMap(id => [apiKeyKeys.record(id), apiKeyKeys.used(id)]).map(async key => { await this.#store.delete(key) })).catch(tidy)
    return ended
  }
}
