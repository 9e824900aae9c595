import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { DurationSchema, SettingsSchema, type Algorithm, type KeySchema, type OAuthProviderInput, type SettingsInput } from '../../schemas/settings.js'
import { DURATION_HINT, toMs } from './duration.js'
import type { MailTemplates } from '../mail/templates.js'
import { resolveOAuthProviders, type OAuthProviderSettings } from './oauth-providers.js'

if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)))
}

/** A signing key as configured (`kid` and the secret or PEM keys). */
export type ResolvedKey = Static<typeof KeySchema>

export interface ResolvedLimit { max: number, windowMs: number }

/** The settings whose values are durations; resolved, each becomes `<name>Ms`, in milliseconds. */
type DurationField = 'lifetime' | 'reuseInterval' | 'leeway' | 'window' | 'interimLifetime' | 'emailCodeLifetime' | 'retryDelay' | 'maxAge' | 'clockSkew'

/**
 * A settings group of the schema after defaults: every field present (each
 * optional one has a default), groups resolved in turn, and durations
 * renamed `<name>Ms` as numbers of milliseconds. Arrays and records keep
 * their element types.
 */
type Resolved<T> = {
  [K in keyof T as K extends DurationField ? `${K}Ms` : K]-?: K extends DurationField
    ? number
    : NonNullable<T[K]> extends Record<string, unknown> ? Resolved<NonNullable<T[K]>> : NonNullable<T[K]>
}
type Groups = Resolved<SettingsInput>

/**
 * Settings after defaults, with every duration in milliseconds: derived from
 * the schema; only the three groups that resolution reshapes say how.
 */
export type Settings = Omit<Groups, 'authCodes' | 'resetPassword' | 'oauth'> & {
  /** Expiry dates parsed (`null`: no expiry). */
  authCodes: Omit<Groups['authCodes'], 'codes'> & { codes: Array<{ code: string, expiresAt: number | null }> }
  /** The three mail templates gathered. */
  resetPassword: Omit<Groups['resetPassword'], 'mail'> & {
    mail: { siteName: string, templates: MailTemplates, retries: number, retryDelayMs: number }
  }
  /** Each provider with its preset applied. */
  oauth: { providers: Record<string, OAuthProviderSettings> }
}

/** The longest an interim (two-factor) token may live. */
export const MAX_INTERIM_LIFETIME_MS = 5 * 60 * 1000

/** The longest a rotated refresh token may still be retried. */
export const MAX_REUSE_INTERVAL_MS = 5 * 60 * 1000

/**
 * A setting or plugin option that is not valid; `path` names the field
 * (`tokens/keys/0/secret`, `store/consume`). The message says which of the
 * two it is: `jwt-login: invalid setting tokens/algorithm: …` or
 * `jwt-login: invalid option twoFactor/port/methodOf: …`.
 */
export class JwtLoginSettingsError extends Error {
  readonly code = 'ERR_JWT_LOGIN_INVALID_SETTINGS'
  readonly path: string

  constructor (path: string, reason: string, kind: 'setting' | 'option' = 'setting') {
    super(`jwt-login: invalid ${kind} ${path === '' ? '(root)' : path}: ${reason}`)
    this.name = 'JwtLoginSettingsError'
    this.path = path
  }
}

/** A duration in ms, or a refusal that names the field (a setting, or a plugin option). */
export function durationAt (value: unknown, path: string, kind: 'setting' | 'option' = 'setting'): number {
  try {
    return toMs(value as string | number)
  } catch (error) {
    throw new JwtLoginSettingsError(path, (error as Error).message, kind)
  }
}

type WithDefaults = Required<SettingsInput> & {
  [K in keyof SettingsInput]-?: Required<NonNullable<SettingsInput[K]>>
}

/**
 * Validates and defaults the settings; throws `JwtLoginSettingsError` naming
 * the first bad field. Long only for the resolved shape, written field by field.
 */
export function resolveSettings (input: unknown): Settings {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new JwtLoginSettingsError('', 'settings must be an object')
  }
  const value = Value.Default(SettingsSchema, structuredClone(input))
  const first = Value.Errors(SettingsSchema, value).First()
  if (first !== undefined) {
    throw new JwtLoginSettingsError(first.path.slice(1), unionReason(first.schema) ?? first.message)
  }
  const s = value as unknown as WithDefaults
  const kids = new Set<string>()
  s.tokens.keys.forEach((key, index) => {
    if (kids.has(key.kid)) throw new JwtLoginSettingsError(`tokens/keys/${index}/kid`, 'duplicate kid')
    kids.add(key.kid)
  })
  // the schema's pattern admits zero ('0s'); toMs refuses it, and the refusal must name the field
  const ms = (duration: unknown, path: string): number => durationAt(duration, path)
  const limit: LimitOf = (l, path) => ({ max: l.max as number, windowMs: ms(l.window, `${path}/window`) })
  const twoFactor = s.twoFactor as { enabled: boolean, interimLifetime: string | number, attemptsPerChallenge: number, perAccount: { max?: number, window?: string | number }, emailCodeLifetime: string | number }
  const interimLifetimeMs = ms(twoFactor.interimLifetime, 'twoFactor/interimLifetime')
  if (interimLifetimeMs > MAX_INTERIM_LIFETIME_MS) throw new JwtLoginSettingsError('twoFactor/interimLifetime', 'must be at most 5 minutes')
  const reuseIntervalMs = s.refresh.reuseInterval === 0 ? 0 : ms(s.refresh.reuseInterval, 'refresh/reuseInterval')
  if (reuseIntervalMs > MAX_REUSE_INTERVAL_MS) throw new JwtLoginSettingsError('refresh/reuseInterval', 'must be at most 5 minutes')
  const limits = s.limits as Record<'loginPerAccount' | 'loginPerIp' | 'requestsPerIp' | 'signInsPerAccount', { max?: number, window?: string | number }>
  const sessions = s.sessions as { maxPerUser: number, clockSkew: string | number }
  const resetPassword = resolveResetPassword(s.resetPassword, limit, ms)
  const cors = resolveCors(s.cors, ms)
  if (s.refresh.enabled === true && s.refresh.cookie.enabled === true && cors.enabled && cors.origins.length > 0 && !cors.credentials) {
    throw new JwtLoginSettingsError('cors/credentials', 'cookie mode (refresh.cookie.enabled) across origins needs cors.credentials: true, or the browsers send no cookie')
  }
  return {
    authentication: { enabled: s.authentication.enabled as boolean },
    authCodes: {
      codes: (s.authCodes.codes as NonNullable<typeof s.authCodes.codes>).map(c => ({ code: c.code, expiresAt: c.expiresAt === undefined ? null : Date.parse(c.expiresAt) })),
      parameter: s.authCodes.parameter as string,
      oauthParameter: s.authCodes.oauthParameter as string,
      requireFor: requireAuthCodeFor(s.authCodes.requireFor as RequireForInput)
    },
    login: { allowPasswordHash: s.login.allowPasswordHash as boolean },
    bearer: { enabled: s.bearer.enabled as boolean },
    refresh: { enabled: s.refresh.enabled as boolean, lifetimeMs: ms(s.refresh.lifetime, 'refresh/lifetime'), reuseIntervalMs, cookie: s.refresh.cookie as Settings['refresh']['cookie'] },
    validate: { enabled: s.validate.enabled as boolean },
    revoke: { enabled: s.revoke.enabled as boolean },
    tokens: {
      algorithm: s.tokens.algorithm as Algorithm,
      keys: s.tokens.keys.map(k => ({ ...k })),
      issuer: s.tokens.issuer as string,
      audience: s.tokens.audience as string,
      lifetimeMs: ms(s.tokens.lifetime, 'tokens/lifetime'),
      leewayMs: ms(s.tokens.leeway, 'tokens/leeway'),
      claims: s.tokens.claims as Settings['tokens']['claims']
    },
    limits: {
      loginPerAccount: limit(limits.loginPerAccount, 'limits/loginPerAccount'),
      loginPerIp: limit(limits.loginPerIp, 'limits/loginPerIp'),
      requestsPerIp: limit(limits.requestsPerIp, 'limits/requestsPerIp'),
      signInsPerAccount: limit(limits.signInsPerAccount, 'limits/signInsPerAccount')
    },
    sessions: {
      maxPerUser: sessions.maxPerUser,
      clockSkewMs: sessions.clockSkew === 0 ? 0 : ms(sessions.clockSkew, 'sessions/clockSkew')
    },
    resetPassword,
    twoFactor: {
      enabled: twoFactor.enabled,
      interimLifetimeMs,
      attemptsPerChallenge: twoFactor.attemptsPerChallenge,
      perAccount: limit(twoFactor.perAccount, 'twoFactor/perAccount'),
      emailCodeLifetimeMs: ms(twoFactor.emailCodeLifetime, 'twoFactor/emailCodeLifetime')
    },
    oauth: { providers: resolveOAuthProviders(s.oauth.providers as Record<string, OAuthProviderInput>) },
    cors,
    bodyLimit: s.bodyLimit
  }
}

const DURATION_PATTERN = (DurationSchema.anyOf[1] as { pattern: string }).pattern

/**
 * TypeBox says "Expected union value" for a union: for a list of constants
 * (`tokens/algorithm`, an OAuth `preset`) the reason lists them, for a
 * duration it says what a duration looks like.
 */
function unionReason (schema: TSchema): string | null {
  const members = schema.anyOf as TSchema[] | undefined
  if (members === undefined) return null
  if (members.some(member => member.pattern === DURATION_PATTERN)) {
    return `must be a duration: ${DURATION_HINT}${members.some(member => member.const === 0) ? ', or 0 for none' : ''}`
  }
  // the schema's other unions are lists of constants
  return `must be one of ${members.map(member => String(member.const)).join(', ')}`
}

type RequireForInput = Omit<Settings['authCodes']['requireFor'], 'oauth'> & { oauth?: boolean }

/** One setting, "Authentication Requires Auth Code", covers `/auth` and `/oauth/token` unless the host sets `oauth` apart. */
function requireAuthCodeFor (input: RequireForInput): Settings['authCodes']['requireFor'] {
  return { ...input, oauth: input.oauth ?? input.auth }
}

type CorsInput = Defaulted<Required<SettingsInput>['cors']>

/**
 * Each origin exactly as a browser sends it in `Origin` (scheme, host and a
 * port other than the default; no path, no trailing slash, lower case), or
 * it would never match.
 */
function resolveCors (input: Required<SettingsInput>['cors'], ms: MsOf): Settings['cors'] {
  const group = input as CorsInput
  group.origins.forEach((origin, index) => {
    let parsed: string | null = null
    try { parsed = new URL(origin).origin } catch {}
    if (parsed !== origin) {
      throw new JwtLoginSettingsError(`cors/origins/${index}`, `must be an origin as browsers send it${parsed === null ? '' : ` (${parsed})`}: scheme, host and port, no path`)
    }
  })
  return { enabled: group.enabled, origins: [...group.origins], credentials: group.credentials, maxAgeMs: ms(group.maxAge, 'cors/maxAge') }
}

type ResetPasswordInput = Required<SettingsInput>['resetPassword']
type Defaulted<T> = { [K in keyof T]-?: NonNullable<T[K]> }

type LimitOf = (l: { max?: number, window?: string | number }, path: string) => ResolvedLimit
type MsOf = (duration: unknown, path: string) => number

function resolveResetPassword (input: ResetPasswordInput, limit: LimitOf, ms: MsOf): Settings['resetPassword'] {
  const group = input as Defaulted<ResetPasswordInput>
  const code = group.code as Defaulted<typeof group.code>
  const password = group.password as Defaulted<typeof group.password>
  const limits = group.limits as Defaulted<typeof group.limits>
  const mail = group.mail as Defaulted<typeof group.mail>
  if (new Set(code.alphabet).size !== [...code.alphabet].length) {
    throw new JwtLoginSettingsError('resetPassword/code/alphabet', 'the characters must be distinct')
  }
  if (password.minLength > password.maxLength) {
    throw new JwtLoginSettingsError('resetPassword/password/minLength', 'must not exceed maxLength')
  }
  return {
    enabled: group.enabled,
    requireAuthCode: group.requireAuthCode,
    code: { length: code.length, alphabet: code.alphabet, lifetimeMs: ms(code.lifetime, 'resetPassword/code/lifetime'), maxTries: code.maxTries },
    password: { minLength: password.minLength, maxLength: password.maxLength },
    limits: { perEmail: limit(limits.perEmail, 'resetPassword/limits/perEmail'), perIp: limit(limits.perIp, 'resetPassword/limits/perIp') },
    mail: {
      siteName: mail.siteName,
      templates: { subject: mail.subject, text: mail.text, html: mail.html },
      retries: mail.retries,
      retryDelayMs: ms(mail.retryDelay, 'resetPassword/mail/retryDelay')
    }
  }
}

/** What stands in for a secret in the host's view of the settings. */
export const REDACTED = '[redacted]'

/** Settings the host may read but not change. */
export type DeepReadonly<T> = T extends Array<infer E> ? ReadonlyArray<DeepReadonly<E>> : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T

function deepFreeze<T> (value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value as DeepReadonly<T>
}

const views = new WeakMap<Settings, DeepReadonly<Settings>>()

/**
 * The settings as `jwtLogin.settings` shows them: a frozen copy with every
 * secret (HMAC secrets, private keys, auth codes, OAuth client secrets)
 * replaced by `'[redacted]'`, so a host that logs or serves them leaks
 * nothing. Made once per settings object.
 */
export function redactSettings (settings: Settings): DeepReadonly<Settings> {
  let view = views.get(settings)
  if (view === undefined) {
    const copy = structuredClone(settings)
    copy.tokens.keys = copy.tokens.keys.map(key => ({
      ...key,
      ...(key.secret === undefined ? {} : { secret: REDACTED }),
      ...(key.privateKey === undefined ? {} : { privateKey: REDACTED })
    }))
    copy.authCodes.codes = copy.authCodes.codes.map(code => ({ ...code, code: REDACTED }))
    for (const provider of Object.values(copy.oauth.providers)) {
      if (provider.clientSecret !== null) provider.clientSecret = REDACTED
    }
    view = deepFreeze(copy)
    views.set(settings, view)
  }
  return view
}

export type SettingsSource = () => Promise<SettingsInput>

export interface SettingsHolderOptions {
  /** How long a read of the source stays fresh, in ms: the period of the reload timer. */
  ttlMs: number
  /** Hears of a timed reload that was refused (an explicit `reload()` rejects instead). */
  onInvalid: (error: unknown) => void
  /** Checks that a reload does not change what needs a restart; throws to refuse it. */
  accept?: (next: Settings, current: Settings) => void
}

/**
 * Holds the settings in force. Reading them is a field read: a request takes
 * one snapshot when it starts and keeps it. With an async source a timer
 * re-reads it every `ttlMs` (requests never wait for the source); an invalid
 * reload keeps the last good settings. The flows read the real settings here;
 * the host's `jwtLogin.settings` is the redacted view (`redactSettings`).
 */
export class SettingsHolder {
  #current: Settings
  /** The source's answer the settings in force came from, as JSON: an unchanged answer changes nothing. */
  #answer: string
  #timer: NodeJS.Timeout | null = null
  #stopped = false
  readonly #source: SettingsSource | null
  readonly #options: SettingsHolderOptions

  private constructor (initial: Settings, answer: unknown, source: SettingsSource | null, options: SettingsHolderOptions) {
    this.#current = initial
    this.#answer = JSON.stringify(answer)
    this.#source = source
    this.#options = options
  }

  static async create (input: SettingsInput | SettingsSource, options: SettingsHolderOptions): Promise<SettingsHolder> {
    if (typeof input === 'function') {
      const answer = await input()
      return new SettingsHolder(resolveSettings(answer), answer, input, options)
    }
    return new SettingsHolder(resolveSettings(input), input, null, options)
  }

  /** The settings in force. */
  get current (): Settings {
    return this.#current
  }

  /**
   * Starts re-reading an async source every `ttlMs` (the timer does not keep
   * the process alive). A timed reload that is refused is reported to
   * `onInvalid`; the last good settings stay.
   */
  start (): void {
    if (this.#source === null || this.#timer !== null) return
    const tick = (): void => {
      // a reload still running at stop() must not arm the timer again
      if (this.#stopped) return
      this.#timer = setTimeout(() => { this.reload().catch(this.#options.onInvalid).finally(tick) }, this.#options.ttlMs).unref()
    }
    tick()
  }

  stop (): void {
    this.#stopped = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }

  /**
   * Reads the source now. Resolves once the new settings are in force; rejects
   * when the source fails or its settings are refused (a `JwtLoginSettingsError`
   * naming the field), and the last good settings stay. An answer equal to
   * the one in force keeps the same settings object, so what is cached per
   * settings (verifiers, code keys, the redacted view) is kept too.
   */
  async reload (): Promise<void> {
    if (this.#source === null) return
    const answer = await this.#source()
    const text = JSON.stringify(answer)
    if (text === this.#answer) return
    const next = resolveSettings(answer)
    this.#options.accept?.(next, this.#current)
    this.#current = next
    this.#answer = text
  }
}
