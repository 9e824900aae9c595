/**
 * Plain OAuth 2.0 providers on loopback for the sign-in tests: GitHub (as
 * GitHub Enterprise Server lays out its paths), Facebook, Discord, and a
 * generic RFC 6749 server. Each one answers as its provider documents it
 * (paths, response shapes, status codes, error shapes, the quirks), so that
 * a sign-in that works against it works against the provider: see
 * test/oauth2/fixtures.test.ts, which holds each behaviour to the page it
 * comes from.
 *
 * What every one of them shares: an authorization code is spent by its
 * first successful redemption (a failed one leaves it usable), is bound to
 * the client it was issued to, to its redirect URI and to its PKCE
 * challenge, and expires after ten minutes (`expireCodes` ends that time at
 * once). Access tokens are random, bound to the account and the granted
 * scope, and refused once `expireTokens` was called.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The relying party's callbacks, the same as the OpenID provider helper's (not imported: that loads the whole OpenID server). */
export const REDIRECT_URI = 'https://app.example.test/callback'
export const OTHER_REDIRECT_URI = 'https://app.example.test/other-callback'

export type OAuth2Kind = 'github' | 'facebook' | 'discord' | 'oauth2'

export interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
  /** `null` for the addresses that are not the primary one. */
  visibility: 'public' | 'private' | null
}

export interface GitHubAccount {
  id: number
  login: string
  name: string | null
  /** The public email on the profile (`GET /user`'s `email`); `null` when the user shows none. */
  email: string | null
  emails: GitHubEmail[]
}

export interface FacebookAccount {
  /** An app-scoped user ID: a string of digits. */
  id: string
  name: string
  /** Absent when the user has no email on the account. */
  email?: string
}

export interface DiscordAccount {
  /** A snowflake: a string of digits. */
  id: string
  username: string
  global_name: string | null
  email?: string | null
  verified: boolean
}

/** What `code` takes for each kind; the generic provider's user endpoint answers the account as it is. */
export interface AccountOf {
  github: GitHubAccount
  facebook: FacebookAccount
  discord: DiscordAccount
  oauth2: Record<string, unknown>
}

export type OAuth2Endpoint = 'token' | 'user' | 'emails'

/**
 * How the next call to an endpoint fails. `delayMs` alone makes it slow but
 * right: the request is handled after the delay. With `destroy` the
 * connection is dropped (after the delay, if any) and nothing is answered;
 * otherwise `status` (500 by default) with `body` (JSON for an object, as
 * is for a string) is answered in place of the endpoint's own answer.
 */
export interface OAuth2Fault {
  status?: number
  body?: unknown
  delayMs?: number
  contentType?: string
  destroy?: true
}

export interface SeenRequest {
  endpoint: 'authorize' | OAuth2Endpoint | null
  method: string
  /** The path with its query. */
  path: string
  headers: IncomingHttpHeaders
  /** The form or JSON body, parsed; the raw text when it parses as neither; `null` when empty. */
  body: unknown
}

export interface CodeOptions {
  /** The redirect URI of the authorization request; `REDIRECT_URI` by default. */
  redirectUri?: string
  /** Binds the code to an S256 challenge and answers its verifier. */
  pkce?: boolean
  /** Space-separated, as asked for at the authorization endpoint; each kind has a default that reads the user and the email. */
  scope?: string
  /** Issue the code to the provider's second client (`other`) instead. */
  otherClient?: boolean
}

export interface TestOAuth2Provider<K extends OAuth2Kind = OAuth2Kind> {
  kind: K
  /** `http://127.0.0.1:<port>` */
  origin: string
  clientId: string
  clientSecret: string
  /** A second registered client, to show that a code is bound to its client. */
  other: { clientId: string, clientSecret: string }
  /** To spread into the plugin's provider entry: `{ enterpriseUrl }` for github, `{ api: { authorization, token, user } }` for the others. */
  settings: Record<string, unknown>
  /** Every endpoint's full URL (`emails` for github only). */
  urls: { authorization: string, token: string, user: string, emails?: string }
  /** The redirect URIs registered for both clients (GitHub also takes any path below one of them). */
  redirectUris: string[]
  /**
   * The subject a link holds for the account `id` of this server: the
   * provider's id qualified by the origin of its user API, as
   * `http://127.0.0.1:<port>/ <id>` (written out here, not taken from the
   * plugin, so that a test of the plugin's links checks its rule).
   */
  linkSubject: (id: string | number) => string
  /** An authorization code for the account, as if its user had just approved the client. */
  code: (account: AccountOf[K], options?: CodeOptions) => { code: string, codeVerifier?: string }
  /**
   * Opens an authorization URL (one the plugin built) in a browser where
   * the account's user is signed in to the provider and approves, or denies
   * with `null`; answers where the provider redirected the browser.
   */
  authorize: (url: string | URL, account: AccountOf[K] | null) => Promise<URL>
  requests: SeenRequest[]
  failNext: (endpoint: OAuth2Endpoint, fault: OAuth2Fault) => void
  /** Every code issued so far is now past its ten minutes. */
  expireCodes: () => void
  /** Every access token issued so far is now expired (for GitHub, whose tokens do not expire: revoked). */
  expireTokens: () => void
  close: () => Promise<void>
}

const CODE_TTL_MS = 10 * 60 * 1000
const SIGNED_IN = 'x-test-signed-in-as'

interface Grant { account: unknown, scopes: string[], expired: boolean }

interface Code {
  account: unknown
  clientId: string
  /** The redirect URI the authorization request named; `null` when it named none (GitHub then uses the registered one). */
  redirectUri: string | null
  challenge: { value: string, method: 'S256' | 'plain' } | null
  scopes: string[]
  expiresAt: number
  spent: boolean
  tokens: string[]
}

/** Why a redemption failed, before each kind words it its own way. */
type Refusal = 'both_auth' | 'unknown_client' | 'bad_secret' | 'no_code' | 'bad_code' | 'spent' | 'expired' | 'other_client' | 'no_redirect' | 'bad_redirect' | 'bad_verifier' | 'unverified_email'

const random = (bytes: number): string => randomBytes(bytes).toString('base64url')
const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url')
const scopesOf = (scope: string): string[] => scope.split(/[\s,]+/).filter((s) => s !== '')
const fbtraceId = (): string => randomBytes(8).toString('base64').replace(/[+/=]/g, 'A')

/** GitHub keeps a token's scopes normalized: one implied by another one asked for is dropped. */
function githubScopes (asked: string[]): string[] {
  const implied: Record<string, string> = { 'user:email': 'user', 'read:user': 'user', 'user:follow': 'user' }
  return [...new Set(asked)].filter((s) => implied[s] === undefined || !asked.includes(implied[s] as string))
}

function json (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
  res.end(JSON.stringify(body))
}

function page (res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
  res.end(`<!doctype html><title>${text}</title><p>${text}</p>`)
}

function redirect (res: ServerResponse, to: string, params: Record<string, string | undefined>, fragment = ''): void {
  const url = new URL(to)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value)
  res.writeHead(302, { location: `${url.href}${fragment}` })
  res.end()
}

/** RFC 6749 §2.3.1: the id and the secret are form-encoded before they are joined and base64-encoded. */
function basicCredentials (header: string | undefined): { id: string, secret: string } | null {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '')
  if (match === null) return null
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8')
  const at = decoded.indexOf(':')
  if (at < 0) return { id: '', secret: '' }
  const formDecode = (s: string): string => { try { return decodeURIComponent(s.replace(/\+/g, ' ')) } catch { return '' } }
  return { id: formDecode(decoded.slice(0, at)), secret: formDecode(decoded.slice(at + 1)) }
}

function parseBody (raw: string, contentType: string | undefined): unknown {
  if (raw === '') return null
  if (/^application\/x-www-form-urlencoded/i.test(contentType ?? '')) return Object.fromEntries(new URLSearchParams(raw))
  try { return JSON.parse(raw) } catch { return raw }
}

const DEFAULT_SCOPE: Record<OAuth2Kind, string> = { github: 'read:user user:email', facebook: 'email public_profile', discord: 'identify email', oauth2: 'profile email' }
const DEFAULT_CLIENT_ID: Record<OAuth2Kind, string> = { github: 'Ov23liGitHubTestClient', facebook: '1234567890123456', discord: '1100000000000000001', oauth2: 'oauth2-test-client' }

/** The paths of each kind: GitHub Enterprise Server's, Facebook's with a Graph API version, Discord's with or without an API version. */
const ROUTES: Record<OAuth2Kind, { authorize: RegExp, token: RegExp, user: RegExp, emails?: RegExp, urls: { authorization: string, token: string, user: string, emails?: string } }> = {
  github: {
    authorize: /^\/login\/oauth\/authorize$/,
    token: /^\/login\/oauth\/access_token$/,
    user: /^\/api\/v3\/user$/,
    emails: /^\/api\/v3\/user\/emails$/,
    urls: { authorization: '/login/oauth/authorize', token: '/login/oauth/access_token', user: '/api/v3/user', emails: '/api/v3/user/emails' }
  },
  facebook: {
    authorize: /^(\/v\d+\.\d+)?\/dialog\/oauth$/,
    token: /^(\/v\d+\.\d+)?\/oauth\/access_token$/,
    user: /^(\/v\d+\.\d+)?\/me$/,
    urls: { authorization: '/v21.0/dialog/oauth', token: '/v21.0/oauth/access_token', user: '/v21.0/me?fields=id,name,email' }
  },
  discord: {
    authorize: /^(\/api(\/v\d+)?)?\/oauth2\/authorize$/,
    token: /^\/api(\/v\d+)?\/oauth2\/token$/,
    user: /^\/api(\/v\d+)?\/users\/@me$/,
    urls: { authorization: '/oauth2/authorize', token: '/api/oauth2/token', user: '/api/users/@me' }
  },
  oauth2: {
    authorize: /^\/oauth\/authorize$/,
    token: /^\/oauth\/token$/,
    user: /^\/api\/me$/,
    urls: { authorization: '/oauth/authorize', token: '/oauth/token', user: '/api/me' }
  }
}

export async function startOAuth2Provider<K extends OAuth2Kind> (kind: K, options: { clientId?: string, clientSecret?: string, redirectUris?: string[] } = {}): Promise<TestOAuth2Provider<K>> {
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID[kind]
  const clientSecret = options.clientSecret ?? `${kind}-secret-${random(12)}`
  const other = { clientId: `${clientId}-other`, clientSecret: `${kind}-other-secret-${random(12)}` }
  const clients = new Map([[clientId, clientSecret], [other.clientId, other.clientSecret]])
  const redirectUris = options.redirectUris ?? [REDIRECT_URI, OTHER_REDIRECT_URI]
  const codes = new Map<string, Code>()
  const tokens = new Map<string, Grant>()
  const signedIn = new Map<string, unknown>()
  const faults: Record<OAuth2Endpoint, OAuth2Fault[]> = { token: [], user: [], emails: [] }
  const requests: SeenRequest[] = []
  const timers = new Set<NodeJS.Timeout>()
  const routes = ROUTES[kind]

  /** GitHub takes any path below a registered callback URL (same scheme, host and port); the others ask for the very URI registered. */
  const registered = (uri: string): boolean => {
    if (kind !== 'github') return redirectUris.includes(uri)
    let asked: URL
    try { asked = new URL(uri) } catch { return false }
    return redirectUris.some((r) => {
      const base = new URL(r)
      const under = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`
      return asked.origin === base.origin && (asked.pathname === base.pathname || asked.pathname.startsWith(under))
    })
  }

  const issue = (account: unknown, client: string, redirectUri: string | null, scope: string, challenge: Code['challenge']): string => {
    const code = kind === 'github' ? randomBytes(10).toString('hex') : random(24)
    const asked = scopesOf(scope)
    codes.set(code, { account, clientId: client, redirectUri, challenge, scopes: kind === 'github' ? githubScopes(asked) : asked, expiresAt: Date.now() + CODE_TTL_MS, spent: false, tokens: [] })
    return code
  }

  /** The checks of a redemption, in the order a provider makes them; on success the code is spent and a token issued. */
  const redeem = (params: Record<string, string>, authorization: string | undefined): { token: string, grant: Grant } | Refusal => {
    const basic = basicCredentials(authorization)
    if (basic !== null && params.client_secret !== undefined && kind === 'oauth2') return 'both_auth'
    const id = basic?.id ?? params.client_id ?? ''
    const secret = basic?.secret ?? params.client_secret ?? ''
    if (!clients.has(id)) return 'unknown_client'
    if (clients.get(id) !== secret) return 'bad_secret'
    if (params.code === undefined || params.code === '') return 'no_code'
    const code = codes.get(params.code)
    if (code === undefined) return 'bad_code'
    if (code.spent) {
      // RFC 6749 §4.1.2: a code used twice may be a stolen one; the tokens it gave are revoked
      if (kind === 'oauth2') for (const token of code.tokens) tokens.delete(token)
      return 'spent'
    }
    if (Date.now() >= code.expiresAt) return 'expired'
    if (code.clientId !== id) return 'other_client'
    const asked = params.redirect_uri
    if (kind === 'github') {
      if (asked !== undefined && (!registered(asked) || (code.redirectUri !== null && asked !== code.redirectUri))) return 'bad_redirect'
    } else if (code.redirectUri !== null) {
      if (asked === undefined) return 'no_redirect'
      if (asked !== code.redirectUri) return 'bad_redirect'
    }
    const verifier = params.code_verifier
    if (code.challenge !== null) {
      const computed = code.challenge.method === 'S256' ? s256(verifier ?? '') : verifier
      if (verifier === undefined || computed !== code.challenge.value) return 'bad_verifier'
    } else if (verifier !== undefined && kind === 'oauth2') {
      // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a PKCE downgrade
      return 'bad_verifier'
    }
    if (kind === 'github' && (code.account as GitHubAccount).emails.some((e) => e.primary && !e.verified)) return 'unverified_email'
    code.spent = true
    const token = kind === 'github' ? `gho_${randomBytes(18).toString('hex')}` : random(32)
    const grant: Grant = { account: code.account, scopes: code.scopes, expired: false }
    tokens.set(token, grant)
    code.tokens.push(token)
    return { token, grant }
  }

  /** The access token a user-endpoint call presents: in the Authorization header (GitHub also takes its older `token` scheme), or Facebook's `access_token` query parameter. */
  const presented = (req: IncomingMessage, url: URL): Grant | 'none' | 'unknown' | 'expired' => {
    const scheme = kind === 'github' ? /^(?:Bearer|token)\s+(\S+)$/i : /^Bearer\s+(\S+)$/i
    const token = scheme.exec(req.headers.authorization ?? '')?.[1] ?? (kind === 'facebook' ? url.searchParams.get('access_token') : null)
    if (token === null || token === undefined) return 'none'
    const grant = tokens.get(token)
    if (grant === undefined) return 'unknown'
    return grant.expired ? 'expired' : grant
  }

  const token = (req: IncomingMessage, res: ServerResponse, url: URL, body: unknown): void => {
    const form = body !== null && typeof body === 'object' && /^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')
    const params: Record<string, string> = {
      ...(kind === 'facebook' ? Object.fromEntries(url.searchParams) : {}),
      ...(form || (kind === 'github' && body !== null && typeof body === 'object') ? body as Record<string, string> : {})
    }
    if (kind === 'github') return githubToken(req, res, params)
    if (kind === 'facebook') return facebookToken(req, res, params)
    if (kind === 'discord') return discordToken(req, res, params)
    genericToken(req, res, params, form)
  }

  /** GitHub answers 200 even for a refused code, in the format the Accept header asks for (form-encoded unless told otherwise). */
  const githubToken = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void => {
    const answer = (fields: Record<string, string>): void => {
      const accept = req.headers.accept ?? ''
      if (/application\/json/i.test(accept)) return json(res, 200, fields)
      if (/application\/xml/i.test(accept)) {
        res.writeHead(200, { 'content-type': 'application/xml; charset=utf-8' })
        res.end(`<OAuth>${Object.entries(fields).map(([k, v]) => `<${k}>${v}</${k}>`).join('')}</OAuth>`)
        return
      }
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' })
      res.end(new URLSearchParams(fields).toString())
    }
    const outcome = redeem(params, req.headers.authorization)
    if (typeof outcome !== 'string') return answer({ access_token: outcome.token, token_type: 'bearer', scope: outcome.grant.scopes.join(',') })
    const refusal = ({
      unknown_client: 'incorrect_client_credentials',
      bad_secret: 'incorrect_client_credentials',
      bad_redirect: 'redirect_uri_mismatch',
      unverified_email: 'unverified_user_email'
    } as Partial<Record<Refusal, string>>)[outcome] ?? 'bad_verification_code'
    const description: Record<string, string> = {
      incorrect_client_credentials: 'The client ID or the client secret is not right.',
      redirect_uri_mismatch: 'The redirect_uri does not match the callback URL registered for the application.',
      bad_verification_code: 'The code is not right, or it has expired.',
      unverified_user_email: 'The user has not verified their primary email address.'
    }
    answer({ error: refusal, error_description: description[refusal] as string, error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${refusal.replace(/_/g, '-')}` })
  }

  /** Facebook's Graph API error: HTTP 400 with `{ error: { message, type, code, error_subcode?, fbtrace_id } }`. */
  const graphError = (res: ServerResponse, code: number, message: string, subcode?: number, headers: Record<string, string> = {}): void => {
    json(res, 400, { error: { message, type: 'OAuthException', code, ...(subcode === undefined ? {} : { error_subcode: subcode }), fbtrace_id: fbtraceId() } }, headers)
  }

  const facebookToken = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void => {
    const outcome = redeem(params, req.headers.authorization)
    if (typeof outcome !== 'string') return json(res, 200, { access_token: outcome.token, token_type: 'bearer', expires_in: 5183944 })
    const errors: Record<Refusal, [number, string, number?]> = {
      both_auth: [100, 'Invalid parameter.'],
      unknown_client: [101, 'Error validating application: the application ID is not valid.'],
      bad_secret: [1, 'Error validating client secret.'],
      no_code: [100, 'Missing code parameter.'],
      bad_code: [100, 'Invalid verification code format.'],
      other_client: [100, 'Invalid verification code format.'],
      spent: [100, 'This authorization code has been used.', 36009],
      expired: [100, 'This authorization code has expired.', 36007],
      no_redirect: [191, 'Missing redirect_uri parameter.'],
      bad_redirect: [100, 'Error validating verification code: the redirect_uri is not the one the login dialog was given.', 36008],
      bad_verifier: [100, 'Invalid code verifier.'],
      unverified_email: [100, 'Invalid parameter.']
    }
    const [code, message, subcode] = errors[outcome]
    graphError(res, code, message, subcode)
  }

  const discordToken = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>): void => {
    // JSON bodies are refused: the grant type is then read as missing
    if (params.grant_type !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type', error_description: `Grant type ${params.grant_type ?? 'None'} is not supported` })
    const outcome = redeem(params, req.headers.authorization)
    if (typeof outcome !== 'string') {
      return json(res, 200, { access_token: outcome.token, token_type: 'Bearer', expires_in: 604800, refresh_token: random(24), scope: outcome.grant.scopes.join(' ') })
    }
    if (outcome === 'unknown_client' || outcome === 'bad_secret' || outcome === 'both_auth') return json(res, 401, { error: 'invalid_client' })
    if (outcome === 'no_code') return json(res, 400, { error: 'invalid_request', error_description: 'Missing "code" in request.' })
    const field = outcome === 'no_redirect' || outcome === 'bad_redirect' ? 'redirect_uri' : outcome === 'bad_verifier' ? 'code_verifier' : 'code'
    json(res, 400, { error: 'invalid_grant', error_description: `Invalid "${field}" in request.` })
  }

  /** RFC 6749 §5.1 and §5.2, with the no-store headers they ask for. */
  const genericToken = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, form: boolean): void => {
    const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' }
    const refuse = (status: number, error: string, headers: Record<string, string> = {}): void => json(res, status, { error }, { ...noStore, ...headers })
    if (!form || params.grant_type === undefined) return refuse(400, 'invalid_request')
    if (params.grant_type !== 'authorization_code') return refuse(400, 'unsupported_grant_type')
    const outcome = redeem(params, req.headers.authorization)
    if (typeof outcome !== 'string') {
      return json(res, 200, { access_token: outcome.token, token_type: 'Bearer', expires_in: 3600, scope: outcome.grant.scopes.join(' ') }, noStore)
    }
    if (outcome === 'unknown_client' || outcome === 'bad_secret') {
      return refuse(401, 'invalid_client', req.headers.authorization === undefined ? {} : { 'www-authenticate': 'Basic realm="oauth2"' })
    }
    if (outcome === 'both_auth' || outcome === 'no_code') return refuse(400, 'invalid_request')
    refuse(400, 'invalid_grant')
  }

  const githubApi = (req: IncomingMessage, res: ServerResponse, url: URL, endpoint: 'user' | 'emails'): void => {
    const docs = 'https://docs.github.com/rest'
    if ((req.headers['user-agent'] ?? '').trim() === '') {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('Request forbidden by administrative rules: send a User-Agent header with every API request.\n')
      return
    }
    const grant = presented(req, url)
    if (grant === 'none') return json(res, 401, { message: 'Requires authentication', documentation_url: docs, status: '401' })
    if (typeof grant === 'string') return json(res, 401, { message: 'Bad credentials', documentation_url: docs, status: '401' })
    const account = grant.account as GitHubAccount
    const headers = { 'x-oauth-scopes': grant.scopes.join(', '), 'x-accepted-oauth-scopes': endpoint === 'emails' ? 'user, user:email' : '', 'x-github-media-type': 'github.v3; format=json' }
    if (endpoint === 'emails') {
      // a token without the scope reads as a missing resource, not a forbidden one
      if (!grant.scopes.includes('user') && !grant.scopes.includes('user:email')) {
        return json(res, 404, { message: 'Not Found', documentation_url: `${docs}/users/emails#list-email-addresses-for-the-authenticated-user`, status: '404' }, headers)
      }
      return json(res, 200, account.emails, headers)
    }
    const profile = `${origin}/${account.login}`
    const body: Record<string, unknown> = {
      login: account.login,
      id: account.id,
      node_id: Buffer.from(`04:User${account.id}`).toString('base64'),
      avatar_url: `${origin}/avatars/u/${account.id}`,
      gravatar_id: '',
      url: `${origin}/api/v3/users/${account.login}`,
      html_url: profile,
      type: 'User',
      site_admin: false,
      name: account.name,
      company: null,
      blog: '',
      location: null,
      email: account.email,
      hireable: null,
      bio: null,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: '2020-01-01T00:00:00Z',
      updated_at: '2020-01-01T00:00:00Z'
    }
    if (grant.scopes.includes('user') || grant.scopes.includes('read:user')) {
      Object.assign(body, { private_gists: 0, total_private_repos: 0, owned_private_repos: 0, disk_usage: 0, collaborators: 0, two_factor_authentication: false })
    }
    json(res, 200, body, headers)
  }

  /** Graph API `/me`: only the fields asked for (`id` and `name` when none are), `id` always, `email` only with the permission and an address. */
  const facebookMe = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const grant = presented(req, url)
    const invalidToken = (message: string, subcode?: number): void => {
      graphError(res, 190, message, subcode, { 'www-authenticate': `OAuth "Facebook Platform" "invalid_token" "${message}"` })
    }
    if (grant === 'none') return graphError(res, 2500, 'An active access token must be used to query information about the current user.')
    if (grant === 'unknown') return invalidToken('Invalid OAuth access token - Cannot parse access token')
    if (grant === 'expired') return invalidToken('Error validating access token: Session has expired.', 463)
    const account = grant.account as FacebookAccount
    const [first, ...rest] = account.name.split(' ')
    const known: Record<string, unknown> = {
      id: account.id,
      name: account.name,
      first_name: first,
      last_name: rest.join(' '),
      short_name: first,
      email: grant.scopes.includes('email') ? account.email : undefined,
      picture: { data: { height: 50, width: 50, is_silhouette: true, url: `${origin}/picture/${account.id}` } }
    }
    const fields = scopesOf(url.searchParams.get('fields') ?? 'id,name')
    const unknown = fields.find((f) => !Object.hasOwn(known, f))
    if (unknown !== undefined) return graphError(res, 100, `(#100) Tried accessing nonexisting field (${unknown}) on node type (User)`)
    const body: Record<string, unknown> = {}
    for (const field of [...fields.filter((f) => f !== 'id'), 'id']) if (known[field] !== undefined) body[field] = known[field]
    json(res, 200, body)
  }

  const discordMe = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const grant = presented(req, url)
    if (typeof grant === 'string' || !grant.scopes.includes('identify')) return json(res, 401, { message: '401: Unauthorized', code: 0 })
    const account = grant.account as DiscordAccount
    json(res, 200, {
      id: account.id,
      username: account.username,
      discriminator: '0',
      global_name: account.global_name,
      avatar: null,
      mfa_enabled: false,
      banner: null,
      accent_color: null,
      locale: 'en-US',
      flags: 0,
      premium_type: 0,
      public_flags: 0,
      ...(grant.scopes.includes('email') ? { email: account.email ?? null, verified: account.verified } : {})
    })
  }

  /** RFC 6750 §3: the Bearer challenge, with `invalid_token` when a token was presented and refused. */
  const genericMe = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const grant = presented(req, url)
    if (grant === 'none') return json(res, 401, { error: 'invalid_request' }, { 'www-authenticate': 'Bearer realm="oauth2"' })
    if (typeof grant === 'string') return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer realm="oauth2", error="invalid_token"' })
    json(res, 200, grant.account)
  }

  /** The authorization page: the signed-in user (the test header) approves or denies; without one, the sign-in page. */
  const authorizePage = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const q = (name: string): string | undefined => url.searchParams.get(name) ?? undefined
    const state = q('state')
    const client = q('client_id')
    if (client === undefined || !clients.has(client)) return page(res, kind === 'github' ? 404 : 400, 'Unknown application')
    const asked = q('redirect_uri')
    if (asked === undefined && kind === 'facebook') return page(res, 400, 'The redirect_uri parameter is missing')
    if (asked !== undefined && !registered(asked)) {
      // GitHub alone sends the browser back (to the registered callback URL); the others must not redirect to an unchecked URI
      if (kind === 'github') {
        return redirect(res, redirectUris[0] as string, { error: 'redirect_uri_mismatch', error_description: 'The redirect_uri does not match the callback URL registered for the application.', state })
      }
      return page(res, 400, 'The redirect_uri is not registered for this application')
    }
    const back = asked ?? (redirectUris[0] as string)
    if ((kind === 'discord' || kind === 'oauth2') && q('response_type') !== 'code') return redirect(res, back, { error: 'unsupported_response_type', state })
    const challenge = q('code_challenge')
    // RFC 7636 §4.3: plain unless told otherwise; GitHub takes S256 only
    const method = q('code_challenge_method') ?? 'plain'
    if (challenge !== undefined && !(kind === 'github' ? ['S256'] : ['S256', 'plain']).includes(method)) {
      return redirect(res, back, { error: 'invalid_request', error_description: 'code_challenge_method is not supported', state })
    }
    const ticket = req.headers[SIGNED_IN]
    if (typeof ticket !== 'string' || !signedIn.has(ticket)) return page(res, 200, 'Sign in to continue')
    const account = signedIn.get(ticket)
    signedIn.delete(ticket)
    if (account === null) {
      if (kind === 'facebook') return redirect(res, back, { error_reason: 'user_denied', error: 'access_denied', error_description: 'Permissions error.', state }, '#_=_')
      return redirect(res, back, { error: 'access_denied', error_description: 'The user denied the application access.', state })
    }
    const code = issue(account, client, asked ?? null, q('scope') ?? '', challenge === undefined ? null : { value: challenge, method: method as 'S256' | 'plain' })
    // Facebook appends an empty fragment to the redirect
    redirect(res, back, { code, state }, kind === 'facebook' ? '#_=_' : '')
  }

  const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => {
    const timer = setTimeout(() => { timers.delete(timer); resolve() }, ms)
    timers.add(timer)
  })

  /** Answers the fault in place of the endpoint; false when it was only a delay. */
  const fail = async (res: ServerResponse, fault: OAuth2Fault): Promise<boolean> => {
    if (fault.delayMs !== undefined) await sleep(fault.delayMs)
    if (fault.destroy === true) {
      res.socket?.destroy()
      return true
    }
    if (fault.status === undefined && fault.body === undefined && fault.contentType === undefined) return false
    const text = typeof fault.body === 'string'
    res.writeHead(fault.status ?? 500, { 'content-type': fault.contentType ?? (text ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8') })
    res.end(fault.body === undefined ? '' : text ? fault.body as string : JSON.stringify(fault.body))
    return true
  }

  const endpointOf = (path: string): SeenRequest['endpoint'] => {
    if (routes.authorize.test(path)) return 'authorize'
    if (routes.token.test(path)) return 'token'
    if (routes.user.test(path)) return 'user'
    if (routes.emails?.test(path) === true) return 'emails'
    return null
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', origin)
    const endpoint = endpointOf(url.pathname)
    const body = parseBody(raw, req.headers['content-type'])
    requests.push({ endpoint, method: req.method ?? 'GET', path: `${url.pathname}${url.search}`, headers: req.headers, body })
    const fault = endpoint === null || endpoint === 'authorize' ? undefined : faults[endpoint].shift()
    if (fault !== undefined && await fail(res, fault)) return
    const method = req.method ?? 'GET'
    if (endpoint === null) return json(res, 404, { message: 'Not Found' })
    if (endpoint === 'authorize') return method === 'GET' ? authorizePage(req, res, url) : page(res, 405, 'Method not allowed')
    if (endpoint === 'token') {
      if (method === 'POST' || (kind === 'facebook' && method === 'GET')) return token(req, res, url, body)
      return json(res, 405, { message: 'Method not allowed' })
    }
    if (method !== 'GET') return json(res, 405, { message: 'Method not allowed' })
    if (kind === 'github') return githubApi(req, res, url, endpoint as 'user' | 'emails')
    if (kind === 'facebook') return facebookMe(req, res, url)
    if (kind === 'discord') return discordMe(req, res, url)
    genericMe(req, res, url)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { message: String(error) })
      else res.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const absolute = (path: string): string => `${origin}${path}`
  const urls = {
    authorization: absolute(routes.urls.authorization),
    token: absolute(routes.urls.token),
    user: absolute(routes.urls.user),
    ...(routes.urls.emails === undefined ? {} : { emails: absolute(routes.urls.emails) })
  }

  return {
    kind,
    origin,
    clientId,
    clientSecret,
    other,
    settings: kind === 'github' ? { enterpriseUrl: origin } : { api: { authorization: urls.authorization, token: urls.token, user: urls.user } },
    urls,
    redirectUris,
    linkSubject: (id) => `${origin}/ ${id}`,
    code: (account, options = {}) => {
      const codeVerifier = options.pkce === true ? random(32) : undefined
      const code = issue(account, options.otherClient === true ? other.clientId : clientId, options.redirectUri ?? REDIRECT_URI, options.scope ?? DEFAULT_SCOPE[kind], codeVerifier === undefined ? null : { value: s256(codeVerifier), method: 'S256' })
      return codeVerifier === undefined ? { code } : { code, codeVerifier }
    },
    authorize: async (url, account) => {
      const ticket = random(16)
      signedIn.set(ticket, account)
      const res = await fetch(url, { redirect: 'manual', headers: { [SIGNED_IN]: ticket } })
      signedIn.delete(ticket)
      const location = res.headers.get('location')
      if (location === null) throw new Error(`the provider's authorization page answered ${res.status}: ${await res.text()}`)
      return new URL(location)
    },
    requests,
    failNext: (endpoint, fault) => { faults[endpoint].push(fault) },
    expireCodes: () => { for (const code of codes.values()) code.expiresAt = 0 },
    expireTokens: () => { for (const grant of tokens.values()) grant.expired = true },
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
