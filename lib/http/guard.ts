// The guard of the host's routes (`authenticate`, `authenticateWith`): a final access token, or with `apiKey: true` an API key; the conditions checked once, and what they put on `request.jwtLogin`.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser } from '../adapters/users.js'
import { authenticateApiKey, type ApiKeyIdentity } from '../admin/api-key-auth.js'
import { durationAt } from '../config/duration.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError, JwtLoginSettingsError } from '../core/errors.js'
import { inEventScope } from '../services/events.js'
import { authenticateToken, requireRecentAuth } from '../sessions/authenticate.js'
import { mayCarryActor, type TokenClaims } from '../tokens/jwt.js'
import { looksLikeApiKey } from '../tokens/api-keys.js'
import { sendError, toJwtLoginError } from './error-handler.js'
import { logDependencyFailure } from './fallback-log.js'
import { parseBearer } from './fields.js'
import { checkSwitches } from './gates.js'

export type { ApiKeyIdentity } from '../admin/api-key-auth.js'

/**
 * What the hooks put on `request.jwtLogin`: the user, with the verified
 * token's claims and its actor (`apiKey: null`), or, on a route of
 * `authenticateWith({ apiKey: true })` given a key, the key (`claims` and
 * `actor` `null`).
 */
export type JwtLoginRequestState =
  | {
    user: PublicUser
    claims: TokenClaims
    /** Who acts as `user` with an impersonation token (its `act`), or `null` for the user's own token. */
    actor: { id: number } | null
    apiKey: null
  }
  | { user: PublicUser, claims: null, actor: null, apiKey: ApiKeyIdentity }

/** The conditions of `authenticateWith`. */
export interface AuthenticateOptions {
  /** How long ago the user may have last authenticated: seconds, or a duration string (`'5m'`). Tokens only: not with `apiKey`. */
  maxAge?: number | string
  /**
   * `amr` values the token must all carry: `['mfa']` for two factors (a
   * step-up with the password alone then does not do), `['hwk']` for a passkey.
   * Tokens only: not with `apiKey`.
   */
  amr?: string[]
  /**
   * `false` refuses an impersonation token (one with an actor, from
   * `impersonate`) with 403 / 252: for the host's routes that change
   * credentials or end the account. Default `true`.
   */
  allowImpersonation?: boolean
  /**
   * Take an API key too (in the `apiKeys.header` header, `X-API-Key` by
   * default, or `Authorization: Bearer <key>`): the key's user is the
   * request's, `request.jwtLogin.apiKey` the key. An access token still
   * works, and is not held to `scopes`.
   */
  apiKey?: boolean
  /** Scopes a key must carry, each declared in `apiKeys.scopes` (with `apiKey: true` only). */
  scopes?: string[]
}

/** What a guard checks beyond a valid final token. */
export interface Conditions { maxAgeMs: number | null, amr: readonly string[], allowImpersonation: boolean, apiKey: boolean, scopes: readonly string[] }

/** `authenticate`'s conditions: none. */
export const NO_CONDITIONS: Conditions = Object.freeze({ maxAgeMs: null, amr: Object.freeze([]), allowImpersonation: true, apiKey: false, scopes: Object.freeze([]) })

/** `authenticateWith`'s `maxAge` in ms: a duration of more than 0 (NaN or a negative number would let every token through, or none). */
function maxAgeOf (maxAge: number | string): number {
  const ms = durationAt(maxAge, 'authenticateWith/maxAge', 'option')
  if (!(ms > 0)) throw new JwtLoginSettingsError('authenticateWith/maxAge', 'must be a duration of more than 0', 'option')
  return ms
}

/** A list of non-empty strings (copied: a later change by the host does not change the hook), or the refusal naming `path`. */
function namesOf (names: string[] | undefined, path: string, reason: string): readonly string[] {
  if (names === undefined) return []
  if (!Array.isArray(names) || !names.every(name => typeof name === 'string' && name !== '')) throw new JwtLoginSettingsError(path, reason, 'option')
  return Object.freeze([...names])
}

/** `authenticateWith`'s `allowImpersonation`: a boolean (a `'false'` string would otherwise let them through). */
function allowImpersonationOf (allow: boolean | undefined): boolean {
  if (allow === undefined) return true
  if (typeof allow !== 'boolean') throw new JwtLoginSettingsError('authenticateWith/allowImpersonation', 'must be true or false', 'option')
  return allow
}

/**
 * `authenticateWith`'s options, checked once when the host makes its hook:
 * a key has no sign-in, so `maxAge` and `amr` do not go with `apiKey`;
 * `scopes` go with it only, each declared in `apiKeys.scopes` now.
 */
export function conditionsOf (options: AuthenticateOptions, declared: readonly string[]): Conditions {
  const apiKey = options.apiKey === true
  const amr = namesOf(options.amr, 'authenticateWith/amr', 'must be a list of amr values (such as [\'mfa\'])')
  const scopes = namesOf(options.scopes, 'authenticateWith/scopes', 'must be a list of scopes')
  if (apiKey && (options.maxAge !== undefined || amr.length > 0)) throw new JwtLoginSettingsError('authenticateWith/apiKey', 'an API key has no sign-in: maxAge and amr cannot hold it; use a route of its own', 'option')
  if (!apiKey && scopes.length > 0) throw new JwtLoginSettingsError('authenticateWith/scopes', 'scopes apply to API keys: set apiKey: true', 'option')
  const undeclared = scopes.find(scope => !declared.includes(scope))
  if (undeclared !== undefined) throw new JwtLoginSettingsError('authenticateWith/scopes', `${JSON.stringify(undeclared)} is not declared in apiKeys.scopes`, 'option')
  return { maxAgeMs: options.maxAge === undefined ? null : maxAgeOf(options.maxAge), amr, allowImpersonation: allowImpersonationOf(options.allowImpersonation), apiKey, scopes }
}

/**
 * The `Authorization` header, its bare token and the key header: a failing
 * dependency may quote any. A request without them never reaches a dependency.
 */
function credentialValues (request: FastifyRequest, keyHeader: string): unknown[] {
  const header = request.headers.authorization
  return [header, String(header).replace(/^Bearer\s+/i, ''), request.headers[keyHeader]]
}

/** The API key a request presents (the key header, or a Bearer value with the keys' prefix), or `undefined` for none; both headers given: 401 / 254. */
function presentedKey (request: FastifyRequest, keyHeader: string, prefix: string): string | undefined {
  const header = request.headers[keyHeader]
  const authorization = request.headers.authorization
  if (header !== undefined) {
    if (authorization !== undefined || typeof header !== 'string') throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_INVALID')
    return header.trim()
  }
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  return bearer !== null && looksLikeApiKey(bearer[1] as string, prefix) ? bearer[1] : undefined
}

/** The preHandler of host routes under `conditions`: each request checked on one settings snapshot, in its own event scope (its `Call`), a refusal answered in the envelope. */
export function guardOf (ctx: JwtLoginContext, callOf: (ip: string) => Call): (conditions: Conditions) => (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const ports = { twoFactor: false, passkeys: false, identities: false }
  const admit = async (request: FastifyRequest, call: Call, { maxAgeMs, amr, allowImpersonation, apiKey, scopes }: Conditions): Promise<void> => {
    // a host route's gate: authentication on
    checkSwitches(call.settings, {}, ports)
    const keys = call.settings.apiKeys
    const key = apiKey ? presentedKey(request, keys.header.toLowerCase(), keys.prefix) : undefined
    if (key !== undefined) {
      const holder = await authenticateApiKey(ctx, call, key, scopes)
      request.jwtLogin = { user: holder.publicUser, claims: null, actor: null, apiKey: holder.apiKey }
      return
    }
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
    request.jwtLogin = { user: auth.publicUser, claims, actor: call.actorId === undefined ? null : { id: call.actorId }, apiKey: null }
  }
  return (conditions) => async (request, reply) => {
    const call = callOf(request.ip)
    try {
      // only a request that may carry an impersonation token enters the events' scope
      if (mayCarryActor(request.headers.authorization)) await inEventScope(call, async () => { await admit(request, call, conditions) })
      else await admit(request, call, conditions)
    } catch (error) {
      const mapped = toJwtLoginError(error as FastifyError)
      // a store or the adapter failed: logged as the plugin's routes log it, the token or key cut out
      if (mapped.statusCode >= 500) logDependencyFailure(request, loggedError(mapped, credentialValues(request, call.settings.apiKeys.header.toLowerCase())))
      await sendError(reply, mapped, ctx.messages, call.settings)
    }
  }
}

/**
 * Runs a host route's handler in its request's event scope once a guard
 * admitted an impersonation token there (`request.jwtLogin.actor`): every
 * event the handler causes through `fastify.jwtLogin`, after its awaits
 * too, carries `actorId`. Other requests run it as it is (one property
 * read). For the routes declared once the plugin is registered (its
 * `onRoute` hook); `run`, not `enterWith`, so nothing outlives the handler.
 */
export function inActorScope (route: RouteOptions): void {
  const handler = route.handler
  route.handler = function (this: FastifyInstance, request, reply) {
    const actor = request.jwtLogin?.actor ?? null
    if (actor === null) return handler.call(this, request, reply)
    return inEventScope({ actorId: actor.id }, () => handler.call(this, request, reply))
  }
}
