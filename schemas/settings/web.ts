// The settings groups of the web around the routes: OpenID providers, CORS, languages.
import { Type, type Static } from '@sinclair/typebox'
import { DurationOr, Flag, Group, HttpUrl, LANGUAGE_TAG_PATTERN } from './parts.js'

export const OAuthPresetSchema = Type.Union([
  Type.Literal('google'), Type.Literal('auth0'), Type.Literal('microsoft'), Type.Literal('apple'), Type.Literal('generic'),
  Type.Literal('github'), Type.Literal('facebook'), Type.Literal('discord'), Type.Literal('oauth2')
])
export type OAuthPreset = Static<typeof OAuthPresetSchema>

/** One identity provider for `/oauth/token`. */
export const OAuthProviderSchema = Type.Object({
  enabled: Flag(false),
  /**
   * OpenID Connect: `generic` takes `issuer` (or `endpoints`); google, auth0,
   * microsoft and apple know their issuer. Plain OAuth 2.0 (a user API, no
   * ID token): `github`, `facebook`, `discord`, and `oauth2` with `api` and `profile`.
   */
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
  /** GitHub Enterprise Server's address (`github`): its OAuth endpoints and `/api/v3` instead of github.com's. */
  enterpriseUrl: Type.Optional(HttpUrl),
  /**
   * The endpoints of a plain OAuth 2.0 provider: the token endpoint (the code
   * redeemed), the user API (read with the access token), GitHub's email
   * list, and the authorization endpoint (for clients that build the URL
   * from the settings). `oauth2` needs `token` and `user`; the other OAuth 2.0
   * presets know theirs, and take these only to point elsewhere.
   */
  api: Type.Optional(Type.Object({
    authorization: Type.Optional(HttpUrl),
    token: Type.Optional(HttpUrl),
    user: Type.Optional(HttpUrl),
    emails: Type.Optional(HttpUrl)
  }, { additionalProperties: false })),
  /**
   * Where the user API's answer (`oauth2`) holds each fact, as a path of
   * property names separated by dots. `emailVerified` names a field that is
   * `true` for a verified email, or is `true` itself when the provider
   * returns only addresses it has verified.
   */
  profile: Type.Optional(Type.Object({
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'id' })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'email' })),
    emailVerified: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Literal(true)], { default: 'email_verified' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'name' })),
    display: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'login' }))
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

/** Third-party sign-in, browsers and languages. */
export const WEB_SETTINGS = {
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
  })
}
