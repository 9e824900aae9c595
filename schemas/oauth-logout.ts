import { Type, type TSchema } from '@sinclair/typebox'
import { ErrorData, Fields } from './common.js'

/** The longest logout token taken: as long as the longest ID token. */
export const LOGOUT_TOKEN_MAX_LENGTH = 16384

/** `POST /oauth/{provider}/backchannel-logout`: the provider's name, as the settings spell it. */
export const LogoutParams = Type.Object({
  provider: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })
})

/** The provider's request (form-encoded, as §2.5 sends it, or JSON). */
export const LogoutFields = Fields({
  logout_token: Type.Optional(Type.String({ maxLength: LOGOUT_TOKEN_MAX_LENGTH }))
})

/**
 * The 400 of the route, one object for both of its shapes (Swagger 2 has no
 * `anyOf`): the refusal of §2.8 (`error`, `error_description`), or, for a
 * multipart body that cannot be read (with `multipart` on), the plugin's
 * error envelope (`success`, `data`) with `malformedCode`, described by
 * `malformedLine`.
 */
export const LogoutRefusedReply = (malformedCode: number, malformedLine: string): TSchema => Type.Object({
  error: Type.Optional(Type.Literal('invalid_request')),
  error_description: Type.Optional(Type.String()),
  success: Type.Optional(Type.Literal(false)),
  data: Type.Optional(ErrorData([malformedCode]))
}, {
  description: 'The logout token or the request is refused, and nothing was ended: `{ "error": "invalid_request", "error_description": "…" }` ' +
    '(OpenID Connect Back-Channel Logout 1.0, section 2.8). Only a multipart body that cannot be read (with `multipart` on) answers the error envelope:\n' +
    malformedLine
})
