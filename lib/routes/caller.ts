// What the routes that take a final access token share: the caller, authenticated once per request, and dates as the answers write them.
import type { FastifyRequest } from 'fastify'
import type { JwtLoginContext } from '../context/context.js'
import type { SuccessMessage } from '../i18n/catalogue.js'
import { JwtLoginError, type FieldDetail } from '../core/errors.js'
import { en } from '../i18n/catalogues/en.js'
import { fieldPhrase } from '../i18n/messages.js'
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

/** A body field the route needs, or 400 / 203 naming it: the schema leaves it optional so that the route's switch answers first. */
export function needed (value: string | undefined, field: string): string {
  if (value !== undefined && value !== '') return value
  const detail: FieldDetail = { place: 'body', field, reason: 'is required' }
  throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { field: detail, detail: fieldPhrase(en, detail) })
}
