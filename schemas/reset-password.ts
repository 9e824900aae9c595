import { Field, Fields, Success } from './common.js'
import { Type, type Static } from '@sinclair/typebox'

export const ResetRequestBody = Fields({ email: Field })
/** `POST /user/reset_password` as validated. */
export type ResetRequestFields = Static<typeof ResetRequestBody>

export const ResetCompleteBody = Fields({
  email: Field,
  code: Field,
  new_password: Field
})
/** `PUT /user/reset_password` as validated. */
export type ResetCompleteFields = Static<typeof ResetCompleteBody>

export const ResetReply = Success({ message: Type.String() })
