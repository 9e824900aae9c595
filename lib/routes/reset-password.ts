import type { FastifyInstance } from 'fastify'
import { ResetCompleteBody, ResetReply, ResetRequestBody } from '../../schemas/reset-password.js'
import { stateOf, type RouteGate } from '../gates.js'
import { stringField, type Fields } from '../params.js'
import { auditResetGate, completePasswordReset, requestPasswordReset, type PasswordReset } from '../reset-password.js'

/** Reset works whether sign-in is on or not: it has its own switch. */
const gate = (step: 'request' | 'complete'): RouteGate =>
  ({ authentication: false, feature: 'resetPassword', authCode: 'resetPassword', authCodeFrom: 'body-or-query', audit: auditResetGate(step) })

export function resetPasswordRoutes (instance: FastifyInstance, reset: PasswordReset): void {
  instance.post('/user/reset_password', {
    config: { jwtLogin: gate('request') },
    schema: { body: ResetRequestBody, response: { 200: ResetReply } }
  }, async (request) => {
    const email = stringField(request.body as Fields, 'email')
    return { success: true, data: await requestPasswordReset(reset, stateOf(request).call, email) }
  })

  instance.put('/user/reset_password', {
    config: { jwtLogin: gate('complete') },
    schema: { body: ResetCompleteBody, response: { 200: ResetReply } }
  }, async (request) => {
    const body = request.body as Fields
    const input = { email: stringField(body, 'email'), code: stringField(body, 'code'), newPassword: stringField(body, 'new_password') }
    return { success: true, data: await completePasswordReset(reset, stateOf(request).call, input) }
  })
}
