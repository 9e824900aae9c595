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
  close: () => Promise<void>
}

async function listen (server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

export async function startIdp (): Promise<TestIdp> {
  const key = await newSigningKey('idp-key-1')
  const server = createServer()
  const port = await listen(server)
  const issuer = `http://127.0.0.1:${port}`
  const accounts = new Map<string, TestAccount>(Object.values(ACCOUNTS).map(a => [a.id, a]))

  const provider = new Provider(issuer, {
    clients: [
      { ...CLIENTS.idp1, redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI], response_types: ['code', 'id_token'], grant_types: ['authorization_code', 'implicit'] },
      { ...CLIENTS.idp2, redirect_uris: [REDIRECT_URI], response_types: ['code'], grant_types: ['authorization_code'] },
      { ...CLIENTS.other, redirect_uris: [REDIRECT_URI], response_types: ['code', 'id_token'], grant_types: ['authorization_code', 'implicit'] }
    ],
    jwks: { keys: [key.privateJwk] },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: false }, claimsParameter: { enabled: true } },
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
    const cookies = new Map<string, string>()
    let next: URL = url
    for (let hop = 0; hop < 12; hop++) {
      const res = await fetch(next, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') }
      })
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';')
        const at = (pair as string).indexOf('=')
        cookies.set((pair as string).slice(0, at), (pair as string).slice(at + 1))
      }
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
