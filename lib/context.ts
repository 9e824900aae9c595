import type { Clock } from './clock.js'
import type { JwtLoginEvents } from './events.js'
import type { AttemptLimiter } from './limits.js'
import type { SettingsHolder } from './settings.js'
import type { StateStore } from './store/types.js'
import type { TokenService } from './tokens.js'
import type { PublicUser, UserAdapter } from './users.js'

/** What a sign-in answers: a final token (with a refresh token when enabled) or a two-factor challenge. */
export type SignInResult =
  | { jwt: string, refresh_token?: string }
  | { two_factor_required: true, jwt: string }

/**
 * The seam where a second factor joins a sign-in (password or provider). It
 * answers a challenge for a user who has two-factor on, or `null`.
 * `startedAt` is when the sign-in request began (ms).
 */
export type SecondFactorGate = (user: unknown, publicUser: PublicUser, ip: string, startedAt: number) => Promise<SignInResult | null>

/** Everything a flow needs, resolved once at registration. */
export interface JwtLoginContext {
  readonly settings: SettingsHolder
  readonly users: UserAdapter<any>
  readonly store: StateStore
  readonly tokens: TokenService
  readonly limiter: AttemptLimiter
  readonly events: JwtLoginEvents
  readonly clock: Clock
  /** Spends the time of one password verification, for unknown users. */
  readonly spendPasswordTime: (password: string) => Promise<void>
  secondFactor: SecondFactorGate | null
}
