import { Type, type Static } from '@sinclair/typebox'

/** The pattern of a duration string; resolution tells a duration from other settings by it. */
export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d|w|y|msecs?|milliseconds?|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|years?)?\\s*$'

/** A duration: seconds as a number, or an `ms`-style string such as `'15m'`, `'14d'`. */
export const DurationSchema = Type.Union([
  Type.Number({ exclusiveMinimum: 0 }),
  Type.String({ pattern: DURATION_PATTERN })
])
export type Duration = Static<typeof DurationSchema>
const DurationOr = (fallback: string) => Type.Optional(Type.Union(DurationSchema.anyOf, { default: fallback }))
/** A language tag as catalogues are named: `de`, `pt-BR`. */
const LANGUAGE_TAG_PATTERN = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'
const Flag = (fallback: boolean) => Type.Optional(Type.Boolean({ default: fallback }))
const Group = <T extends Parameters<typeof Type.Object>[0]>(properties: T) =>
  Type.Optional(Type.Object(properties, { additionalProperties: false, default: {} }))

const AuthCode = Type.Object({
  code: Type.String({ minLength: 1 }),
  /** The role of a user registered with this code at `POST /users` (Simple JWT Login's auth code role); else `users.register.defaultRole`. */
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** ISO date-time after which the code is refused. */
  expiresAt: Type.Optional(Type.String({ format: 'date-time' }))
}, { additionalProperties: false })

const Limit = (max: number, window: string) => Group({
  max: Type.Optional(Type.Integer({ minimum: 1, default: max })),
  window: DurationOr(window)
})

export const AlgorithmSchema = Type.Union([
  Type.Literal('HS256'), Type.Literal('HS384'), Type.Literal('HS512'),
  Type.Literal('RS256'), Type.Literal('RS384'), Type.Literal('RS512'),
  Type.Literal('PS256'),
  Type.Literal('ES256'), Type.Literal('ES384'),
  Type.Literal('EdDSA')
])
export type Algorithm = Static<typeof AlgorithmSchema>

export const KeySchema = Type.Object({
  /** Key id, written into the `kid` header and used to pick the verifying key. */
  kid: Type.String({ minLength: 1, maxLength: 128 }),
  /** HMAC secret (HS*), at least 32 bytes. */
  secret: Type.Optional(Type.String({ minLength: 1 })),
  /** PEM private key (asymmetric algorithms); needed on the first key only. */
  privateKey: Type.Optional(Type.String({ minLength: 1 })),
  /** PEM public key (asymmetric algorithms); derived from the private key when absent. */
  publicKey: Type.Optional(Type.String({ minLength: 1 }))
}, { additionalProperties: false })

const HttpUrl = Type.String({ pattern: '^https?://', maxLength: 2048 })

export const OAuthPresetSchema = Type.Union([
  Type.Literal('google'), Type.Literal('auth0'), Type.Literal('microsoft'), Type.Literal('apple'), Type.Literal('generic')
])
export type OAuthPreset = Static<typeof OAuthPresetSchema>

/** One identity provider for `/oauth/token`. */
export const OAuthProviderSchema = Type.Object({
  enabled: Flag(false),
  /** `generic` takes `issuer` (or `endpoints`); the others know their issuer. */
  preset: Type.Optional(Type.Union(OAuthPresetSchema.anyOf, { default: 'generic' })),
  /** Issuer URL, discovered through `/.well-known/openid-configuration` (generic). */
  issuer: Type.Optional(HttpUrl),
  /** Auth0 tenant domain, such as `example.eu.auth0.com`. */
  domain: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.-]*$', maxLength: 253 })),
  /** Microsoft Entra tenant id or domain (a single tenant). */
  tenant: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.-]*$', maxLength: 253 })),
  /** Explicit endpoints instead of discovery (generic). */
  endpoints: Type.Optional(Type.Object({
    issuer: HttpUrl,
    token: HttpUrl,
    jwks: HttpUrl,
    userinfo: Type.Optional(HttpUrl),
    authorization: Type.Optional(HttpUrl)
  }, { additionalProperties: false })),
  clientId: Type.String({ minLength: 1, maxLength: 512 }),
  clientSecret: Type.Optional(Type.String({ minLength: 1 })),
  /** How the client authenticates at the token endpoint. */
  clientAuthMethod: Type.Optional(Type.Union([
    Type.Literal('client_secret_basic'), Type.Literal('client_secret_post'), Type.Literal('none')
  ], { default: 'client_secret_basic' })),
  /** Redirect URIs registered at the provider; the first is the default. Empty: no code flow. */
  redirectUris: Type.Optional(Type.Array(HttpUrl, { default: [] })),
  /** Accept an ID token the browser obtained from the provider. */
  acceptIdToken: Flag(false),
  /**
   * An ID token must carry the SHA-256 of a nonce this server issued
   * (`GET /oauth/nonce`), and the nonce must be presented beside it.
   */
  requireNonce: Flag(false),
  /** Match a user by an email the provider does not mark as verified. */
  allowUnverifiedEmail: Flag(false),
  /** Create a user when no user has the email. */
  autoRegister: Flag(false),
  /** The role of users created by auto-registration. */
  defaultRole: Type.Optional(Type.String({ minLength: 1, default: 'subscriber' })),
  /** Time for all calls to the provider during one sign-in. */
  timeout: DurationOr('5s'),
  /**
   * OpenID Back-Channel Logout: the provider's logout tokens, posted to
   * `/oauth/{provider}/backchannel-logout`, end the local sessions started
   * through that provider session (`sid`) or provider user (`sub`).
   */
  backchannelLogout: Flag(false)
}, { additionalProperties: false })
export type OAuthProviderInput = Static<typeof OAuthProviderSchema>

/**
 * Every jwt-login setting, grouped by concern, with its default. The host's
 * admin screen can supply these through an async source (see `settingsSource`).
 */
export const SettingsSchema = Type.Object({
  /** Authentication on or off: `/auth`, `/auth/2fa`, validate, refresh, revoke. */
  authentication: Group({
    enabled: Flag(true)
  }),

  authCodes: Group({
    /** At most 100: every gated request compares the presented code with each. */
    codes: Type.Optional(Type.Array(AuthCode, { default: [], maxItems: 100 })),
    /** Name of the parameter that carries the code on the password routes. */
    parameter: Type.Optional(Type.String({ minLength: 1, default: 'AUTH_KEY' })),
    /** Name of the parameter on `/oauth/token`. */
    oauthParameter: Type.Optional(Type.String({ minLength: 1, default: 'AUTH_CODE' })),
    requireFor: Group({
      /** "Authentication Requires Auth Code": `/auth`, and `/oauth/token` unless `oauth` says otherwise. */
      auth: Flag(false),
      validate: Flag(false),
      refresh: Flag(false),
      revoke: Flag(false),
      /** `/oauth/token` (`oauthParameter`); when not given, the value of `auth`. */
      oauth: Type.Optional(Type.Boolean())
    })
  }),

  login: Group({
    /**
     * Accept `password_hash` instead of `password`. This is pass-the-hash:
     * whoever holds a stored hash can log in. Off by default.
     */
    allowPasswordHash: Flag(false)
  }),

  /** Read tokens from `Authorization: Bearer` on the plugin's routes. */
  bearer: Group({
    enabled: Flag(true)
  }),

  refresh: Group({
    enabled: Flag(false),
    lifetime: DurationOr('14d'),
    /**
     * For how long after a rotation the previous refresh token may be
     * presented again and get the same successor (a client whose answer was
     * lost retries). Later, a reuse ends the session. At most 5 minutes; `0` turns it off.
     */
    reuseInterval: Type.Optional(Type.Union([Type.Literal(0), ...DurationSchema.anyOf], { default: '30s' })),
    /**
     * For browser apps: the refresh token travels in an httpOnly `__Host-`
     * cookie instead of the answer body, and the requests that use the
     * cookie carry a CSRF token (see docs/browser-apps.md).
     */
    cookie: Group({
      enabled: Flag(false),
      /** `strict`: the cookie is never sent from another site; `lax` also on top-level navigations. */
      sameSite: Type.Optional(Type.Union([Type.Literal('strict'), Type.Literal('lax')], { default: 'strict' }))
    })
  }),

  validate: Group({
    enabled: Flag(true)
  }),

  revoke: Group({
    enabled: Flag(true)
  }),

  tokens: Type.Object({
    algorithm: Type.Optional(Type.Union(AlgorithmSchema.anyOf, { default: 'HS256' })),
    /**
     * The first key signs; every key verifies, so keys rotate without logging
     * anyone out. At most 10: each short code is hashed and checked under every key.
     */
    keys: Type.Array(KeySchema, { minItems: 1, maxItems: 10 }),
    issuer: Type.Optional(Type.String({ minLength: 1, default: 'jwt-login' })),
    audience: Type.Optional(Type.String({ minLength: 1, default: 'jwt-login' })),
    /** Lifetime of an access token. */
    lifetime: DurationOr('15m'),
    /** Allowed clock skew when checking `exp`, `nbf` and `iat`. */
    leeway: DurationOr('5s'),
    /** Which user fields become claims. `sub` (the user id) is always there. */
    claims: Group({
      email: Flag(true),
      login: Flag(true),
      displayName: Flag(false),
      roles: Flag(true)
    })
  }, { additionalProperties: false }),

  limits: Group({
    /** Failed logins per account (whichever identifier names it; an unknown identifier counts on its own). */
    loginPerAccount: Limit(10, '15m'),
    /** Failed logins per client IP. */
    loginPerIp: Limit(50, '15m'),
    /** Requests per client IP on every route of the plugin (@fastify/rate-limit on the state store). */
    requestsPerIp: Limit(300, '1m'),
    /**
     * Successful sign-ins per account (password or provider; each starts a
     * session or a two-factor challenge), so one account cannot fill the
     * state store: over it, 429 / 200.
     */
    signInsPerAccount: Limit(100, '1h')
  }),

  /**
   * Password hashing (argon2 on libuv's thread pool, which shares the cores
   * with the event loop): at most `concurrency` hashes at once, the others
   * wait in turn, sign-ins in one queue and new passwords (registrations,
   * reset completions) in another, the two taking turns; a sign-in that
   * finds `maxQueue` sign-ins waiting is refused at once (503 / 228 with
   * `Retry-After`), so a login storm cannot slow every authenticated
   * request, and a registration that finds `maxRegistrationQueue` new
   * passwords waiting likewise. Read at each hash: a reload takes effect at once.
   */
  passwordHashing: Group({
    /** Hashes at once; `0`: one fewer than the cores (`os.availableParallelism()`), at least 1. */
    concurrency: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024, default: 0 })),
    /** Sign-ins that may wait for a hash; `0`: 48 per hash at once, about 2.4 s of waiting at most. */
    maxQueue: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
    /** New passwords (registrations, reset completions) that may wait, in their own queue; a registration beyond it is refused, a reset completion waits. `0`: 48 per hash at once. */
    maxRegistrationQueue: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }))
  }),

  /** The sessions of each user. */
  sessions: Group({
    /**
     * The session routes: `GET /sessions` (a user's own sessions and trusted
     * devices), `DELETE /sessions/{id}`, `DELETE /sessions`, `DELETE /devices/{id}`.
     * The index, its bound and the host API work either way.
     */
    enabled: Flag(false),
    /**
     * Live sessions one user may hold (each sign-in starts one); beyond it
     * the oldest ends (`session.evicted` event).
     */
    maxPerUser: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
    /**
     * How far the clocks of the instances sharing a store may differ. A
     * password change ends the sessions started before it by this much more,
     * so a sign-in that checked the old password on a slower clock ends too.
     * `0` (the default) for one instance or clocks kept in step.
     */
    clockSkew: Type.Optional(Type.Union([Type.Literal(0), ...DurationSchema.anyOf], { default: 0 }))
  }),

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
      perIp: Limit(10, '1h')
    }),
    delete: Group({
      /** Off: `DELETE /users` answers 403 / 39. */
      enabled: Flag(false),
      /** "Delete requires auth code": `authCodes.parameter` with one of `authCodes.codes`. */
      requireAuthCode: Flag(false),
      /** How recent the sign-in (or step-up) of the token must be; older answers 401 / 220. */
      recentAuth: DurationOr('10m')
    })
  }),

  /** Third-party sign-in (`/oauth/token`): the providers, keyed by the `provider` value clients send. */
  oauth: Group({
    providers: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), OAuthProviderSchema, { default: {}, additionalProperties: false }))
  }),

  /** Cross-origin calls from browser apps (@fastify/cors in the plugin's scope only). */
  cors: Group({
    enabled: Flag(false),
    /** Exact origins (`https://app.example.com`), no wildcard: the only pages that may call the routes. At most 50. */
    origins: Type.Optional(Type.Array(Type.String({ pattern: '^https?://[^/?#*]+$', maxLength: 2048 }), { default: [], maxItems: 50 })),
    /** Whether pages may send cookies (needed by `refresh.cookie` across origins). */
    credentials: Flag(false),
    /** How long a browser may cache a preflight answer. */
    maxAge: DurationOr('10m')
  }),

  /**
   * The language of error messages, success messages and mails, chosen per
   * request from `Accept-Language`. Codes, statuses and the envelope never
   * change with it.
   */
  locale: Group({
    /** The language when the request names none the plugin may answer in (or sends no `Accept-Language`). */
    default: Type.Optional(Type.String({ pattern: LANGUAGE_TAG_PATTERN, default: 'en' })),
    /** The languages a request may get; empty: every language the plugin has. One language fixes it. */
    allowed: Type.Optional(Type.Array(Type.String({ pattern: LANGUAGE_TAG_PATTERN }), { default: [], maxItems: 50, uniqueItems: true }))
  }),

  /** Largest accepted request body in bytes. */
  bodyLimit: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1048576, default: 16384 }))
}, { additionalProperties: false })

export type SettingsInput = Static<typeof SettingsSchema>
