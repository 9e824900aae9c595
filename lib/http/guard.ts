// The guard of the host's routes: `authenticate` and `authenticateWith`, their conditions checked once, and what they put on `request.jwtLogin`.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { durationAt } from '../config/duration.js'
import { JwtLoginError, JwtLoginSettingsError } from '../core/errors.js'
import { loggedError } from '../adapters/guard.js'
import { inEventScope } from '../services/events.js'
import { authenticateToken, requireRecentAuth } from '../sessions/authenticate.js'
import { mayCarryActor, type TokenClaims } from '../tokens/jwt.js'
import { sendError, toJwtLoginError } from './error-handler.js'
import { logDependencyFailure } from './fallback-log.js'
import { parseBearer } from './fields.js'
import { checkSwitches } from './gates.js'

/** What the authenticate hook puts on `request.jwtLogin`. */
export interface JwtLoginRequestState {
  user: PublicUser
  claims: TokenClaims
  /** Who acts as `user` with an impersonation token (its `act`), or `null` for the user's own token. */
  actor: { id: number } | null
}

/** The conditions of `authenticateWith`. */
export interface AuthenticateOptions {
  /** How long ago the user may have last authenticated: seconds, or a duration string (`'5m'`). */
  maxAge?: number | string
  /**
   * `amr` values the token must all carry: `['mfa']` for two factors (a
   * step-up with the password alone then does not do), `['hwk']` for a passkey.
   */
  amr?: string[]
  /**
   * `false` refuses an impersonation token (one with an actor, from
   * `impersonate`) with 403 / 252: for the host's routes that change
   * credentials or end the account. Default `true`.
   */
  allowImpersonation?: boolean
}

/** What `authenticateWith` checks beyond `authenticate`. */
export interface Conditions { maxAgeMs: number | null, amr: readonly string[], allowImpersonation: boolean }

/** `authenticate`'s conditions: none. */
export const NO_CONDITIONS: Conditions = Object.freeze({ maxAgeMs: null, amr: Object.freeze([]), allowImpersonation: true })

/** `authenticateWith`'s `maxAge` in ms: a duration of more than 0 (NaN or a negative number would let every token through, or none). */
function maxAgeOf (maxAge: number | string): number {
  const ms = durationAt(maxAge, 'authenticateWith/maxAge', 'option')
  if (!(ms > 0)) throw new JwtLoginSettingsError('authenticateWith/maxAge', 'must be a duration of more than 0', 'option')
  return ms
}

/** `authenticateWith`'s `amr`: a list of strings (copied: a later change by the host does not change the hook). */
function amrOf (amr: string[] | undefined): readonly string[] {
  if (amr === undefined) return []
  if (!Array.isArray(amr) || !amr.every(method => typeof method === 'string' && method !== '')) {
    throw new JwtLoginSettingsError('authenticateWith/amr', 'must be a list of amr values (such as [\'mfa\'])', 'option')
  }
  return Object.freeze([...amr])
}

/** `authenticateWith`'s `allowImpersonation`: a boolean (a `'false'` string would otherwise let them through). */
function allowImpersonationOf (allow: boolean | undefined): boolean {
  if (allow === undefined) return true
  if (typeof allow !== 'boolean') throw new JwtLoginSettingsError('authenticateWith/allowImpersonation', 'must be true or false', 'option')
  return allow
}

/** `authenticateWith`'s options, checked once when the host makes its hook. */
export function conditionsOf (options: AuthenticateOptions): Conditions {
  return {
    maxAgeMs: options.maxAge === undefined ? null : maxAgeOf(options.maxAge),
    amr: amrOf(options.amr),
    allowImpersonation: allowImpersonationOf(options.allowImpersonation)
  }
}

/**
 * The `Authorization` header and its bare token: a failing dependency may
 * quote either. A request without the header never reaches a dependency.
 */
function bearerValues (header: string | undefined): unknown[] {
  return [header, String(header).replace(/^Bearer\s+/i, '')]
}

/** The preHandler of host routes under `conditions`: each request authenticated in its own event scope (its `Call`). */
export function guardOf (ctx: JwtLoginContext, callOf: (ip: string) => Call): (conditions: Conditions) => (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const ports = { twoFactor: false, passkeys: false, identities: false }
  const admit = async (request: FastifyRequest, call: Call, { maxAgeMs, amr, allowImpersonation }: Conditions): Promise<void> => {
    // a host route's gate: authentication on
    checkSwitches(call.settings, {}, ports)
    // a protected host route: no token is 401 / 53 with a bare challenge, a header
    // that is not `Bearer <token>` (or, with bearer.allowBareToken, one bare JWT) is 401 / 2 with invalid_request (RFC 6750 §3.1)
    const header = request.headers.authorization
    if (header === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_BEARER_MISSING')
    const auth = await authenticateToken(ctx, call, parseBearer(header, 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED', call.settings.bearer.allowBareToken))
    const claims = auth.verified.payload
    // before the conditions that a proof of the user would meet: an actor can bring none
    if (!allowImpersonation && call.actorId !== undefined) throw new JwtLoginError('ERR_JWT_LOGIN_IMPERSONATION_REFUSED')
    if (maxAgeMs !== null) requireRecentAuth(claims, maxAgeMs, ctx.clock())
    if (!amr.every(method => claims.amr?.includes(method) === true)) throw new JwtLoginError('ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED')
    request.jwtLogin = { user: auth.publicUser, claims, actor: call.actorId === undefined ? null : { id: call.actorId } }
  }
  return (conditions) => async (request, reply) => {
    const call = callOf(request.ip)
    try {
      // only a request that may carry an impersonation token enters the events' scope
      if (mayCarryActor(request.headers.authorization)) await inEventScope(call, async () => { await admit(request, call, conditions) })
      else await admit(request, call, conditions)
    } catch (error) {
      const mapped = toJwtLoginError(error as FastifyError)
      // a store or the adapter failed: logged as the plugin's routes log it, the token cut out
      if (mapped.statusCode >= 500) logDependencyFailure(request, loggedError(mapped, bearerValues(request.headers.authorization)))
      await sendError(reply, mapped, ctx.messages, call.settings)
    }
  }
}
