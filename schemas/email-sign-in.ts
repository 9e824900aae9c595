import type { Static } from '@sinclair/typebox'
import { Type } from '@sinclair/typebox'
import { Field, Fields, Success } from './common.js'

export const EmailSignInBody = Fields({ email: Field })
/** `POST /auth/email` as validated. */
export type EmailSignInFields = Static<typeof EmailSignInBody>

export const EmailSignInVerifyBody = Fields({
  email: Field,
  code: Field
})
/** `POST /auth/email/verify` as validated. */
export type EmailSignInVerifyFields = Static<typeof EmailSignInVerifyBody>

export const EmailSignInReply = Success({ message: Type.String() })
