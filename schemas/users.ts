import { Type } from '@sinclair/typebox'
import { Field, Fields, PublicUser, Success } from './common.js'
import { CsrfToken } from './auth.js'

/**
 * `POST /users`, as Simple JWT Login's register and its SDK's
 * `RegisterUserInterface` send it. The SDK's other WordPress profile fields
 * (`user_url`, `first_name`, `user_meta`, …) are accepted and ignored.
 */
export const RegisterUserBody = Fields({
  email: Field,
  password: Field,
  /** The login name; the email when absent. */
  user_login: Field,
  /** The name shown; the login when absent. */
  display_name: Field
})

/**
 * The new user, in Simple JWT Login's register answer (`id`, 4.0's user
 * fields without their `user_` prefix, `roles`, `jwt`, and the `user`
 * object of its 3.x answer), with the public fields only.
 */
export const RegisterUserReply = Success({
  message: Type.String(),
  id: Type.Integer(),
  /** The login, email and name, as Simple JWT Login 4.0 answers them beside `id`. */
  login: Type.String(),
  email: Type.String(),
  display_name: Type.String(),
  user: PublicUser,
  roles: Type.Array(Type.String()),
  /** With `users.register.signIn`: the new user's JWT, as `POST /auth` answers it. */
  jwt: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken,
  /** When the host's second-factor gate asks for one: `jwt` is then an interim token for `POST /auth/2fa`. */
  two_factor_required: Type.Optional(Type.Boolean())
})

/** `DELETE /users`: the token's own user is deleted. */
export const DeleteUserReply = Success({
  message: Type.String(),
  id: Type.Integer()
})
