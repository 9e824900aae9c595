import type { FastifyInstance } from 'fastify'
import { ResetCompleteBody, ResetReply, ResetRequestBody } from '../../schemas/reset-password.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import { stringField, type Fields } from '../http/fields.js'
import { auditResetGate, completePasswordReset, requestPasswordReset, type PasswordReset } from '../reset-password/flow.js'

/** Reset works whether sign-in is on or not: it has its own switch. */
const gate = (step: 'request' | 'complete'): RouteGate =>
  ({ authentication: false, feature: 'resetPassword', authCode: 'resetPassword', authCodeFrom: 'body-or-query', audit: auditResetGate(step), errors: ERRORS[step] })

const ERRORS = {
  request: ['ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID'],
  complete: [
    'ERR_JWT_LOGIN_RESET_EMAIL_MISSING', 'ERR_JWT_LOGIN_RESET_CODE_MISSING', 'ERR_JWT_LOGIN_RESET_PASSWORD_MISSING', 'ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED',
    'ERR_JWT_LOGIN_RESET_CODE_INVALID', 'ERR_JWT_LOGIN_PASSWORD_POLICY', 'ERR_JWT_LOGIN_RESET_INCOMPLETE'
  ]
} as const

const REQUEST_DOC: RouteDoc = {
  tags: ['password-reset'],
  operationId: 'jwtLoginResetRequest',
  summary: 'Send a password reset code by email',
  description: 'Every well-formed email gets the same answer, whether an account has it or not; the code is mailed to an account\'s address only.'
}
const COMPLETE_DOC: RouteDoc = {
  tags: ['password-reset'],
  operationId: 'jwtLoginResetComplete',
  summary: 'Set a new password with the emailed code',
  description: 'A wrong, expired or used code answers 62, whatever the reason. A changed password ends the account\'s sessions.'
}

export function resetPasswordRoutes (instance: FastifyInstance, reset: PasswordReset): void {
  instance.post('/user/reset_password', {
    config: { jwtLogin: gate('request') },
    schema: { ...REQUEST_DOC, body: ResetRequestBody, response: { 200: ResetReply } }
  }, async (request) => {
    const email = stringField(request.body as Fields, 'email')
    return { success: true, data: await requestPasswordReset(reset, stateOf(request).call, email) }
  })

  instance.put('/user/reset_password', {
    config: { jwtLogin: gate('complete') },
    schema: { ...COMPLETE_DOC, body: ResetCompleteBody, response: { 200: ResetReply } }
  }, async (request) => {
    const body = request.body as Fields
    const input = { email: stringField(body, 'email'), code: stringField(body, 'code'), newPassword: stringField(body, 'new_password') }
    return { success: true, data: await completePasswordReset(reset, stateOf(request).call, input) }
  })
}
