// OpenID Connect Back-Channel Logout 1.0, relying-party side: a provider's logout token ends the local sessions its sign-ins started.
import { errors as joseErrors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose'
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { OAuthProviderSettings } from '../config/oauth-providers.js'
import type { JwtLoginContext } from '../context/context.js'
import { sha256Base64url } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import { endSessions } from '../sessions/manage.js'
import { providerLogoutKeys } from '../tokens/session-index.js'
import { claimOnce } from '../store/claim.js'
import { ID_TOKEN_ALGORITHMS } from './identity.js'
import { keyLookup, withDeadline, type BoundFetch } from './providers/registry.js'

/** The member of the `events` claim that makes a JWT a logout token (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** How old a logout token may be (its `iat`), besides `tokens.leeway`. */
export const LOGOUT_TOKEN_MAX_AGE_S = 120

/**
 * A logout token or request refused: answered 400 `invalid_request` with
 * this description (§2.8), and nothing was ended.
 */
export class LogoutRefused extends Error {
  readonly description: string
  constructor (description: string, options?: ErrorOptions) {
    super(description, options)
    this.name = 'LogoutRefused'
    this.description = description
  }
}

/** What a verified logout token names: the provider's user, its session, or both. */
interface LogoutClaims {
  issuer: string
  jti: string
  /** When it stops being accepted (ms): its `iat` plus the age allowed and the leeway. */
  acceptedUntil: number
  sub: string | undefined
  sid: string | undefined
}

function providerOf (call: Call, name: string): OAuthProviderSettings {
  const providers = call.settings.oauth.providers
  const provider = Object.hasOwn(providers, name) ? providers[name] as OAuthProviderSettings : undefined
  // unknown, off, or without back-channel logout: one answer for all three
  if (provider === undefined || !provider.enabled || !provider.backchannelLogout) {
    throw new LogoutRefused('Back-channel logout is not enabled for this provider.')
  }
  return provider
}

/** A claim that is absent, or a non-empty string; anything else refuses the token. */
function optionalString (payload: JWTPayload, claim: 'sub' | 'sid'): string | undefined {
  const value = payload[claim]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value === '') throw new LogoutRefused(`The logout token's "${claim}" claim is not valid.`)
  return value
}

/** The rules of §2.6 that jose does not know: `typ`, `jti`, `events`, `sub` and/or `sid`, no `nonce`. */
function logoutClaimsOf (payload: JWTPayload, header: JWTHeaderParameters, clientId: string, tolerance: number): LogoutClaims {
  // an ID token (typ JWT) is not a logout token; the provider may leave typ out (§2.4)
  // a media type, with or without its `application/` prefix (RFC 7515 §4.1.9)
  const typ = header.typ
  if (typ !== undefined && (typeof typ !== 'string' || typ.toLowerCase().replace(/^application\//, '') !== 'logout+jwt')) throw new LogoutRefused('The logout token\'s "typ" header is not logout+jwt.')
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== clientId) throw new LogoutRefused('The logout token\'s "azp" claim is not valid.')
  if (typeof payload.jti !== 'string' || payload.jti === '') throw new LogoutRefused('The logout token\'s "jti" claim is not valid.')
  const events = payload.events as Record<string, unknown> | undefined
  const event = typeof events === 'object' && events !== null && !Array.isArray(events) ? events[BACKCHANNEL_LOGOUT_EVENT] : undefined
  if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new LogoutRefused('The logout token has no back-channel logout event.')
  if (payload.nonce !== undefined) throw new LogoutRefused('A logout token must not carry a "nonce" claim.')
  const sub = optionalString(payload, 'sub')
  const sid = optionalString(payload, 'sid')
  if (sub === undefined && sid === undefined) throw new LogoutRefused('The logout token names neither "sub" nor "sid".')
  // jose compares whole seconds: the token is taken through the last millisecond of second iat + max age + tolerance
  const acceptedUntil = ((payload.iat as number) + LOGOUT_TOKEN_MAX_AGE_S + tolerance + 1) * 1000
  return { issuer: payload.iss as string, jti: payload.jti, acceptedUntil, sub, sid }
}

/** What jose refused, as a description that names the claim (never the token). */
function joseRefusal (error: unknown): LogoutRefused {
  if (error instanceof joseErrors.JWTClaimValidationFailed || error instanceof joseErrors.JWTExpired) {
    return new LogoutRefused(`The logout token's "${error.claim}" claim is not valid.`, { cause: error })
  }
  return new LogoutRefused('The logout token is not a JWT signed by the provider.', { cause: error })
}

/**
 * Verifies a logout token as an ID token is verified (the provider's keys,
 * refetched once on an unknown key id; pinned asymmetric algorithms; iss,
 * aud, exp when present), then its own rules: `iat` at most two minutes old
 * (and not in the future) with the leeway, `typ`, `jti`, `events`, `sub`
 * and/or `sid`, no `nonce`. The provider unreachable answers 502 / 504.
 */
async function verifyLogoutToken (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, logoutToken: string): Promise<LogoutClaims> {
  const tolerance = Math.ceil(call.settings.tokens.leewayMs / 1000)
  return await withDeadline(provider.timeoutMs, async (fetchFn: BoundFetch) => {
    const server = await ctx.oauth.metadata(provider, fetchFn)
    if (server.jwks_uri === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ERROR')
    const key = keyLookup(ctx.oauth, provider, server.jwks_uri, fetchFn)
    let verified: Awaited<ReturnType<typeof jwtVerify>>
    try {
      verified = await jwtVerify(logoutToken, key, {
        algorithms: ID_TOKEN_ALGORITHMS,
        issuer: provider.acceptedIssuers,
        audience: provider.clientId,
        requiredClaims: ['iat', 'jti'],
        maxTokenAge: LOGOUT_TOKEN_MAX_AGE_S,
        currentDate: new Date(ctx.clock()),
        clockTolerance: tolerance
      })
    } catch (error) {
      // the provider's keys could not be read: its failure, not the token's
      if (error instanceof JwtLoginError) throw error
      throw joseRefusal(error)
    }
    return logoutClaimsOf(verified.payload, verified.protectedHeader, provider.clientId, tolerance)
  })
}

/**
 * Spends the token's `jti` (a compare-and-set, two when a given-back mark is there; per provider and issuer)
 * until the token is no longer accepted, plus the clock skew between
 * instances. Answers how to give it back when the logout then fails (503),
 * so the provider's retry of the same token is not taken for a replay.
 */
async function spendJti (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, claims: LogoutClaims): Promise<() => Promise<void>> {
  const key = `oauth-logout-jti:${sha256Base64url(`${provider.name}\u0000${claims.issuer}\u0000${claims.jti}`)}`
  const ttlMs = (): number => Math.max(1000, claims.acceptedUntil + call.settings.sessions.clockSkewMs - ctx.clock())
  const { won, giveBack } = await claimOnce(ctx.store, key, null, ttlMs, (error) => {
    ctx.log.error({ provider: provider.name, err: loggedError(error) }, 'jwt-login: a spent logout token could not be given back after a failure; the provider\'s retry is refused')
  })
  if (!won) throw new LogoutRefused('The logout token has been used already.')
  return giveBack
}

/**
 * The local user the token names, found by its `sid` when it has one (a
 * provider session is one user's), else by its `sub`; `null` when no
 * session of this server knows it. Only hashes are looked up.
 */
async function userNamed (ctx: JwtLoginContext, provider: OAuthProviderSettings, claims: LogoutClaims): Promise<number | null> {
  const key = claims.sid === undefined
    ? providerLogoutKeys.subject(provider.name, sha256Base64url(claims.sub as string))
    : providerLogoutKeys.session(provider.name, sha256Base64url(claims.sid))
  const value = await ctx.store.get(key)
  const userId = Number(value)
  return value !== null && Number.isSafeInteger(userId) ? userId : null
}

/**
 * Ends the user's live sessions that the provider's sign-ins started and the
 * token names: with `sid`, that provider session's (whose `sub` must match
 * too, when given); with `sub` alone, every session of that provider user.
 */
async function endNamedSessions (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, claims: LogoutClaims, userId: number): Promise<number> {
  const subject = claims.sub === undefined ? undefined : sha256Base64url(claims.sub)
  const session = claims.sid === undefined ? undefined : sha256Base64url(claims.sid)
  const ids = (await ctx.sessions.list(userId)).filter(({ origin }) => origin !== null &&
    origin.method === 'provider' && origin.provider === provider.name &&
    (session === undefined || origin.providerSession === session) &&
    (subject === undefined || origin.providerSubject === subject)
  ).map(({ id }) => id)
  await endSessions(ctx, call.settings, userId, ids, 'provider_logout')
  return ids.length
}

async function logOut (ctx: JwtLoginContext, call: Call, providerName: string, logoutToken: string | undefined): Promise<{ ended: number }> {
  const provider = providerOf(call, providerName)
  if (logoutToken === undefined) throw new LogoutRefused('The logout_token parameter is missing.')
  const claims = await verifyLogoutToken(ctx, call, provider, logoutToken)
  const giveBack = await spendJti(ctx, call, provider, claims)
  try {
    const userId = await userNamed(ctx, provider, claims)
    return { ended: userId === null ? 0 : await endNamedSessions(ctx, call, provider, claims, userId) }
  } catch (error) {
    await giveBack()
    throw error
  }
}

/**
 * `POST /oauth/{provider}/backchannel-logout`: the provider's logout token
 * (OpenID Connect Back-Channel Logout 1.0) verified, its `jti` spent once,
 * then the sessions it names ended (`session.ended`, reason
 * `provider_logout`). Answers how many were ended; none is a success too
 * (§2.8). A refusal throws `LogoutRefused` (400), logged at info with its
 * reason (never the token), and ends nothing; a store failure gives the
 * `jti` back and answers 503.
 */
export async function backchannelLogout (ctx: JwtLoginContext, call: Call, providerName: string, logoutToken: string | undefined): Promise<{ ended: number }> {
  try {
    return await logOut(ctx, call, providerName, logoutToken)
  } catch (error) {
    if (error instanceof LogoutRefused) ctx.log.info({ provider: providerName, reason: error.description }, 'jwt-login: a back-channel logout token was refused')
    throw error
  }
}
