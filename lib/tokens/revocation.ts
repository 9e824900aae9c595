// Revocation: the one rule for an ended session, ending sessions one by one, and the per-user cutoff that ends every older session.
import type { Clock } from '../core/clock.js'
import type { Settings } from '../config/settings.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import type { TokenClaims } from './jwt.js'
import { IMPERSONATION_MAX_MS, isImpersonationSession, sessionStart } from './session-id.js'
import { type CutoffRecord, type KeysEnd, mergeKeysEnd, parseCutoff, writeCutoff } from './cutoff-record.js'
import { LOCK_KEPT_MS, lockEnd, lockIn, type LockRecord, type UserLock } from './user-lock.js'

export type { UserLock } from './user-lock.js'

/** Store keys of the token state. */
export const stateKeys = {
  /** One entry per session: its refresh family (JSON) or `revoked`. */
  session: (sid: string) => `session:${sid}`,
  /** Tokens of this user issued before the stored time (ms) are refused. */
  userCutoff: (userId: string | number) => `revoked:user:${userId}`
}

/** What `stateKeys.session` holds once the session has ended. */
export const REVOKED = 'revoked'

function heldTime (record: CutoffRecord): number {
  return Math.max(0, ...Object.values(record.h ?? {}))
}

/** The time before which a user's sessions are ended: the latest of the cutoff and every provisional one (a kept session aside). */
export function cutoffTime (raw: string): number {
  // the bare time unless a password change runs or a session was kept: no parse then
  if (!raw.startsWith('{')) return Number(raw)
  const record = JSON.parse(raw) as CutoffRecord
  return Math.max(record.t, heldTime(record), record.l === undefined ? 0 : lockEnd(record.l))
}

/** Whether a cutoff ends a session: it started before a provisional cutoff, or before the time unless the cutoff keeps it. */
function endedBy (record: CutoffRecord, sessionId: string): boolean {
  const start = sessionStart(sessionId)
  if (record.l !== undefined && start < lockEnd(record.l)) return true
  return start < heldTime(record) || (start < record.t && record.k?.includes(sessionId) !== true)
}

/**
 * The one rule for a revoked session: its entry says it ended, or it started
 * before its user's cutoff (unless the cutoff keeps it) or before a
 * provisional one.
 */
export function sessionEnded (sessionId: string, entry: string | null, cutoff: string | null): boolean {
  if (entry === REVOKED) return true
  if (cutoff === null) return false
  // the bare time, unless a password change runs or a sign-out everywhere kept a session: no parse then
  if (!cutoff.startsWith('{')) return sessionStart(sessionId) < Number(cutoff)
  return endedBy(JSON.parse(cutoff) as CutoffRecord, sessionId)
}

/** A change of a cutoff record: `l` absent keeps the lock there, `null` lifts it. */
type Changed = Omit<CutoffRecord, 'l'> & { l?: LockRecord | null }

/** A user cutoff just written: whether it kept the session asked for, and the time before which it ends the others (clock skew included). */
export interface UserCutoff {
  kept: boolean
  until: number
  /** The session to keep had already ended by the cutoff there: nothing was written. */
  endedBefore: boolean
}

/** Ends sessions and answers whether a token's session has ended. */
export class Revocation {
  readonly #store: StateStore
  readonly #clock: Clock
  /**
   * The longest any token or session this instance issued may live (ms),
   * whatever the settings say now: a reload that shortens a lifetime must
   * not let a revocation expire before a token issued under the longer one.
   */
  #longestTokenMs = 0
  /** The same for refresh families. */
  #longestSessionMs = 0
  /** The same for trusted devices, which a user's cutoff ends too. */
  #longestDeviceMs = 0

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Notes the lifetime of a token just issued, which its revocation must outlive. */
  tokenIssued (lifetimeMs: number): void {
    this.#longestTokenMs = Math.max(this.#longestTokenMs, lifetimeMs)
  }

  /** Notes the lifetime of a trusted device just written, which a user's cutoff must outlive. */
  deviceTrusted (lifetimeMs: number): void {
    this.#longestDeviceMs = Math.max(this.#longestDeviceMs, lifetimeMs)
  }

  /** Notes the lifetime of a refresh family just written, which a user's cutoff must outlive. */
  sessionIssued (lifetimeMs: number): void {
    this.#longestSessionMs = Math.max(this.#longestSessionMs, lifetimeMs)
  }

  /**
   * Whether a token is revoked: its session ended, or every token of its user
   * issued before a cutoff; an impersonation token's also when its actor's
   * cutoff ends a session started with it. The entries are read in one store round trip.
   */
  async isRevoked (claims: TokenClaims): Promise<boolean> {
    const keys = [stateKeys.session(claims.sid), stateKeys.userCutoff(claims.sub)]
    // an impersonation token: its actor's cutoff too (a lock, a sign-out everywhere, a deletion, a password change end it)
    if (claims.act !== undefined) keys.push(stateKeys.userCutoff(claims.act.sub))
    // every authenticated request's read: straight to the store's getMany when it has one
    const [session, cutoff, actorCutoff = null] = await (this.#store.getMany === undefined ? readMany(this.#store, keys) : this.#store.getMany(keys)) as [string | null, string | null, (string | null)?]
    return sessionEnded(claims.sid, session, cutoff) || sessionEnded(claims.sid, null, actorCutoff)
  }

  /**
   * Revokes a token by ending its session: one write, so it is either done or
   * not. Its access tokens and its refresh token stop working together.
   */
  async revoke (settings: Settings, claims: TokenClaims): Promise<void> {
    await this.revokeSession(settings, claims.sid, claims.exp * 1000)
  }

  /** Deletes a session's entry: for a session whose tokens were never given out. */
  async forgetSession (sessionId: string): Promise<void> {
    await this.#store.delete(stateKeys.session(sessionId))
  }

  /**
   * Ends a session: the one entry of the session becomes `revoked`, so its
   * refresh family is gone and its access tokens are refused until they have
   * all expired: the later of `until` (the presented token's `exp`) and a
   * full lifetime from now, since a token refreshed later in the session
   * outlives the one presented.
   */
  async revokeSession (settings: Settings, sessionId: string, until?: number): Promise<void> {
    const { tokens } = settings
    const now = this.#clock()
    // an impersonation's session: its token, signed on any instance, lives at most an hour from its start (a second for iat's rounding)
    const acted = isImpersonationSession(sessionId) ? sessionStart(sessionId) + IMPERSONATION_MAX_MS + 1000 - now : 0
    const ttl = Math.max(1000, (until ?? now + tokens.lifetimeMs) - now, tokens.lifetimeMs, this.#longestTokenMs, acted) + tokens.leewayMs
    await this.#store.set(stateKeys.session(sessionId), REVOKED, ttl)
  }

  /**
   * Ends every session of the user started before `at` (default now), plus
   * `sessions.clockSkew`, but `keep` (the caller's own session, for a
   * sign-out everywhere else): their access and refresh tokens are refused
   * from then on. The cutoff only moves forward: a later write with an
   * earlier time leaves it as it is. A session an earlier cutoff kept is
   * kept again only when it is `keep`. When the cutoff there now has
   * already ended `keep` (a concurrent sign-out everywhere from another of
   * the user's sessions, or a password change, came first), nothing is
   * written: the request comes from a session that has ended, and must not
   * end the session that one kept. Answers whether `keep` was kept: not
   * when the cutoff had ended it, nor when its own entry says it ended (a
   * concurrent end of that one session), read after the cutoff's write.
   * `keys`: an end of every API key of the user, in the same write.
   */
  async revokeUserTokens (settings: Settings, userId: number, at: number = this.#clock(), keep?: string, keys?: KeysEnd): Promise<UserCutoff> {
    const until = at + settings.sessions.clockSkewMs
    let endedBefore = false
    await this.#changeCutoff(settings, userId, (record) => {
      if (keep === undefined) return { t: Math.max(record.t, until), h: record.h, x: keys }
      endedBefore = endedBy(record, keep)
      return endedBefore ? null : { t: Math.max(record.t, until), h: record.h, k: [keep], x: keys }
    })
    const kept = keep !== undefined && !endedBefore && await this.#store.get(stateKeys.session(keep)) !== REVOKED
    return { kept, until, endedBefore }
  }

  /**
   * A provisional cutoff at `until` while a password changes (`id` names the
   * change): it ends every session started before it, including those that
   * start while the change runs, until `releaseUserTokens` with the same id
   * replaces it by the moment the change ended. Never lowers the cutoff.
   * `known`: the cutoff entry as the caller read it already. Answers the
   * entry as written, for the release.
   */
  async holdUserTokens (settings: Settings, userId: number, id: string, until: number, known?: string | null): Promise<string | null> {
    return await this.#changeCutoff(settings, userId, (record) => ({ t: record.t, h: { ...record.h, [id]: until }, k: record.k }), known)
  }

  /**
   * Takes the provisional cutoff `id` back without moving the cutoff (a
   * change that did not start: its code was not claimed). `known`: the entry
   * as the hold wrote it.
   */
  async cancelHold (settings: Settings, userId: number, id: string, known?: string | null): Promise<void> {
    await this.#changeCutoff(settings, userId, (record) => {
      const { [id]: _cancelled, ...held } = record.h ?? {}
      return { t: record.t, h: held, k: record.k }
    }, known)
  }

  /**
   * Replaces the provisional cutoff `id` by `at` (default now, plus
   * `sessions.clockSkew`), never lowering the cutoff below what another
   * write set: a newer change's provisional cutoff stays, and no session is
   * kept (a password change ends them all). `known`: the entry as the hold wrote it.
   */
  async releaseUserTokens (settings: Settings, userId: number, id: string, at: number = this.#clock(), known?: string | null): Promise<void> {
    const until = at + settings.sessions.clockSkewMs
    await this.#changeCutoff(settings, userId, (record) => {
      const { [id]: _released, ...held } = record.h ?? {}
      return { t: Math.max(record.t, until), h: held }
    }, known)
  }

  /**
   * Locks the user until `until` (ms; `null`: until `unlockUser`): every
   * session that started before the lock ends, with nothing kept, and so
   * does every session that starts before it ends (a sign-in that raced the
   * lock): `lockIn` refuses sign-ins meanwhile. A later lock replaces an
   * earlier one. `keys`: an end of every API key of the user, in the same
   * write. Answers the lock as written.
   */
  async lockUser (settings: Settings, userId: number, until: number | null, keys?: KeysEnd): Promise<UserLock> {
    const lockedAt = this.#clock()
    // the time too, a millisecond past the lock: once it is lifted, a session that started in the lock's own millisecond stays ended
    await this.#changeCutoff(settings, userId, (record) => ({ t: Math.max(record.t, lockedAt + 1 + settings.sessions.clockSkewMs), h: record.h, l: { u: until, a: lockedAt }, x: keys }))
    return { until, lockedAt }
  }

  /**
   * Lifts the user's lock: sessions that started before now (plus
   * `sessions.clockSkew`) stay ended, a sign-in that raced the lock
   * included, and no session an earlier sign-out everywhere kept comes back
   * (nothing is kept). Answers whether a lock held (one whose `until`
   * passed is lifted already: nothing is written).
   */
  async unlockUser (settings: Settings, userId: number): Promise<boolean> {
    let held = false
    await this.#changeCutoff(settings, userId, (record) => {
      const now = this.#clock()
      held = record.l !== undefined && lockEnd(record.l) > now
      return held ? { t: Math.max(record.t, now + settings.sessions.clockSkewMs), h: record.h, l: null } : null
    })
    return held
  }

  /**
   * Ends the user's API keys created before `keys[0]` (kept until `keys[1]`,
   * the last of them expires), without moving the cutoff: one
   * compare-and-set (a password reset, which ends no session by it).
   */
  async endUserKeys (settings: Settings, userId: number, keys: KeysEnd): Promise<void> {
    await this.#changeCutoff(settings, userId, (record) => ({ t: record.t, h: record.h, k: record.k, x: keys }))
  }

  /** The user's lock while it holds, or `null`: one read. */
  async lockOf (userId: number): Promise<UserLock | null> {
    return lockIn(await this.#store.get(stateKeys.userCutoff(userId)), this.#clock())
  }

  /**
   * One change of a user's cutoff, as a compare-and-set from the value read,
   * so concurrent writes (other instances, other changes) are never lost.
   * Provisional cutoffs already past are folded into the time. `change`
   * answers `null` to leave the entry as it is.
   */
  async #changeCutoff (settings: Settings, userId: number, change: (record: CutoffRecord) => Changed | null, known?: string | null): Promise<string | null> {
    const { rememberDevice } = settings.twoFactor
    const ttlMs = Math.max(
      settings.refresh.lifetimeMs, settings.tokens.lifetimeMs, rememberDevice.enabled ? rememberDevice.lifetimeMs : 0,
      this.#longestTokenMs, this.#longestSessionMs, this.#longestDeviceMs, IMPERSONATION_MAX_MS
    ) + settings.tokens.leewayMs
    return await updateEntry(this.#store, stateKeys.userCutoff(userId), 'the user\'s cutoff', (raw) => {
      const record = parseCutoff(raw) ?? { t: 0 }
      const next = change(record)
      if (next === null) return null
      const now = this.#clock()
      const held = Object.entries(next.h ?? {})
      // a lock stays through every other change; one whose time passed is folded into the time, as a provisional cutoff is
      const lock = next.l === undefined ? record.l : next.l ?? undefined
      const lockPassed = lock !== undefined && lockEnd(lock) <= now
      const keysEnd = mergeKeysEnd(record.x, next.x, now)
      const folded = Math.max(0, lockPassed ? lockEnd(lock) : 0, ...held.filter(([, until]) => until <= now).map(([, until]) => until))
      const value = writeCutoff({
        t: Math.max(next.t, folded),
        h: Object.fromEntries(held.filter(([, until]) => until > now)),
        // a provisional cutoff folded into the time keeps none of the sessions it ended while held
        k: next.k?.filter(id => sessionStart(id) >= folded),
        l: lockPassed ? undefined : lock,
        // an end of the API keys stays through every other change, and keeps the entry until the last key it ended expires
        x: keysEnd
      })
      // a lock outlives its time in the store: every token of the user stays refused until it ends
      const lockTtl = lock === undefined || lockPassed ? 0 : (lock.u === null ? LOCK_KEPT_MS : lock.u - now + ttlMs)
      return value === raw ? null : { value, ttlMs: Math.max(ttlMs, lockTtl, keysEnd === undefined ? 0 : keysEnd[1] - now) }
    }, known)
  }

  /** The time (ms) before which the user's sessions are ended, or `null` when none is set. */
  async userCutoff (userId: number): Promise<number | null> {
    const raw = await this.#store.get(stateKeys.userCutoff(userId))
    return raw === null ? null : cutoffTime(raw)
  }
}
