// What an OpenID provider vouches for: an authorization code exchanged with openid-client, or an ID token verified with jose (pinned algorithms, nonce rules).
import {
  allowInsecureRequests, authorizationCodeGrant, ClientError, Configuration,
  customFetch, fetchUserInfo, ResponseBodyError
} from 'openid-client'
import { jwtVerify, type JWTPayload } from 'jose'
import type { Call } from '../adapters/second-factor.js'
import type { OAuthProviderSettings } from '../config/oauth-providers.js'
import type { JwtLoginContext } from '../context/context.js'
import { sha256Base64url } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import { isIssuedNonce, nonceMatches } from './nonce.js'
import { keyLookup, withDeadline, type BoundFetch } from './providers/registry.js'
import { exchangeOAuth2Code } from './user-api.js'
import { clientAuth, type CodeRequest, type Identity } from './provider-client.js'

export type { CodeRequest, Identity }

/** A provider's codes live at most 10 minutes (RFC 6749 §4.1.2); a used one is remembered that long. */
export const CODE_MEMORY_MS = 10 * 60 * 1000
/** Asymmetric algorithms only: never `none`, never an HMAC keyed by the client secret. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** A verified ID token presented by the client: what it vouches for, and what its single use needs. */
export interface PresentedIdToken {
  identity: Identity
  /** Its issue time and expiry (ms). */
  issuedAt: number
  expiresAt: number
}

const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

function identityOf (claims: Record<string, unknown>): Identity {
  const email = text(claims.email)
  return {
    email,
    emailVerified: claims.email_verified,
    name: text(claims.name),
    subject: String(claims.sub),
    display: email ?? text(claims.preferred_username),
    session: typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : undefined
  }
}

/** What openid-client throws, as our errors: a refused grant is the code's fault, a bad claim the token's. */
function codeFlowError (error: unknown): unknown {
  if (error instanceof JwtLoginError) return error
  if (error instanceof ResponseBodyError && error.error === 'invalid_grant') {
    return new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_CODE_INVALID', { cause: error })
  }
  if (error instanceof ClientError && error.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    return new JwtLoginError('ERR_JWT_LOGIN_ID_TOKEN_INVALID', { cause: error })
  }
  return new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR', { cause: error })
}

/**
 * Exchanges the code: at an OpenID provider's token endpoint (openid-client
 * checks the ID token's iss, aud, exp, nonce), or at a plain OAuth 2.0
 * provider's, whose user API then says who signed in. The code is spent
 * before the provider sees it: a second use fails here even if the
 * provider would take it.
 */
export async function exchangeCode (ctx: JwtLoginContext, provider: OAuthProviderSettings, request: CodeRequest): Promise<Identity> {
  const digest = sha256Base64url(`${provider.name}\u0000${request.code}`)
  const { count } = await ctx.store.increment(`oauth-code:${digest}`, CODE_MEMORY_MS)
  if (count > 1) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_CODE_INVALID')
  return provider.kind === 'oauth2' ? await exchangeOAuth2Code(provider, request) : await exchangeOpenIdCode(ctx, provider, request)
}

async function exchangeOpenIdCode (ctx: JwtLoginContext, provider: OAuthProviderSettings, request: CodeRequest): Promise<Identity> {
  return await withDeadline(provider.timeoutMs, async (fetchFn) => {
    try {
      // the client names the provider, so the RFC 9207 mix-up check (an `iss` in the redirect) has nothing to add
      const { authorization_response_iss_parameter_supported: _ignored, ...server } = await ctx.oauth.metadata(provider, fetchFn)
      const metadata = provider.clientSecret === null ? {} : { client_secret: provider.clientSecret }
      const config = new Configuration(server, provider.clientId, metadata, clientAuth(provider))
      if (provider.allowHttp) allowInsecureRequests(config)
      config[customFetch] = fetchFn as never
      const callback = new URL(request.redirectUri)
      callback.searchParams.set('code', request.code)
      const tokens = await authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: request.codeVerifier,
        expectedNonce: request.nonce,
        idTokenExpected: true
      })
      const claims = tokens.claims() as JWTPayload
      const identity = identityOf(claims)
      if (identity.email !== undefined || server.userinfo_endpoint === undefined) return identity
      // many providers keep the email out of a code-flow ID token; userinfo has it (its sub must match)
      return { ...identityOf(await fetchUserInfo(config, tokens.access_token, claims.sub as string)), session: identity.session }
    } catch (error) {
      throw codeFlowError(error)
    }
  })
}

/**
 * The nonce rule of an ID token the client presents: a token that carries a
 * nonce is accepted only beside that nonce or the nonce it is the SHA-256 of
 * (and a nonce presented needs a token that carries it). With
 * `requireNonce`, the nonce presented must be one this server issued, not
 * yet expired, and the token must carry its SHA-256: the nonce itself never
 * reached the provider, so the token alone does not reveal it.
 */
function checkNonce (call: Call, provider: OAuthProviderSettings, carried: unknown, presented: string | undefined, now: number): void {
  if (presented === undefined) {
    if (carried !== undefined || provider.requireNonce) throw new Error('nonce')
    return
  }
  if (!nonceMatches(carried, presented, provider.requireNonce)) throw new Error('nonce')
  if (provider.requireNonce && !isIssuedNonce(call.settings.tokens, presented, now)) throw new Error('nonce')
}

/** Verifies an ID token the browser obtained: signature by the provider's keys, iss, aud, exp, azp, nonce. */
export async function verifyIdToken (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, idToken: string, nonce: string | undefined): Promise<PresentedIdToken> {
  return await withDeadline(provider.timeoutMs, async (fetchFn: BoundFetch) => {
    try {
      const server = await ctx.oauth.metadata(provider, fetchFn)
      if (server.jwks_uri === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR')
      const key = keyLookup(ctx.oauth, provider, server.jwks_uri, fetchFn)
      const { payload, protectedHeader } = await jwtVerify(idToken, key, {
        algorithms: ID_TOKEN_ALGORITHMS,
        issuer: provider.acceptedIssuers,
        audience: provider.clientId,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(ctx.clock()),
        clockTolerance: Math.ceil(call.settings.tokens.leewayMs / 1000)
      })
      // another JWT of the provider for us (an access or logout token) is not an ID token
      if (protectedHeader.typ !== undefined && protectedHeader.typ.toLowerCase() !== 'jwt') throw new Error('typ')
      if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== provider.clientId) throw new Error('azp')
      checkNonce(call, provider, payload.nonce, nonce, ctx.clock())
      return { identity: identityOf(payload), issuedAt: (payload.iat as number) * 1000, expiresAt: (payload.exp as number) * 1000 }
    } catch (error) {
      if (error instanceof JwtLoginError) throw error
      throw new JwtLoginError('ERR_JWT_LOGIN_ID_TOKEN_INVALID', { cause: error })
    }
  })
}
