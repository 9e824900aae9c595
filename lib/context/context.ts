import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../core/clock.js'
import type { JwtLoginEvents } from '../services/events.js'
import type { AttemptLimiter } from '../services/limits.js'
import type { SessionIndex } from '../tokens/session-index.js'
import type { Settings } from '../config/settings.js'
import type { StateStore } from '../store/types.js'
import type { TokenService } from '../tokens/service.js'
import type { PublicUser, UserAdapter } from '../adapters/users.js'

/** What a sign-in answers: a final token (with a refresh token when enabled) or a two-factor challenge. */
export type SignInResult =
  | { jwt: string, refresh_token?: string }
  | { two_factor_required: true, jwt: string }

/**
 * The seam where a second factor joins a sign-in (password or provider). It
 * answers a challenge for a user who has two-factor on, or `null`; the
 * challenge starts when the sign-in request did (`call.startedAt`).
 */
export type SecondFactorGate = (user: unknown, publicUser: PublicUser, call: Call) => Promise<SignInResult | null>

/**
 * One request as a flow sees it: the settings snapshot taken when the
 * request started (a reload in between does not change them under it), the
 * client's address and the start time (ms).
 */
export interface Call {
  readonly settings: Settings
  readonly ip: string
  readonly startedAt: number
}

/** Everything a flow needs, resolved once at registration and frozen. */
export interface JwtLoginContext {
  /** The host's adapter, or the user cache in front of it (`userCache` option). */
  readonly users: UserAdapter<any>
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
  readonly secondFactor: SecondFactorGate | null
}
