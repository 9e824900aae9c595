// The one context of the flows: every service they use, built once at registration (by the plugin entry) and frozen.
import type { FastifyBaseLogger } from 'fastify'
import type { Call, SecondFactorGate } from '../adapters/second-factor.js'
import type { PasswordPolicy, UserAdapter } from '../adapters/users.js'
import type { Clock } from '../core/clock.js'
import type { JwtLoginError } from '../core/errors.js'
import type { Mailer } from '../mail/types.js'
import type { OAuthRegistry } from '../oauth/providers/registry.js'
import type { CodeHasher } from '../services/code-hash.js'
import type { JwtLoginEvents } from '../services/events.js'
import type { AttemptLimiter } from '../services/limits.js'
import type { StateStore } from '../store/types.js'
import type { TokenService } from '../tokens/service.js'
import type { SessionIndex } from '../tokens/session-index.js'
import type { TwoFactor } from '../two-factor/methods/service.js'
import type { Passkeys } from '../webauthn/ceremonies.js'
import type { Messages } from '../i18n/messages.js'
import type { Telemetry } from '../telemetry/telemetry.js'

/** Password reset's own parts. */
export interface PasswordResetParts {
  /** `null` without the `mailer` option: registration refuses reset switched on without one. */
  readonly mailer: Mailer | null
  readonly policy: PasswordPolicy | null
  /** The codes' keyed hashes, under every signing key. */
  readonly hasher: CodeHasher
  /** Aborted on close: mail retries stop waiting. */
  readonly stop: AbortController
}

/** Everything a flow needs, resolved once at registration and frozen. */
export interface JwtLoginContext {
  /** The host's adapter, or the user cache in front of it (`userCache` option). */
  readonly users: UserAdapter<any>
  /** The host's adapter behind its guard alone (no user cache, no password-work bound): what `health()` reads. */
  readonly hostUsers: UserAdapter<any>
  /** Drops the user from the user cache after a change of their state; a no-op without one. */
  readonly forgetUser: (userId: number) => void
  readonly store: StateStore
  readonly tokens: TokenService
  readonly limiter: AttemptLimiter
  /** Each user's sessions, kept within `sessions.maxPerUser`. */
  readonly sessions: SessionIndex
  readonly events: JwtLoginEvents
  readonly clock: Clock
  readonly log: FastifyBaseLogger
  /** Spends the time of one password verification, for unknown users. */
  readonly spendPasswordTime: (password: string) => Promise<void>
  /** The gate on every first factor: the two-factor module's, the host's own, or none. */
  readonly secondFactor: SecondFactorGate | null
  /** The two-factor module, or `null` without the `twoFactor` option. */
  readonly twoFactor: TwoFactor | null
  readonly reset: PasswordResetParts
  /** The OpenID providers' clients, discovery and keys. */
  readonly oauth: OAuthRegistry
  /** The passkey ceremonies over the host's port, or `null` without the `passkeys` option. */
  readonly passkeys: Passkeys | null
  /** The texts in every language the instance speaks. */
  readonly messages: Messages
  /** Spans and metrics, while an OpenTelemetry SDK records them. */
  readonly telemetry: Telemetry
}

/**
 * How a refusal of a route's gate is reported: the route's own audit event.
 * A flow exports its audit; the route declares it in its gate.
 */
export type GateAudit = (events: JwtLoginEvents, call: Call, error: JwtLoginError, stage: 'switch' | 'auth_code') => void
