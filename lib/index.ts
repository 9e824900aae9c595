import fastifyFormbody from '@fastify/formbody'
import fastifyMultipart from '@fastify/multipart'
import fastifyRateLimit from '@fastify/rate-limit'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { SettingsInput } from '../schemas/settings.js'
import { clientKey } from './client-key.js'
import { systemClock, type Clock } from './clock.js'
import type { JwtLoginContext, SecondFactorGate } from './context.js'
import { toMs } from './duration.js'
import { envelope, JwtLoginError } from './errors.js'
import { JwtLoginEvents } from './events.js'
import { AttemptLimiter } from './limits.js'
import { parseBearer } from './params.js'
import type { Mailer } from './mail/types.js'
import { StoreRateLimit } from './rate-limit-store.js'
import { checkResetSetup, PasswordReset, type PasswordPolicy } from './reset-password.js'
import { authRoutes } from './routes/auth.js'
import { resetPasswordRoutes } from './routes/reset-password.js'
import { twoFactorRoutes } from './routes/two-factor.js'
import { oauthRoutes } from './routes/oauth.js'
import { authenticateToken } from './session.js'
import { JwtLoginSettingsError, SettingsHolder, type Settings, type SettingsSource } from './settings.js'
import { guardStore } from './store/guard.js'
import { MemoryStore } from './store/memory.js'
import type { StateStore } from './store/types.js'
import { buildKeyMaterial, TokenService, type TokenClaims } from './tokens.js'
import { createTwoFactor, secondFactorGate } from './two-factor/flow.js'
import type { TwoFactorEnrollment, TwoFactorOptions } from './two-factor/types.js'
import { hashPassword, verifyPasswordHash, type PublicUser, type UserAdapter } from './users.js'

export interface JwtLoginOptions {
  /** The settings, or an async source (the host's admin screen) re-read every `settingsTtl`. */
  settings: SettingsInput | SettingsSource
  /** How long a read of an async settings source stays fresh (default 30 s). */
  settingsTtl?: number | string
  /** The host's users. */
  users: UserAdapter<any>
  /** Short-lived state; defaults to a `MemoryStore` (one process). Use `RedisStore` for many. */
  store?: StateStore
  /** Route prefix (default `/jwt-login/v1`). */
  prefix?: string
  /**
   * Serve `/?rest_route=/jwt-login/v1/<path>` as WordPress clients call it
   * (default true). Turn it off when the host owns `/`, and use `restRouteRewrite`.
   */
  restRoute?: boolean
  /** Time source in ms; tests inject one. */
  clock?: Clock
  /** Sends mail (reset codes). Needed when `resetPassword.enabled` is on. */
  mailer?: Mailer
  /** The host's own rule for a new password, after the length settings (see `PasswordPolicy`). */
  passwordPolicy?: PasswordPolicy
  /** Two-factor sign-in: the host's two-factor port (and a mailer for email codes). */
  twoFactor?: TwoFactorOptions
  /** A second factor for every sign-in (password or provider); a two-factor module fills this seam. */
  secondFactor?: SecondFactorGate
}

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
  /** A preHandler for host routes: requires a valid final token in `Authorization: Bearer`. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  /** The audit events. */
  events: JwtLoginEvents
  /** The settings in force. */
  readonly settings: Settings
  /** Re-reads an async settings source now. */
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

const DEFAULT_PREFIX = '/jwt-login/v1'
/** `/jwks` is public and changes only with a restart: caches may keep it this long. */
const JWKS_CACHE_CONTROL = 'public, max-age=300'
const SECRET_QUERY = /([?&])([^=&]*)=[^&]*/g

/** Request log lines keep the path and the parameter names, never their values (a JWT may be there). */
function redactUrl (url: string): string {
  return url.replace(SECRET_QUERY, '$1$2=[redacted]')
}

function checkAdapter (users: unknown): void {
  const required = ['findByEmail', 'findByLogin', 'findById', 'verifyPassword', 'toPublicUser']
  for (const method of required) {
    if (users === null || typeof users !== 'object' || typeof (users as Record<string, unknown>)[method] !== 'function') {
      throw new JwtLoginSettingsError(`users/${method}`, 'the user adapter must implement it')
    }
  }
}

/** Maps anything thrown inside the plugin to a jwt-login error; no client input becomes a 500. */
function toJwtLoginError (error: FastifyError | JwtLoginError): JwtLoginError {
  if (error instanceof JwtLoginError) return error
  if (error.validation !== undefined) return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
  return new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
}

/** Requests inside @fastify/multipart's body reader (see the hooks around its registration). */
const readingMultipart = new WeakSet<FastifyRequest>()

function sendError (reply: FastifyReply, error: JwtLoginError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
  if (error.wwwAuthenticate !== undefined) reply.header('www-authenticate', error.wwwAuthenticate)
  return reply.code(error.statusCode).send(envelope(error))
}

async function jwtLogin (fastify: FastifyInstance, options: JwtLoginOptions): Promise<void> {
  checkAdapter(options.users)
  const clock = options.clock ?? systemClock
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const events = new JwtLoginEvents()
  const backing = options.store ?? new MemoryStore({ clock })
  backing.attachLogger?.(fastify.log)
  const store = guardStore(backing)
  const settings = await SettingsHolder.create(options.settings, {
    ttlMs: toMs(options.settingsTtl ?? 30),
    now: clock,
    onInvalid: (error) => fastify.log.warn({ err: error }, 'jwt-login: settings reload refused; the last good settings stay'),
    accept: (next, current) => {
      if (JSON.stringify(next.tokens.keys) !== JSON.stringify(current.tokens.keys) || next.tokens.algorithm !== current.tokens.algorithm) {
        throw new JwtLoginSettingsError('tokens/keys', 'keys and algorithm change only with a restart')
      }
      if (next.bodyLimit !== current.bodyLimit) throw new JwtLoginSettingsError('bodyLimit', 'changes only with a restart')
      checkResetSetup(next, options.users, options.mailer)
    }
  })
  const initial = settings.current
  checkResetSetup(initial, options.users, options.mailer)
  const tokens = new TokenService(buildKeyMaterial(initial.tokens), initial.tokens.algorithm, store, clock)
  const dummyHash = await hashPassword(`jwt-login-dummy-${Math.random()}`)

  const ctx: JwtLoginContext = {
    settings,
    users: options.users,
    store,
    tokens,
    limiter: new AttemptLimiter(store, clock),
    events,
    clock,
    spendPasswordTime: async (password) => { await verifyPasswordHash(dummyHash, password) },
    secondFactor: options.secondFactor ?? null
  }
  const twoFactor = options.twoFactor === undefined ? null : createTwoFactor(ctx, options.twoFactor, fastify.log)
  if (twoFactor !== null) ctx.secondFactor = secondFactorGate(ctx, twoFactor)

  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      if (!settings.current.authentication.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_DISABLED')
      // a protected host route: no token is 401 / 53 with a bare challenge, a header
      // that is not `Bearer <token>` is 401 / 2 with invalid_request (RFC 6750 §3.1)
      const header = request.headers.authorization
      if (header === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_BEARER_MISSING')
      const auth = await authenticateToken(ctx, parseBearer(header, 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED'))
      request.jwtLogin = { user: auth.publicUser, claims: auth.verified.payload }
    } catch (error) {
      await sendError(reply, toJwtLoginError(error as FastifyError))
    }
  }

  const api: JwtLoginApi = {
    sign: (user) => tokens.sign(settings.current, user, 'access', { sessionId: tokens.newSessionId() }).token,
    verify: async (token) => (await authenticateToken(ctx, token)).verified.payload,
    revoke: async (token) => { await tokens.revoke(settings.current, (await authenticateToken(ctx, token)).verified.payload) },
    authenticate,
    events,
    get settings () { return settings.current },
    reloadSettings: async () => { await settings.reload() },
    jwks: () => tokens.jwks(),
    twoFactor: twoFactor?.enrollment ?? null
  }
  const passwordReset = new PasswordReset(ctx, { mailer: options.mailer ?? null, passwordPolicy: options.passwordPolicy ?? null, log: fastify.log })
  fastify.addHook('onClose', async () => { passwordReset.close() })
  fastify.decorate('jwtLogin', api)
  fastify.decorateRequest('jwtLogin', null)
  if (options.store === undefined) fastify.addHook('onClose', async () => { await store.close?.() })

  await fastify.register(async function jwtLoginRoutes (instance) {
    await instance.register(fastifyFormbody, { bodyLimit: initial.bodyLimit })
    // @fastify/multipart reads the body in a preValidation hook, and busboy's errors
    // (no boundary, wrong boundary, truncated body) carry no status: these two hooks
    // bracket that reader so the error handler knows a failure there is the body's fault
    instance.addHook('preValidation', (request, _reply, done) => { readingMultipart.add(request); done() })
    await instance.register(fastifyMultipart, {
      attachFieldsToBody: 'keyValues',
      limits: { files: 0, fields: 32, fieldSize: initial.bodyLimit, fileSize: 0, parts: 32 }
    })
    instance.addHook('preValidation', (request, _reply, done) => { readingMultipart.delete(request); done() })
    await instance.register(fastifyRateLimit, {
      global: true,
      store: StoreRateLimit.bind(null, store) as unknown as never,
      keyGenerator: (request) => clientKey(request.ip),
      max: () => settings.current.limits.requestsPerIp.max,
      timeWindow: () => settings.current.limits.requestsPerIp.windowMs,
      errorResponseBuilder: (_request, context) => new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)) })
    })

    // a bodyLimit in register options is ignored by Fastify: set it on each route
    instance.addHook('onRoute', (route) => { route.bodyLimit ??= initial.bodyLimit })

    // no coercion: an array or a number where a string belongs is a 400, not a string
    instance.setValidatorCompiler(TypeBoxValidatorCompiler)
    // a POST without a body (the token in a header) validates as an empty object
    instance.addHook('preValidation', async (request) => {
      if (request.body === undefined || request.body === null) request.body = {}
    })

    instance.setErrorHandler((error: FastifyError | JwtLoginError, request, reply) => {
      const mapped = readingMultipart.has(request)
        ? new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST', { cause: error })
        : toJwtLoginError(error)
      if (mapped.statusCode >= 500) request.log.error({ err: mapped.cause ?? mapped }, 'jwt-login: dependency failed')
      return sendError(reply, mapped)
    })

    // token answers and errors are never stored by a cache (RFC 6749 §5.1), on
    // every route of the plugin; only /jwks sets its own, public, Cache-Control
    instance.addHook('onSend', (_request, reply, payload, done) => {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      done(null, payload)
    })

    // unknown paths and methods under the prefix answer the envelope, counted by
    // the per-IP limit; the host's 404s (outside the prefix) stay the host's, so
    // with an empty prefix (`''` or `'/'`) there is no handler of the plugin's
    if (prefix.replace(/\/+$/, '') !== '') {
      instance.setNotFoundHandler({ preHandler: instance.rateLimit() }, async () => {
        throw new JwtLoginError('ERR_JWT_LOGIN_NOT_FOUND')
      })
    }

    authRoutes(instance, ctx)
    resetPasswordRoutes(instance, passwordReset)
    twoFactorRoutes(instance, ctx, twoFactor)
    oauthRoutes(instance, ctx)
    if (tokens.jwks() !== null) {
      // public keys: cacheable, and not counted by the per-IP limit (verifiers fetch them freely)
      instance.get('/jwks', { config: { rateLimit: false } }, async (_request, reply) => {
        reply.header('cache-control', JWKS_CACHE_CONTROL)
        return tokens.jwks()
      })
    }
  }, {
    prefix,
    bodyLimit: initial.bodyLimit,
    logSerializers: { req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }) }
  } as never)

  if (options.restRoute !== false) {
    registerRestRoute(fastify, prefix)
  }
}

/**
 * For hosts that own `/`: pass to `Fastify({ rewriteUrl })` so
 * `/?rest_route=/jwt-login/v1/auth` reaches `/jwt-login/v1/auth`.
 */
export function restRouteRewrite (prefix: string = DEFAULT_PREFIX): (req: { url?: string }) => string {
  return (req) => rewriteRestRoute(req.url ?? '/', prefix) ?? req.url ?? '/'
}

function rewriteRestRoute (url: string, prefix: string): string | null {
  const queryAt = url.indexOf('?')
  if (queryAt === -1 || (url.slice(0, queryAt) !== '/' && url.slice(0, queryAt) !== '')) return null
  const params = new URLSearchParams(url.slice(queryAt + 1))
  const route = params.get('rest_route')
  if (route === null || !(route === prefix || route.startsWith(`${prefix}/`))) return null
  params.delete('rest_route')
  const rest = params.toString()
  return rest === '' ? route : `${route}?${rest}`
}

function registerRestRoute (fastify: FastifyInstance, prefix: string): void {
  fastify.route({
    method: ['GET', 'POST', 'PUT'],
    url: '/',
    logSerializers: { req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }) },
    onRequest: (request, reply, done) => {
      const target = rewriteRestRoute(request.url, prefix)
      if (target === null) {
        done()
        return
      }
      request.raw.url = target
      reply.hijack()
      fastify.routing(request.raw, reply.raw)
    },
    handler: (_request, reply) => {
      reply.callNotFound()
    }
  })
}

export default fp(jwtLogin, { name: 'jwt-login', fastify: '5.x' })
export { jwtLogin }
export { JwtLoginError, errorDefinitions, isJwtLoginError, type JwtLoginErrorCode } from './errors.js'
export { JwtLoginSettingsError, type Settings, type SettingsSource } from './settings.js'
export type { SettingsInput } from '../schemas/settings.js'
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js'
export { RedisStore, type RedisStoreOptions } from './store/redis.js'
export type { StateStore, StoreLogger } from './store/types.js'
export { MemoryUserAdapter, hashPassword, ARGON2_OPTIONS, type MemoryUser, type NewMemoryUser, type NewProviderUser, type PublicUser, type UserAdapter } from './users.js'
export { JwtLoginEvents, type JwtLoginEventMap, type JwtLoginEventName } from './events.js'
export type { TokenClaims, TokenKind } from './tokens.js'
export type { Clock } from './clock.js'
export type { Mailer, MailMessage } from './mail/types.js'
export { NodemailerMailer, ConsoleMailer, SMTP_TIMEOUTS, type NodemailerMailerOptions } from './mail/nodemailer.js'
export { DEFAULT_RESET_TEMPLATES, escapeHtml, renderTemplate, type MailTemplates, type ResetMailValues } from './mail/templates.js'
export type { PasswordPolicy } from './reset-password.js'
export type { TwoFactorEnrollment, TwoFactorMethod, TwoFactorOptions, TwoFactorPort } from './two-factor/types.js'
export { MemoryTwoFactorStore } from './two-factor/memory.js'
export { createTotpSecret, TOTP_PERIOD } from './two-factor/totp.js'
export { generateBackupCodes, hashBackupCode, BACKUP_CODE_COUNT } from './two-factor/backup-codes.js'
export type { SecondFactorGate, SignInResult } from './context.js'
