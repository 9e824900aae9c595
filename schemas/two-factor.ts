import { Type, type Static } from '@sinclair/typebox'
import { CsrfToken, DeviceToken } from './auth.js'
import { Field, Fields, Success } from './common.js'
import { AuthenticationResponse } from './passkeys.js'

/** `POST /auth/2fa`: the interim token (or `Authorization: Bearer`) and the code. */
export const TwoFactorBody = Fields({
  JWT: Field,
  code: Field,
  /** Instead of `code`: a passkey's assertion for the options of `/auth/2fa/passkey/options` (JSON bodies). */
  passkey: Type.Optional(AuthenticationResponse),
  /** Trust this device for the second factor (`twoFactor.rememberDevice`): `true` (JSON) or `"true"` (a form). */
  // one of four values of two types: documented by its enum (Swagger 2 has no anyOf), checked by the route
  remember_device: Type.Optional(Type.Any({ enum: [true, false, 'true', 'false'] }))
}, { code: '123456' })
/** `POST /auth/2fa` as validated. */
export type TwoFactorFields = Static<typeof TwoFactorBody>

/** The same answer as a password login without two-factor. */
export const TwoFactorReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken,
  device_token: DeviceToken
})
