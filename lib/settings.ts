import { FormatRegistry } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { SettingsSchema, type Algorithm, type OAuthProviderInput, type SettingsInput } from '../schemas/settings.js'
import { toMs } from './duration.js'
import { resolveOAuthProviders, type OAuthProviderSettings } from './oauth/presets.js'

if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)))
}

export interface ResolvedKey {
  kid: string
  secret?: string
  privateKey?: string
  publicKey?: string
}

export interface ResolvedLimit { max: number, windowMs: number }

/** Settings after defaults, with every duration in milliseconds. */
export interface Settings {
  authentication: { enabled: boolean }
  authCodes: {
    codes: Array<{ code: string, expiresAt: number | null }>
    parameter: string
    oauthParameter: string
    requireFor: { auth: boolean, validate: boolean, refresh: boolean, revoke: boolean, oauth: boolean }
  }
  login: { allowPasswordHash: boolean }
  bearer: { enabled: boolean }
  refresh: { enabled: boolean, lifetimeMs: number }
  validate: { enabled: boolean }
  revoke: { enabled: boolean }
  tokens: {
    algorithm: Algorithm
    keys: ResolvedKey[]
    issuer: string
    audience: string
    lifetimeMs: number
    leewayMs: number
    claims: { email: boolean, login: boolean, displayName: boolean, roles: boolean }
  }
  limits: { loginPerAccount: ResolvedLimit, loginPerIp: ResolvedLimit, requestsPerIp: ResolvedLimit }
  oauth: { providers: Record<string, OAuthProviderSettings> }
  bodyLimit: number
}

/** A setting that is not valid; `path` names the field (`tokens/keys/0/secret`). */
export class JwtLoginSettingsError extends Error {
  readonly code = 'ERR_JWT_LOGIN_INVALID_SETTINGS'
  readonly path: string

  constructor (path: string, reason: string) {
    super(`jwt-login: invalid setting ${path === '' ? '(root)' : path}: ${reason}`)
    this.name = 'JwtLoginSettingsError'
    this.path = path
  }
}

type WithDefaults = Required<SettingsInput> & {
  [K in keyof SettingsInput]-?: Required<NonNullable<SettingsInput[K]>>
}

/** Validates and defaults the settings; throws `JwtLoginSettingsError` naming the first bad field. */
export function resolveSettings (input: unknown): Settings {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new JwtLoginSettingsError('', 'settings must be an object')
  }
  const value = Value.Default(SettingsSchema, structuredClone(input))
  const first = Value.Errors(SettingsSchema, value).First()
  if (first !== undefined) {
    throw new JwtLoginSettingsError(first.path.slice(1), first.message)
  }
  const s = value as unknown as WithDefaults
  const kids = new Set<string>()
  s.tokens.keys.forEach((key, index) => {
    if (kids.has(key.kid)) throw new JwtLoginSettingsError(`tokens/keys/${index}/kid`, 'duplicate kid')
    kids.add(key.kid)
  })
  const limit = (l: { max?: number, window?: string | number }): ResolvedLimit =>
    ({ max: l.max as number, windowMs: toMs(l.window as string | number) })
  const limits = s.limits as Record<'loginPerAccount' | 'loginPerIp' | 'requestsPerIp', { max?: number, window?: string | number }>
  return {
    authentication: { enabled: s.authentication.enabled as boolean },
    authCodes: {
      codes: (s.authCodes.codes ?? []).map(c => ({ code: c.code, expiresAt: c.expiresAt === undefined ? null : Date.parse(c.expiresAt) })),
      parameter: s.authCodes.parameter as string,
      oauthParameter: s.authCodes.oauthParameter as string,
      requireFor: s.authCodes.requireFor as Settings['authCodes']['requireFor']
    },
    login: { allowPasswordHash: s.login.allowPasswordHash as boolean },
    bearer: { enabled: s.bearer.enabled as boolean },
    refresh: { enabled: s.refresh.enabled as boolean, lifetimeMs: toMs(s.refresh.lifetime as string | number) },
    validate: { enabled: s.validate.enabled as boolean },
    revoke: { enabled: s.revoke.enabled as boolean },
    tokens: {
      algorithm: s.tokens.algorithm as Algorithm,
      keys: s.tokens.keys.map(k => ({ ...k })),
      issuer: s.tokens.issuer as string,
      audience: s.tokens.audience as string,
      lifetimeMs: toMs(s.tokens.lifetime as string | number),
      leewayMs: toMs(s.tokens.leeway as string | number),
      claims: s.tokens.claims as Settings['tokens']['claims']
    },
    limits: {
      loginPerAccount: limit(limits.loginPerAccount),
      loginPerIp: limit(limits.loginPerIp),
      requestsPerIp: limit(limits.requestsPerIp)
    },
    oauth: { providers: resolveOAuthProviders(s.oauth.providers as Record<string, OAuthProviderInput>) },
    bodyLimit: s.bodyLimit
  }
}

export type SettingsSource = () => Promise<SettingsInput>

export interface SettingsHolderOptions {
  /** How long a read of the source stays fresh, in ms. */
  ttlMs: number
  now: () => number
  onInvalid: (error: unknown) => void
  /** Checks that a reload does not change what needs a restart; throws to refuse it. */
  accept?: (next: Settings, current: Settings) => void
}

/**
 * Holds the settings in force. With an async source it re-reads in the
 * background once the TTL has passed, so requests never wait for the source;
 * an invalid reload keeps the last good settings.
 */
export class SettingsHolder {
  #current: Settings
  #readAt: number
  #loading: Promise<void> | null = null
  readonly #source: SettingsSource | null
  readonly #options: SettingsHolderOptions

  private constructor (initial: Settings, source: SettingsSource | null, options: SettingsHolderOptions) {
    this.#current = initial
    this.#source = source
    this.#options = options
    this.#readAt = options.now()
  }

  static async create (input: SettingsInput | SettingsSource, options: SettingsHolderOptions): Promise<SettingsHolder> {
    if (typeof input === 'function') {
      return new SettingsHolder(resolveSettings(await input()), input, options)
    }
    return new SettingsHolder(resolveSettings(input), null, options)
  }

  /** The settings in force; starts a background reload when they are stale. */
  get current (): Settings {
    if (this.#source !== null && this.#loading === null && this.#options.now() - this.#readAt >= this.#options.ttlMs) {
      this.#loading = this.reload().finally(() => { this.#loading = null })
    }
    return this.#current
  }

  /** Reads the source now. Resolves once the new settings are in force or refused. */
  async reload (): Promise<void> {
    if (this.#source === null) return
    this.#readAt = this.#options.now()
    try {
      const next = resolveSettings(await this.#source())
      this.#options.accept?.(next, this.#current)
      this.#current = next
    } catch (error) {
      this.#options.onInvalid(error)
    }
  }
}
