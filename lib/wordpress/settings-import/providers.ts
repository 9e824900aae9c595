// The identity providers and third-party integrations of the import.
import type { OAuthProviderInput } from '../../../schemas/settings.js'
import { isOn, text, type Reader } from './reader.js'

/** The providers with a jwt-login preset (OpenID Connect: google, auth0; plain OAuth 2.0: github, facebook); the others are listed when on. */
const PRESETS = new Set(['google', 'auth0', 'github', 'facebook'])
/** The presets without ID tokens: only their code flow carries over. */
const OAUTH2_ONLY = new Set(['github', 'facebook'])

/** Provider flags without a counterpart. */
const PROVIDER_LEFT_WHEN_ON: ReadonlyArray<readonly [string, string]> = [
  ['enable_oauth', 'adds a sign-in button to wp-login.php; jwt-login has no WordPress login page: the app starts the code flow itself'],
  ['allow_on_all_endpoints', "accepts the provider's own tokens on every endpoint; jwt-login accepts only the tokens it issues after /oauth/token"],
  ['enable_exchange_token', 'exchanges a provider access token; jwt-login signs in with an ID token (acceptIdToken) or a code']
]

/** Third-party integrations with a reason of their own; any other is a WordPress plugin integration. */
const THIRD_PARTY: Readonly<Record<string, string>> = {
  two_factor: "hands the second factor to a WordPress plugin; jwt-login's two-factor sign-in is its twoFactor option, a port the host implements"
}

/** Whether a URL is https (http only on loopback), as jwt-login takes redirect URIs. */
function isHttpsUrl (value: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  return value.length <= 2048 && /^https?:\/\//.test(value) && (url.protocol === 'https:' || loopback)
}

/**
 * `integrations.oauth.*` (v1 `google`, `auth0`): Google, Auth0, GitHub and
 * Facebook carry over to their presets; the code flow
 * (`enable_exchange_code` with `redirect_uri_exchange_code`) to
 * `redirectUris`, Google's `enable_exchange_id_token` to `acceptIdToken`,
 * `create_user_if_not_exists` to `autoRegister`, GitHub's
 * `allow_unverified_email` to `allowUnverifiedEmail`. Other providers are
 * listed when on.
 */
export function readProviders (r: Reader): Record<string, OAuthProviderInput> {
  const providers: Record<string, OAuthProviderInput> = {}
  for (const slug of r.from.children('integrations.oauth')) {
    const path = `integrations.oauth.${slug}`
    if (PRESETS.has(slug)) {
      const provider = readPresetProvider(r, slug, path)
      if (provider !== undefined) providers[slug] = provider
      continue
    }
    if (r.on(`${path}.enabled`)) r.leave(`${path}.enabled`, 'signs in through a provider that jwt-login has no preset for (an oauth2 provider with its endpoints can stand in)')
    r.from.under(path)
  }
  return providers
}

export function readPresetProvider (r: Reader, slug: string, path: string): OAuthProviderInput | undefined {
  const field = (name: string): unknown => r.from.value(`${path}.${name}`)
  const enabled = isOn(field('enabled'))
  const clientId = text(field('client_id'))
  const clientSecret = text(field('client_secret'))
  const codeFlow = isOn(field('enable_exchange_code'))
  const redirectUri = text(field('redirect_uri_exchange_code'))
  const acceptIdToken = !OAUTH2_ONLY.has(slug) && isOn(field('enable_exchange_id_token'))
  const allowUnverifiedEmail = slug === 'github' && isOn(field('allow_unverified_email'))
  const autoRegister = isOn(field('create_user_if_not_exists'))
  const domain = text(field('domain'))?.trim().replace(/^https?:\/\//, '').replace(/\/+$/, '')
  const flags = PROVIDER_LEFT_WHEN_ON.filter(([name]) => isOn(field(name)))
  if (!enabled) return undefined
  for (const [name, reason] of flags) r.leave(`${path}.${name}`, reason)
  if (clientId === undefined || clientId.length > 512) {
    r.leave(`${path}.client_id`, 'is missing or longer than 512 characters, so the provider is left out')
    return undefined
  }
  const provider: OAuthProviderInput = { enabled: true, preset: slug as 'google' | 'auth0' | 'github' | 'facebook', clientId, acceptIdToken, autoRegister }
  if (allowUnverifiedEmail) provider.allowUnverifiedEmail = true
  if (slug === 'auth0') {
    if (domain === undefined || !/^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/.test(domain)) {
      r.leave(`${path}.domain`, 'is not an Auth0 tenant domain (such as example.eu.auth0.com), so the provider is left out')
      return undefined
    }
    provider.domain = domain
  }
  if (clientSecret !== undefined) provider.clientSecret = clientSecret
  if (codeFlow && (redirectUri === undefined || !isHttpsUrl(redirectUri))) {
    r.leave(`${path}.redirect_uri_exchange_code`, 'is not an https URL (http only on loopback), so the code flow is left out')
  } else if (codeFlow && clientSecret === undefined) {
    r.leave(`${path}.client_secret`, 'is missing and the code flow needs it, so the code flow is left out')
  } else if (codeFlow) {
    provider.redirectUris = [redirectUri as string]
  }
  if (provider.redirectUris === undefined && !acceptIdToken) {
    r.leave(`${path}.enabled`, 'turns on a provider none of whose ways to sign in came over, so the provider is left out')
    return undefined
  }
  return provider
}

/** `integrations.3rdparty.*` (v1 `wp_graphql`): WordPress plugin integrations, listed when on. */
export function readThirdParty (r: Reader): void {
  for (const slug of r.from.children('integrations.3rdparty')) {
    const path = `integrations.3rdparty.${slug}`
    if (r.on(`${path}.enabled`)) {
      r.leave(`${path}.enabled`, THIRD_PARTY[slug] ?? `turns on the ${slug} integration, a WordPress plugin that jwt-login has no counterpart for`)
    }
    r.from.under(path)
  }
}
