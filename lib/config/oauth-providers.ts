/** The OAuth providers of the settings, each with its preset applied and its URLs checked. */
import { Value } from '@sinclair/typebox/value'
import { OAuthProviderSchema, type OAuthPreset, type OAuthProviderInput } from '../../schemas/settings.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { durationAt } from './duration.js'
import { OAUTH2_PRESETS, resolveOAuth2, type ClientAuthMethod, type OAuth2Api, type ProfileFields } from './oauth2-presets.js'

export type { ClientAuthMethod, OAuth2Api, ProfileFields }

/** Explicit endpoints, for a provider without discovery. */
export interface OAuthEndpoints {
  token: string
  jwks: string
  userinfo: string | null
  authorization: string | null
}

/** A provider after its preset is applied. */
export interface OAuthProviderSettings {
  name: string
  enabled: boolean
  preset: OAuthPreset
  /** OpenID Connect (an ID token), or plain OAuth 2.0 (a user API read with the access token). */
  kind: 'openid' | 'oauth2'
  /** The OAuth 2.0 endpoints (`kind` oauth2), else `null`. */
  api: OAuth2Api | null
  /** Where the user API's answer holds each fact (`oauth2` preset), else `null` (the preset knows). */
  profile: ProfileFields | null
  /** The issuer discovered (or described by `endpoints`). */
  issuer: string
  /** `iss` values an ID token may carry (Google also writes the bare host). */
  acceptedIssuers: string[]
  endpoints: OAuthEndpoints | null
  clientId: string
  clientSecret: string | null
  clientAuthMethod: ClientAuthMethod
  redirectUris: string[]
  acceptIdToken: boolean
  requireNonce: boolean
  allowUnverifiedEmail: boolean
  autoRegister: boolean
  defaultRole: string
  timeoutMs: number
  /** OpenID Back-Channel Logout: the provider's logout tokens end the local sessions it started. */
  backchannelLogout: boolean
  /** Plain HTTP is allowed for loopback hosts only (development and tests). */
  allowHttp: boolean
}

const MAX_TIMEOUT_MS = 60_000
// multi-tenant endpoints answer an issuer template that no ID token matches, and would let in any tenant
const SHARED_MICROSOFT_TENANTS = new Set(['common', 'organizations', 'consumers'])
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])

function fail (name: string, field: string, reason: string): never {
  throw new JwtLoginSettingsError(`oauth/providers/${name}/${field}`, reason)
}

function presetIssuer (name: string, p: OAuthProviderInput, preset: OAuthPreset): string {
  if (preset !== 'generic' && (p.issuer !== undefined || p.endpoints !== undefined)) {
    fail(name, 'issuer', `the ${preset} preset sets the issuer; leave issuer and endpoints out`)
  }
  switch (preset) {
    case 'google': return 'https://accounts.google.com'
    case 'apple': return 'https://appleid.apple.com'
    case 'auth0':
      if (p.domain === undefined) fail(name, 'domain', 'the auth0 preset needs the tenant domain')
      return `https://${p.domain}/`
    case 'microsoft':
      if (p.tenant === undefined) fail(name, 'tenant', 'the microsoft preset needs a tenant id')
      if (SHARED_MICROSOFT_TENANTS.has(p.tenant.toLowerCase())) fail(name, 'tenant', 'use a tenant id, not a multi-tenant alias')
      return `https://login.microsoftonline.com/${p.tenant}/v2.0`
    default:
      if ((p.issuer === undefined) === (p.endpoints === undefined)) fail(name, 'issuer', 'give either issuer or endpoints')
      return (p.issuer ?? p.endpoints?.issuer) as string
  }
}

/** https everywhere, http only on loopback; answers whether http was used. */
function checkUrl (name: string, field: string, value: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    fail(name, field, 'not a URL')
  }
  // fetch refuses credentials in a URL: every sign-in would fail at the provider
  if (url.username !== '' || url.password !== '') fail(name, field, 'must not hold a user name or password (give the client secret as clientSecret)')
  if (url.protocol === 'https:') return false
  if (!LOOPBACK.has(url.hostname)) fail(name, field, 'must use https (http only on loopback)')
  return true
}

/** The fields of a provider that the schema defaults: present once `Value.Default` has run. */
type Defaulted = 'enabled' | 'preset' | 'redirectUris' | 'clientAuthMethod' | 'timeout' | 'acceptIdToken' | 'requireNonce' | 'allowUnverifiedEmail' | 'autoRegister' | 'defaultRole' | 'backchannelLogout'
type DefaultedProvider = OAuthProviderInput & Required<Pick<OAuthProviderInput, Defaulted>>

/** The URLs of an OpenID provider to check, its issuer first. */
function openIdUrls (issuer: string, e: OAuthProviderInput['endpoints']): Array<[string, string]> {
  const urls: Array<[string, string]> = [['issuer', issuer]]
  if (e !== undefined) {
    urls.push(['endpoints/token', e.token], ['endpoints/jwks', e.jwks])
    if (e.userinfo !== undefined) urls.push(['endpoints/userinfo', e.userinfo])
  }
  return urls
}

/** What differs between the two kinds: an OpenID provider's issuer, or an OAuth 2.0 provider's endpoints. */
function kindOf (name: string, p: DefaultedProvider, chosenAuth: ClientAuthMethod | undefined): Pick<OAuthProviderSettings, 'kind' | 'issuer' | 'api' | 'profile' | 'clientAuthMethod'> & { urls: Array<[string, string]> } {
  const { preset } = p
  if (!OAUTH2_PRESETS.has(preset)) {
    if (p.enterpriseUrl !== undefined || p.api !== undefined || p.profile !== undefined) {
      fail(name, p.enterpriseUrl !== undefined ? 'enterpriseUrl' : p.api !== undefined ? 'api' : 'profile', `the ${preset} preset is OpenID Connect: it discovers its endpoints`)
    }
    const issuer = presetIssuer(name, p, preset)
    return { kind: 'openid', issuer, api: null, profile: null, clientAuthMethod: p.clientAuthMethod, urls: openIdUrls(issuer, p.endpoints) }
  }
  const { api, profile, clientAuthMethod } = resolveOAuth2(preset, p, chosenAuth, (field, reason) => fail(name, field, reason))
  const urls = Object.entries(api).filter((entry): entry is [string, string] => entry[1] !== null).map(([field, url]): [string, string] => [`api/${field}`, url])
  // the address the host wrote is checked first, so that a refusal names it rather than an endpoint made from it
  if (p.enterpriseUrl !== undefined) urls.unshift(['enterpriseUrl', p.enterpriseUrl])
  // a token endpoint that is no URL is refused with the others below, naming its field
  const issuer = URL.canParse(api.token) ? new URL(api.token).origin : api.token
  return { kind: 'oauth2', issuer, api, profile, clientAuthMethod, urls }
}

// long only for the resolved shape, written field by field
function resolveProvider (name: string, p: DefaultedProvider, chosenAuth: ClientAuthMethod | undefined): OAuthProviderSettings {
  const { preset } = p
  const { urls, kind, issuer, api, profile, clientAuthMethod } = kindOf(name, p, chosenAuth)
  const { redirectUris } = p
  redirectUris.forEach((uri, index) => { checkUrl(name, `redirectUris/${index}`, uri) })
  const allowHttp = urls.map(([field, value]) => checkUrl(name, field, value)).includes(true)

  if (redirectUris.length > 0 && clientAuthMethod !== 'none' && p.clientSecret === undefined) {
    fail(name, 'clientSecret', `the code flow with ${clientAuthMethod} needs the client secret`)
  }
  if (redirectUris.length === 0 && p.acceptIdToken !== true) {
    fail(name, 'redirectUris', kind === 'oauth2' ? `give redirect URIs: the ${preset} preset signs in by the code flow only` : 'give redirect URIs (code flow) or turn on acceptIdToken')
  }
  const timeoutMs = durationAt(p.timeout, `oauth/providers/${name}/timeout`)
  if (timeoutMs > MAX_TIMEOUT_MS) fail(name, 'timeout', 'at most 60 s')

  return {
    name,
    enabled: p.enabled,
    preset,
    kind,
    api,
    profile,
    issuer,
    acceptedIssuers: preset === 'google' ? [issuer, 'accounts.google.com'] : [issuer],
    endpoints: p.endpoints === undefined
      ? null
      : { token: p.endpoints.token, jwks: p.endpoints.jwks, userinfo: p.endpoints.userinfo ?? null, authorization: p.endpoints.authorization ?? null },
    clientId: p.clientId,
    clientSecret: p.clientSecret ?? null,
    clientAuthMethod,
    redirectUris,
    acceptIdToken: p.acceptIdToken,
    requireNonce: p.requireNonce,
    allowUnverifiedEmail: p.allowUnverifiedEmail,
    autoRegister: p.autoRegister,
    defaultRole: p.defaultRole,
    timeoutMs,
    backchannelLogout: p.backchannelLogout,
    allowHttp
  }
}

/** Applies presets and checks each provider; throws `JwtLoginSettingsError` naming the field. */
export function resolveOAuthProviders (input: Record<string, OAuthProviderInput>): Record<string, OAuthProviderSettings> {
  const providers: Record<string, OAuthProviderSettings> = Object.create(null)
  for (const [name, provider] of Object.entries(input)) {
    // TypeBox does not default inside a record's values; each provider gets its defaults here
    // (the client authentication as written first: a plain OAuth 2.0 preset has its own default)
    const chosenAuth = provider.clientAuthMethod
    providers[name] = resolveProvider(name, Value.Default(OAuthProviderSchema, structuredClone(provider)) as DefaultedProvider, chosenAuth)
  }
  return providers
}
