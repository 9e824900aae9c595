// A plain OAuth 2.0 provider (GitHub, Facebook, Discord, or one the host describes): the code redeemed with openid-client, the user read from the provider's user API with the access token.
import { createHmac } from 'node:crypto'
import { allowInsecureRequests, authorizationCodeGrant, Configuration, customFetch, fetchProtectedResource, ResponseBodyError } from 'openid-client'
import type { OAuthProviderSettings, ProfileFields } from '../config/oauth-providers.js'
import { JwtLoginError } from '../core/errors.js'
import { clientAuth, type CodeRequest, type Identity } from './provider-client.js'
import { withDeadline, type BoundFetch } from './providers/registry.js'

/** The refusals of a code (RFC 6749 §5.2), and GitHub's own word for one. */
const REFUSED_CODE = new Set(['invalid_grant', 'bad_verification_code', 'redirect_uri_mismatch'])
/** GitHub's refusal of a code whose user has not verified their primary address: the provider vouches for no email. */
const UNVERIFIED_EMAIL = 'unverified_user_email'

/**
 * The token endpoint's answer in RFC 6749's form, for the providers that
 * answer otherwise: GitHub refuses a code with HTTP 200 and an `error`
 * field; Facebook with HTTP 400 and an `error` object (Graph API errors),
 * whose code 100 is a parameter refused (the code, or the redirect URI it
 * was issued for) and anything else a refusal of the client.
 */
async function asRfc6749 (preset: OAuthProviderSettings['preset'], response: Response): Promise<Response> {
  if (preset !== 'github' && preset !== 'facebook') return response
  const body = await response.clone().json().catch(() => null) as { error?: unknown } | null
  const error = body?.error
  if (preset === 'github' && typeof error === 'string') return Response.json(body, { status: 400 })
  if (preset === 'facebook' && typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code
    return Response.json({ error: code === 100 ? 'invalid_grant' : 'invalid_client' }, { status: 400 })
  }
  return response
}

/**
 * What openid-client throws, as our errors: a refused code is the code's
 * fault (401 / 72); a user without a verified address the user's (403 /
 * 111, as when the user API says so); anything else the provider's (502 / 202).
 */
function codeError (error: unknown): JwtLoginError {
  if (error instanceof ResponseBodyError && REFUSED_CODE.has(error.error)) return new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_CODE_INVALID', { cause: error })
  if (error instanceof ResponseBodyError && error.error === UNVERIFIED_EMAIL) return new JwtLoginError('ERR_JWT_LOGIN_EMAIL_UNVERIFIED', { cause: error })
  return new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR', { cause: error })
}

/** The provider's client, its calls on the sign-in's deadline, its token endpoint's answers in RFC 6749's form. */
function clientOf (provider: OAuthProviderSettings, api: NonNullable<OAuthProviderSettings['api']>, fetchFn: BoundFetch): Configuration {
  const metadata = provider.clientSecret === null ? {} : { client_secret: provider.clientSecret }
  const config = new Configuration({ issuer: provider.issuer, token_endpoint: api.token }, provider.clientId, metadata, clientAuth(provider))
  if (provider.allowHttp) allowInsecureRequests(config)
  const tokenEndpoint = new URL(api.token).href
  config[customFetch] = (async (url: string, init: RequestInit) => {
    const response = await fetchFn(url, init)
    return url === tokenEndpoint ? await asRfc6749(provider.preset, response) : response
  }) as never
  return config
}

/**
 * The statuses by which GitHub says the token may not read the email list:
 * a GitHub App without the "Email addresses" permission (403), an OAuth app
 * not granted `user:email` (404). The list is then empty: a linked user
 * still signs in, an unlinked one has no verified email (403 / 111).
 */
const NOT_GRANTED = new Set([403, 404])

/** One GET of the user API with the access token: its JSON (`[]` for a status of `empty`), or the provider's failure. */
async function readJson (config: Configuration, accessToken: string, url: URL, empty?: ReadonlySet<number>): Promise<unknown> {
  const headers = new Headers({ accept: 'application/json' })
  const response = await fetchProtectedResource(config, accessToken, url, 'GET', undefined, headers)
  if (empty?.has(response.status) === true) {
    await response.body?.cancel()
    return []
  }
  if (!response.ok) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR')
  return await response.json()
}

/** The value at a dotted path of an answer (`data.user.id`), or `undefined`; own properties only. */
export function valueAt (answer: unknown, path: string): unknown {
  let value = answer
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

/** A provider's user id: a non-empty string, or an integer (GitHub's); anything else is no identity. */
function subjectOf (value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  const subject = text(value)
  if (subject === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR')
  return subject
}

interface GitHubEmail { email?: unknown, primary?: unknown, verified?: unknown }

/** GitHub: the user's id and login from `/user`; the email only from the `primary` entry of `/user/emails`, verified as that entry says. */
async function gitHubIdentity (config: Configuration, api: NonNullable<OAuthProviderSettings['api']>, token: string): Promise<Identity> {
  const [user, emails] = await Promise.all([readJson(config, token, new URL(api.user)), readJson(config, token, new URL(api.emails as string), NOT_GRANTED)])
  const primary = Array.isArray(emails) ? (emails as GitHubEmail[]).find(entry => entry?.primary === true) : undefined
  const login = text(valueAt(user, 'login'))
  return {
    subject: subjectOf(valueAt(user, 'id')),
    email: text(primary?.email),
    emailVerified: primary?.verified === true,
    name: text(valueAt(user, 'name')) ?? login,
    display: login,
    session: undefined
  }
}

/**
 * Facebook's `/me` with the app secret proof (the access token's
 * HMAC-SHA256 under the app secret), which apps that require it refuse
 * calls without. The email Facebook returns is its claim of a confirmed
 * address: it sends none it has not confirmed.
 */
async function facebookIdentity (config: Configuration, provider: OAuthProviderSettings, api: NonNullable<OAuthProviderSettings['api']>, token: string): Promise<Identity> {
  const url = new URL(api.user)
  if (provider.clientSecret !== null) url.searchParams.set('appsecret_proof', createHmac('sha256', provider.clientSecret).update(token).digest('hex'))
  const me = await readJson(config, token, url)
  const email = text(valueAt(me, 'email'))
  return { subject: subjectOf(valueAt(me, 'id')), email, emailVerified: email !== undefined, name: text(valueAt(me, 'name')), display: email ?? text(valueAt(me, 'name')), session: undefined }
}

/** The profile fields of Discord's user object; `verified` is whether its email is. */
const DISCORD: ProfileFields = { subject: 'id', email: 'email', emailVerified: 'verified', name: 'global_name', display: 'username' }

/** A user API read by its field paths (Discord's, or the host's `profile`). */
async function profileIdentity (config: Configuration, api: NonNullable<OAuthProviderSettings['api']>, fields: ProfileFields, token: string): Promise<Identity> {
  const user = await readJson(config, token, new URL(api.user))
  const email = text(valueAt(user, fields.email))
  const display = text(valueAt(user, fields.display))
  return {
    subject: subjectOf(valueAt(user, fields.subject)),
    email,
    emailVerified: fields.emailVerified === true ? email !== undefined : valueAt(user, fields.emailVerified),
    name: text(valueAt(user, fields.name)) ?? display,
    display: display ?? email,
    session: undefined
  }
}

/**
 * Redeems the code at the provider's token endpoint (with the client's
 * secret and PKCE's verifier), then reads who the access token belongs to,
 * all within the provider's `timeout`. The code was marked used before.
 */
export async function exchangeOAuth2Code (provider: OAuthProviderSettings, request: CodeRequest): Promise<Identity> {
  const api = provider.api as NonNullable<OAuthProviderSettings['api']>
  return await withDeadline(provider.timeoutMs, async (fetchFn) => {
    const config = clientOf(provider, api, fetchFn)
    const callback = new URL(request.redirectUri)
    callback.searchParams.set('code', request.code)
    let token: string
    try {
      token = (await authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.codeVerifier, idTokenExpected: false })).access_token
    } catch (error) {
      throw codeError(error)
    }
    try {
      if (provider.preset === 'github') return await gitHubIdentity(config, api, token)
      if (provider.preset === 'facebook') return await facebookIdentity(config, provider, api, token)
      return await profileIdentity(config, api, provider.profile ?? DISCORD, token)
    } catch (error) {
      throw error instanceof JwtLoginError ? error : new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR', { cause: error })
    }
  })
}
