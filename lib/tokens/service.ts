// The token service the plugin holds: one object over the keys, the JWTs, revocation and refresh families.
import type { Algorithm } from '../../schemas/settings.js'
import type { Clock } from '../core/clock.js'
import type { Settings } from '../config/settings.js'
import type { StateStore } from '../store/types.js'
import type { PublicUser } from '../adapters/users.js'
import { jwksOf, type KeyMaterial, type PublicJwk } from './keys.js'
import { Jwt, type SignedToken, type SignOptions, type TokenClaims, type TokenKind, type VerifiedToken } from './jwt.js'
import { RefreshFamilies, type RefreshReuse, type RefreshResult, type SessionLookUp } from './refresh.js'
import { newSessionId } from './session-id.js'
import { Revocation, type UserCutoff, type UserLock } from './revocation.js'
import { SessionIndex } from './session-index.js'
import { TrustedDevices } from './trusted-devices.js'
import { ApiKeys } from './api-keys.js'
import type { KeysEnd } from './cutoff-record.js'

/**
 * Signs and verifies every kind of token with fast-jwt; issues, rotates and
 * revokes refresh tokens. The plugin owns its JWT engine: nothing is
 * registered on the host, so a host's own @fastify/jwt is left alone.
 */
export class TokenService {
  readonly #algorithm: Algorithm
  readonly #jwks: { keys: PublicJwk[] } | null
  readonly #clock: Clock
  readonly #jwt: Jwt
  readonly #revocation: Revocation
  readonly #refresh: RefreshFamilies
  /** Each user's sessions, kept within `sessions.maxPerUser`. */
  readonly sessions: SessionIndex
  /** Each user's devices trusted for the second factor. */
  readonly devices: TrustedDevices
  /** Each user's API keys. */
  readonly apiKeys: ApiKeys

  constructor (keys: KeyMaterial[], algorithm: Algorithm, store: StateStore, clock: Clock) {
    this.#algorithm = algorithm
    this.#jwks = jwksOf(keys, algorithm)
    this.#clock = clock
    this.#jwt = new Jwt(keys, algorithm, clock)
    this.#revocation = new Revocation(store, clock)
    this.sessions = new SessionIndex(store, clock)
    this.devices = new TrustedDevices(store, clock, this.#revocation)
    this.apiKeys = new ApiKeys(store, clock)
    this.#refresh = new RefreshFamilies(store, clock, this.#revocation, this.sessions)
  }

  /** The one algorithm every token is signed and verified with. */
  get algorithm (): Algorithm {
    return this.#algorithm
  }

  /** The public keys as a JWKS, or `null` for HMAC keys. */
  jwks (): { keys: PublicJwk[] } | null {
    return this.#jwks
  }

  /** Signs a token of `kind` for `user`; its revocation will outlive it. */
  sign (settings: Settings, user: PublicUser, kind: TokenKind, options: SignOptions): SignedToken {
    const signed = this.#jwt.sign(settings, user, kind, options)
    this.#revocation.tokenIssued((signed.claims.exp - signed.claims.iat) * 1000)
    return signed
  }

  /** Verifies signature, algorithm, `kid`, issuer, audience, kind and times; revocation is `isRevoked`. */
  verify (settings: Settings, token: string, kind: TokenKind): VerifiedToken {
    return this.#jwt.verify(settings, token, kind)
  }

  /** Whether a token's session has ended, or its user's cutoff is past its session's start. */
  isRevoked (claims: TokenClaims): Promise<boolean> {
    return this.#revocation.isRevoked(claims)
  }

  /** Revokes a token by ending its session. */
  revoke (settings: Settings, claims: TokenClaims): Promise<void> {
    return this.#revocation.revoke(settings, claims)
  }

  /** Ends a session until its access tokens have all expired (`until`: the presented token's expiry). */
  revokeSession (settings: Settings, sessionId: string, until?: number): Promise<void> {
    return this.#revocation.revokeSession(settings, sessionId, until)
  }

  /** Ends every session of the user started before `at` (default now), plus `sessions.clockSkew`, but `keep`, and with `keys` their API keys; answers whether `keep` was kept, and the cutoff. */
  revokeUserTokens (settings: Settings, userId: number, at?: number, keep?: string, keys?: KeysEnd): Promise<UserCutoff> {
    return this.#revocation.revokeUserTokens(settings, userId, at, keep, keys)
  }

  /** Ends the user's API keys created before `keys[0]`, in the user's cutoff, which is kept until `keys[1]`. */
  endUserKeys (settings: Settings, userId: number, keys: KeysEnd): Promise<void> {
    return this.#revocation.endUserKeys(settings, userId, keys)
  }

  /** A provisional cutoff at `until` while the password change `id` runs. */
  holdUserTokens (settings: Settings, userId: number, id: string, until: number, known?: string | null): Promise<string | null> {
    return this.#revocation.holdUserTokens(settings, userId, id, until, known)
  }

  /** Takes the provisional cutoff `id` back, the cutoff as it was. */
  cancelHold (settings: Settings, userId: number, id: string, known?: string | null): Promise<void> {
    return this.#revocation.cancelHold(settings, userId, id, known)
  }

  /** Replaces the provisional cutoff `id` by `at` (default now), plus `sessions.clockSkew`. */
  releaseUserTokens (settings: Settings, userId: number, id: string, at?: number, known?: string | null): Promise<void> {
    return this.#revocation.releaseUserTokens(settings, userId, id, at, known)
  }

  /** Locks the user (`until` in ms, `null`: until `unlockUser`): every session ends (with `keys`, their API keys too), and none starts until it is lifted. */
  lockUser (settings: Settings, userId: number, until: number | null, keys?: KeysEnd): Promise<UserLock> {
    return this.#revocation.lockUser(settings, userId, until, keys)
  }

  /** Lifts the user's lock; answers whether one held. */
  unlockUser (settings: Settings, userId: number): Promise<boolean> {
    return this.#revocation.unlockUser(settings, userId)
  }

  /** The user's lock while it holds, or `null`. */
  lockOf (userId: number): Promise<UserLock | null> {
    return this.#revocation.lockOf(userId)
  }

  /** The time (ms) before which the user's sessions are ended, or `null` when none is set. */
  userCutoff (userId: number): Promise<number | null> {
    return this.#revocation.userCutoff(userId)
  }

  /**
   * A new session id. It starts with the session's start time in ms (base 36)
   * so a per-user cutoff can end older sessions to the millisecond, though
   * `iat` has whole seconds only. Sign-in flows pass the time their request
   * started (`startedAt`): a password change ends every session whose
   * sign-in checked the old password.
   */
  newSessionId (startedAt: number = this.#clock()): string {
    return newSessionId(startedAt)
  }

  /** The refresh token of a new session and the write that starts its family; its tokens will say how its user signed in (`amr`). */
  newRefreshToken (settings: Settings, userId: number, sessionId: string, amr?: string[], fingerprint?: string): { token: string, write: () => Promise<void> } {
    return this.#refresh.newRefreshToken(settings, userId, sessionId, amr, fingerprint)
  }

  /** Starts the refresh family of a new session and answers its refresh token (`newRefreshToken`, written at once). */
  async issueRefreshToken (settings: Settings, userId: number, sessionId: string, amr?: string[], fingerprint?: string): Promise<string> {
    const { token, write } = this.newRefreshToken(settings, userId, sessionId, amr, fingerprint)
    await write()
    return token
  }

  /**
   * Ends a session prepared for an answer that was not given, its access
   * token too (best effort). `unused`: a sign-in refused by its count, whose
   * tokens never left the process: its entry goes rather than becoming an
   * ended-session mark, so refused sign-ins leave nothing in the store.
   */
  async discardSession (settings: Settings, sessionId: string, unused = false): Promise<void> {
    await (unused ? this.#revocation.forgetSession(sessionId) : this.#revocation.revokeSession(settings, sessionId)).catch(() => {})
  }

  /** Spends a refresh token and answers its successor; a reuse ends the session and tells `onReuse`. */
  rotateRefreshToken<U> (settings: Settings, token: string, lookUp: SessionLookUp<U>, onReuse: (reuse: RefreshReuse) => void): Promise<RefreshResult<U>> {
    return this.#refresh.rotateRefreshToken(settings, token, lookUp, onReuse)
  }

  /** Records a new password fingerprint in a live session (see `RefreshFamilies.recordFingerprint`). */
  recordFingerprint (settings: Settings, sessionId: string, fingerprint: string): Promise<void> {
    return this.#refresh.recordFingerprint(settings, sessionId, fingerprint)
  }

  /** Ends the session of a refresh token, its current or its previous one (sign-out through the refresh cookie). */
  endSessionOf (settings: Settings, token: string): Promise<{ userId: number, sessionId: string }> {
    return this.#refresh.endSessionOf(settings, token)
  }
}
