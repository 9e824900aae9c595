// The settings groups of the account features: reset, two-factor, passkeys, users.
import { Type } from '@sinclair/typebox'
import { DurationOr, Flag, Group, Limit } from './parts.js'

/** The account features: password reset, two-factor, passkeys, user registration and deletion. */
export const ACCOUNT_SETTINGS = {
  /** Password reset by an emailed one-time code (`POST` and `PUT /user/reset_password`). */
  resetPassword: Group({
    enabled: Flag(false),
    /** "Reset Password Requires Auth Code": both routes need `authCodes.parameter` with one of `authCodes.codes`. */
    requireAuthCode: Flag(false),
    code: Group({
      length: Type.Optional(Type.Integer({ minimum: 6, maximum: 64, default: 8 })),
      /** Distinct characters the code is drawn from; the default leaves out 0/O, 1/I/L. */
      alphabet: Type.Optional(Type.String({ minLength: 10, maxLength: 128, default: 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789' })),
      lifetime: DurationOr('15m'),
      /** Tries (wrong or right) one code allows; after that it is dead. */
      maxTries: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 5 }))
    }),
    password: Group({
      minLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, default: 8 })),
      /** So a huge password cannot exhaust the hasher. */
      maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, default: 1024 }))
    }),
    limits: Group({
      /**
       * Code requests per account (the user the email finds, however spelled),
       * or per address, NFKC lower case, when the email has none. Named
       * `perEmail` for compatibility.
       */
      perEmail: Limit(5, '1h'),
      /** Code requests per client IP. */
      perIp: Limit(20, '1h')
    }),
    mail: Group({
      /** `{{site_name}}` in the templates. */
      siteName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'jwt-login' })),
      /**
       * The mail's own texts, for every language; a part left out comes from
       * the request's language (the `messages` catalogues). Placeholders:
       * {{code}}, {{display_name}}, {{email}}, {{site_name}}, {{expires_in_minutes}}.
       */
      subject: Type.Optional(Type.String({ minLength: 1, maxLength: 998 })),
      text: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
      html: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
      /** Further attempts after a failed send. */
      retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 2 })),
      retryDelay: DurationOr('2s')
    })
  }),

  /** The second step of sign-in (`POST /auth/2fa`); active when the host passes a `twoFactor` option. */
  twoFactor: Group({
    /**
     * The live switch of the two-factor integration. Off: users with a second
     * factor are refused at sign-in (403 / 206) and `/auth/2fa` answers 403 / 105.
     */
    enabled: Flag(true),
    /** Lifetime of the interim token and its challenge; at most 5 minutes. */
    interimLifetime: DurationOr('5m'),
    /** Codes tried on one challenge before it is closed. */
    attemptsPerChallenge: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 5 })),
    /** Failed codes per account across challenges before the account's second step is locked. */
    perAccount: Limit(10, '15m'),
    /** How long an emailed code is valid (the challenge may end first). */
    emailCodeLifetime: DurationOr('10m'),
    /**
     * Trusted devices: after a second factor, the client may ask to trust its
     * device (`remember_device`); a later password sign-in that presents the
     * device token skips the second factor for that user.
     */
    rememberDevice: Group({
      enabled: Flag(false),
      /** How long a device stays trusted; at most 90 days. */
      lifetime: DurationOr('30d'),
      /** Trusted devices one user may hold; beyond it the oldest is forgotten. */
      maxPerUser: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 }))
    })
  }),

  /**
   * Passkeys (WebAuthn): enrolment, passwordless sign-in, a second factor
   * and step-up; active when the host passes a `passkeys` option (its port).
   */
  passkeys: Group({
    /** The passkey routes; off, they answer 403 / 215 and no passkey signs anyone in. */
    enabled: Flag(false),
    /**
     * The relying party id: the site's registrable domain (`example.com`, or
     * `localhost` in development), never a URL or an IP address. Passkeys are
     * bound to it: changing it orphans every passkey made before.
     */
    rpId: Type.Optional(Type.String({ pattern: '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$', default: 'localhost' })),
    /** The name authenticators show beside the account. */
    rpName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'jwt-login' })),
    /**
     * The exact origins of the pages (and `android:apk-key-hash:…` of the
     * apps) that may run a ceremony; at least one when passkeys are on.
     */
    origins: Type.Optional(Type.Array(Type.String({ pattern: '^(https?://[^/?#*]+|android:apk-key-hash:[A-Za-z0-9_-]+)$', maxLength: 2048 }), { default: [], maxItems: 50 })),
    /**
     * Whether the authenticator must verify the user (PIN, biometrics):
     * `required`, `preferred` or `discouraged`. A passkey verified with it
     * counts as two factors; without it, as one.
     */
    userVerification: Type.Optional(Type.String({ pattern: '^(required|preferred|discouraged)$', default: 'preferred' })),
    /** `none` (the default: no attestation asked, nothing more to trust) or `direct`. */
    attestation: Type.Optional(Type.String({ pattern: '^(none|direct)$', default: 'none' })),
    /** When not empty, only authenticators of these models (AAGUIDs) may be enrolled. */
    aaguids: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }), { default: [], maxItems: 500 })),
    /** How long a ceremony's challenge (its options) may be answered; at most 10 minutes. */
    challengeLifetime: DurationOr('5m'),
    /** How recent the sign-in (or step-up) of the token must be to add or delete a passkey. */
    recentAuth: DurationOr('10m'),
    /** Passkeys one user may hold. */
    maxPerUser: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    /**
     * A signature counter that did not go up (a cloned authenticator, or a
     * sync quirk) emits `passkey.counter_regressed`; with this on, the
     * assertion is refused as well. Counters that stay 0 (synced passkeys)
     * are never a regression.
     */
    refuseCounterRegression: Flag(false)
  }),

  /** `POST /users` (register) and `DELETE /users` (delete one's own account), as Simple JWT Login offers them. */
  users: Group({
    register: Group({
      /** Off: `POST /users` answers 403 / 31. */
      enabled: Flag(false),
      /** "Register requires auth code": `authCodes.parameter` with one of `authCodes.codes`. */
      requireAuthCode: Flag(false),
      /** When not empty, only emails of these domains may register (exact, case-insensitive). */
      allowedDomains: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$' }), { default: [], maxItems: 100 })),
      /** The role of a registered user (an auth code's own `role` overrides it). */
      defaultRole: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'subscriber' })),
      /** Answer the new user's JWT (and refresh token when on): a sign-in of the new user. */
      signIn: Flag(false),
      /** Registrations per client IP, successful or not. */
      perIp: Limit(10, '1h'),
      /**
       * Mail the new user a code that verifies the email (`POST /account/email/verify`).
       * Every registered user starts unverified either way. Needs the `mailer`
       * option and the adapter's `setEmailVerified`.
       */
      verifyEmail: Flag(false)
    }),
    delete: Group({
      /** Off: `DELETE /users` answers 403 / 39. */
      enabled: Flag(false),
      /** "Delete requires auth code": `authCodes.parameter` with one of `authCodes.codes`. */
      requireAuthCode: Flag(false),
      /** How recent the sign-in (or step-up) of the token must be; older answers 401 / 220. */
      recentAuth: DurationOr('10m')
    })
  })
}
