// The settings group of a user's own account: email verification, password and email change, the second factor's enrolment.
import { Type } from '@sinclair/typebox'
import { DurationOr, Flag, Group, Limit } from './parts.js'

/** The account routes (`/account…`), each part behind its own switch too. */
export const SELF_SERVICE_SETTINGS = {
  account: Group({
    /** The account routes; off, they answer 403 / 233 (email verification stays on while `users.register.verifyEmail` or `authentication.requireVerifiedEmail` needs it). */
    enabled: Flag(false),
    /**
     * How recent the sign-in (or step-up) of the token must be to change the
     * email, to change the password without the current one, and to enrol,
     * change or remove the second factor; older answers 401 / 220. At most 1 day.
     */
    recentAuth: DurationOr('5m'),
    /** The codes mailed to verify an address (and to confirm a new one). */
    code: Group({
      length: Type.Optional(Type.Integer({ minimum: 6, maximum: 64, default: 8 })),
      lifetime: DurationOr('30m'),
      /** Tries (wrong or right) one code allows; after that it is dead. */
      maxTries: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 }))
    }),
    limits: Group({
      /** Codes mailed per account (verification and email change together). */
      perAccount: Limit(5, '1h'),
      /** Codes asked for per client IP. */
      perIp: Limit(20, '1h')
    }),
    /** `PUT /account/password`. */
    password: Group({
      enabled: Flag(true),
      /** Mail the user a notice that the password changed. */
      notify: Flag(true)
    }),
    /** `POST /account/email`, `/confirm` and `/revert`. */
    email: Group({
      enabled: Flag(true),
      /** How long the old address may put itself back (`/account/email/revert`); at most 30 days. */
      revertLifetime: DurationOr('7d')
    }),
    /**
     * `/account/identities`: the provider accounts linked to the user, linked
     * by a provider's code, unlinked. Needs a user adapter that keeps links
     * (`findByIdentity` and the three others).
     */
    identities: Group({
      enabled: Flag(true)
    }),
    /** `/account/2fa…`: TOTP enrolment, backup codes, the primary method, turning it off. Needs the `twoFactor` option. */
    twoFactor: Group({
      enabled: Flag(true)
    })
  })
}
