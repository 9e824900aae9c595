import type { Mailer } from '../mail/types.js'

/**
 * The second factors jwt-login checks. Backup codes are also accepted as a
 * fallback for the others, and so is a passkey of the user (when passkeys
 * are on): `passkey` as the primary method asks for nothing else.
 */
export type TwoFactorMethod = 'totp' | 'email' | 'backup_codes' | 'passkey'

/**
 * The two-factor port: the host says, per user, whether two-factor is on and
 * which method is primary, and keeps each user's two-factor secrets. The
 * plugin's providers (TOTP, email code, backup codes) do the rest.
 *
 * Every method is Promise-only. Throwing means the host's storage is
 * unavailable: the request answers 503 / errorCode 201.
 */
export interface TwoFactorPort<U = unknown> {
  /**
   * The user's primary method when two-factor is on, or `null` when it is off
   * (the user then signs in with the password alone). `user` is the record
   * the user adapter returned.
   */
  methodOf (userId: number, user: U): Promise<TwoFactorMethod | null>
  /** The user's confirmed TOTP secret (base32), or `null` when there is none. */
  getTotpSecret (userId: number): Promise<string | null>
  /** Stores the user's TOTP secret once enrollment is confirmed (replaces an earlier one). */
  setTotpSecret (userId: number, secret: string): Promise<void>
  /**
   * Spends the user's backup code with this hash and resolves `true` only
   * when it was unused. Must be atomic on the host's side: of two calls
   * with one code, one gets `true`.
   *
   * `claim` names the sign-in attempt (its two-factor challenge). Record it
   * with the spent code, and answer `true` to a later call with the same
   * hash and the same claim: that is the retry of a call whose answer was
   * lost (the host committed, then its connection dropped and it threw),
   * and it must not cost the user the code. With SQL:
   * `UPDATE backup_codes SET used_by = $3 WHERE user_id = $1 AND code_hash = $2
   * AND (used_by IS NULL OR used_by = $3)` and its row count. Any other call
   * with a spent code answers `false`. Resolve `false`, never throw, for a
   * hash the user does not hold; throw only when the outcome is unknown
   * (503 / 201; the challenge stays open for the retry). A port that ignores
   * `claim` fails the conformance suite's retry rule but stays safe: after
   * such a failure the code is lost, never a wrong one let in.
   */
  consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean>
  /** Replaces every backup code hash of the user (after regenerating them). */
  replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void>
  /**
   * Sets the user's primary method, turning two-factor on, or off with
   * `null` (then `methodOf` answers `null`). Needed for the account's
   * two-factor routes (`account.twoFactor.enabled`).
   */
  setMethod? (userId: number, method: TwoFactorMethod | null): Promise<void>
  /** How many unused backup codes the user holds (shown on `GET /account`; without it, new codes are given at enrolment only when asked). */
  countBackupCodes? (userId: number): Promise<number>
}

/** The `twoFactor` option of the plugin. Without it `/auth/2fa` answers 403 / 105 and nobody gets a challenge. */
export interface TwoFactorOptions<U = any> {
  port: TwoFactorPort<U>
  /** Sends email codes; required when any user has the `email` method. */
  mailer?: Mailer
  /** The name authenticator apps show next to the account (default `jwt-login`). */
  issuer?: string
}

/** Enrollment helpers for the host, on `fastify.jwtLogin.twoFactor`. */
export interface TwoFactorEnrollment {
  /** A new TOTP secret and its `otpauth://` URI (for a QR code). Nothing is stored until `confirmTotp`. */
  createTotpSecret (label: string): { secret: string, uri: string }
  /**
   * Checks the first code of a new secret and, when it is right, stores the
   * secret through the port. The code is spent: it will not sign anyone in.
   */
  confirmTotp (userId: number, secret: string, code: string): Promise<boolean>
  /** Replaces the user's backup codes with 10 new ones and returns them, once, for the user to keep. */
  regenerateBackupCodes (userId: number): Promise<string[]>
}
