import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { sendError, toJwtLoginError } from './error-handler.js'
import { JwtLoginError } from '../core/errors.js'
import { checkSwitches } from './gates.js'
import type { JwtLoginEvents } from '../services/events.js'
import { parseBearer } from './fields.js'
import { authenticateToken } from '../sessions/authenticate.js'
import { revokeToken } from '../sessions/sign-out.js'
import type { Settings } from '../config/settings.js'
import type { SettingsHolder } from '../config/holder.js'
import { redactSettings, type DeepReadonly } from '../config/redaction.js'
import type { TokenClaims } from '../tokens/jwt.js'
import type { TokenService } from '../tokens/service.js'
import type { TwoFactorEnrollment } from '../adapters/two-factor.js'
import type { PublicUser } from '../adapters/users.js'

/** What the authenticate hook puts on `request.jwtLogin`. */
export interface JwtLoginRequestState {
  user: PublicUser
  claims: TokenClaims
}

/** The `fastify.jwtLogin` decorator. */
export interface JwtLoginApi {
  /** Signs an access token for a user of the adapter (no refresh token). */
  sign: (user: PublicUser) => string
  /** Verifies an access token as the routes do (signature, claims, revocation, user) and answers its claims. */
  verify: (token: string) => Promise<TokenClaims>
  /** Revokes an access token and its session. */
  revoke: (token: string) => Promise<void>
  /**
   * Drops a user from the `userCache`, for a host that changed or removed
   * them (roles, deletion): otherwise the cached user is served for up to
   * its ttl. A no-op without the option.
   */
  forgetUser: (userId: number) => void
  /** A preHandler for host routes: requires a valid final token in `Authorization: Bearer`. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  /** The audit events. */
  events: JwtLoginEvents
  /**
   * The settings in force, frozen, with every secret (key `secret` and
   * `privateKey`, auth codes, OAuth client secrets) shown as `'[redacted]'`.
   */
  readonly settings: DeepReadonly<Settings>
  /**
   * Re-reads an async settings source now. Rejects when the source fails or
   * its settings are refused (`JwtLoginSettingsError` naming the field); the
   * last good settings then stay.
   */
  reloadSettings: () => Promise<void>
  /** The public signing keys, or `null` for HMAC. */
  jwks: () => ReturnType<TokenService['jwks']>
  /** Two-factor enrollment helpers, or `null` without the `twoFactor` option. */
  twoFactor: TwoFactorEnrollment | null
}

declare module 'fastify' {
  interface FastifyInstance {
    jwtLogin: JwtLoginApi
  }
  interface FastifyRequest {
    jwtLogin: JwtLoginRequestState | null
  }
}

/** The public API: the same flows as the routes, each call on one settings snapshot. */
export function buildApi (ctx: JwtLoginContext, settings: SettingsHolder): JwtLoginApi {
  const callOf = (ip: string): Call => ({ settings: settings.current, ip, startedAt: ctx.clock() })

  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const call = callOf(request.ip)
    try {
      // a host route's gate: authentication on
      checkSwitches(call.settings, {}, false)
      // a protected host route: no token is 401 / 53 with a bare challenge, a header
      // that is not `Bearer <token>` is 401 / 2 with invalid_request (RFC 6750 §3.1)
      const header = request.headers.authorization
      if (header === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_BEARER_MISSING')
      const auth = await authenticateToken(ctx, call, parseBearer(header, 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED'))
      request.jwtLogin = { user: auth.publicUser, claims: auth.verified.payload }
    } catch (error) {
      await sendError(reply, toJwtLoginError(error as FastifyError))
    }
  }

  return {
    sign: (user) => ctx.tokens.sign(settings.current, user, 'access', { sessionId: ctx.tokens.newSessionId() }).token,
    verify: async (token) => (await authenticateToken(ctx, callOf(''), token)).verified.payload,
    revoke: async (token) => { await revokeToken(ctx, callOf(''), token) },
    forgetUser: (userId) => { ctx.forgetUser(userId) },
    authenticate,
    events: ctx.events,
    get settings () { return redactSettings(settings.current) },
    reloadSettings: async () => { await settings.reload() },
    jwks: () => ctx.tokens.jwks(),
    twoFactor: ctx.twoFactor?.enrollment ?? null
  }
}
