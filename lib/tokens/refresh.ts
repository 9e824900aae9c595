// Refresh-token families: a session's refresh token issued, rotated with reuse detection and a retry grace, and ended.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import { deriveKey, randomToken, safeEqual, sha256Base64url } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import { CodeHasher } from '../services/code-hash.js'
import type { Settings } from '../config/settings.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { REVOKED, sessionEnded, stateKeys, type Revocation } from './revocation.js'
import { isSessionId, sessionStart } from './session-id.js'
import { lockIn } from './user-lock.js'
import type { SessionIndex } from './session-index.js'
import { decodeSession, encodeSession, type Session } from './session-record.js'

/**
 * How long a refresh family's index entry (and its provider's logout keys)
 * is kept from a rotation: one and a half lifetimes, so the index is moved
 * at most every half lifetime and always outlives the family, which lives a
 * lifetime from its last rotation.
 */
export function indexedLifetime (lifetimeMs: number): number {
  return Math.ceil(lifetimeMs * 1.5)
}

/** What reuse detection reports. */
export interface RefreshReuse { uid: number, sid: string }

/** What `lookUp` answers for a session's user: the user, and the password fingerprint to record (see `checkFingerprint`). */
export interface LookedUp<U> {
  user: U
  fingerprint?: string
}

/** Looks up the user of a session being refreshed, given what the session recorded of its password; throws to refuse. */
export type SessionLookUp<U> = (userId: number, sessionId: string, fingerprint: string | undefined) => Promise<LookedUp<U>>

/** What a rotation answers: the session's user and the successor token. */
export interface RefreshResult<U = unknown> {
  userId: number
  /** What `lookUp` answered for the session's user. */
  user: U
  sessionId: string
  refreshToken: string
  /** How the session's user signed in; absent for a session from before 0.3. */
  amr: string[] | undefined
  /** The session's password fingerprint, sealed, as now recorded. */
  fingerprint: string | undefined
  /** The previous token presented again within `refresh.reuseInterval`: the successor given already, nothing written. */
  retried?: true
}

/**
 * A refresh token's secret: 16 random bytes, then a keyed hash (HMAC under
 * the signing keys) of the session id and those bytes, all base64url (22 +
 * 43 characters). The hash proves the plugin issued the token: a made-up
 * secret under a known session id is refused without ending the session,
 * and only a token the plugin issued counts as a reuse. Tokens issued before
 * 0.3 (43 random characters) still rotate; an older one that matches
 * neither stored hash cannot be told from a made-up one, and is refused
 * alike.
 */
const SECRET = /^(?:[A-Za-z0-9_-]{22}[A-Za-z0-9_-]{43}|[A-Za-z0-9_-]{43})$/

/** The keyed hash in a refresh secret. */
const secretHasher = new CodeHasher('refresh token')

function newSecret (settings: Settings, sessionId: string): string {
  const random = randomToken(16)
  return `${random}${secretHasher.first(settings.tokens, `${sessionId}.${random}`)}`
}

/** Whether a secret is one the plugin issued for this session (checked under every signing key). */
function issuedHere (settings: Settings, sessionId: string, secret: string): boolean {
  if (secret.length !== 65) return false
  return secretHasher.matches(settings.tokens, { hash: secret.slice(22) }, `${sessionId}.${secret.slice(0, 22)}`)
}

/**
 * The session part of a refresh token: what comes before its first dot (''
 * without one). Its form is checked where the token is spent, so a cookie
 * that holds something else still reaches that refusal (and is cleared).
 */
export function refreshTokenSession (token: string): string {
  return token.slice(0, Math.max(0, token.indexOf('.')))
}

/**
 * A refresh token as presented: its session, its secret and the secret's
 * hash (what is stored), and the user it names (`null` in a token from
 * before 0.4), to read that user's cutoff with the session.
 */
interface Presented { sessionId: string, secret: string, hash: string, userId: number | null }

const USER_ID = /^[1-9]\d{0,15}$/

/**
 * A refresh token: `<session id>.<secret>.<user id>` (`<session id>.<secret>`
 * before 0.4); only the secret's hash is stored. Refused unless it has that
 * form. The user id is not part of what the keyed hash proves: it only says
 * which cutoff to read with the session, and must be the session's own.
 */
function parseRefreshToken (token: string): Presented {
  const [sessionId = '', secret = '', user, ...rest] = token.split('.')
  if (rest.length > 0 || !isSessionId(sessionId) || !SECRET.test(secret) || (user !== undefined && !USER_ID.test(user))) {
    throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
  }
  return { sessionId, secret, hash: sha256Base64url(secret), userId: user === undefined ? null : Number(user) }
}

/** The token a client holds: the session, the secret, the user. */
function refreshTokenOf (sessionId: string, secret: string, userId: number): string {
  return `${sessionId}.${secret}.${userId}`
}

function sealKey (sessionId: string, secret: string): Buffer {
  return deriveKey(secret, sessionId, 'jwt-login refresh successor')
}

/**
 * The successor token, readable only with the token it replaced: AES-256-GCM
 * under a key derived (HKDF) from the previous token's secret, written as
 * base64url(iv ‖ ciphertext ‖ tag). node:crypto rather than a JWE library:
 * jose's compact JWE costs about seven times as much per refresh here (a Web
 * Crypto key import each time) for the same algorithm.
 */
function seal (sessionId: string, previousSecret: string, token: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', sealKey(sessionId, previousSecret), iv)
  const sealed = Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return sealed.toString('base64url')
}

function unseal (sessionId: string, previousSecret: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', sealKey(sessionId, previousSecret), bytes.subarray(0, 12))
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
}

/** A live session as read for a presented token: its entry as stored (for a compare-and-set), decoded, and which of its tokens was presented. */
interface OpenSession {
  raw: string
  session: Session
  presented: 'current' | 'previous' | null
}

/** Issues, rotates and ends the refresh family of each session: one store entry per session. */
export class RefreshFamilies {
  readonly #store: StateStore
  readonly #clock: Clock
  readonly #revocation: Revocation

  readonly #index: SessionIndex

  constructor (store: StateStore, clock: Clock, revocation: Revocation, index: SessionIndex) {
    this.#store = store
    this.#clock = clock
    this.#revocation = revocation
    this.#index = index
  }

  /**
   * The refresh token of a new session, and the one store write that starts
   * its family (`write`), for the caller to send with its other writes. Only
   * the token's hash is stored.
   */
  newRefreshToken (settings: Settings, userId: number, sessionId: string, amr?: string[], fingerprint?: string): { token: string, write: () => Promise<void> } {
    const secret = newSecret(settings, sessionId)
    const { lifetimeMs } = settings.refresh
    this.#revocation.sessionIssued(lifetimeMs)
    const session: Session = { userId, currentHash: sha256Base64url(secret), indexedUntil: this.#clock() + indexedLifetime(lifetimeMs), amr, fingerprint }
    return { token: refreshTokenOf(sessionId, secret, userId), write: async () => { await this.#store.set(stateKeys.session(sessionId), encodeSession(session), lifetimeMs) } }
  }

  /**
   * Spends a refresh token and answers its successor in the same session.
   *
   * Order: read the session's one entry, then the user's cutoff (reads only),
   * then `lookUp` the session's user (the host's adapter); then one
   * compare-and-set writes the rotation. A failure before the write (the
   * user database down included) changes nothing, and a retry rotates as if
   * it were the first use; a write that ran although its answer was lost leaves the
   * token retryable: the previous token, presented again within
   * `refresh.reuseInterval`, gets the same successor (no write). Of two
   * concurrent uses, one rotates and the other sees the previous token and
   * gets the same successor. Any other token of a live session that the
   * plugin issued for it (an older one, or the previous one later) is a
   * reuse: the session ends and `onReuse` is told; a made-up one is refused
   * and ends nothing.
   */
  async rotateRefreshToken<U> (settings: Settings, token: string, lookUp: SessionLookUp<U>, onReuse: (reuse: RefreshReuse) => void): Promise<RefreshResult<U>> {
    const presented = parseRefreshToken(token)
    const { sessionId, secret } = presented
    for (let attempt = 0; attempt < 3; attempt++) {
      const open = await this.#readSession(presented, true)
      const { userId, sealedCurrent, rotatedAt, amr, fingerprint: recorded } = open.session
      const { refresh } = settings
      const now = this.#clock()
      if (open.presented === 'current') {
        const { user, fingerprint } = await lookUp(userId, sessionId, recorded)
        const indexedUntil = await this.#keepIndexed(open.session, sessionId, now, refresh.lifetimeMs)
        const next = newSecret(settings, sessionId)
        const rotated: Session = { userId, currentHash: sha256Base64url(next), previousHash: presented.hash, sealedCurrent: seal(sessionId, secret, next), rotatedAt: now, indexedUntil, amr, fingerprint }
        this.#revocation.sessionIssued(refresh.lifetimeMs)
        if (await this.#store.compareAndSet(stateKeys.session(sessionId), open.raw, encodeSession(rotated), refresh.lifetimeMs)) {
          return { userId, user, sessionId, refreshToken: refreshTokenOf(sessionId, next, userId), amr, fingerprint }
        }
        continue // the session changed under us (a concurrent use or a revoke): decide again
      }
      const retry = open.presented === 'previous' && sealedCurrent !== undefined && rotatedAt !== undefined &&
        refresh.reuseIntervalMs > 0 && now - rotatedAt <= refresh.reuseIntervalMs
      if (retry) {
        const { user, fingerprint } = await lookUp(userId, sessionId, recorded)
        return { userId, user, sessionId, refreshToken: refreshTokenOf(sessionId, unseal(sessionId, secret, sealedCurrent), userId), amr, fingerprint, retried: true }
      }
      // a token this session never had (made up under its id) is refused, and the session goes on
      if (open.presented === null && !issuedHere(settings, sessionId, secret)) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
      await this.#revocation.revokeSession(settings, sessionId)
      onReuse({ uid: userId, sid: sessionId })
      throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    }
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the session kept changing during a refresh') })
  }

  /**
   * The family slides with each rotation (it lives a lifetime from `now`);
   * its user's index must keep it at least as long. When the index would
   * not, its end moves to one and a half lifetimes from now (one
   * compare-and-set, and the provider's logout keys written again, before
   * the rotation is written, so a failure changes nothing): at most one
   * index write per half lifetime, however often the session refreshes.
   */
  async #keepIndexed (session: Session, sessionId: string, now: number, lifetimeMs: number): Promise<number> {
    const until = session.indexedUntil
    if (until !== undefined && now + lifetimeMs <= until) return until
    const endsAt = now + indexedLifetime(lifetimeMs)
    await this.#index.extend(session.userId, sessionId, endsAt)
    return endsAt
  }

  /**
   * Ends the session of a refresh token (sign-out through the refresh
   * cookie): reads the session and its user's cutoff, then one write. The
   * session's current token may end it, and so may the previous one at any
   * time (a client whose last rotation answer was lost; ending the session
   * is what a reuse of it would do anyway). Any other token, or a session
   * already ended, is refused (401 / 51) and changes nothing.
   */
  async endSessionOf (settings: Settings, token: string): Promise<{ userId: number, sessionId: string }> {
    const presented = parseRefreshToken(token)
    const { session, presented: which } = await this.#readSession(presented)
    if (which === null) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    await this.#revocation.revokeSession(settings, presented.sessionId)
    return { userId: session.userId, sessionId: presented.sessionId }
  }

  /**
   * Records a new password fingerprint in a live session (the one a
   * password change through jwt-login keeps), without moving its end: one
   * compare-and-set, tried again if a rotation came between. A session
   * without a refresh family (refresh off), or ended, has none to record.
   */
  async recordFingerprint (settings: Settings, sessionId: string, fingerprint: string): Promise<void> {
    const key = stateKeys.session(sessionId)
    for (let attempt = 0; attempt < 3; attempt++) {
      const raw = await this.#store.get(key)
      if (raw === null || raw === REVOKED) return
      const session = decodeSession(raw)
      const ttlMs = (session.rotatedAt ?? sessionStart(sessionId)) + settings.refresh.lifetimeMs - this.#clock()
      if (ttlMs <= 0) return
      if (await this.#store.compareAndSet(key, raw, encodeSession({ ...session, fingerprint }), ttlMs)) return
    }
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the session kept changing while its fingerprint was recorded') })
  }

  /**
   * Reads the session of a presented refresh token and its user's cutoff, in
   * one round trip (a token from before 0.4 names no user: the cutoff is read
   * after the session, whose user it is); a session missing or ended, or
   * another user's, is refused. Both hashes are compared, so the time does
   * not say which one matched. `refusingLocked` (a rotation): a session its
   * user's lock ended, while the lock holds, is 403 / 251 rather than 401 / 51
   * for a token the session issued (a made-up one learns nothing).
   */
  async #readSession ({ sessionId, hash, userId }: Presented, refusingLocked = false): Promise<OpenSession> {
    const read = userId === null
      ? [await this.#store.get(stateKeys.session(sessionId))]
      : await readMany(this.#store, [stateKeys.session(sessionId), stateKeys.userCutoff(userId)])
    const raw = read[0] as string | null
    const named = read[1]
    if (raw === null || raw === REVOKED) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    const session = decodeSession(raw)
    // the user in the token is a hint for the read: another user's is a made-up token, refused, ending nothing
    if (userId !== null && userId !== session.userId) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    const cutoff = named !== undefined ? named : await this.#store.get(stateKeys.userCutoff(session.userId))
    const current = safeEqual(hash, session.currentHash)
    const previous = session.previousHash !== undefined && safeEqual(hash, session.previousHash)
    if (sessionEnded(sessionId, raw, cutoff)) {
      // ended by its user's lock, which still holds: to the token's holder, a sign-in refused (403 / 251) rather than a token gone
      if (refusingLocked && (current || previous) && lockIn(cutoff, this.#clock()) !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
      throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    }
    return { raw, session, presented: current ? 'current' : previous ? 'previous' : null }
  }
}
