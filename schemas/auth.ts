import { Type } from '@sinclair/typebox'
import { Field, Fields, PublicUser, Success } from './common.js'

export const LoginBody = Fields({
  email: Field,
  username: Field,
  login: Field,
  password: Field,
  password_hash: Field
})

export const LoginReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  two_factor_required: Type.Optional(Type.Boolean())
})

export const JwtFields = Fields({ JWT: Field })

export const ValidateReply = Success({
  user: PublicUser,
  jwt: Type.Array(Type.Object({
    token: Type.String(),
    header: Type.Object({}, { additionalProperties: true }),
    payload: Type.Object({}, { additionalProperties: true }),
    expire_in: Type.Integer()
  }))
})

export const RefreshBody = Fields({ refresh_token: Field })

export const RefreshReply = Success({
  jwt: Type.String(),
  refresh_token: Type.String()
})

export const MessageReply = Success({ message: Type.String() })
