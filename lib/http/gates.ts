import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { checkAuthCode } from './auth-codes.js'
import { checkOrigin, cookieCredential, cookieMode } from './browser.js'
import type { Call } from '../adapters/second-factor.js'
import type { GateAudit, JwtLoginContext } from '../context/context.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import { bodyOf, presentedJwt, queryOf, stringField } from './fields.js'
import type { Settings } from '../config/settings.js'
import { keepsLinks } from '../adapters/users.js'
import type { SettingsHolder } from '../config/holder.js'

/** A switch a route needs on, besides `authentication.enabled`. */
export type Feature = 'validate' | 'refresh' | 'revoke' | 'resetPassword' | 'emailSignIn' | 'twoFactor' | 'sessions' | 'passkeys' | 'register' | 'deleteUser' | 'apiKeys' | AccountFeature

/** The account routes' switches: the group's, and each part's beside it. */
type AccountFeature = 'account' | 'accountPassword' | 'accountEmail' | 'accountTwoFactor' | 'accountIdentities' | 'emailVerification'

/** The setting that makes the auth code required on a route. */
export type AuthCodeRule = 'auth' | 'validate' | 'refresh' | 'revoke' | 'oauth' | 'resetPassword' | 'register' | 'deleteUser'

/**
 * What a route of the plugin declares in `config.jwtLogin`; the gate hook
 * checks it against the request's settings snapshot, in this order:
 * `authentication.enabled` (unless `authentication: false`), the feature's
 * switch, then the auth code.
 */
export interface RouteGate {
  /** Whether the route needs authentication on (default true; password reset does not). */
  authentication?: boolean
  feature?: Feature
  authCode?: AuthCodeRule
  /**
   * Where the auth code may travel: `body` on credential routes (so it is
   * never in a URL), `query` for GET, `body-or-query` elsewhere.
   */
  authCodeFrom?: 'body' | 'query' | 'body-or-query'
  /**
   * Check a code that is given even where none is required: a wrong or
   * expired one is refused (401 / 27), as Simple JWT Login refuses it at
   * registration, rather than ignored.
   */
  authCodeWhenGiven?: boolean
  /** The token the route takes: read (not yet verified) into the request state, or its documented error. */
  token?: 'access' | 'interim'
  audit?: GateAudit
  /**
   * In cookie mode (`refresh.cookie`): `issues` (a route that sets the
   * refresh cookie), `reads` (refresh) and `ends` (revoke) refuse a foreign
   * origin; `reads` and `ends` may take the cookie as the credential, with
   * the CSRF token (see `cookieCredential`).
   */
  refreshCookie?: 'issues' | 'reads' | 'ends'
  /**
   * The errors the route's flow answers besides its gate's: each joins the
   * route's response schemas (serialisation and the OpenAPI document).
   */
  errors?: readonly JwtLoginErrorCode[]
}

/** The plugin's per-request state: the call (settings snapshot, IP, start) and the token the route takes. */
export interface RequestState {
  call: Call
  token: string | undefined
  /** The refresh token of the cookie, when the gate took it (CSRF checked). */
  refreshCookie?: string
}

export const kState = Symbol('jwt-login.request')

declare module 'fastify' {
  interface FastifyRequest {
    [kState]: RequestState
  }
  interface FastifyContextConfig {
    jwtLogin?: RouteGate
  }
}

/** The request's state; the hooks below set it on every route of the plugin. */
export function stateOf (request: FastifyRequest): RequestState {
  return request[kState]
}

const SWITCH_ERRORS = {
  validate: 'ERR_JWT_LOGIN_VALIDATE_DISABLED',
  refresh: 'ERR_JWT_LOGIN_REFRESH_DISABLED',
  revoke: 'ERR_JWT_LOGIN_REVOKE_DISABLED',
  resetPassword: 'ERR_JWT_LOGIN_RESET_DISABLED',
  emailSignIn: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED',
  twoFactor: 'ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE',
  sessions: 'ERR_JWT_LOGIN_SESSIONS_DISABLED',
  passkeys: 'ERR_JWT_LOGIN_PASSKEYS_DISABLED',
  register: 'ERR_JWT_LOGIN_REGISTER_DISABLED',
  deleteUser: 'ERR_JWT_LOGIN_DELETE_DISABLED',
  account: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  accountPassword: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  accountEmail: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  accountTwoFactor: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  accountIdentities: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  emailVerification: 'ERR_JWT_LOGIN_ACCOUNT_DISABLED',
  apiKeys: 'ERR_JWT_LOGIN_API_KEYS_DISABLED'
} as const

const TOKEN_MISSING = { access: 'ERR_JWT_LOGIN_JWT_MISSING', interim: 'ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING' } as const

/** The errors a gate can answer, in the order it checks. */
export function gateErrors (gate: RouteGate): JwtLoginErrorCode[] {
  const errors: JwtLoginErrorCode[] = []
  if (gate.authentication !== false) errors.push('ERR_JWT_LOGIN_AUTH_DISABLED')
  if (gate.feature !== undefined) errors.push(SWITCH_ERRORS[gate.feature])
  if (gate.authCode !== undefined) errors.push('ERR_JWT_LOGIN_AUTH_CODE_MISSING', 'ERR_JWT_LOGIN_AUTH_CODE_INVALID')
  if (gate.refreshCookie !== undefined) errors.push('ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED')
  if (gate.token !== undefined) errors.push(TOKEN_MISSING[gate.token], 'ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED')
  if (gate.refreshCookie === 'reads' || gate.refreshCookie === 'ends') errors.push('ERR_JWT_LOGIN_CSRF_TOKEN_INVALID')
  return errors
}

/** Which ports the host gave: a feature with a port is on only with it. */
interface PortsGiven { twoFactor: boolean, passkeys: boolean, identities: boolean }

/** The `users` group's switches, by feature and auth-code rule. */
const USERS_GROUP = { register: 'register', deleteUser: 'delete' } as const

/** Each account switch: the group on and the part on; two-factor also with its option and its own switch; verification also while registration or sign-in needs it. */
const ACCOUNT_ON: Record<AccountFeature, (settings: Settings, ports: PortsGiven) => boolean> = {
  account: ({ account }) => account.enabled,
  accountPassword: ({ account }) => account.enabled && account.password.enabled,
  accountEmail: ({ account }) => account.enabled && account.email.enabled,
  accountTwoFactor: ({ account, twoFactor }, ports) => account.enabled && account.twoFactor.enabled && ports.twoFactor && twoFactor.enabled,
  accountIdentities: ({ account }, ports) => account.enabled && account.identities.enabled && ports.identities,
  emailVerification: ({ account, users, authentication }) => account.enabled || users.register.verifyEmail || authentication.requireVerifiedEmail
}

function featureOn (settings: Settings, feature: Feature, ports: PortsGiven): boolean {
  if (feature in ACCOUNT_ON) return ACCOUNT_ON[feature as AccountFeature](settings, ports)
  if (feature === 'twoFactor' || feature === 'passkeys') return ports[feature] && settings[feature].enabled
  if (feature === 'register' || feature === 'deleteUser') return settings.users[USERS_GROUP[feature]].enabled
  // a user's own keys: off with `selfService`, while the host's keys still work
  if (feature === 'apiKeys') return settings.apiKeys.enabled && settings.apiKeys.selfService
  return settings[feature as 'validate' | 'refresh' | 'revoke' | 'resetPassword' | 'emailSignIn' | 'sessions'].enabled
}

function authCodeRequired (settings: Settings, rule: AuthCodeRule): boolean {
  if (rule === 'register' || rule === 'deleteUser') return settings.users[USERS_GROUP[rule]].requireAuthCode
  return rule === 'resetPassword' ? settings.resetPassword.requireAuthCode : settings.authCodes.requireFor[rule]
}

/** The setting `authCodeRequired` reads for `rule`, as the docs name it. */
export function authCodeSetting (rule: AuthCodeRule): string {
  if (rule === 'register' || rule === 'deleteUser') return `users.${USERS_GROUP[rule]}.requireAuthCode`
  return rule === 'resetPassword' ? 'resetPassword.requireAuthCode' : `authCodes.requireFor.${rule}`
}

function presentedCode (request: FastifyRequest, name: string, from: RouteGate['authCodeFrom']): string | undefined {
  const body = bodyOf(request)
  const query = queryOf(request)
  if (from === 'body') return stringField(body, name)
  if (from === 'query') return stringField(query, name)
  return stringField(body, name) ?? stringField(query, name)
}

/** The switches a gate names: `authentication.enabled` (unless it says otherwise), then the feature's own. */
export function checkSwitches (settings: Settings, gate: RouteGate, ports: PortsGiven): void {
  if (gate.authentication !== false && !settings.authentication.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_DISABLED')
  if (gate.feature !== undefined && !featureOn(settings, gate.feature, ports)) throw new JwtLoginError(SWITCH_ERRORS[gate.feature])
}

function checkGate (ctx: JwtLoginContext, request: FastifyRequest, gate: RouteGate, state: RequestState, ports: PortsGiven): void {
  const { settings } = state.call
  let stage: 'switch' | 'auth_code' = 'switch'
  try {
    checkSwitches(settings, gate, ports)
    const required = gate.authCode !== undefined && authCodeRequired(settings, gate.authCode)
    if (required || (gate.authCode !== undefined && gate.authCodeWhenGiven === true)) {
      stage = 'auth_code'
      const name = gate.authCode === 'oauth' ? settings.authCodes.oauthParameter : settings.authCodes.parameter
      const presented = presentedCode(request, name, gate.authCodeFrom)
      if (required || presented !== undefined) checkAuthCode(presented, settings.authCodes.codes, state.call.startedAt)
    }
  } catch (error) {
    gate.audit?.(ctx.events, state.call, error as JwtLoginError, stage)
    throw error
  }
  const use = gate.refreshCookie
  const cookies = use !== undefined && cookieMode(settings)
  if (cookies) checkOrigin(request, settings)
  if (gate.token !== undefined) state.token = presentedJwt(request, settings.bearer, settings.apiKeys.prefix)
  if (cookies && use !== 'issues') {
    const own = gate.token === undefined ? stringField(bodyOf(request), 'refresh_token') : state.token
    state.refreshCookie = cookieCredential(request, settings, use, own)
  }
  if (gate.token !== undefined && state.token === undefined && state.refreshCookie === undefined) {
    throw new JwtLoginError(TOKEN_MISSING[gate.token])
  }
}

/**
 * The gate hooks of the plugin's routes. One `onRequest` hook for every
 * request of the scope (its 404s too) takes the request's one settings
 * snapshot and marks the answer `no-store` (a route may set its own
 * Cache-Control). Each route that declares a gate gets its own
 * `preHandler`, made once at registration, which checks it after the body
 * is parsed and validated: a route without one runs no gate at all, and no
 * request looks its route's options up. Both are synchronous.
 */
export function addGateHooks (instance: FastifyInstance, ctx: JwtLoginContext, settings: SettingsHolder): void {
  const ports: PortsGiven = { twoFactor: ctx.twoFactor !== null, passkeys: ctx.passkeys !== null, identities: keepsLinks(ctx.users) }
  instance.decorateRequest(kState, null as unknown as RequestState)
  instance.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const { headers } = request
    request[kState] = { call: { settings: settings.current, ip: request.ip, startedAt: ctx.clock(), userAgent: headers['user-agent'], acceptLanguage: headers['accept-language'] }, token: undefined }
    // no cache keeps a token answer or an error (RFC 6749 §5.1); only /jwks sets its own, public, Cache-Control
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    done()
  })
  instance.addHook('onRoute', (route) => {
    const gate = route.config?.jwtLogin
    if (gate === undefined) return
    const check = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      try {
        checkGate(ctx, request, gate, request[kState], ports)
      } catch (error) {
        done(error as Error)
        return
      }
      done()
    }
    // the gate first: a route's own preHandler runs on a request its gate let through
    route.preHandler = route.preHandler === undefined ? check : [check, ...[route.preHandler].flat()]
  })
}
