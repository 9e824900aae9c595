import { EventEmitter } from 'node:events'
import type { JwtLoginErrorCode } from './errors.js'

/**
 * What each audit event carries. No event carries a password, token, code or
 * secret: only ids, the client IP and a reason.
 */
export interface JwtLoginEventMap {
  'login.succeeded': { userId: number, ip: string, method: 'password' | 'password_hash' }
  'login.failed': { ip: string, reason: 'wrong_credentials' | 'rate_limited' | 'auth_code', errorCode: number }
  'token.refreshed': { userId: number, sessionId: string, ip: string }
  'refresh.reused': { userId: number, sessionId: string, ip: string }
  'token.revoked': { userId: number, sessionId: string, jti: string, ip: string }
  'validation.failed': { ip: string, errorCode: number }
  /** A provider sign-in ended with a final token (not when a second factor is pending). */
  'oauth.succeeded': { userId: number, ip: string, provider: string, flow: 'code' | 'id_token' }
  /** `provider` is the configured provider, or `null` when the value sent names none. */
  'oauth.failed': { ip: string, provider: string | null, reason: JwtLoginErrorCode, errorCode: number }
  'oauth.user_registered': { userId: number, ip: string, provider: string }
}

export type JwtLoginEventName = keyof JwtLoginEventMap

/** A typed EventEmitter for the audit events. Listener errors are not the request's concern. */
export class JwtLoginEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false })

  on<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventMap[E]) => void): this {
    this.#emitter.on(event, listener)
    return this
  }

  once<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventMap[E]) => void): this {
    this.#emitter.once(event, listener)
    return this
  }

  off<E extends JwtLoginEventName>(event: E, listener: (payload: JwtLoginEventMap[E]) => void): this {
    this.#emitter.off(event, listener)
    return this
  }

  emit<E extends JwtLoginEventName>(event: E, payload: JwtLoginEventMap[E]): void {
    for (const listener of this.#emitter.listeners(event)) {
      try {
        (listener as (p: JwtLoginEventMap[E]) => void)(payload)
      } catch {
        // an audit listener that throws must not change the answer
      }
    }
  }
}
