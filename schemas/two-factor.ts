import { Type, type Static } from '@sinclair/typebox'
import { CsrfToken, DeviceToken } from './auth.js'
import { Field, Fields, Success } from './common.js'

/** `POST /auth/2fa`: the interim token (or `Authorization: Bearer`) and the code. */
export const TwoFactorBody = Fields({
  JWT: Field,
  code: Field,
  /** Trust this device for the second factor (`twoFactor.rememberDevice`): `true` (JSON) or `"true"` (a form). */
  remember_device: Type.Optional(Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')]))
})
/** `POST /auth/2fa` as validated. */
export type TwoFactorFields = Static<typeof TwoFactorBody>

/** The same answer as a password login without two-factor. */
export const TwoFactorReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken,
  device_token: DeviceToken
})
