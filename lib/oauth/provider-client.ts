// What both kinds of provider share: how the client authenticates at the token endpoint, and what a provider says of its user.
import { ClientSecretBasic, ClientSecretPost, None, type ClientAuth } from 'openid-client'
import type { OAuthProviderSettings } from '../config/oauth-providers.js'

/** What the provider vouches for. */
export interface Identity {
  email: string | undefined
  emailVerified: unknown
  name: string | undefined
  /** The provider's stable id of its user (`sub`, GitHub's numeric id): the identity's link, and back-channel logout's `sub`. */
  subject: string
  /** The provider account as its owner knows it (a login, an email), shown in the account's identities. */
  display: string | undefined
  /** The provider's session (`sid` of the ID token), when it says one. */
  session: string | undefined
}

/** A code to redeem, and what the client sent beside it. */
export interface CodeRequest { code: string, codeVerifier: string | undefined, nonce: string | undefined, redirectUri: string }

/** The client authentication the provider's settings name, with its secret. */
export function clientAuth (provider: OAuthProviderSettings): ClientAuth {
  switch (provider.clientAuthMethod) {
    case 'client_secret_post': return ClientSecretPost(provider.clientSecret as string)
    case 'none': return None()
    default: return ClientSecretBasic(provider.clientSecret as string)
  }
}
