// The account's linked provider accounts: listed, linked by a provider's code, unlinked.
import { Type } from '@sinclair/typebox'
import { Field, Fields, Success } from './common.js'
import { PROVIDER_FIELDS } from './oauth.js'

/** A provider's name, as the settings spell it. */
export const IdentityParams = Type.Object({
  provider: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })
})

/** One provider account linked to the user; its id at the provider is not shown. */
export const IdentityItem = Type.Object({
  /** The provider's name, a key of `oauth.providers`. */
  provider: Type.String(),
  /** The provider account as its owner knows it (a login, an email); absent when the provider said neither. */
  display: Type.Optional(Type.String()),
  /** When it was linked, in seconds since the epoch. */
  linked_at: Type.Integer()
})

export const IdentitiesReply = Success({ identities: Type.Array(IdentityItem) })

/** `POST /account/identities`: the provider and what it gave the client, as at `/oauth/token`. */
export const LinkIdentityBody = Fields({ ...PROVIDER_FIELDS, JWT: Field }, { provider: 'gh', code: 'the code from the provider', code_verifier: 'the PKCE verifier' })
