import { Type } from '@sinclair/typebox'

/** A client-supplied string field: bounded, so a huge value is a 400 before it reaches a hasher. */
export const Field = Type.Optional(Type.String({ maxLength: 4096 }))

/**
 * Bodies may carry fields the route does not name (the configurable auth-code parameter, WordPress extras).
 * `example` is the body the OpenAPI document offers to send (JSON Schema's `examples`): an annotation, never validated.
 */
export const Fields = <T extends Parameters<typeof Type.Object>[0]>(properties: T, example?: Record<string, unknown>) =>
  Type.Object(properties, { additionalProperties: true, ...(example === undefined ? {} : { examples: [example] }) })

/**
 * The error envelope's `data`: the message, and the numeric code under both
 * names clients read (`errorCode`, Simple JWT Login 3.x; `error_code`, 4.0),
 * always the same number.
 */
export const ErrorData = (errorCodes: number[]) => Type.Object({
  message: Type.String(),
  errorCode: Type.Integer({ enum: errorCodes }),
  error_code: Type.Integer({ enum: errorCodes, description: 'The same number as `errorCode`, under the name Simple JWT Login 4.0 gives it.' })
})

/** The error envelope of one status: the `errorCode` values it may carry, and what each means. */
export const ErrorEnvelope = (errorCodes: number[], description: string) => Type.Object({
  success: Type.Literal(false),
  data: ErrorData(errorCodes)
}, { description })

export const PublicUser = Type.Object({
  ID: Type.Integer(),
  user_login: Type.String(),
  user_email: Type.String(),
  display_name: Type.String(),
  roles: Type.Array(Type.String()),
  /** Whether the user proved they receive mail at `user_email`; absent when the host does not track it. */
  email_verified: Type.Optional(Type.Boolean())
})

export const Success = <T extends Parameters<typeof Type.Object>[0]>(data: T) => Type.Object({
  success: Type.Literal(true),
  data: Type.Object(data)
})

/** `GET /jwks`: the public keys (RFC 7517); the members each key type uses. */
export const JwksReply = Type.Object({
  keys: Type.Array(Type.Object({
    kty: Type.String(),
    kid: Type.String(),
    alg: Type.String(),
    use: Type.String(),
    n: Type.Optional(Type.String()),
    e: Type.Optional(Type.String()),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String())
  }))
})
