import type { FastifyInstance } from 'fastify'
import { TwoFactorBody, TwoFactorReply } from '../../schemas/two-factor.js'
import type { JwtLoginContext } from '../context.js'
import { stateOf, type RouteGate } from '../gates.js'
import { stringField, type Fields } from '../params.js'
import { completeTwoFactor, type TwoFactor } from '../two-factor/flow.js'

const GATE: RouteGate = { feature: 'twoFactor', token: 'interim' }

/** `POST /auth/2fa`; without the `twoFactor` option the gate answers 105 (the route stays, like the others). */
export function twoFactorRoutes (instance: FastifyInstance, ctx: JwtLoginContext, twoFactor: TwoFactor | null): void {
  instance.post('/auth/2fa', {
    config: { jwtLogin: GATE },
    schema: { body: TwoFactorBody, response: { 200: TwoFactorReply } }
  }, async (request) => {
    const { call, token } = stateOf(request)
    const input = { token: token as string, code: stringField(request.body as Fields, 'code') }
    return { success: true, data: await completeTwoFactor(ctx, twoFactor as TwoFactor, call, input) }
  })
}
