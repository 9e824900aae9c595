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
  /** The client's `User-Agent`, as sent (a session remembers it, cut to 256 characters). */
  readonly userAgent?: string
  /** A trusted-device token the client presented (`device_token`, or the device cookie), on a password sign-in. */
  readonly deviceToken?: string
  /** The request's `Accept-Language`, as sent: the language of its messages and mails, within `locale` (absent: `locale.default`). */
  readonly acceptLanguage?: string
  /**
   * The actor of an impersonation token the request presented (its `act`),
   * set once the token's signature and claims held (`authenticateToken`):
   * every event the request emits then carries it as `actorId`.
   */
  actorId?: number
}

/** How a session began: what a person needs to recognise it. */
export interface SessionOrigin {
  /** The first factor: a password, an OpenID provider, a passkey (passwordless) or a code mailed to the address (sign-in by email). */
  method: 'password' | 'provider' | 'passkey' | 'email'
  /** The provider's name, for `provider`. */
  provider?: string
  /**
   * The second factor that completed the sign-in (`totp`, `email`,
   * `backup_codes`, `passkey`), `trusted_device`, or `user_verification`
   * for a passkey verified with its user's PIN or biometrics (two factors
   * in one: no gate is asked).
   */
  secondFactor?: string
  /** Hashes of the provider's `sub` and `sid`, kept for back-channel logout when the provider has it on. */
  providerSubject?: string
  providerSession?: string
}

/** A first factor as the session will remember it; the second factor joins it later. */
export type FirstFactor = Omit<SessionOrigin, 'secondFactor'>

/**
 * A gate's answer when something stood in for the second factor (a trusted
 * device): its name, which the session remembers, and the fields the
 * sign-in's answer carries besides its tokens (the rotated device token).
 */
export interface SecondFactorPassed {
  passed: string
  answer?: { device_token?: string }
  /** Undoes what standing in spent (the device token's rotation), for a sign-in that then failed. Best effort. */
  giveBack?: () => Promise<void>
}

/** What a sign-in answers: a final token (with a refresh token when enabled) or a two-factor challenge. */
export type SignInResult =
  | { jwt: string, refresh_token?: string, device_token?: string }
  | { two_factor_required: true, jwt: string }

/**
 * The seam where a second factor joins a sign-in (password or provider). It
 * answers a challenge for a user who has two-factor on, or `null`; the
 * challenge starts when the sign-in request did (`call.startedAt`). The
 * built-in gate may also answer that a trusted device stood in for it.
 */
export type SecondFactorGate = (user: unknown, publicUser: PublicUser, call: Call, origin: FirstFactor) => Promise<SignInResult | SecondFactorPassed | null>
