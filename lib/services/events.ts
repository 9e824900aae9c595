// The audit events: what each carries, the emitter, and the request scope that adds an impersonation's actor to every event.
import { AsyncLocalStorage } from 'node:async_hooks'
import { EventEmitter } from 'node:events'
import type { TwoFactorMethod } from '../adapters/two-factor.js'
import type { JwtLoginErrorCode } from '../core/errors.js'

/**
 * What each audit event carries. No event carries a password, token, code or
 * secret: only ids, the client IP and a reason.
 */
export interface JwtLoginEventMap {
  'login.succeeded': { userId: number, ip: string, method: 'password' | 'password_hash' | 'passkey' | 'email' }
  /**
   * `passkey`: a passwordless sign-in whose passkey was refused (`errorCode` says why); `email_code`: a wrong, used or expired code of sign-in by email;
   * `locked`: a sign-in (password, passkey, email code) of a locked user (`lockUser`), refused whatever its credentials.
   */
  'login.failed': { ip: string, reason: 'wrong_credentials' | 'rate_limited' | 'auth_code' | 'passkey' | 'email_code' | 'locked', errorCode: number }
  'token.refreshed': { userId: number, sessionId: string, ip: string }
  'refresh.reused': { userId: number, sessionId: string, ip: string }
  'token.revoked': { userId: number, sessionId: string, jti?: string, ip: string }
  'validation.failed': { ip: string, errorCode: number }
  /** A sign-in is final: its session started (`method` its first factor, `secondFactor` what completed it). */
  'session.started': { userId: number, sessionId: string, method: 'password' | 'provider' | 'passkey' | 'email', provider: string | null, secondFactor: string | null, ip: string }
  /** A session's user authenticated again (`method`: `password`, `totp`, `backup_codes` or `passkey`); its new access token says when. */
  'session.stepped_up': { userId: number, sessionId: string, method: string, ip: string }
  /**
   * Sessions ended: one (`sessionId`), or every session of the user started
   * before now (`sessionId: null`; with `kept`, the one that stays).
   */
  'session.ended': { userId: number, sessionId: string | null, reason: SessionEndReason, kept?: string }
  /** A device was trusted for the second factor, or a trusted device forgotten (`deviceId: null`: all of the user's). */
  'device.trusted': { userId: number, deviceId: string, ip: string }
  'device.forgotten': { userId: number, deviceId: string | null, reason: 'user' | 'host' | 'sign_out_everywhere' | 'password_reset' | 'limit' | 'second_factor_changed' | 'user_deleted' | AccountEndReason }
  /** A session was ended to keep its user within `sessions.maxPerUser` (also `session.ended` with reason `limit`). */
  'session.evicted': { userId: number, sessionId: string, reason: 'max_per_user' }
  /** A sign-in with the right credentials was refused: the account is over `limits.signInsPerAccount`. */
  'signin.limited': { userId: number, ip: string }
  /** A reset code was asked for; `userId` is `null` when the email has no account (the client cannot tell). */
  /** A user registered at `POST /users`. */
  'user.registered': { userId: number, ip: string }
  /** `POST /users` refused or failed (the gate's refusals too), with the reason's code. */
  'user.register_failed': { ip: string, reason: string, errorCode: number }
  /** A user deleted their account at `DELETE /users` (their sessions ended first). */
  'user.deleted': { userId: number, ip: string }
  'reset.requested': { userId: number | null, ip: string }
  /** The reset mail was accepted by the mailer after `attempts` tries. */
  'reset.code_sent': { userId: number, attempts: number }
  /** Every try to send the reset mail failed; the code was withdrawn. */
  'reset.code_failed': { userId: number, attempts: number }
  'reset.completed': { userId: number, ip: string }
  'reset.failed': {
    step: 'request' | 'complete'
    userId: number | null
    ip: string
    /** `locked`: the right code of a locked account (`lockUser`), left unspent. */
    reason: 'auth_code' | 'rate_limited' | 'code_invalid' | 'password_policy' | 'locked'
    errorCode: number
  }
  'two_factor.challenge_issued': { userId: number, method: TwoFactorMethod, ip: string }
  'two_factor.code_accepted': { userId: number, method: TwoFactorMethod, ip: string }
  'two_factor.code_rejected': { userId: number, ip: string, attempt: number }
  'two_factor.challenge_closed': { userId: number, ip: string }
  'two_factor.account_locked': { userId: number, ip: string }
  /** The email code of a challenge was accepted by the mailer (after the sign-in answered). */
  'two_factor.code_sent': { userId: number }
  /** The mailer refused the email code; the code was withdrawn. */
  'two_factor.code_failed': { userId: number }
  /** A provider sign-in ended with a final token (not when a second factor is pending). */
  'oauth.succeeded': { userId: number, ip: string, provider: string, flow: 'code' | 'id_token' }
  /** `provider` is the configured provider, or `null` when the value sent names none. */
  'oauth.failed': { ip: string, provider: string | null, reason: JwtLoginErrorCode, errorCode: number }
  'oauth.user_registered': { userId: number, ip: string, provider: string }
  /**
   * A provider account was linked to the user: at a sign-in whose verified
   * email found the user (`sign_in`), or by the user (`account`). Never
   * with the provider's subject.
   */
  'identity.linked': { userId: number, ip: string, provider: string, via: 'sign_in' | 'account' }
  /** A link was removed: by the user (`account`), or when the account's address was proven by its owner (`credentials_reset`). */
  'identity.unlinked': { userId: number, ip: string | null, provider: string, reason: 'account' | 'credentials_reset' }
  /** A passkey was enrolled, renamed or deleted (by its user, from a session with a recent sign-in). */
  'passkey.registered': { userId: number, passkeyId: string, ip: string }
  'passkey.renamed': { userId: number, passkeyId: string, ip: string }
  'passkey.deleted': { userId: number, passkeyId: string, ip: string }
  /**
   * A passkey's signature counter did not go up (`presented` ≤ `stored`, not
   * both 0): a cloned authenticator, or a sync quirk. Refused only with
   * `passkeys.refuseCounterRegression`.
   */
  'passkey.counter_regressed': { userId: number, passkeyId: string, stored: number, presented: number }
  /** A code to verify the account's address was written (and its mail queued); `null`: the same answer for an unknown or verified address. */
  'email.verification_requested': { userId: number | null, ip: string }
  /**
   * The account's address was proven by a code. `reset`: what was added
   * before (sessions, trusted devices, passkeys, the second factor) was
   * ended, as a verification without a session of the account does.
   */
  'email.verified': { userId: number, ip: string, reset: boolean }
  /** What an account held before its address was proven ended: by a verification without its session, or a password reset. */
  'account.credentials_reset': { userId: number, passkeys: number, secondFactor: boolean, reason: 'email_verified' | 'password_reset' | 'email_reverted' }
  'password.changed': { userId: number, ip: string, othersEnded: boolean }
  /** A password sign-in's upgrade of the user's hash (the adapter's `rehashPassword`) failed; the sign-in went on with the old hash. */
  'password.rehash_failed': { userId: number, ip: string }
  /** A code was mailed to a new address; nothing changed yet. */
  'email.change_requested': { userId: number, ip: string }
  'email.changed': { userId: number, ip: string }
  /** The old address put itself back with its revert code: every session and trusted device ended. */
  'email.reverted': { userId: number, ip: string }
  'two_factor.enabled': { userId: number, method: TwoFactorMethod, ip: string }
  'two_factor.method_changed': { userId: number, method: TwoFactorMethod, ip: string }
  'two_factor.disabled': { userId: number, ip: string }
  'two_factor.totp_changed': { userId: number, ip: string }
  'two_factor.backup_codes_regenerated': { userId: number, ip: string }
  /** An account mail (a code or a notice) or a sign-in code was sent, or given up after its retries (its code withdrawn); `userId` null: a new address (`emailSignIn.register`). */
  'account.mail_sent': { userId: number | null, mail: string, attempts: number }
  'account.mail_failed': { userId: number | null, mail: string, attempts: number }
  /**
   * A sign-in code was asked for (`userId` null: the address has no account,
   * or its count is spent, and no code went; `register`: a code that creates
   * the user). Its mail reports `account.mail_sent` / `account.mail_failed`.
   */
  'email_sign_in.requested': { userId: number | null, ip: string, register: boolean }
  /** Sign-in by email created its user (`emailSignIn.register`). */
  'email_sign_in.user_registered': { userId: number, ip: string }
  /**
   * The host locked a user (`lockUser`): every session and trusted device
   * ended, sign-ins refused until `until` (ISO 8601; `null`: until
   * `unlockUser`). `reason`: the host's note, never stored. A lock on a
   * locked user replaces it, and is told again.
   */
  'user.locked': { userId: number, reason: string, until: string | null }
  /** The host lifted a user's lock (`unlockUser`) while it held; `reason`: the host's note, if any. A timed lock that passes tells nothing. */
  'user.unlocked': { userId: number, reason: string | null }
  /** The host's `impersonate` issued an access token for `userId` to `actorId` (`reason`: the host's note); its session ends at `expiresAt` (ISO 8601). */
  'impersonation.started': { actorId: number, userId: number, sessionId: string, reason: string, expiresAt: string }
  /** An API key was created: by its user at `POST /account/api-keys`, or by the host (`createApiKey`, `ip: null`). */
  'api_key.created': { userId: number, keyId: string, ip: string | null }
  /** An API key ended: by its user, the host (`revokeApiKey`), or with every key of the user (`ApiKeyEndReason`). */
  'api_key.revoked': { userId: number, keyId: string, reason: 'user' | 'host' | ApiKeyEndReason }
  /** A host route refused an API key (`errorCode`: 254, 255, 256, 200, 253); `keyId` only once the key proved to be a live one. Never the key. */
  'api_key.refused': { ip: string, errorCode: number, keyId: string | null }
}

export type JwtLoginEventName = keyof JwtLoginEventMap

/**
 * An event as its listeners get it: its fields, and `actorId` when it was
 * emitted while an impersonation token was used (the request that presented
 * it, once its signature held).
 */
export type JwtLoginEventPayload<E extends JwtLoginEventName> = JwtLoginEventMap[E] & { actorId?: number }

/** What the events of one request read: the actor its impersonation token names, once admitted (the request's `Call`). */
export interface EventScope {
  readonly actorId?: number
}

const scopes = new AsyncLocalStorage<EventScope>()

/**
 * Runs `work` with `scope` as the events' scope: every event emitted within
 * it, after its awaits too, carries the scope's `actorId` when it has one.
 */
export function inEventScope<T> (scope: EventScope, work: () => T): T {
  return scopes.run(scope, work)
}

/**
 * Why sessions ended: a sign-out (of one session: `/auth/revoke`, or
 * `DELETE /sessions/{id}`), a sign-out everywhere (`DELETE /sessions`), a
 * refresh token reused, the per-user bound, a password reset, the provider's
 * back-channel logout, the host (`endSession`, `endAllSessions`), or a user
 * gone from the host's store.
 */
/** `password_changed_outside`: the adapter's `passwordFingerprint` of the user changed since the session started. */
export type SessionEndReason = 'sign_out' | 'sign_out_everywhere' | 'reuse' | 'limit' | 'password_reset' | 'provider_logout' | 'host' | 'user_gone' | 'user_deleted' | 'password_changed_outside' | 'locked' | AccountEndReason

/**
 * Why every API key of a user ended: a lock, a sign-out everywhere (the
 * user's, or the host's `endAllSessions`), the user's deletion, or the
 * mailbox proven, by a code or a password reset, or the email put back
 * (whoever held the account before keeps nothing). Never a password change.
 */
export type ApiKeyEndReason = 'locked' | 'sign_out_everywhere' | 'user_deleted' | 'email_verified' | 'email_reverted' | 'password_reset'

/** Why the account routes end sessions: a password change, the mailbox proven by a code (what came before is ended), an email put back. */
export type AccountEndReason = 'password_changed' | 'email_verified' | 'email_reverted'

/** What sees every event before its listeners: it must not throw. */
export type EventObserver = (event: JwtLoginEventName, payload: Readonly<Record<string, unknown>>) => void

/**
 * A typed EventEmitter for the audit events. Listener errors are not the
 * request's concern. An event emitted in the scope of a request that used an
 * impersonation token carries `actorId`.
 */
export class JwtLoginEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false })
  #observer: EventObserver | undefined

  /** Every event, listened to or not, also goes to `observer` (the plugin's telemetry) first. */
  observe (observer: EventObserver): void {
    this.#observer = observer
  }

  on<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventPayload<E>) => void): this {
    this.#emitter.on(event, listener)
    return this
  }

  once<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventPayload<E>) => void): this {
    this.#emitter.once(event, listener)
    return this
  }

  off<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventPayload<E>) => void): this {
    this.#emitter.off(event, listener)
    return this
  }

  emit<E extends JwtLoginEventName>(event: E, payload: JwtLoginEventMap[E]): void {
    const listeners = this.#emitter.rawListeners(event)
    const observer = this.#observer
    if (listeners.length === 0 && observer === undefined) return
    const actorId = scopes.getStore()?.actorId
    const sent: JwtLoginEventPayload<E> = actorId === undefined ? payload : { ...payload, actorId }
    observer?.(event, sent)
    // raw listeners: a once() wrapper must run so that it removes itself
    for (const listener of listeners) {
      try {
        (listener as (p: JwtLoginEventPayload<E>) => void)(sent)
      } catch {
        // an audit listener that throws must not change the answer
      }
    }
  }
}
