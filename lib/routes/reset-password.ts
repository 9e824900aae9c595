import { ResetCompleteBody, ResetReply, ResetRequestBody } from '../../schemas/reset-password.js'
import type { JwtLoginContext } from '../context/context.js'
import { succeed } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { completePasswordReset } from '../reset-password/complete.js'
import { auditResetGate, requestPasswordReset } from '../reset-password/request.js'

/** Reset works whether sign-in is on or not: it has its own switch. */
const gate = (step: 'request' | 'complete'): RouteGate =>
  ({ authentication: false, feature: 'resetPassword', authCode: 'resetPassword', authCodeFrom: 'body-or-query', audit: auditResetGate(step), errors: ERRORS[step] })

const ERRORS = {
  request: ['ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID'],
  complete: [
    'ERR_JWT_LOGIN_RESET_EMAIL_MISSING', 'ERR_JWT_LOGIN_RESET_CODE_MISSING', 'ERR_JWT_LOGIN_RESET_PASSWORD_MISSING', 'ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED',
    'ERR_JWT_LOGIN_RESET_CODE_INVALID', 'ERR_JWT_LOGIN_PASSWORD_POLICY', 'ERR_JWT_LOGIN_RESET_INCOMPLETE', 'ERR_JWT_LOGIN_USER_LOCKED'
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

export function resetPasswordRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  app.post('/user/reset_password', {
    config: { jwtLogin: gate('request') },
    schema: { ...REQUEST_DOC, body: ResetRequestBody, response: { 200: ResetReply } }
  }, async (request) => {
    return succeed(await requestPasswordReset(ctx, stateOf(request).call, { email: present(request.body.email) }))
  })

  app.put('/user/reset_password', {
    config: { jwtLogin: gate('complete') },
    schema: { ...COMPLETE_DOC, body: ResetCompleteBody, response: { 200: ResetReply } }
  }, async (request) => {
    const { body } = request
    const input = { email: present(body.email), code: present(body.code), newPassword: present(body.new_password) }
    return succeed(await completePasswordReset(ctx, stateOf(request).call, input))
  })
}
