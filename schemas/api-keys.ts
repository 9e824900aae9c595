// The API-key routes' requests and answers: `/account/api-keys`.
import { Type } from '@sinclair/typebox'
import { Field, Fields, Success } from './common.js'

/** The longest name of a key, in code points (counted by the flow). */
export const API_KEY_NAME_MAX = 100

/** A key's id as the plugin writes it (base64url), bounded. */
export const API_KEY_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$'

/**
 * `POST /account/api-keys`: a name, the scopes (of `apiKeys.scopes`), a
 * lifetime in seconds (default `apiKeys.lifetime.default`). The name is 1 to
 * 100 characters (code points, counted by the flow, as for the host's
 * `createApiKey`): the schema bounds its UTF-16 length at twice that.
 */
export const NewApiKeyBody = Fields({
  name: Type.Optional(Type.String({ maxLength: 2 * API_KEY_NAME_MAX })),
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
  expires_in: Type.Optional(Type.Integer({ minimum: 1 })),
  JWT: Field
}, { name: 'nightly export', scopes: ['orders:read'], expires_in: 2592000 })

/** One API key as listed: never the key or its hash. */
const ApiKeyFields = {
  id: Type.String(),
  name: Type.String(),
  /** The key's start as the listing shows it (`<prefix>_<id>`): enough to recognise it, nothing to use. */
  prefix: Type.String(),
  scopes: Type.Array(Type.String()),
  /** When it was created (ISO 8601, UTC). */
  created_at: Type.String(),
  /** When it was last used (to about the window of `apiKeys.limits.perKey`, a minute by default); absent before its first use. */
  last_used_at: Type.Optional(Type.String()),
  /** When it stops working. */
  expires_at: Type.String()
}

export const ApiKeyItem = Type.Object(ApiKeyFields)

/** The new key: `key` is shown this once; only its hash is stored. */
export const NewApiKeyReply = Success({ key: Type.String(), ...ApiKeyFields })

export const ApiKeysReply = Success({ api_keys: Type.Array(ApiKeyItem) })

/** The key that ended. */
export const ApiKeyEndedReply = Success({ id: Type.String() })

/** A key's id in the path: the form the plugin writes, bounded. */
export const ApiKeyParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: API_KEY_ID_PATTERN })
})
