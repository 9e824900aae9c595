// The `fastify.jwtLogin` decorator: the public API over the same flows as the routes, and the types a host sees.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { inEventScope, type JwtLoginEvents } from '../services/events.js'
import { authenticateToken } from '../sessions/authenticate.js'
import { conditionsOf, guardOf, NO_CONDITIONS, type AuthenticateOptions, type JwtLoginRequestState } from './guard.js'
import { revokeToken } from '../sessions/sign-out.js'
import { endAllSessions, endOwnSession, listSessions } from '../sessions/manage.js'
import { forgetDevices, listDevices } from '../sessions/devices.js'
import type { IndexedSession } from '../tokens/session-index.js'
import type { TrustedDevice } from '../tokens/trusted-devices.js'
import type { Settings } from '../config/settings.js'
import type { SettingsHolder } from '../config/holder.js'
import { redactSettings, type DeepReadonly } from '../config/redaction.js'
import { mayCarryActor, type TokenClaims } from '../tokens/jwt.js'
import type { TokenService } from '../tokens/service.js'
import { isSessionId } from '../tokens/session-id.js'
import type { TwoFactorEnrollment } from '../adapters/two-factor.js'
import type { PublicUser } from '../adapters/users.js'
import { lockUser, unlockUser, userIdOf, type LockOptions, type UnlockOptions } from '../admin/lock.js'
import { impersonate, type Impersonation, type ImpersonateOptions } from '../admin/impersonation.js'

export type { AuthenticateOptions, JwtLoginRequestState } from './guard.js'
import { createApiKeyFor, listApiKeys, revokeApiKeyFor, type ApiKeyRequest, type CreatedApiKey } from '../admin/api-keys.js'
import type { ApiKeyInfo } from '../tokens/api-keys.js'
import { health, type HealthOptions, type HealthReport } from '../admin/health.js'

export type { ApiKeyIdentity } from './guard.js'
export type { ApiKeyInfo } from '../tokens/api-keys.js'
export type { ApiKeyRequest, CreatedApiKey } from '../admin/api-keys.js'
export type { HealthCheck, HealthOptions, HealthReport } from '../admin/health.js'

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
  /**
   * `authenticate` with conditions: `maxAge` (seconds or `'5m'`) requires
   * that the token's user authenticated that recently (`auth_time`: the
   * sign-in, or a step-up); an older token answers 401 / 220 with
   * `WWW-Authenticate: Bearer error="insufficient_user_authentication"`
   * (RFC 9470), and the client steps up (`POST /auth/step-up`). A token
   * from `sign()` says no `auth_time`, and is never recent. `amr` lists
   * values the token must all carry (`['mfa']`); a token without them
   * answers the same. `allowImpersonation: false` refuses a token from
   * `impersonate` with 403 / 252 (for a route that changes credentials or
   * ends the account), checked before the other two. `apiKey: true` takes
   * an API key as well (`request.jwtLogin.apiKey`), which must carry
   * `scopes`. Throws `JwtLoginSettingsError` for options that do not fit.
   */
  authenticateWith: (options: AuthenticateOptions) => (request: FastifyRequest, reply: FastifyReply) => Promise<void>
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
  /**
   * A user's live sessions, oldest sign-in first, with how each began.
   * Tokens signed by `sign` have no entry (they end with `endAllSessions`).
   */
  sessions: (userId: number) => Promise<SessionInfo[]>
  /**
   * Ends one session of the user: its access and refresh tokens are refused
   * from the next request on. Answers `false` when it is not one of the
   * user's live sessions (nothing changes).
   */
  endSession: (userId: number, sessionId: string) => Promise<boolean>
  /**
   * Signs the user out everywhere: every session started before now ends,
   * access tokens already issued included (those from `sign` too), on the
   * next request, on every instance; the trusted devices are forgotten.
   * `keep`: a session that stays (the `sid` of the token of the user who
   * just changed their own password). Answers whether `keep` was kept:
   * `false` without it, and when it had already ended (then every session
   * ended). Rejects with `JwtLoginSettingsError` when `keep` is not a
   * session id.
   */
  endAllSessions: (userId: number, options?: EndAllSessionsOptions) => Promise<boolean>
  /** The user's trusted devices (second factor). */
  devices: (userId: number) => Promise<TrustedDevice[]>
  /**
   * Forgets every trusted device of the user: call it after a change of the
   * user's second factor that the host makes itself (enabled, disabled, a
   * secret stored without `twoFactor.confirmTotp`, which forgets them
   * itself), so no device trusted under the old one skips the new one.
   */
  forgetDevices: (userId: number) => Promise<void>
  /**
   * Locks a user at once (a compromised or abusive account): every session
   * and trusted device ends on the next request, on every instance, and
   * every sign-in (password, second factor, passkey, provider, email code,
   * refresh) answers 403 / 251 until `until` passes or `unlockUser`, whether
   * the credentials were right or not. `reason` goes to the `user.locked`
   * event, never to the store. Rejects with `JwtLoginSettingsError` for a
   * user the adapter does not find.
   */
  lockUser: (userId: number, options: LockOptions) => Promise<void>
  /** Lifts a user's lock; answers whether one held. Sessions from before the lock stay ended. */
  unlockUser: (userId: number, options?: UnlockOptions) => Promise<boolean>
  /** Whether the user is locked now. */
  isLocked: (userId: number) => Promise<boolean>
  /**
   * An access token for `userId` that names `actorId` as its actor (`act`,
   * RFC 8693 §4.1), for support staff to see what the user sees: call it
   * behind the host's own admin check. No refresh token; `lifetime` at most
   * 1 hour (default 15 minutes); never a recent sign-in. Refused on the
   * routes that change credentials or end the account (403 / 252). Its
   * session is listed with its actor. Rejects with `JwtLoginSettingsError`
   * for bad options or an unknown user or actor, `JwtLoginError` 251 for a
   * locked user or actor, 252 for an actor who is being acted as right now.
   */
  impersonate: (options: ImpersonateOptions) => Promise<Impersonation>
  /**
   * Creates an API key for the user and answers it, the only time it is
   * seen, with its listing fields. Rejects with `JwtLoginSettingsError` for
   * a request that does not fit `apiKeys` or a user the adapter does not
   * find, with 403 / 253 when API keys are off, 403 / 251 for a locked user,
   * 409 / 257 past `apiKeys.maxPerUser`.
   */
  createApiKey: (userId: number, request: ApiKeyRequest) => Promise<CreatedApiKey>
  /** The user's live API keys, oldest first (never a key or its hash). */
  listApiKeys: (userId: number) => Promise<ApiKeyInfo[]>
  /** Ends one API key of the user; answers `false`, changing nothing, when it is not one of theirs. */
  revokeApiKey: (userId: number, id: string) => Promise<boolean>
  /**
   * Whether the state store and the host's ports answer: one cheap read
   * each, all at once, each within `deadlineMs` (default 1000): the store,
   * the user adapter (never through the user cache) and the passkey port
   * when there is one. Never rejects for what it finds; rejects with a
   * `TypeError` for a `deadlineMs` that is not a positive finite number.
   */
  health: (options?: HealthOptions) => Promise<HealthReport>
}

/** The options of `endAllSessions`. */
export interface EndAllSessionsOptions {
  /** The id of a session that stays (a token's `sid`, or an id `sessions` lists). */
  keep?: string
}

/** `endAllSessions`'s `keep`: absent, or a session id (a typo would keep nothing and say so too late). */
function keptId (options: EndAllSessionsOptions | undefined): string | undefined {
  const keep = options?.keep
  if (keep === undefined || (typeof keep === 'string' && isSessionId(keep))) return keep
  throw new JwtLoginSettingsError('endAllSessions/keep', 'must be a session id (the `sid` of a token)', 'option')
}

/** A session as `fastify.jwtLogin.sessions` lists it. */
export interface SessionInfo {
  id: string
  /** When its sign-in started. */
  startedAt: Date
  /** When its refresh token last rotated, or `null`. */
  lastRefreshedAt: Date | null
  /**
   * The first factor (`password`, `provider`, `passkey`, `email`), the
   * provider's name and the second factor; `impersonation` for a token of
   * `impersonate` (`actorId`); `null` for a session from before 0.3.
   */
  method: 'password' | 'provider' | 'passkey' | 'email' | 'impersonation' | null
  provider: string | null
  secondFactor: string | null
  /** Who acts as the user in an impersonation session, or `null`. */
  actorId: number | null
  /** The client's address and `User-Agent` (cut to 256 characters) at sign-in. */
  ip: string | null
  userAgent: string | null
}

declare module 'fastify' {
  interface FastifyInstance {
    jwtLogin: JwtLoginApi
  }
  interface FastifyRequest {
    jwtLogin: JwtLoginRequestState | null
  }
}

function sessionInfo (session: IndexedSession): SessionInfo {
  const { origin } = session
  const signIn = origin?.method === 'impersonation' ? null : origin
  return {
    id: session.id,
    startedAt: new Date(session.startedAt),
    lastRefreshedAt: session.lastRefreshedAt === null ? null : new Date(session.lastRefreshedAt),
    method: origin?.method ?? null,
    provider: signIn?.provider ?? null,
    secondFactor: signIn?.secondFactor ?? null,
    actorId: origin?.method === 'impersonation' ? origin.actorId : null,
    ip: session.ip,
    userAgent: session.userAgent
  }
}

/** The public API: the same flows as the routes, each call on one settings snapshot. */
export function buildApi (ctx: JwtLoginContext, settings: SettingsHolder): JwtLoginApi {
  const callOf = (ip: string): Call => ({ settings: settings.current, ip, startedAt: ctx.clock() })

  const guard = guardOf(ctx, callOf)
  /** A flow of the API on `token`, in the scope of its call when it may be an impersonation's: its actor is then named in the events. */
  const scoped = async <T>(token: string, work: (call: Call) => Promise<T>): Promise<T> => {
    const call = callOf('')
    return mayCarryActor(token) ? await inEventScope(call, async () => await work(call)) : await work(call)
  }

  return {
    sign: (user) => ctx.tokens.sign(settings.current, user, 'access', { sessionId: ctx.tokens.newSessionId() }).token,
    verify: async (token) => await scoped(token, async (call) => (await authenticateToken(ctx, call, token)).verified.payload),
    revoke: async (token) => { await scoped(token, async (call) => await revokeToken(ctx, call, token)) },
    forgetUser: (userId) => { ctx.forgetUser(userId) },
    authenticate: guard(NO_CONDITIONS),
    authenticateWith: (options) => guard(conditionsOf(options ?? {}, settings.current.apiKeys.scopes)),
    events: ctx.events,
    get settings () { return redactSettings(settings.current) },
    reloadSettings: async () => { await settings.reload() },
    jwks: () => ctx.tokens.jwks(),
    twoFactor: ctx.twoFactor?.enrollment ?? null,
    sessions: async (userId) => (await listSessions(ctx, userId)).map(sessionInfo),
    endSession: async (userId, sessionId) => await endOwnSession(ctx, settings.current, userId, sessionId, 'host'),
    endAllSessions: async (userId, options) => await endAllSessions(ctx, settings.current, userId, 'host', keptId(options), 'end-all'),
    devices: async (userId) => await listDevices(ctx, userId),
    forgetDevices: async (userId) => { await forgetDevices(ctx, userId, 'host') },
    lockUser: async (userId, options) => { await lockUser(ctx, settings.current, userId, options) },
    unlockUser: async (userId, options) => await unlockUser(ctx, settings.current, userId, options),
    isLocked: async (userId) => await ctx.tokens.lockOf(userIdOf(userId, 'isLocked/userId')) !== null,
    impersonate: async (options) => await impersonate(ctx, settings.current, options),
    createApiKey: async (userId, request) => await createApiKeyFor(ctx, settings.current, userId, request),
    listApiKeys: async (userId) => await listApiKeys(ctx, userIdOf(userId, 'listApiKeys/userId')),
    revokeApiKey: async (userId, id) => await revokeApiKeyFor(ctx, userId, id),
    health: async (options) => await health(ctx, options)
  }
}
