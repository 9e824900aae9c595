import type { FastifyInstance } from 'fastify'
import { TwoFactorBody, TwoFactorQuery, TwoFactorReply } from '../../schemas/two-factor.js'
import type { JwtLoginContext } from '../context.js'
import { bodyOf, presentedJwt, stringField } from '../params.js'
import { assertTwoFactorOpen, completeTwoFactor, type TwoFactor } from '../two-factor/flow.js'

export function twoFactorRoutes (instance: FastifyInstance, ctx: JwtLoginContext, twoFactor: TwoFactor | null): void {
  instance.post('/auth/2fa', {
    schema: { querystring: TwoFactorQuery, body: TwoFactorBody, response: { 200: TwoFactorReply } }
  }, async (request) => {
    assertTwoFactorOpen(ctx, twoFactor)
    const token = presentedJwt(request, ctx.settings.current.bearer.enabled)
    const code = stringField(bodyOf(request), 'code')
    return { success: true, data: await completeTwoFactor(ctx, twoFactor, token, code, request.ip) }
  })
}
