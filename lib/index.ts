import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { buildApi } from './http/api.js'
import { inActorScope } from './http/guard.js'
import { buildContext } from './http/context.js'
import { systemClock } from './core/clock.js'
import { addGateHooks } from './http/gates.js'
import { acceptReload, checkOptions, checkSettings, refuseSecondRegistration, type JwtLoginOptions } from './http/options.js'
import { logStartProblem, storeLoggerFor, watchFailures } from './http/fallback-log.js'
import { JwtLoginSettingsError } from './core/errors.js'
import { checkAliases, DEFAULT_PREFIX, redactedRequest, restNamespaces, serveAliases, serveRestRoute, trimPrefix } from './http/rest-route.js'
import { collectRouteShapes, RouteShapes } from './http/alias-forms.js'
import { registerRoutes } from './routes/index.js'
import { setUpScope } from './http/scope.js'
import { SettingsHolder } from './config/holder.js'
import { settingsWarning } from './config/coherence.js'
import { guardStore, storeProblem } from './store/guard.js'
import { MemoryStore } from './store/memory.js'
import type { StateStore } from './store/types.js'
import { Messages } from './i18n/messages.js'
import { loadOtel } from './telemetry/otel.js'
import { Telemetry } from './telemetry/telemetry.js'
import { processPasswordWork } from './services/password-work.js'
import { traceFlows } from './http/traced-routes.js'

/**
 * Every log line of the plugin's scope (its 404s too) redacts the query.
 * Fastify types a register-level serializer as returning a string, though
 * pino takes an object (as its route-level type says): hence the cast.
 */
const SCOPE_SERIALIZERS = { req: redactedRequest } as unknown as Record<string, (value: unknown) => string>

/**
 * The settings holder, its first settings checked against the options. CORS
 * turned on by a reload waits for a restart when it was off at registration
 * (that would need @fastify/cors registered).
 */
async function readSettings (fastify: FastifyInstance, options: JwtLoginOptions, ttlMs: number, messages: Messages): Promise<SettingsHolder> {
  let corsRegistered = false
  const accept = acceptReload(options, () => corsRegistered, (message) => { fastify.log.warn(message) })
  const settings = await SettingsHolder.create(options.settings, {
    ttlMs,
    onInvalid: (error) => fastify.log.warn({ err: error }, 'jwt-login: settings reload refused; the last good settings stay'),
    accept: (next, current) => {
      accept(next, current)
      messages.checkLocale(next.locale)
    }
  })
  corsRegistered = settings.current.cors.enabled
  checkSettings(settings.current, options)
  const warning = settingsWarning(settings.current)
  if (warning !== null) fastify.log.warn(warning)
  messages.checkLocale(settings.current.locale)
  return settings
}

/**
 * Ready means ready: the store answers a read (its deadline bounds it), or
 * `ready()` rejects naming the problem and its fix, unless the host chose
 * `startDegraded`, which logs it (stderr too without a logger) and starts.
 */
async function checkStoreAtReady (fastify: FastifyInstance, store: StateStore, startDegraded: boolean): Promise<void> {
  const problem = await storeProblem(store)
  if (problem === null) return
  const message = `the state store failed its check at ready(): ${problem}`
  if (!startDegraded) throw new JwtLoginSettingsError('store', `${message}; or pass startDegraded: true to start anyway`, 'option')
  logStartProblem(fastify.log, `jwt-login: ${message}; started anyway (startDegraded): requests that need the store answer 503 until it is back`)
}

/**
 * The plugin: options checked, settings read, one frozen context built,
 * the routes registered in an encapsulated scope under the prefix, the
 * public API decorated, and `/?rest_route=` served on the host's `/` (and
 * `/index.php`).
 * The request path: gate hooks → route (HTTP to typed input) → flow → ports.
 */
async function jwtLogin (fastify: FastifyInstance, options: JwtLoginOptions): Promise<void> {
  refuseSecondRegistration(fastify.hasDecorator('jwtLogin'))
  const { userCache, settingsTtlMs } = checkOptions(options)
  const clock = options.clock ?? systemClock
  watchFailures(fastify.log, clock)
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const aliases = checkAliases(options.aliases, prefix)
  const backing = options.store ?? new MemoryStore({ clock })
  backing.attachLogger?.(storeLoggerFor(fastify.log))
  const messages = new Messages(options.messages)
  const settings = await readSettings(fastify, options, settingsTtlMs, messages)
  const initial = settings.current
  const telemetry = new Telemetry({
    api: loadOtel(),
    userIds: () => settings.current.telemetry.userIds,
    gauges: {
      hashingQueue: () => ({ signIns: processPasswordWork.waitingSignIns, newPasswords: processPasswordWork.waitingNewPasswords }),
      memoryStore: backing instanceof MemoryStore ? () => backing.usage : undefined
    }
  })
  const store = guardStore(backing, telemetry)
  const ctx = await buildContext(options, { log: fastify.log, cacheLimits: userCache, initial, current: () => settings.current, store, clock, messages, telemetry })

  fastify.decorate('jwtLogin', buildApi(ctx, settings))
  fastify.decorateRequest('jwtLogin', null)
  // a host route's handler runs in its actor's event scope once a guard admitted an impersonation token
  fastify.addHook('onRoute', inActorScope)
  settings.start()
  fastify.addHook('onClose', async () => {
    telemetry.close()
    settings.stop()
    ctx.reset.stop.abort()
    if (options.store === undefined) await store.close?.()
  })
  fastify.addHook('onReady', async () => {
    // an SDK registered after the plugin, before ready(), is found here
    telemetry.refresh()
    await checkStoreAtReady(fastify, store, options.startDegraded === true)
  })

  // the paths of the plugin's routes, which the aliases' forms reach in any letter case
  const shapes = new RouteShapes()
  await fastify.register(async function jwtLoginRoutes (instance) {
    collectRouteShapes(instance, shapes)
    traceFlows(instance, telemetry)
    addGateHooks(instance, ctx, settings)
    await setUpScope(instance, {
      bodyLimit: initial.bodyLimit,
      multipart: options.multipart === true,
      store,
      ownNotFound: trimPrefix(prefix) !== '',
      authCodeNames: () => settings.current.authCodes,
      initial,
      messages,
      settings: () => settings.current
    })
    await registerRoutes(instance, ctx)
  }, { prefix, logSerializers: SCOPE_SERIALIZERS })

  // the query form's and the aliases' preflights reach the plugin only when its CORS answers them
  if (options.restRoute !== false) serveRestRoute(fastify, restNamespaces(prefix, aliases), initial.cors.enabled, shapes)
  serveAliases(fastify, prefix, aliases, shapes)
}

export default fp(jwtLogin, { name: 'fastify-jwt-login', fastify: '5.x' })
export { jwtLogin }
export { restRouteRewrite } from './http/rest-route.js'
export { BEARER_SCHEME, jwtLoginOpenApi } from './http/openapi.js'
export type { JwtLoginOptions, UserCacheOptions } from './http/options.js'
export type { ApiKeyIdentity, ApiKeyInfo, ApiKeyRequest, AuthenticateOptions, CreatedApiKey, EndAllSessionsOptions, HealthCheck, HealthOptions, HealthReport, JwtLoginApi, JwtLoginRequestState, SessionInfo } from './http/api.js'
export type { ImpersonateOptions, Impersonation } from './admin/impersonation.js'
export type { TrustedDevice } from './tokens/trusted-devices.js'
export { JwtLoginError, errorDefinitions, isJwtLoginError, type JwtLoginErrorCode } from './core/errors.js'
export { HostPortError } from './adapters/guard.js'
export { JwtLoginSettingsError } from './core/errors.js'
export type { Settings } from './config/settings.js'
export type { SettingsSource } from './config/holder.js'
export type { SettingsInput } from '../schemas/settings.js'
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js'
export type { AtomicBatch, BatchIncrement, ReadAndIncrementOptions, ReadAndIncrementResult, StateStore, StoreLogger } from './store/types.js'
export { hashPassword, verifyPasswordHash, ARGON2_OPTIONS, type NewProviderUser, type NewUser, type PublicUser, type UserAdapter } from './adapters/users.js'
export { UserExistsError, USER_EXISTS_CODE, IdentityTakenError, IDENTITY_TAKEN_CODE, type IdentityDetails, type LinkedIdentity } from './adapters/users.js'
export { JwtLoginEvents, type JwtLoginEventMap, type JwtLoginEventName, type JwtLoginEventPayload, type SessionEndReason } from './services/events.js'
export type { TokenClaims, TokenKind } from './tokens/jwt.js'
export type { PublicJwk } from './tokens/keys.js'
export type { Clock } from './core/clock.js'
export type { Mailer, MailMessage } from './mail/types.js'
export { DEFAULT_RESET_TEMPLATES, escapeHtml, renderTemplate, type MailTemplates, type ResetMailValues } from './mail/templates.js'
export type { PasswordPolicy } from './adapters/users.js'
export type { TwoFactorEnrollment, TwoFactorMethod, TwoFactorOptions, TwoFactorPort } from './adapters/two-factor.js'
export { createTotpSecret, TOTP_PERIOD } from './two-factor/methods/totp.js'
export { generateBackupCodes, hashBackupCode, BACKUP_CODE_COUNT } from './two-factor/methods/backup-codes.js'
export type { PasskeyDeviceType, PasskeyOptions, PasskeyPort, PasskeyUse, StoredPasskey } from './adapters/passkeys.js'
export type { Call, FirstFactor, SecondFactorGate, SecondFactorPassed, SessionOrigin, SignInResult } from './adapters/second-factor.js'
