import { Field, Fields, Success } from './common.js'
import { Type } from '@sinclair/typebox'

export const ResetRequestBody = Fields({ email: Field })

export const ResetCompleteBody = Fields({
  email: Field,
  code: Field,
  new_password: Field
})

export const ResetReply = Success({ message: Type.String() })
