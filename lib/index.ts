import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { buildApi } from './http/api.js'
import { systemClock, type Clock } from './core/clock.js'
import type { JwtLoginContext } from './context/context.js'
import { JwtLoginEvents } from './services/events.js'
import { addGateHooks } from './http/gates.js'
import { AttemptLimiter } from './services/limits.js'
import { acceptReload, checkOptions, checkSettings, type JwtLoginOptions } from './http/options.js'
import { guardPorts, type HostPorts } from './adapters/guard.js'
import { createPasswordReset } from './reset-password/flow.js'
import { DEFAULT_PREFIX, redactedRequest, serveRestRoute, trimPrefix } from './http/rest-route.js'
import { registerRoutes } from './routes/index.js'
import { setUpScope } from './http/scope.js'
import { SessionIndex } from './tokens/session-index.js'
import { SettingsHolder, type Settings } from './config/settings.js'
import { guardStore } from './store/guard.js'
import { MemoryStore } from './store/memory.js'
import type { StateStore } from './store/types.js'
import { buildKeyMaterial, TokenService } from './tokens/service.js'
import { createTwoFactor, secondFactorGate, type TwoFactor } from './two-factor/flow.js'
import { cacheUsers, type UserCacheLimits } from './services/user-cache.js'
import { hashPassword, verifyPasswordHash } from './adapters/users.js'

/**
 * Every log line of the plugin's scope (its 404s too) redacts the query.
 * Fastify types a register-level serializer as returning a string, though
 * pino takes an object (as its route-level type says): hence the cast.
 */
const SCOPE_SERIALIZERS = { req: redactedRequest } as unknown as Record<string, (value: unknown) => string>

/**
 * The one context of the flows, frozen, with the two-factor module when the
 * host gave its port. The host's ports are guarded first (the user cache in
 * front of the guard), so what a port throws reaches the log redacted.
 */
async function buildContext (fastify: FastifyInstance, options: JwtLoginOptions, cacheLimits: UserCacheLimits | null, initial: Settings, store: StateStore, clock: Clock): Promise<{ ctx: JwtLoginContext, twoFactor: TwoFactor | null, ports: HostPorts }> {
  const dummyHash = await hashPassword(`jwt-login-dummy-${Math.random()}`)
  const ports = guardPorts(options)
  const cache = cacheLimits === null ? null : cacheUsers(ports.users, cacheLimits, clock)
  const base = {
    users: cache ?? ports.users,
    forgetUser: cache === null ? () => {} : cache.forget,
    store,
    tokens: new TokenService(buildKeyMaterial(initial.tokens), initial.tokens.algorithm, store, clock),
    limiter: new AttemptLimiter(store, clock),
    sessions: new SessionIndex(store, clock),
    events: new JwtLoginEvents(),
    clock,
    log: fastify.log,
    spendPasswordTime: async (password: string) => { await verifyPasswordHash(dummyHash, password) }
  }
  const twoFactor = ports.twoFactor === undefined ? null : createTwoFactor(base, ports.twoFactor, fastify.log)
  const secondFactor = twoFactor === null ? ports.secondFactor ?? null : secondFactorGate(base, twoFactor)
  return { ctx: Object.freeze({ ...base, secondFactor }), twoFactor, ports }
}

/**
 * The settings holder, its first settings checked against the options. CORS
 * turned on by a reload waits for a restart when it was off at registration
 * (that would need @fastify/cors registered).
 */
async function readSettings (fastify: FastifyInstance, options: JwtLoginOptions, ttlMs: number): Promise<SettingsHolder> {
  let corsRegistered = false
  const settings = await SettingsHolder.create(options.settings, {
    ttlMs,
    onInvalid: (error) => fastify.log.warn({ err: error }, 'jwt-login: settings reload refused; the last good settings stay'),
    accept: acceptReload(options, () => corsRegistered, (message) => { fastify.log.warn(message) })
  })
  corsRegistered = settings.current.cors.enabled
  checkSettings(settings.current, options)
  return settings
}

/**
 * The plugin: options checked, settings read, one frozen context built,
 * the routes registered in an encapsulated scope under the prefix, the
 * public API decorated, and `/?rest_route=` served on the host's `/`.
 * The request path: gate hooks → route (HTTP to typed input) → flow → ports.
 */
async function jwtLogin (fastify: FastifyInstance, options: JwtLoginOptions): Promise<void> {
  const { userCache, settingsTtlMs } = checkOptions(options)
  const clock = options.clock ?? systemClock
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const backing = options.store ?? new MemoryStore({ clock })
  backing.attachLogger?.(fastify.log)
  const store = guardStore(backing)
  const settings = await readSettings(fastify, options, settingsTtlMs)
  const initial = settings.current
  const { ctx, twoFactor, ports } = await buildContext(fastify, options, userCache, initial, store, clock)
  const reset = createPasswordReset(ctx, ports.mailer, ports.passwordPolicy ?? null)

  fastify.decorate('jwtLogin', buildApi(ctx, settings, twoFactor?.enrollment ?? null))
  fastify.decorateRequest('jwtLogin', null)
  settings.start()
  fastify.addHook('onClose', async () => {
    settings.stop()
    reset.stop.abort()
    if (options.store === undefined) await store.close?.()
  })

  await fastify.register(async function jwtLoginRoutes (instance) {
    addGateHooks(instance, ctx, settings, twoFactor !== null)
    await setUpScope(instance, {
      bodyLimit: initial.bodyLimit,
      multipart: options.multipart === true,
      store,
      ownNotFound: trimPrefix(prefix) !== '',
      authCodeNames: () => settings.current.authCodes,
      initial
    })
    registerRoutes(instance, ctx, reset, twoFactor)
  }, { prefix, logSerializers: SCOPE_SERIALIZERS })

  // the query form's preflights reach the plugin only when its CORS answers them
  if (options.restRoute !== false) serveRestRoute(fastify, prefix, initial.cors.enabled)
}

export default fp(jwtLogin, { name: 'jwt-login', fastify: '5.x' })
export { jwtLogin }
export { restRouteRewrite } from './http/rest-route.js'
export { BEARER_SCHEME, jwtLoginOpenApi } from './http/openapi.js'
export type { JwtLoginOptions, UserCacheOptions } from './http/options.js'
export type { JwtLoginApi, JwtLoginRequestState } from './http/api.js'
export { JwtLoginError, errorDefinitions, isJwtLoginError, type JwtLoginErrorCode } from './core/errors.js'
export { HostPortError } from './adapters/guard.js'
export { JwtLoginSettingsError, type Settings, type SettingsSource } from './config/settings.js'
export type { SettingsInput } from '../schemas/settings.js'
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js'
export type { StateStore, StoreLogger } from './store/types.js'
export { hashPassword, verifyPasswordHash, ARGON2_OPTIONS, type NewProviderUser, type PublicUser, type UserAdapter } from './adapters/users.js'
export { JwtLoginEvents, type JwtLoginEventMap, type JwtLoginEventName } from './services/events.js'
export type { TokenClaims, TokenKind } from './tokens/service.js'
export type { Clock } from './core/clock.js'
export type { Mailer, MailMessage } from './mail/types.js'
export { DEFAULT_RESET_TEMPLATES, escapeHtml, renderTemplate, type MailTemplates, type ResetMailValues } from './mail/templates.js'
export type { PasswordPolicy } from './reset-password/flow.js'
export type { TwoFactorEnrollment, TwoFactorMethod, TwoFactorOptions, TwoFactorPort } from './adapters/two-factor.js'
export { createTotpSecret, TOTP_PERIOD } from './two-factor/methods/totp.js'
export { generateBackupCodes, hashBackupCode, BACKUP_CODE_COUNT } from './two-factor/methods/backup-codes.js'
export type { Call, SecondFactorGate, SignInResult } from './context/context.js'
