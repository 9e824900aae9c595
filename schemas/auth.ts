import { Type, type Static } from '@sinclair/typebox'
import { Field, Fields, PublicUser, Success } from './common.js'

export const LoginBody = Fields({
  email: Field,
  username: Field,
  login: Field,
  password: Field,
  password_hash: Field,
  /** A trusted device's token (`twoFactor.rememberDevice`); in cookie mode the device cookie carries it. */
  device_token: Field
})
/** `POST /auth` as validated. */
export type LoginFields = Static<typeof LoginBody>

/** In cookie mode (`refresh.cookie`), the session's CSRF token stands where the refresh token would. */
export const CsrfToken = Type.Optional(Type.String({ description: 'Cookie mode: the CSRF token for the requests the refresh cookie authenticates (`X-CSRF-Token`).' }))

/** A trusted device's new token, when it stood in for the second factor or was just trusted (not in cookie mode: the cookie holds it). */
export const DeviceToken = Type.Optional(Type.String({ description: 'The trusted device\'s token for the next sign-in (rotated on each use); in cookie mode it goes into the device cookie instead.' }))

export const LoginReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken,
  device_token: DeviceToken,
  two_factor_required: Type.Optional(Type.Boolean())
})

export const JwtFields = Fields({ JWT: Field })
/** The `JWT` field of validate and revoke, as validated. */
export type JwtField = Static<typeof JwtFields>

/** The protected header of a token jwt-login signed. */
export const TokenHeader = Type.Object({
  alg: Type.String(),
  typ: Type.Optional(Type.String()),
  kid: Type.String()
})
/** A verified token's header, as the validate answer carries it. */
export type TokenHeaderFields = Static<typeof TokenHeader>

/** The claims of a token jwt-login signed: described in full, so answers are serialised by the schema. */
export const TokenPayload = Type.Object({
  sub: Type.String(),
  iat: Type.Integer(),
  nbf: Type.Optional(Type.Integer()),
  exp: Type.Integer(),
  jti: Type.String(),
  iss: Type.String(),
  aud: Type.String(),
  typ: Type.String(),
  sid: Type.String(),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
  username: Type.Optional(Type.String()),
  display_name: Type.Optional(Type.String()),
  roles: Type.Optional(Type.Array(Type.String())),
  /** When and how the user last authenticated (RFC 8176 `amr` values). */
  auth_time: Type.Optional(Type.Integer()),
  amr: Type.Optional(Type.Array(Type.String())),
  /** An impersonation token's actor (RFC 8693 §4.1): the id of the user acting, as a string. */
  act: Type.Optional(Type.Object({ sub: Type.String() }))
})

/** A validated token as answered: the token, its decoded parts, and the seconds it has left. */
export const ValidatedToken = Type.Object({
  token: Type.String(),
  header: TokenHeader,
  payload: TokenPayload,
  expire_in: Type.Integer()
})

export const ValidateReply = Success({
  user: PublicUser,
  /** The user's roles, beside the user as Simple JWT Login 4.x answers. */
  roles: Type.Array(Type.String()),
  /**
   * A list of one, as Simple JWT Login 3.x answers; one object, as 4.0
   * answers, with `validate.jwtAsObject`. One schema of no fixed type
   * (Swagger 2 has no `anyOf`), documented by its description.
   */
  jwt: Type.Unsafe<Array<Static<typeof ValidatedToken>> | Static<typeof ValidatedToken>>(Type.Any({
    description: 'The token read: `[{ token, header, payload, expire_in }]` (a list of one, as Simple JWT Login 3.x answers), ' +
      'or with `validate.jwtAsObject` that one object, as Simple JWT Login 4.0 answers. `expire_in`: the seconds the token has left.'
  }))
})

export const RefreshBody = Fields({ refresh_token: Field })
/** `POST /auth/refresh` as validated. */
export type RefreshFields = Static<typeof RefreshBody>

export const RefreshReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken
})

export const MessageReply = Success({ message: Type.String() })

/**
 * `POST /auth/revoke`, as Simple JWT Login (3.x and 4.0) answers it: the
 * message beside `data` too, and the revoked JWT in `data.jwt` (absent when
 * the refresh cookie ended the session).
 */
export const RevokeReply = Type.Object({
  success: Type.Literal(true),
  message: Type.String(),
  data: Type.Object({ message: Type.String(), jwt: Type.Optional(Type.Array(Type.String())) })
})
