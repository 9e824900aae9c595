import { allowInsecureRequests, customFetch, discovery, type ServerMetadata } from 'openid-client'
import { createLocalJWKSet, errors as joseErrors, type CryptoKey, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose'
import type { Clock } from '../../core/clock.js'
import { JwtLoginError } from '../../core/errors.js'
import type { OAuthProviderSettings } from '../../config/oauth-providers.js'

/** How long a discovery document is trusted before it is read again. */
export const METADATA_MAX_AGE_MS = 60 * 60 * 1000
/** How long a provider's signing keys are trusted before they are read again. */
export const JWKS_MAX_AGE_MS = 60 * 60 * 1000
/** An unknown key id refetches the keys, at most once in this window (so junk kids cannot hammer the provider). */
export const JWKS_COOLDOWN_MS = 30 * 1000

/** fetch bound to one sign-in's deadline. */
export type BoundFetch = (url: string, init?: RequestInit) => Promise<Response>

interface Cached<T> { value: T, at: number }

/** A provider's keys as a verification looks one up (jose's local key set). */
export type ProviderKeys = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>

/**
 * The lookup over one fetched key set, made once per set rather than per
 * sign-in (jose imports each key once per lookup it makes). Made at first
 * use: a set jose refuses fails each verification, as before, not the fetch.
 */
function localKeys (set: JSONWebKeySet): ProviderKeys {
  let lookUp: ReturnType<typeof createLocalJWKSet> | undefined
  return async (header, token) => {
    lookUp ??= createLocalJWKSet(set)
    return await lookUp(header, token)
  }
}

/**
 * Discovery documents and signing keys of the providers, cached per provider.
 * A change of the provider's settings (issuer, endpoints) invalidates its entry.
 */
export class OAuthRegistry {
  readonly #clock: Clock
  readonly #metadata = new Map<string, Cached<ServerMetadata>>()
  readonly #jwks = new Map<string, Cached<ProviderKeys>>()

  constructor (clock: Clock) {
    this.#clock = clock
  }

  /** The provider's server metadata: discovered (cached) or built from explicit endpoints. */
  async metadata (provider: OAuthProviderSettings, fetchFn: BoundFetch): Promise<ServerMetadata> {
    const e = provider.endpoints
    if (e !== null) {
      return {
        issuer: provider.issuer,
        token_endpoint: e.token,
        jwks_uri: e.jwks,
        ...(e.userinfo === null ? {} : { userinfo_endpoint: e.userinfo }),
        ...(e.authorization === null ? {} : { authorization_endpoint: e.authorization })
      }
    }
    // keyed by the issuer too: a settings change never serves the old provider's document
    const cacheKey = `${provider.name}\u0000${provider.issuer}`
    const cached = this.#metadata.get(cacheKey)
    if (cached !== undefined && this.#clock() - cached.at < METADATA_MAX_AGE_MS) return cached.value
    const config = await discovery(new URL(provider.issuer), provider.clientId, undefined, undefined, {
      [customFetch]: fetchFn,
      execute: provider.allowHttp ? [allowInsecureRequests] : []
    }).catch((error: unknown) => { throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR', { cause: error }) })
    const value = config.serverMetadata()
    this.#metadata.set(cacheKey, { value, at: this.#clock() })
    return value
  }

  /**
   * The provider's key set, as the key lookup of a verification. `refresh`
   * asks for a fresh copy (an unknown key id: the provider may have
   * rotated), granted once per cooldown.
   */
  async keys (provider: OAuthProviderSettings, jwksUri: string, fetchFn: BoundFetch, refresh: boolean): Promise<ProviderKeys> {
    const cacheKey = `${provider.name}\u0000${jwksUri}`
    const cached = this.#jwks.get(cacheKey)
    const now = this.#clock()
    if (cached !== undefined && now - cached.at < (refresh ? JWKS_COOLDOWN_MS : JWKS_MAX_AGE_MS)) return cached.value
    let keys: unknown
    try {
      const response = await fetchFn(jwksUri, { headers: { accept: 'application/json' }, redirect: 'manual' })
      keys = response.ok ? (await response.json() as { keys?: unknown }).keys : undefined
    } catch (error) {
      throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR', { cause: error })
    }
    if (!Array.isArray(keys)) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR')
    const value = localKeys({ keys } as JSONWebKeySet)
    this.#jwks.set(cacheKey, { value, at: now })
    return value
  }
}

/**
 * The key lookup of a verification against the provider's keys (ID tokens,
 * logout tokens): the cached set, read again once on an unknown key id (the
 * provider may have rotated its keys).
 */
export function keyLookup (registry: OAuthRegistry, provider: OAuthProviderSettings, jwksUri: string, fetchFn: BoundFetch): (header: JWSHeaderParameters) => Promise<CryptoKey> {
  return async (header) => {
    const token = { payload: '', signature: '' }
    try {
      return await (await registry.keys(provider, jwksUri, fetchFn, false))(header, token)
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error
      return await (await registry.keys(provider, jwksUri, fetchFn, true))(header, token)
    }
  }
}

/** A fetch whose every request ends when the sign-in's deadline does. */
export function boundFetch (deadline: AbortSignal): BoundFetch {
  return async (url, init = {}) => {
    const signal = init.signal === undefined || init.signal === null ? deadline : AbortSignal.any([init.signal, deadline])
    return await fetch(url, { ...init, signal })
  }
}

/**
 * Runs one sign-in's calls to the provider under a deadline. The answer comes
 * in time even if a library ignored the abort: the race settles on the timer.
 */
export async function withDeadline<T> (timeoutMs: number, run: (fetchFn: BoundFetch) => Promise<T>): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs)
  let onAbort!: () => void
  const timedOut = new Promise<never>((_resolve, reject) => {
    onAbort = () => { reject(new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_TIMEOUT')) }
  })
  // registered before any fetch listens to the deadline, so the timeout settles the race first
  deadline.addEventListener('abort', onAbort, { once: true })
  try {
    return await Promise.race([run(boundFetch(deadline)), timedOut])
  } finally {
    deadline.removeEventListener('abort', onAbort)
  }
}
