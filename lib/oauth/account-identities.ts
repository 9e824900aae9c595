// `/account/identities`: the provider accounts linked to the user, one linked by its provider's code, one unlinked unless it is the last way in.
import type { Static } from '@sinclair/typebox'
import type { IdentitiesReply } from '../../schemas/identities.js'
import type { Call } from '../adapters/second-factor.js'
import type { LinkedIdentity } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { identify, providerOf, spendIdToken, type OAuthInput } from './flow.js'
import { link, linkedUser } from './links.js'
import { linksOf } from '../adapters/users.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'

type IdentitiesAnswer = Static<typeof IdentitiesReply>['data']

/** `GET /account/identities`: the links, oldest first, without the provider's id of the account. */
export async function listOwnIdentities (ctx: JwtLoginContext, auth: Authenticated): Promise<IdentitiesAnswer> {
  const links = await linksOf(ctx.users).listIdentities(auth.user)
  return {
    identities: links.map(({ provider, display, linkedAt }) => display === null
      ? { provider, linked_at: Math.floor(linkedAt / 1000) }
      : { provider, display, linked_at: Math.floor(linkedAt / 1000) })
  }
}

/**
 * `POST /account/identities`: after a sign-in within `account.recentAuth`,
 * the provider account that the code (or ID token) names is linked to the
 * caller, whatever its email: the caller holds the session, and proved the
 * provider account just now. The code is spent as at `/oauth/token`. A
 * provider account linked to another user is 409 / 247; one already the
 * caller's is done (no event); another account of the same provider is 409 / 248.
 */
export async function linkOwnIdentity (ctx: JwtLoginContext, call: Call, auth: Authenticated, input: OAuthInput): Promise<void> {
  requireRecentAuth(auth.verified.payload, call.settings.account.recentAuthMs, ctx.clock())
  const provider = providerOf(call, input.provider)
  if (!provider.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_PROVIDER_DISABLED')
  const { identity, presented } = await identify(ctx, call, provider, input)
  const giveBack = presented === undefined ? null : await spendIdToken(ctx, call, provider, presented)
  try {
    // already the caller's: done without a write (the adapter would keep the first link and answer that it made none, so no event either way)
    const holder = await linkedUser(ctx, provider, identity)
    if (holder !== null && ctx.users.toPublicUser(holder).ID === auth.publicUser.ID) return
    await link(ctx, call, auth.user, provider, identity, 'account')
  } catch (error) {
    await giveBack?.()
    throw error
  }
}

/**
 * Whether the user can still sign in without `without`: a password (the
 * adapter's `hasPassword`; else a `passwordFingerprint` other than `null`;
 * else assumed), a passkey, sign-in by email, or another link to a provider
 * that is configured and on.
 */
async function otherWayIn (ctx: JwtLoginContext, call: Call, auth: Authenticated, links: LinkedIdentity[], without: LinkedIdentity): Promise<boolean> {
  const { providers } = call.settings.oauth
  const others = links.filter(other => other.provider !== without.provider && Object.hasOwn(providers, other.provider) && providers[other.provider]?.enabled === true)
  if (others.length > 0 || call.settings.emailSignIn.enabled) return true
  if (ctx.passkeys !== null && call.settings.passkeys.enabled && (await ctx.passkeys.port.listByUser(auth.publicUser.ID)).length > 0) return true
  const { users } = ctx
  if (users.hasPassword !== undefined) return await users.hasPassword(auth.user)
  if (users.passwordFingerprint !== undefined) return await users.passwordFingerprint(auth.user) !== null
  return true
}

/**
 * `DELETE /account/identities/{provider}`: after a recent sign-in, removes
 * the link unless nothing else would sign the user in (409 / 250). Two
 * concurrent removals could each count the other as the way left, so the
 * count is taken again after the removal, and a removal that left none is
 * undone (the link made again as it was) before it answers 409 / 250.
 */
export async function unlinkOwnIdentity (ctx: JwtLoginContext, call: Call, auth: Authenticated, providerName: string): Promise<void> {
  requireRecentAuth(auth.verified.payload, call.settings.account.recentAuthMs, ctx.clock())
  const links = linksOf(ctx.users)
  const before = await links.listIdentities(auth.user)
  const target = before.find(linked => linked.provider === providerName)
  if (target === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_NOT_FOUND')
  if (!await otherWayIn(ctx, call, auth, before, target)) throw new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_LAST')
  if (!await links.unlinkIdentity(auth.user, target.provider, target.subject)) throw new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_NOT_FOUND')
  if (!await otherWayIn(ctx, call, auth, await links.listIdentities(auth.user), target)) {
    await links.linkIdentity(auth.user, target.provider, target.subject, { display: target.display, linkedAt: target.linkedAt })
    throw new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_LAST')
  }
  ctx.events.emit('identity.unlinked', { userId: auth.publicUser.ID, ip: call.ip, provider: target.provider, reason: 'account' })
}
