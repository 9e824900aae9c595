/**
 * A real OpenID provider (the `oidc-provider` package) on loopback for the
 * `/oauth/token` tests: in-memory adapter, a few accounts, clients for idp1
 * (code and ID token) and idp2 (code only), and a driver that walks the
 * authorization flow through its login and consent interactions with plain
 * HTTP requests, the way a browser would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier } from 'openid-client'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import Provider from 'oidc-provider'
import { closedPort } from './net.js'

export const REDIRECT_URI = 'https://app.example.test/callback'
export const OTHER_REDIRECT_URI = 'https://app.example.test/other-callback'

/** The relying party's origin as the clients register it (the plugin's listening address stands in: see `relyingParty`). */
export const RP_ORIGIN = 'https://app.example.test'
/** The `backchannel_logout_uri` the clients register with `backchannelLogout` on: the plugin's route for that provider. */
export const backchannelLogoutUri = (provider: string): string => `${RP_ORIGIN}/jwt-login/v1/oauth/${provider}/backchannel-logout`

export interface TestAccount {
  id: string
  email: string
  emailVerified: boolean
  name: string
}

export const ACCOUNTS = {
  bob: { id: 'acct-bob', email: 'bob@example.com', emailVerified: true, name: 'Bob Builder' },
  alice: { id: 'acct-alice', email: 'alice@example.com', emailVerified: true, name: 'Alice at the IdP' },
  eve: { id: 'acct-eve', email: 'eve@example.com', emailVerified: false, name: 'Eve Unverified' },
  carol: { id: 'acct-carol', email: 'Carol.Smith+news@Example.com', emailVerified: true, name: 'Carol Smith' }
} satisfies Record<string, TestAccount>

export interface TestClient {
  client_id: string
  client_secret: string
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post'
}

export const CLIENTS = {
  idp1: { client_id: 'idp1-client', client_secret: 'idp1-secret-0123456789abcdef', token_endpoint_auth_method: 'client_secret_basic' },
  idp2: { client_id: 'idp2-client', client_secret: 'idp2-secret-0123456789abcdef', token_endpoint_auth_method: 'client_secret_post' },
  other: { client_id: 'other-client', client_secret: 'other-secret-0123456789abcdef', token_endpoint_auth_method: 'client_secret_basic' }
} satisfies Record<string, TestClient>

export interface SigningKey {
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

export async function newSigningKey (kid: string, alg = 'RS256'): Promise<SigningKey & { privateJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const privateJwk = { ...await exportJWK(privateKey), kid, alg, use: 'sig' }
  const publicJwk = { ...await exportJWK(publicKey), kid, alg, use: 'sig' }
  return { kid, privateKey, publicJwk, privateJwk }
}

export interface AuthorizeOptions {
  client?: TestClient
  account?: TestAccount
  responseType?: 'code' | 'id_token'
  pkce?: boolean
  nonce?: string
  redirectUri?: string
  /** Ask for email claims in the ID token as well (the `claims` request parameter). */
  emailInIdToken?: boolean
  /** PKCE S256 challenge to send. */
  codeChallenge?: string
  /** The browser's cookies at the provider, kept across flows (its provider session); a fresh jar by default. */
  browser?: Map<string, string>
}

/** What the provider's POST of a logout token to a client's `backchannel_logout_uri` came to. */
export interface BackchannelOutcome {
  clientId: string
  /** The account and provider session (`sid`) the token named. */
  accountId: string
  sid: string
  /** `null` when the client answered 200; else the provider's error (`expected 200 OK from …, got: 400 …`). */
  error: string | null
}

export interface IdpOptions {
  /**
   * OpenID Back-Channel Logout at the provider: idp1's client registers
   * `backchannelLogoutUri('idp1')` with `backchannel_logout_session_required`
   * (its ID tokens and logout tokens carry `sid`), idp2's registers
   * `backchannelLogoutUri('idp2')` without (its logout tokens name `sub` only).
   */
  backchannelLogout?: boolean
}

export interface TestIdp {
  issuer: string
  key: SigningKey
  /** Paths the provider was asked for, in order. */
  requests: string[]
  /** Serves this JWKS at the jwks_uri instead of the provider's own (key rotation); `null` restores it. */
  setJwks: (jwks: { keys: JWK[] } | null) => void
  /** Walks the authorization flow and answers the redirect back to the client. */
  authorize: (options?: AuthorizeOptions) => Promise<URL>
  /** An authorization code (and the PKCE verifier when asked for). */
  code: (options?: AuthorizeOptions) => Promise<{ code: string, codeVerifier?: string, nonce?: string }>
  /** An ID token minted by the provider's own implicit flow (`response_type=id_token`). */
  idToken: (options?: AuthorizeOptions & { nonce: string }) => Promise<string>
  /** A token with any claims, signed with the provider's key (or another one). */
  sign: (claims: JWTPayload, options?: { key?: SigningKey, alg?: string, kid?: string, typ?: string }) => Promise<string>
  /** Where the provider's back-channel calls to `RP_ORIGIN` go: the plugin's listening origin (`http://127.0.0.1:<port>`). */
  relyingParty: (origin: string) => void
  /**
   * The browser's RP-initiated logout at the provider (`/session/end`, then
   * its confirmation with "yes, sign me out"), with the cookies of `browser`:
   * the provider ends that session and, before it answers, POSTs a logout
   * token to the `backchannel_logout_uri` of every client the session signed
   * in to. Answers what each of those POSTs came to.
   */
  signOut: (browser: Map<string, string>) => Promise<BackchannelOutcome[]>
  close: () => Promise<void>
}

async function listen (server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** The client metadata and provider features of back-channel logout (`IdpOptions.backchannelLogout`). */
function backchannelConfiguration (on: boolean, target: () => string | null): { idp1: object, idp2: object, features: object, fetch?: unknown } {
  if (!on) return { idp1: {}, idp2: {}, features: {} }
  return {
    idp1: { backchannel_logout_uri: backchannelLogoutUri('idp1'), backchannel_logout_session_required: true },
    idp2: { backchannel_logout_uri: backchannelLogoutUri('idp2') },
    features: {
      backchannelLogout: { enabled: true },
      // the logout confirmation page as a bare form (its xsrf field is all the driver reads)
      rpInitiatedLogout: { enabled: true, logoutSource: (ctx: { body: string }, form: string) => { ctx.body = form }, postLogoutSuccessSource: (ctx: { body: string }) => { ctx.body = 'signed out' } }
    },
    // the provider refuses to call loopback addresses (its SSRF guard): calls to the relying party go to where the plugin listens
    fetch: async (url: string, options: RequestInit & { dispatcher?: unknown }) => {
      const origin = target()
      if (origin === null || !url.startsWith(`${RP_ORIGIN}/`)) return await globalThis.fetch(url, options)
      const { dispatcher: _guard, ...rest } = options
      return await globalThis.fetch(`${origin}${url.slice(RP_ORIGIN.length)}`, rest)
    }
  }
}

/** Keeps the cookies a response sets in the browser's jar. */
function keepCookies (cookies: Map<string, string>, res: Response): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const at = (pair as string).indexOf('=')
    cookies.set((pair as string).slice(0, at), (pair as string).slice(at + 1))
  }
}

const cookieHeader = (cookies: Map<string, string>): string => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ')

export async function startIdp (options: IdpOptions = {}): Promise<TestIdp> {
  const key = await newSigningKey('idp-key-1')
  const server = createServer()
  const port = await listen(server)
  const issuer = `http://127.0.0.1:${port}`
  const accounts = new Map<string, TestAccount>(Object.values(ACCOUNTS).map(a => [a.id, a]))
  let rpOrigin: string | null = null
  const backchannel = backchannelConfiguration(options.backchannelLogout === true, () => rpOrigin)

  const provider = new Provider(issuer, {
    clients: [
      { ...CLIENTS.idp1, redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI], response_types: ['code', 'id_token'], grant_types: ['authorization_code', 'implicit'], ...backchannel.idp1 },
      { ...CLIENTS.idp2, redirect_uris: [REDIRECT_URI], response_types: ['code'], grant_types: ['authorization_code'], ...backchannel.idp2 },
      { ...CLIENTS.other, redirect_uris: [REDIRECT_URI], response_types: ['code', 'id_token'], grant_types: ['authorization_code', 'implicit'] }
    ],
    jwks: { keys: [key.privateJwk] },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: false }, claimsParameter: { enabled: true }, ...backchannel.features },
    ...(backchannel.fetch === undefined ? {} : { fetch: backchannel.fetch }),
    pkce: { required: () => false },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, id: string) => {
      const account = accounts.get(id)
      if (account === undefined) return undefined
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: account.email, email_verified: account.emailVerified, name: account.name })
      }
    }
  })
  const callback = provider.callback()
  let jwksOverride: { keys: JWK[] } | null = null
  const requests: string[] = []
  const outcomes: BackchannelOutcome[] = []
  provider.on('backchannel.success', (_ctx, client, accountId, sid) => {
    outcomes.push({ clientId: (client as { clientId: string }).clientId, accountId: String(accountId), sid: String(sid), error: null })
  })
  provider.on('backchannel.error', (_ctx, error, client, accountId, sid) => {
    outcomes.push({ clientId: (client as { clientId: string }).clientId, accountId: String(accountId), sid: String(sid), error: (error as Error).message })
  })

  // The interaction pages: log in the account named by login_hint, consent to all that is asked.
  const interaction = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const details = await provider.interactionDetails(req, res)
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: String(details.params.login_hint) } }, { mergeWithLastSubmission: false })
      return
    }
    const grant = new provider.Grant({ accountId: String(details.session?.accountId), clientId: String(details.params.client_id) })
    grant.addOIDCScope(String(details.params.scope))
    const missingClaims = details.prompt.details.missingOIDCClaims
    if (Array.isArray(missingClaims)) grant.addOIDCClaims(missingClaims as string[])
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] as string
    requests.push(path)
    if (path === '/jwks' && jwksOverride !== null) {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(jwksOverride))
      return
    }
    if (path.startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        res.statusCode = 500
        res.end(String(error))
      })
      return
    }
    callback(req, res)
  })

  const authorize = async (options: AuthorizeOptions = {}): Promise<URL> => {
    const client = options.client ?? CLIENTS.idp1
    const account = options.account ?? ACCOUNTS.bob
    const redirectUri = options.redirectUri ?? REDIRECT_URI
    const url = new URL('/auth', issuer)
    url.searchParams.set('client_id', client.client_id)
    url.searchParams.set('redirect_uri', redirectUri)
    url.searchParams.set('response_type', options.responseType ?? 'code')
    url.searchParams.set('scope', 'openid email profile')
    url.searchParams.set('login_hint', account.id)
    if (options.nonce !== undefined) url.searchParams.set('nonce', options.nonce)
    if (options.codeChallenge !== undefined) {
      url.searchParams.set('code_challenge', options.codeChallenge)
      url.searchParams.set('code_challenge_method', 'S256')
    }
    if (options.emailInIdToken === true) {
      url.searchParams.set('claims', JSON.stringify({ id_token: { email: null, email_verified: null, name: null } }))
    }
    const cookies = options.browser ?? new Map<string, string>()
    let next: URL = url
    for (let hop = 0; hop < 12; hop++) {
      const res = await fetch(next, { redirect: 'manual', headers: { cookie: cookieHeader(cookies) } })
      keepCookies(cookies, res)
      const location = res.headers.get('location')
      if (location === null) throw new Error(`the provider stopped at ${next.pathname} with ${res.status}: ${await res.text()}`)
      if (location.startsWith(redirectUri)) return new URL(location)
      next = new URL(location, issuer)
    }
    throw new Error('too many redirects')
  }

  return {
    issuer,
    key,
    requests,
    setJwks: (jwks) => { jwksOverride = jwks },
    authorize,
    code: async (options = {}) => {
      let codeVerifier: string | undefined
      const url = await (async () => {
        if (options.pkce !== true) return await authorize(options)
        codeVerifier = randomPKCECodeVerifier()
        return await authorize({ ...options, codeChallenge: await calculatePKCECodeChallenge(codeVerifier) })
      })()
      const code = url.searchParams.get('code')
      if (code === null) throw new Error(`no code in ${url.search}`)
      return { code, codeVerifier, nonce: options.nonce }
    },
    idToken: async (options) => {
      const url = await authorize({ ...options, responseType: 'id_token', nonce: options?.nonce ?? randomNonce() })
      const token = new URLSearchParams(url.hash.slice(1)).get('id_token')
      if (token === null) throw new Error(`no id_token in ${url.hash}`)
      return token
    },
    sign: async (claims, options = {}) => {
      const signer = options.key ?? key
      return await new SignJWT(claims)
        .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? signer.kid, typ: options.typ ?? 'JWT' })
        .sign(signer.privateKey)
    },
    relyingParty: (origin) => { rpOrigin = origin },
    signOut: async (browser) => {
      const page = await fetch(new URL('/session/end', issuer), { redirect: 'manual', headers: { cookie: cookieHeader(browser) } })
      keepCookies(browser, page)
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())?.[1]
      if (xsrf === undefined) throw new Error(`no logout form at the provider (${page.status})`)
      const seen = outcomes.length
      const confirmed = await fetch(new URL('/session/end/confirm', issuer), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookieHeader(browser), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString()
      })
      keepCookies(browser, confirmed)
      if (confirmed.status !== 303) throw new Error(`the provider's logout answered ${confirmed.status}: ${await confirmed.text()}`)
      return outcomes.slice(seen)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** An HTTP server on loopback that answers `body` (given its own URL) only after `delayMs` (a provider that hangs). */
export async function startSlowServer (delayMs: number, body: string | ((url: string) => string) = '{}'): Promise<{ url: string, hits: () => number, close: () => Promise<void> }> {
  let hits = 0
  let url = ''
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer((_req, res) => {
    hits++
    const timer = setTimeout(() => { res.end(typeof body === 'string' ? body : body(url)) }, delayMs)
    timers.add(timer)
  })
  url = `http://127.0.0.1:${await listen(server)}`
  return {
    url,
    hits: () => hits,
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** The URL of a loopback port with nothing listening (a provider that is down). */
export async function closedUrl (): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`
}
