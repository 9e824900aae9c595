// The signing settings: the algorithms, the keys, the tokens group.
import { Type, type Static } from '@sinclair/typebox'
import { DurationOr, Flag, Group } from './parts.js'

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

/** The tokens group: algorithm, keys, issuer and audience, lifetimes, claims. */
export const TokensSchema = Type.Object({
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
}, { additionalProperties: false })
