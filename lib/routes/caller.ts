// What the routes that take a final access token share: the caller, authenticated once per request, and dates as the answers write them.
import type { FastifyRequest } from 'fastify'
import type { JwtLoginContext } from '../context/context.js'
import type { SuccessMessage } from '../i18n/catalogue.js'
import { JwtLoginError, type FieldDetail, type JwtLoginErrorCode } from '../core/errors.js'
import { en } from '../i18n/catalogues/en.js'
import { fieldPhrase } from '../i18n/messages.js'
import { stateOf } from '../http/gates.js'
import { audited, authenticateToken, type Authenticated } from '../sessions/authenticate.js'

/** What a route's caller must be. */
export interface CallerOptions {
  /**
   * `false` on the routes that change credentials or end the account: an
   * impersonation token (`act`) is refused with 403 / 252 once
   * authenticated, before the flow asks for any proof of the user (an actor
   * can bring none), so the answer is 252, never 220.
   */
  impersonation?: boolean
}

/** The refusal of an impersonation token, for the `errors` of the routes whose caller refuses one. */
export const IMPERSONATION_REFUSED: JwtLoginErrorCode = 'ERR_JWT_LOGIN_IMPERSONATION_REFUSED'

/** The caller of a route whose gate read a final access token (Bearer or `JWT`): authenticated, a refusal reported as `validation.failed`. */
export function callerOf (ctx: JwtLoginContext, options: CallerOptions = {}): (request: FastifyRequest) => Promise<Authenticated> {
  const refuseActors = options.impersonation === false
  return async (request) => {
    const { call, token } = stateOf(request)
    const caller = await audited(ctx, call, authenticateToken(ctx, call, token as string))
    if (refuseActors && call.actorId !== undefined) throw new JwtLoginError(IMPERSONATION_REFUSED)
    return caller
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
