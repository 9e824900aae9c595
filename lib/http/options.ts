import type { RegisterOptions } from 'fastify'
import { KeySchema, SettingsSchema, type SettingsInput } from '../../schemas/settings.js'
import type { Clock } from '../core/clock.js'
import { DEFAULT_PREFIX, trimPrefix } from './rest-route.js'
import type { HostPorts } from '../adapters/guard.js'
import type { UserAdapter } from '../adapters/users.js'
import { requireCapability, USER_ADAPTER_MANIFEST } from '../adapters/manifest.js'
import { DURATION_HINT, durationAt, toMs } from '../config/duration.js'
import type { Mailer } from '../mail/types.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { nearestName } from '../core/names.js'
import type { ResolvedKey, Settings } from '../config/settings.js'
import type { SettingsSource } from '../config/holder.js'
import { checkCoherence, settingsWarning } from '../config/coherence.js'
import { checkAccountSetup } from '../account/setup.js'
import { checkPorts, optionError } from './port-checks.js'
import type { StateStore } from '../store/types.js'
import type { UserCacheLimits } from '../services/user-cache.js'
import type { CatalogueInput } from '../i18n/messages.js'

/**
 * A short cache of `findById` in front of the user adapter: a user is served
 * from memory for `ttl` (seconds or `'10s'`, at most 60 s), at most `max`
 * users (default 10 000). Revocation and password reset drop the user's
 * entry; a host that changes or removes a user calls `jwtLogin.forgetUser`.
 */
export interface UserCacheOptions {
  ttl: number | string
  max?: number
}

/** The plugin's options: the host's ports (`HostPorts`), the settings and how the plugin is mounted. */
export interface JwtLoginOptions extends HostPorts {
  /** The settings, or an async source (the host's admin screen) re-read every `settingsTtl`. */
  settings: SettingsInput | SettingsSource
  /** How often an async settings source is re-read (default 30 s). */
  settingsTtl?: number | string
  /** Off by default: every request that needs the user asks the adapter. */
  userCache?: UserCacheOptions
  /** Short-lived state; defaults to a `MemoryStore` (one process). Use `RedisStore` for many. */
  store?: StateStore
  /** Route prefix (default `/jwt-login/v1`). */
  prefix?: string
  /**
   * More paths that answer as the prefix does, such as
   * `['/wp-json/simple-jwt-login/v1']` for clients of a WordPress site, in
   * every form WordPress answers: with its `/?rest_route=` and
   * `/index.php?rest_route=` forms (without `/wp-json`, as WordPress names
   * it), under `/index.php/wp-json/`, the route in any letter case and with
   * trailing slashes. The OpenAPI document lists the prefix only.
   */
  aliases?: string[]
  /**
   * Serve `/?rest_route=/jwt-login/v1/<path>` and `/index.php?rest_route=…`
   * as WordPress clients call them (default true). Turn it off when the host
   * owns `/` or `/index.php`, and use `restRouteRewrite`.
   */
  restRoute?: boolean
  /** Accept `multipart/form-data` bodies (default false): its reader runs on every plugin request once on. */
  multipart?: boolean
  /**
   * Message catalogues by language tag, laid over the shipped ones (`en`,
   * `de`, `fr`, `es`, `pt`): a shipped language's texts overridden, or a new
   * language (what it leaves out is English). Checked at registration.
   */
  messages?: Record<string, CatalogueInput>
  /** Time source in ms; tests inject one. */
  clock?: Clock
  /**
   * Start even when the state store fails its check at `ready()` (default
   * false: `ready()` rejects, naming the problem and its fix). The failure
   * is logged as an error (and printed to stderr without a Fastify logger),
   * and requests that need the store answer 503 until it is back.
   */
  startDegraded?: boolean
}

/**
 * Every option of `JwtLoginOptions`: a record, so that an option added to
 * the type (or to `HostPorts`) and not listed here fails the type check.
 */
const OPTIONS: Record<keyof JwtLoginOptions, true> = {
  users: true,
  mailer: true,
  passwordPolicy: true,
  twoFactor: true,
  secondFactor: true,
  passkeys: true,
  settings: true,
  settingsTtl: true,
  userCache: true,
  store: true,
  prefix: true,
  aliases: true,
  restRoute: true,
  multipart: true,
  messages: true,
  clock: true,
  startDegraded: true
}

/** The names of the plugin's options, the only top-level keys registration accepts besides Fastify's own. */
export const OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(OPTIONS))

/**
 * Fastify's register options, which Fastify hands to the plugin with its
 * own (it strips none) and a host may pass (`prefix` is also the plugin's).
 */
const FASTIFY_REGISTER_OPTIONS: ReadonlyArray<keyof RegisterOptions> = ['prefix', 'logLevel', 'logSerializers']

/** Advice for names brought from elsewhere (@fastify/jwt, jsonwebtoken). */
const FOREIGN_OPTIONS: Record<string, string> = {
  secret: 'jwt-login takes its keys from settings.tokens.keys (docs/settings.md#tokens)',
  key: 'jwt-login takes its keys from settings.tokens.keys (docs/settings.md#tokens)',
  keys: 'jwt-login takes its keys from settings.tokens.keys (docs/settings.md#tokens)',
  algorithm: 'the algorithm is the setting settings.tokens.algorithm (docs/settings.md#tokens)',
  expiresIn: 'token lifetimes are the settings settings.tokens.lifetime and settings.refresh.lifetime (docs/settings.md#tokens)',
  sign: 'signing is set by settings.tokens (docs/settings.md#tokens)',
  verify: 'verification is set by settings.tokens (docs/settings.md#tokens)'
}

/** The top-level settings, which belong inside `settings`, not beside it. */
const SETTING_GROUPS = new Set(Object.keys(SettingsSchema.properties))

/** setTimeout's longest delay: a longer one fires at once, and the reload timer would spin. */
const MAX_TIMER_MS = 2 ** 31 - 1
/** A longer cache would serve a changed or removed user for longer than a host expects of "short". */
const MAX_USER_CACHE_TTL_MS = 60_000
const DEFAULT_USER_CACHE_MAX = 10_000

/** Refuses settings that switch reset on without what it needs. Called at registration and on every reload. */
export function checkResetSetup (settings: Settings, users: UserAdapter<any>, mailer: Mailer | undefined): void {
  if (!settings.resetPassword.enabled) return
  requireCapability(USER_ADAPTER_MANIFEST, users, 'setPassword', 'resetPassword/enabled', 'password reset')
  if (mailer === undefined) throw new JwtLoginSettingsError('resetPassword/enabled', 'password reset needs the `mailer` option')
}

/** The `userCache` option in ms and entries, or `null` when it is off; refuses it naming the field. */
export function resolveUserCache (option: UserCacheOptions | undefined): UserCacheLimits | null {
  if (option === undefined) return null
  if (option === null || typeof option !== 'object') throw optionError('userCache', 'must be an object with a ttl')
  const ttlMs = durationAt(option.ttl, 'userCache/ttl', 'option')
  if (!(ttlMs > 0) || ttlMs > MAX_USER_CACHE_TTL_MS) throw optionError('userCache/ttl', 'must be more than 0 and at most 60 seconds')
  const max = option.max ?? DEFAULT_USER_CACHE_MAX
  if (!Number.isSafeInteger(max) || max <= 0) throw optionError('userCache/max', 'must be a positive integer')
  return { ttlMs, max }
}

/**
 * Refuses an option that is not one: the first such key in the path, each
 * in the reason with the option it is near (`prefx`: did you mean
 * `prefix`?), or advice for a setting given beside `settings` and for names
 * of other JWT plugins (`secret`). Fastify's own register options pass.
 */
function refuseUnknownOptions (options: object): void {
  const known = new Set<string>([...OPTION_NAMES, ...FASTIFY_REGISTER_OPTIONS])
  const unknown = Object.keys(options).filter(name => !known.has(name))
  if (unknown.length === 0) return
  const reasons = unknown.map((name) => {
    const near = nearestName(name, OPTION_NAMES)
    const advice = FOREIGN_OPTIONS[name] ??
      (SETTING_GROUPS.has(name) ? `\`${name}\` is a setting: put it inside \`settings\` (docs/settings.md#settings)` : undefined) ??
      (near === undefined ? undefined : `did you mean \`${near}\`?`)
    return `\`${name}\`${advice === undefined ? '' : ` (${advice})`}`
  })
  throw optionError(unknown[0] as string, `not an option of jwt-login: ${reasons.join(', ')}. The options are listed in docs/settings.md#options`)
}

/** A prefix is a path from the root (or `''`, the root itself): without its slash the `/?rest_route=` form would answer 404. */
function checkPrefix (prefix: unknown): void {
  if (prefix === undefined || prefix === '' || (typeof prefix === 'string' && prefix.startsWith('/'))) return
  const fix = typeof prefix === 'string' ? `: write '/${prefix}'` : ''
  throw optionError('prefix', `must be a path that starts with a slash, such as '/jwt-login/v1' (or '' for the host's root)${fix}; without it the /?rest_route= form answers 404`)
}

/** `settingsTtl` in ms (default 30 s): a duration the reload timer can wait. */
export function resolveSettingsTtl (option: number | string | undefined): number {
  let ms: number
  try {
    ms = toMs(option === undefined ? 30 : option)
  } catch {
    ms = NaN
  }
  if (!(ms >= 1 && ms <= MAX_TIMER_MS)) throw optionError('settingsTtl', `must be a duration (${DURATION_HINT}) from 1 ms to 24 days`)
  return ms
}

/** Where the docs show two instances in one host. */
const TWO_INSTANCES_DOCS = 'docs/deployment.md#two-instances-in-one-host'

/**
 * Refuses a second registration in a scope that has an instance already
 * (its own or a parent's `fastify.jwtLogin`), before anything is decorated:
 * Fastify would refuse it with a bare FST_ERR_DEC_ALREADY_PRESENT. Says
 * how two instances live in one host.
 */
export function refuseSecondRegistration (alreadyRegistered: boolean): void {
  if (!alreadyRegistered) return
  throw optionError('', 'jwt-login is already registered in this scope (fastify.jwtLogin exists). To run two instances in one host, ' +
    'register each in its own encapsulated plugin, app.register(async (scope) => { await scope.register(jwtLogin, { prefix: \'/other/v1\', restRoute: false, … }) }), ' +
    `each with its own prefix, and restRoute: false on all but one (the /?rest_route= form is served on the host's /); see ${TWO_INSTANCES_DOCS}`)
}

/**
 * Refuses options the plugin cannot run with, naming the field; answers
 * what needs resolving (the user cache, the settings reload period).
 */
export function checkOptions (options: JwtLoginOptions): { userCache: UserCacheLimits | null, settingsTtlMs: number } {
  refuseUnknownOptions(options)
  checkPrefix(options.prefix)
  checkPorts(options)
  if (options.startDegraded !== undefined && typeof options.startDegraded !== 'boolean') throw optionError('startDegraded', 'must be true or false')
  return { userCache: resolveUserCache(options.userCache), settingsTtlMs: resolveSettingsTtl(options.settingsTtl) }
}

/** Checks settings against the options, at registration and on every reload. */
export function checkSettings (settings: Settings, options: JwtLoginOptions): void {
  checkCoherence(settings, { twoFactor: options.twoFactor !== undefined })
  checkResetSetup(settings, options.users, options.mailer)
  checkAdapterFor(settings, options.users)
  checkAccountSetup(settings, options)
  if (settings.passkeys.enabled && options.passkeys === undefined) {
    throw new JwtLoginSettingsError('passkeys/enabled', 'passkeys need the `passkeys` option: { port } (a PasskeyPort; MemoryPasskeyStore from fastify-jwt-login/testing for a demo)')
  }
  if (settings.cors.enabled && trimPrefix(options.prefix ?? DEFAULT_PREFIX) === '') {
    throw new JwtLoginSettingsError('cors/enabled', "with prefix '' the plugin's routes share the host's root, and its CORS would answer the preflights of every host route: leave cors.enabled off and register @fastify/cors for the whole app (docs/browser-apps.md)")
  }
}

/**
 * Settings that need an optional method of the user adapter. The flows
 * still refuse when the method is missing at request time (an adapter
 * changed after registration): 401 / 48 for a hash login, 500 / 52 for a
 * provider's auto-registration, 503 / 201 at `POST` and `DELETE /users`.
 */
function checkAdapterFor (settings: Settings, users: UserAdapter): void {
  const need = (on: boolean, name: string, path: string, what: string): void => {
    if (on) requireCapability(USER_ADAPTER_MANIFEST, users, name, path, what)
  }
  need(settings.login.allowPasswordHash, 'getPasswordHash', 'login/allowPasswordHash', 'logging in with password_hash')
  need(settings.users.register.enabled, 'createUser', 'users/register/enabled', 'registering users')
  need(settings.users.delete.enabled, 'deleteUser', 'users/delete/enabled', 'deleting users')
  for (const [name, provider] of Object.entries(settings.oauth.providers)) {
    need(provider.enabled && provider.autoRegister, 'createUser', `oauth/providers/${name}/autoRegister`, 'registering users')
  }
}

/** The fields of a signing key: the schema admits no others. */
const KEY_FIELDS = Object.keys(KeySchema.properties) as Array<keyof ResolvedKey>

/**
 * Whether two lists of signing keys are the same keys in the same order,
 * compared field by field, so that a source which only reorders a key's
 * fields (`{ secret, kid }`) changes nothing.
 */
function sameKeys (next: ResolvedKey[], current: ResolvedKey[]): boolean {
  return next.length === current.length && next.every((key, index) => KEY_FIELDS.every(field => key[field] === current[index]?.[field]))
}

/**
 * What a reload may not change: the keys, the algorithm and the body limit
 * need a restart. Turning CORS on when it was off at registration
 * (`corsRegistered`) needs one too, since that registers @fastify/cors; the
 * reload is still taken, and `warn` says (once) that CORS waits for the
 * restart, so a kill switch in the same reload is not held back.
 */
export function acceptReload (options: JwtLoginOptions, corsRegistered: () => boolean, warn: (message: string) => void): (next: Settings, current: Settings) => void {
  let warned = false
  return (next, current) => {
    if (next.cors.enabled && !corsRegistered() && !warned) {
      warned = true
      warn('jwt-login: cors.enabled was turned on by a settings reload; CORS takes effect at the next restart (it was off at registration)')
    }
    const warning = settingsWarning(next)
    if (warning !== null && settingsWarning(current) === null) warn(warning)
    if (!sameKeys(next.tokens.keys, current.tokens.keys) || next.tokens.algorithm !== current.tokens.algorithm) {
      throw new JwtLoginSettingsError('tokens/keys', 'keys and algorithm change only with a restart')
    }
    if (next.bodyLimit !== current.bodyLimit) throw new JwtLoginSettingsError('bodyLimit', 'changes only with a restart')
    checkSettings(next, options)
  }
}
