// What the routes that take a final access token share: the caller, authenticated once per request, and dates as the answers write them.
import type { FastifyRequest } from 'fastify'
import type { JwtLoginContext } from '../context/context.js'
import type { SuccessMessage } from '../i18n/catalogue.js'
import { stateOf } from '../http/gates.js'
import { audited, authenticateToken, type Authenticated } from '../sessions/authenticate.js'

/** The caller of a route whose gate read a final access token (Bearer or `JWT`): authenticated, a refusal reported as `validation.failed`. */
export function callerOf (ctx: JwtLoginContext): (request: FastifyRequest) => Promise<Authenticated> {
  return async (request) => {
    const { call, token } = stateOf(request)
    return await audited(ctx, call, authenticateToken(ctx, call, token as string))
  }
}

/** A success message in the request's language. */
export function said (ctx: JwtLoginContext, request: FastifyRequest, key: SuccessMessage): string {
  return ctx.messages.text(stateOf(request).call, key)
}

/** A time (ms, or a port's Date or date string) as ISO 8601, UTC. */
export const iso = (time: number | Date | string): string => new Date(time).toISOString()
