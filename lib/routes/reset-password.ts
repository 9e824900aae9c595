import type { FastifyInstance } from 'fastify'
import { ResetCompleteBody, ResetReply, ResetRequestBody } from '../../schemas/reset-password.js'
import { bodyOf, queryOf } from '../params.js'
import type { PasswordReset } from '../reset-password.js'

export function resetPasswordRoutes (instance: FastifyInstance, reset: PasswordReset): void {
  instance.post('/user/reset_password', {
    schema: { body: ResetRequestBody, response: { 200: ResetReply } }
  }, async (request) => {
    return { success: true, data: await reset.request(bodyOf(request), queryOf(request), request.ip) }
  })

  instance.put('/user/reset_password', {
    schema: { body: ResetCompleteBody, response: { 200: ResetReply } }
  }, async (request) => {
    return { success: true, data: await reset.complete(bodyOf(request), queryOf(request), request.ip) }
  })
}
