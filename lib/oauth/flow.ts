// Sign-in with a provider (OpenID Connect or plain OAuth 2.0): the user its account is linked to, or the one its verified email finds (or registers) and links, then the sign-in completed as any other.
import type { Call, FirstFactor, SignInResult } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import { keepsLinks } from '../adapters/users.js'
import type { OAuthProviderSettings } from '../config/oauth-providers.js'
import type { GateAudit, JwtLoginContext } from '../context/context.js'
import { sha256Base64url } from '../core/crypto.js'
import { isPlainEmail, sameEmail } from '../core/email.js'
import { JwtLoginError } from '../core/errors.js'
import { uniqueLogin } from '../services/unique-login.js'
import { lockKey, refuseLockedIn } from '../sessions/lock.js'
import { completeSignIn, type KnownReads } from '../sessions/sign-in.js'
import { claimOnce } from '../store/claim.js'
import { cutoffTime } from '../tokens/revocation.js'
import { exchangeCode, verifyIdToken, type Identity, type PresentedIdToken } from './identity.js'
import { link, linkedUser } from './links.js'

export type OAuthSignInResult =
  | { jwt: string, refresh_token?: string, user: { ID: number, user_login: string, user_email: string, display_name: string } }
  | { two_factor_required: true, jwt: string }

export function providerOf (call: Call, name: string | undefined): OAuthProviderSettings {
  const providers = call.settings.oauth.providers
  if (name === undefined || !Object.hasOwn(providers, name)) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_UNKNOWN')
  return providers[name] as OAuthProviderSettings
}

function redirectUriOf (provider: OAuthProviderSettings, asked: string | undefined): string {
  if (asked === undefined) return provider.redirectUris[0] as string
  if (!provider.redirectUris.includes(asked)) throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  return asked
}

/** `/oauth/token` as the route read it (the query on GET, the body on POST). */
export interface OAuthInput {
  provider: string | undefined
  code: string | undefined
  idToken: string | undefined
  nonce: string | undefined
  codeVerifier: string | undefined
  redirectUri: string | undefined
}

/** The provider's word on the user: a code exchanged, or an ID token verified (`presented`). */
interface Identified {
  identity: Identity
  flow: 'code' | 'id_token'
  presented?: PresentedIdToken & { token: string }
}

export async function identify (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, input: OAuthInput): Promise<Identified> {
  const { code, idToken, nonce } = input
  if (code !== undefined && provider.redirectUris.length > 0) {
    const redirectUri = redirectUriOf(provider, input.redirectUri)
    return { identity: await exchangeCode(ctx, provider, { code, codeVerifier: input.codeVerifier, nonce, redirectUri }), flow: 'code' }
  }
  if (idToken !== undefined && provider.acceptIdToken) {
    const presented = await verifyIdToken(ctx, call, provider, idToken, nonce)
    return { identity: presented.identity, flow: 'id_token', presented: { ...presented, token: idToken } }
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_CODE_MISSING')
}

/**
 * Spends a verified ID token: one compare-and-set records it until it
 * expires (with the leeway, in the whole seconds jose allows, and the clock
 * skew between instances), so of any number of uses, concurrent or not, on
 * any instance, one goes on; the others are refused (401 / 210). The record
 * names what the token's signature covers (its header and claims), not its
 * signature's text: a signature has more than one spelling that verifies
 * (spare bits of the last base64url character; ECDSA's (r, n − s)). Answers
 * how to give it back when the sign-in fails before it answered (nothing
 * was issued, so the client may try again): only over this request's own
 * claim. Only a hash is kept.
 */
export async function spendIdToken (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, presented: PresentedIdToken & { token: string }): Promise<() => Promise<void>> {
  const signed = presented.token.slice(0, presented.token.lastIndexOf('.'))
  const key = `oauth-id-token:${sha256Base64url(`${provider.name}\u0000${signed}`)}`
  const { tokens, sessions } = call.settings
  const ttlMs = Math.max(1000, presented.expiresAt + Math.ceil(tokens.leewayMs / 1000) * 1000 + sessions.clockSkewMs - ctx.clock())
  const { won, giveBack } = await claimOnce(ctx.store, key, null, () => ttlMs, (error) => {
    ctx.log.error({ provider: provider.name, err: loggedError(error) }, 'jwt-login: a spent ID token could not be given back after a failure; it cannot sign in again')
  })
  if (!won) throw new JwtLoginError('ERR_JWT_LOGIN_ID_TOKEN_REPLAYED')
  return giveBack
}

/**
 * Order: the provider code is marked used (one increment) before the
 * exchange, then the provider; an ID token is verified, then spent (one
 * compare-and-set). Then the user lookup (for an ID token, the user's
 * cutoff, whose lock refuses the sign-in: 403 / 251; for a code, the
 * sign-in reads it), the user's creation when registration is on, the sign-in count,
 * and the session (its one write, then its user's index). A failure after
 * the code's mark needs a new provider code (the provider would refuse the
 * old one too); a failure after an ID token was spent gives it back, so it
 * can be retried, and the retry finds a user created before the failure.
 */
async function signIn (ctx: JwtLoginContext, call: Call, input: OAuthInput, known: { provider: string | null }): Promise<OAuthSignInResult> {
  const provider = providerOf(call, input.provider)
  known.provider = provider.name
  if (!provider.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_DISABLED')
  const { identity, flow, presented } = await identify(ctx, call, provider, input)
  const giveBack = presented === undefined ? null : await spendIdToken(ctx, call, provider, presented)
  let result: SignInResult
  let user: unknown
  // the user's cutoff entry, when an ID token's check read it: the sign-in's lock check reads it no more
  const read: KnownReads = {}
  try {
    user = await userOf(ctx, call, provider, identity, presented, read)
    // the same end as a password login: a user with two-factor on gets the challenge, not a token.
    // A session from an ID token starts no later than the token was issued, so a cutoff set
    // after that (a password reset, a sign-out everywhere) ends it too.
    result = await completeSignIn(ctx, call, user, Math.min(call.startedAt, presented?.issuedAt ?? Infinity), originOf(provider, identity), read)
  } catch (error) {
    await giveBack?.()
    throw error
  }
  if ('two_factor_required' in result) return result
  const publicUser = ctx.users.toPublicUser(user)
  ctx.events.emit('oauth.succeeded', { userId: publicUser.ID, ip: call.ip, provider: provider.name, flow })
  return {
    ...result,
    user: { ID: publicUser.ID, user_login: publicUser.user_login, user_email: publicUser.user_email, display_name: publicUser.display_name }
  }
}

/**
 * The user the provider account signs in: the one it is linked to (the
 * link survives a change of email on either side); else the one the
 * provider's verified email finds, or registers, which is then linked. An
 * email matched only because the provider allows unverified ones is never
 * linked; a user registered for it is (the provider account made it). An ID token issued before the user's cutoff is refused (401 / 73).
 */
async function userOf (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, identity: Identity, presented: PresentedIdToken | undefined, read: KnownReads): Promise<unknown> {
  const linked = await linkedUser(ctx, provider, identity)
  if (linked !== null) return await checkCutoff(ctx, linked, presented, read)
  // Apple writes the flag as the string "true"
  const verified = identity.emailVerified === true || identity.emailVerified === 'true'
  if (identity.email === undefined || (!verified && !provider.allowUnverifiedEmail)) {
    throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_UNVERIFIED')
  }
  const made = { created: false }
  const user = await userFor(ctx, call, provider, { email: identity.email, verified }, identity.name, { presented, read }, made)
  // a user this provider account created is its own, verified email or not
  if ((verified || made.created) && keepsLinks(ctx.users)) await link(ctx, call, user, provider, identity, 'sign_in')
  return user
}

/**
 * What a provider sign-in's session remembers: the provider, and with
 * back-channel logout on, hashes of the provider's `sub` and `sid` (a logout
 * token names them; the store never holds them in clear).
 */
function originOf (provider: OAuthProviderSettings, identity: Identity): FirstFactor {
  if (!provider.backchannelLogout) return { method: 'provider', provider: provider.name }
  const origin: FirstFactor = { method: 'provider', provider: provider.name, providerSubject: sha256Base64url(identity.subject) }
  if (identity.session !== undefined) origin.providerSession = sha256Base64url(identity.session)
  return origin
}

/**
 * How many times a provider sign-in creates its user when `createUser`
 * reports a taken email or login and the email is still not found (the
 * login another user took meanwhile: `uniqueLogin` picks again).
 */
const MAX_CREATE_ATTEMPTS = 3

/**
 * The user the provider's email names: found (`checkFound`), or
 * registered. When `createUser` reports the email or the login taken (a
 * concurrent sign-in or registration won), the email is looked up again and
 * the user found signs in under the same checks; after
 * `MAX_CREATE_ATTEMPTS` the conflict is the answer (409 / 38).
 */
async function userFor (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, vouched: { email: string, verified: boolean }, name: string | undefined, token: PresentedToken, made: { created: boolean }, attempt = 1): Promise<unknown> {
  const { email } = vouched
  const found = await ctx.users.findByEmail(email)
  if (found !== null) return await checkFound(ctx, found, email, token)
  try {
    const user = await register(ctx, call, provider, vouched, name)
    made.created = true
    return user
  } catch (error) {
    const taken = error instanceof JwtLoginError && error.code === 'ERR_JWT_LOGIN_USER_EXISTS'
    if (!taken || attempt === MAX_CREATE_ATTEMPTS) throw error
    return await userFor(ctx, call, provider, vouched, name, token, made, attempt + 1)
  }
}

/**
 * A user found by the provider's email: its own email must be that email
 * (compared by `sameEmail`, else 403 / 211), and not one the account says
 * is unverified (403 / 232). An ID token issued before the
 * user's cutoff is refused (401 / 73).
 */
async function checkFound (ctx: JwtLoginContext, found: unknown, email: string, { presented, read }: PresentedToken): Promise<unknown> {
  const publicUser = ctx.users.toPublicUser(found)
  if (!sameEmail(publicUser.user_email, email)) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH')
  // registered with this address by someone who never proved it: its owner resets the password by mail first (no pre-hijack)
  if (publicUser.email_verified === false) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED')
  return await checkCutoff(ctx, found, presented, read)
}

/** An ID token as presented (`undefined`: a code's sign-in), and where its check leaves the user's cutoff entry as read. */
interface PresentedToken { presented: PresentedIdToken | undefined, read: KnownReads }

/**
 * A user an ID token signs in, unless the token was issued before the
 * user's cutoff (401 / 73); a locked user is refused first (403 / 251: its
 * lock's cutoff would refuse any token). The cutoff entry read is left in
 * `read`, for the sign-in's own lock check.
 */
async function checkCutoff (ctx: JwtLoginContext, found: unknown, presented: PresentedIdToken | undefined, read: KnownReads): Promise<unknown> {
  if (presented !== undefined) {
    const raw = await ctx.store.get(lockKey(ctx.users.toPublicUser(found).ID))
    read.cutoff = raw
    refuseLockedIn(ctx, raw)
    if (raw !== null && presented.issuedAt < cutoffTime(raw)) throw new JwtLoginError('ERR_JWT_LOGIN_ID_TOKEN_INVALID')
  }
  return found
}

/**
 * A new user for a verified email the host does not know, when the provider
 * registers users, and only for an email in plain ASCII (`isPlainEmail`, as
 * at `POST /users`: a look-alike could block the address it imitates).
 */
async function register (ctx: JwtLoginContext, call: Call, provider: OAuthProviderSettings, { email, verified }: { email: string, verified: boolean }, name: string | undefined): Promise<unknown> {
  if (!provider.autoRegister) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND')
  if (ctx.users.createUser === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_USER_CREATE_FAILED')
  if (!isPlainEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII')
  const login = await uniqueLogin(ctx.users, email)
  // a taken email or login is a JwtLoginError 38 (the guard's); anything else thrown is an
  // unavailable dependency (503 / 201): the retry looks the email up again, so a user
  // created before the failure is found
  const user = await ctx.users.createUser({ email, login, displayName: name ?? login, role: provider.defaultRole, emailVerified: verified })
  ctx.events.emit('oauth.user_registered', { userId: ctx.users.toPublicUser(user).ID, ip: call.ip, provider: provider.name })
  return user
}

/**
 * `GET` and `POST /oauth/token`: a provider's code or ID token for our JWT.
 * Every failure is reported to the audit events with its reason, never with
 * the code or token.
 */
export async function oauthSignIn (ctx: JwtLoginContext, call: Call, input: OAuthInput): Promise<OAuthSignInResult> {
  const known: { provider: string | null } = { provider: null }
  try {
    return await signIn(ctx, call, input, known)
  } catch (error) {
    const failure = error instanceof JwtLoginError
      ? error
      : new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
    ctx.events.emit('oauth.failed', { ip: call.ip, provider: known.provider, reason: failure.code, errorCode: failure.errorCode })
    throw failure
  }
}

/** A refusal of the route's gate (authentication off, the auth code) is a failed provider sign-in too. */
export const auditOAuthGate: GateAudit = (events, call, error) => {
  events.emit('oauth.failed', { ip: call.ip, provider: null, reason: error.code, errorCode: error.errorCode })
}
