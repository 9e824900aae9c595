// The second-factor seam: what a sign-in request is to a flow, what a sign-in answers, and the gate a host (or the two-factor module) may put on every first factor.
import type { Settings } from '../config/settings.js'
import type { PublicUser } from './users.js'

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
