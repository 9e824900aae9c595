// The links from provider accounts to users: looked up first at a provider sign-in, made when a verified email found the user or the user asked.
import type { Call } from '../adapters/second-factor.js'
import { keepsLinks, linksOf } from '../adapters/users.js'
import type { OAuthProviderSettings } from '../config/oauth-providers.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import type { Identity } from './identity.js'

/**
 * The provider account's subject as a link holds it: qualified by who
 * issued it (an OpenID provider's issuer; a plain OAuth 2.0 provider's user
 * API origin), as `<issuer URL> <subject>`. A provider's id is unique only
 * at that provider: when a host points a provider name elsewhere (github.com
 * to an Enterprise Server, another tenant, another `oauth2` server), the new
 * provider's user 1001 must not sign in as the old one's. The URL holds no
 * space, so the first space ends it.
 */
export function linkSubject (provider: OAuthProviderSettings, subject: string): string {
  const issuer = provider.api === null ? provider.issuer : new URL(provider.api.user).origin
  return `${new URL(issuer).href} ${subject}`
}

/** The user the provider account is linked to, or `null` (also when the adapter keeps no links). */
export async function linkedUser (ctx: JwtLoginContext, provider: OAuthProviderSettings, identity: Identity): Promise<unknown> {
  if (!keepsLinks(ctx.users)) return null
  return await linksOf(ctx.users).findByIdentity(provider.name, linkSubject(provider, identity.subject))
}

/**
 * Links the provider account to `user`. When the adapter reports it taken,
 * the link is looked up again: linked to this user meanwhile (a concurrent
 * sign-in of the same account) is done; linked to another user is 409 / 247;
 * not linked at all means this user has another account of the provider
 * linked (409 / 248).
 */
export async function link (ctx: JwtLoginContext, call: Call, user: unknown, provider: OAuthProviderSettings, identity: Identity, via: 'sign_in' | 'account'): Promise<void> {
  const links = linksOf(ctx.users)
  const userId = ctx.users.toPublicUser(user).ID
  let made: boolean
  try {
    made = await links.linkIdentity(user, provider.name, linkSubject(provider, identity.subject), { display: identity.display ?? null, linkedAt: ctx.clock() })
  } catch (error) {
    if (!(error instanceof JwtLoginError) || error.code !== 'ERR_JWT_LOGIN_IDENTITY_TAKEN') throw error
    const holder = await links.findByIdentity(provider.name, linkSubject(provider, identity.subject))
    if (holder === null) throw new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED')
    if (ctx.users.toPublicUser(holder).ID !== userId) throw error
    return
  }
  // a concurrent sign-in of the same account that linked it first reports it, not this one
  if (made !== false) ctx.events.emit('identity.linked', { userId, ip: call.ip, provider: provider.name, via })
}
