// Trusted devices: a device token that stands in for the second factor of one user's password sign-ins; only its hash is stored.
import type { Clock } from '../core/clock.js'
import { randomToken, safeEqual, sha256Base64url } from '../core/crypto.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import { JwtLoginError } from '../core/errors.js'
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
  /** When the sign-in that trusts it started (ms): a cutoff after that ends the device, as it ends the session. */
  trustedAt: number
  lifetimeMs: number
  max: number
  ip: string
  userAgent: string | undefined
}

/** The store key of a user's trusted devices: one entry per user. */
export const devicesKey = (userId: number): string => `devices:user:${userId}`

/** Tries of one device's change that keeps losing its compare-and-set to changes of the user's other devices. */
const CHANGE_ATTEMPTS = 8

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
      entries.push([deviceId, sha256Base64url(secret), request.trustedAt, 0, now + request.lifetimeMs, request.ip, (request.userAgent ?? '').slice(0, USER_AGENT_MAX_LENGTH)])
      return { value: JSON.stringify(entries), ttlMs: ttlOf(entries, now) }
    })
    return { token: `${deviceId}.${secret}`, deviceId, dropped }
  }

  /**
   * Spends a device token of `userId` and answers its successor (the same
   * device, a new secret), or `null` when the token is not a trusted device
   * of this user now (malformed, unknown, another user's, expired, from
   * before the user's cutoff, or already rotated). Reads the devices and the
   * cutoff in one round trip, then one compare-and-set, read again and
   * tried again while this device still holds the token presented (another
   * device of the user changed the entry); of two uses of one token, one
   * rotates and the other answers `null`. `giveBack` undoes the rotation
   * (for a sign-in that then failed, so the client's token works again),
   * only while the device still holds the successor.
   */
  async use (userId: number, token: string): Promise<{ token: string, deviceId: string, giveBack: () => Promise<void> } | null> {
    const match = DEVICE_TOKEN.exec(token)
    if (match === null) return null
    const [, deviceId, secret] = match as unknown as [string, string, string]
    const hash = sha256Base64url(secret)
    const [read, cutoff] = await readMany(this.#store, [devicesKey(userId), stateKeys.userCutoff(userId)])
    const since = cutoff === null || cutoff === undefined ? 0 : cutoffTime(cutoff)
    const next = randomToken()
    const nextHash = sha256Base64url(next)
    let lastUsedAt = 0
    const rotated = await this.#change(userId, deviceId, read ?? null, (entry, now) => {
      // compared in constant time whether or not the device was found
      const right = safeEqual(hash, entry?.[1] ?? '')
      if (entry === undefined || !right || entry[4] <= now || entry[2] < since) return false
      lastUsedAt = entry[3]
      entry[1] = nextHash
      entry[3] = now
      return true
    })
    if (!rotated) return null
    const giveBack = async (): Promise<void> => {
      await this.#change(userId, deviceId, undefined, (entry) => {
        if (entry === undefined || entry[1] !== nextHash) return false
        entry[1] = hash
        entry[3] = lastUsedAt
        return true
      }, true)
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

  /**
   * Changes one device of the user by compare-and-set from `raw` (read
   * first when `undefined`), reading again after a lost race while `change`
   * still accepts the device: answers whether it wrote. Expired devices
   * leave the entry with the write.
   */
  async #change (userId: number, deviceId: string, raw: string | null | undefined, change: (entry: Entry | undefined, now: number) => boolean, quiet = false): Promise<boolean> {
    const key = devicesKey(userId)
    let current = raw === undefined ? await this.#store.get(key) : raw
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
      const now = this.#clock()
      const entries = parse(current)
      if (!change(entries.find(([id]) => id === deviceId), now)) return false
      const live = entries.filter(([, , , , expiresAt]) => expiresAt > now)
      const written = await this.#store.compareAndSet(key, current, JSON.stringify(live), ttlOf(live, now))
      if (written) return true
      current = await this.#store.get(key)
    }
    if (quiet) return false
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the trusted devices kept changing') })
  }

  /**
   * Forgets one live device of the user (not expired, not ended by the
   * user's cutoff); answers whether there was one (one compare-and-set, none
   * otherwise).
   */
  async forget (userId: number, deviceId: string): Promise<boolean> {
    const live = (await this.list(userId)).some(device => device.id === deviceId)
    if (!live) return false
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
