// Trusted devices: a device token that stands in for the second factor of one user's password sign-ins; only its hash is stored.
import type { Clock } from '../core/clock.js'
import { randomToken, safeEqual, sha256Base64url } from '../core/crypto.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import { cutoffTime, stateKeys, type Revocation } from './revocation.js'
import { USER_AGENT_MAX_LENGTH } from './session-index.js'

/** A device as stored: id, hash of its current secret, trusted at, last used at (0: never), expires at, IP and User-Agent at trust. */
type Entry = [id: string, hash: string, trustedAt: number, lastUsedAt: number, expiresAt: number, ip: string, userAgent: string]

/** One trusted device, decoded. */
export interface TrustedDevice {
  id: string
  trustedAt: number
  lastUsedAt: number | null
  expiresAt: number
  ip: string
  userAgent: string | null
}

/** What trusting a device needs. */
export interface TrustRequest {
  userId: number
  lifetimeMs: number
  max: number
  ip: string
  userAgent: string | undefined
}

/** The store key of a user's trusted devices: one entry per user. */
export const devicesKey = (userId: number): string => `devices:user:${userId}`

/** A device token: `<device id>.<secret>`, 22 and 43 base64url characters. */
const DEVICE_TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

function parse (raw: string | null): Entry[] {
  return raw === null ? [] : JSON.parse(raw) as Entry[]
}

function decode ([id, , trustedAt, lastUsedAt, expiresAt, ip, userAgent]: Entry): TrustedDevice {
  return { id, trustedAt, lastUsedAt: lastUsedAt === 0 ? null : lastUsedAt, expiresAt, ip, userAgent: userAgent === '' ? null : userAgent }
}

function ttlOf (entries: Entry[], now: number): number {
  return Math.max(1, Math.max(...entries.map(([, , , , expiresAt]) => expiresAt)) - now)
}

/**
 * Each user's trusted devices, in one store entry per user changed by
 * compare-and-set (one key: every store, a Redis Cluster included). A
 * device is trusted only while it has not expired and was trusted after its
 * user's cutoff, so a password reset or a sign-out everywhere ends every
 * device in the same write that ends the sessions. A token is bound to its
 * user (it is looked up among that user's devices only) and rotated on each
 * use; a stolen one alone signs no one in (the password is still asked).
 */
export class TrustedDevices {
  readonly #store: StateStore
  readonly #clock: Clock

  readonly #revocation: Revocation

  constructor (store: StateStore, clock: Clock, revocation: Revocation) {
    this.#store = store
    this.#clock = clock
    this.#revocation = revocation
  }

  /**
   * Trusts a device for `lifetimeMs` and answers its token; beyond `max`
   * devices the user's oldest is forgotten (answered in `dropped`).
   */
  async trust (request: TrustRequest): Promise<{ token: string, deviceId: string, dropped: string[] }> {
    const deviceId = randomToken(16)
    const secret = randomToken()
    // the cutoff that ends it (a reset, a sign-out everywhere) must live as long as it may
    this.#revocation.deviceTrusted(request.lifetimeMs)
    let dropped: string[] = []
    await updateEntry(this.#store, devicesKey(request.userId), 'the trusted devices', (raw) => {
      const now = this.#clock()
      const entries = parse(raw).filter(([, , , , expiresAt]) => expiresAt > now)
      dropped = entries.splice(0, Math.max(0, entries.length + 1 - request.max)).map(([id]) => id)
      entries.push([deviceId, sha256Base64url(secret), now, 0, now + request.lifetimeMs, request.ip, (request.userAgent ?? '').slice(0, USER_AGENT_MAX_LENGTH)])
      return { value: JSON.stringify(entries), ttlMs: ttlOf(entries, now) }
    })
    return { token: `${deviceId}.${secret}`, deviceId, dropped }
  }

  /**
   * Spends a device token of `userId` and answers its successor (the same
   * device, a new secret), or `null` when the token is not a trusted device
   * of this user now (malformed, unknown, another user's, expired, from
   * before the user's cutoff, or already rotated). Reads the devices and the
   * cutoff in one round trip, then one compare-and-set; of two concurrent
   * uses, one rotates and the other answers `null`. `giveBack` undoes the
   * rotation (for a sign-in that then failed, so the client's token works
   * again), only over this use's own write.
   */
  async use (userId: number, token: string): Promise<{ token: string, deviceId: string, giveBack: () => Promise<void> } | null> {
    const match = DEVICE_TOKEN.exec(token)
    if (match === null) return null
    const [, deviceId, secret] = match as unknown as [string, string, string]
    const hash = sha256Base64url(secret)
    const [read, cutoff] = await readMany(this.#store, [devicesKey(userId), stateKeys.userCutoff(userId)])
    const raw = read ?? null
    const entries = parse(raw)
    const now = this.#clock()
    const entry = entries.find(([id]) => id === deviceId)
    // compared in constant time whether or not the device was found
    const right = safeEqual(hash, entry?.[1] ?? '')
    if (entry === undefined || !right || entry[4] <= now || (cutoff !== null && cutoff !== undefined && entry[2] < cutoffTime(cutoff))) return null
    const next = randomToken()
    entry[1] = sha256Base64url(next)
    entry[3] = now
    const live = entries.filter(([, , , , expiresAt]) => expiresAt > now)
    const value = JSON.stringify(live)
    const key = devicesKey(userId)
    if (!await this.#store.compareAndSet(key, raw, value, ttlOf(live, now))) return null
    const giveBack = async (): Promise<void> => {
      await this.#store.compareAndSet(key, value, raw as string, ttlOf(parse(raw), this.#clock()))
    }
    return { token: `${deviceId}.${next}`, deviceId, giveBack }
  }

  /** The user's trusted devices: not expired, trusted after the user's cutoff (one round trip). */
  async list (userId: number): Promise<TrustedDevice[]> {
    const [raw, cutoff] = await readMany(this.#store, [devicesKey(userId), stateKeys.userCutoff(userId)])
    const since = cutoff === null || cutoff === undefined ? 0 : cutoffTime(cutoff)
    const now = this.#clock()
    return parse(raw ?? null).filter(([, , trustedAt, , expiresAt]) => expiresAt > now && trustedAt >= since).map(decode)
  }

  /** Forgets one device of the user; answers whether it was there (one compare-and-set, none when absent). */
  async forget (userId: number, deviceId: string): Promise<boolean> {
    let found = false
    await updateEntry(this.#store, devicesKey(userId), 'the trusted devices', (raw) => {
      const entries = parse(raw)
      const kept = entries.filter(([id]) => id !== deviceId)
      found = kept.length < entries.length
      if (!found) return null
      if (kept.length === 0) return { value: '[]', ttlMs: 1 }
      return { value: JSON.stringify(kept), ttlMs: ttlOf(kept, this.#clock()) }
    })
    return found
  }

  /** Forgets every device of the user (one delete). */
  async forgetAll (userId: number): Promise<void> {
    await this.#store.delete(devicesKey(userId))
  }
}
