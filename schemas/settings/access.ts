// The settings groups of access and sessions: authentication, auth codes, login, bearer, refresh, validate, revoke, limits, password hashing, sessions.
import { Type } from '@sinclair/typebox'
import { DurationOr, DurationSchema, Flag, Group, Limit } from './parts.js'

const AuthCode = Type.Object({
  code: Type.String({ minLength: 1 }),
  /** The role of a user registered with this code at `POST /users` (Simple JWT Login's auth code role); else `users.register.defaultRole`. */
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** ISO date-time after which the code is refused. */
  expiresAt: Type.Optional(Type.String({ format: 'date-time' }))
}, { additionalProperties: false })

/** Who may use the token routes, and how tokens travel. */
export const ACCESS_SETTINGS = {
  /** Authentication on or off: `/auth`, `/auth/2fa`, validate, refresh, revoke. */
  authentication: Group({
    enabled: Flag(true),
    /**
     * Refuse the sign-in of a user whose email is known to be unverified
     * (`email_verified: false`) with 403 / 231, which tells the client to
     * verify. A user the adapter says nothing about is not refused.
     */
    requireVerifiedEmail: Flag(false)
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
    enabled: Flag(true),
    /**
     * Also take `Authorization: <jwt>`, the token without the `Bearer `
     * scheme, as Simple JWT Login does (on the plugin's routes and in the
     * `authenticate` hook). Only one whole JWT is taken so; anything else
     * is refused as before.
     */
    allowBareToken: Flag(false)
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
    enabled: Flag(true),
    /**
     * `data.jwt` of a validate answer as Simple JWT Login 4.0 answers it, one
     * object (`{ token, header, payload, expire_in }`), instead of a list of
     * one, as 3.x answers it (the default).
     */
    jwtAsObject: Flag(false)
  }),

  revoke: Group({
    enabled: Flag(true)
  })
}

/** The limits, the password hashing and the sessions. */
export const SESSION_SETTINGS = {
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
    clockSkew: Type.Optional(Type.Union([Type.Literal(0), ...DurationSchema.anyOf], { default: 0 })),
    /**
     * With a user adapter that has `passwordFingerprint`: end a session at
     * the next check of its access token (validate, the routes, the host's
     * hook) once its user's password changed outside jwt-login, not only at
     * its next refresh. Access tokens then carry a keyed hash of the
     * fingerprint (`pfp`), and each check asks the adapter once more.
     */
    checkPasswordOnValidate: Flag(false)
  })
}
