// The API-key routes: `/account/api-keys` to create, list and end the user's own keys, with a final access token of their own sign-in.
import type { Static } from '@sinclair/typebox'
import { JwtFields } from '../../schemas/auth.js'
import { ApiKeyEndedReply, ApiKeyParams, ApiKeysReply, NewApiKeyBody, NewApiKeyReply, type ApiKeyItem } from '../../schemas/api-keys.js'
import { createOwnApiKey, listApiKeys, revokeOwnApiKey } from '../admin/api-keys.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginErrorCode } from '../core/errors.js'
import { succeed } from '../http/error-handler.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import type { ApiKeyInfo } from '../tokens/api-keys.js'
import { callerOf, IMPERSONATION_REFUSED, iso, needed } from './caller.js'

/** Every API-key route: the switch (403 / 253), a final access token, its refusals, and no acting for another user (403 / 252). */
const GATE = (errors: JwtLoginErrorCode[]): RouteGate => ({ feature: 'apiKeys', token: 'access', errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED, ...errors] })

const doc = (operationId: string, summary: string, description: string): RouteDoc => ({ tags: ['account'], operationId, summary, description })

/** A key as the answers show it: its prefix with its id, never the secret; no `null` (absent instead). */
function keyItem (key: ApiKeyInfo, prefix: string): Static<typeof ApiKeyItem> {
  const item: Static<typeof ApiKeyItem> = { id: key.id, name: key.name, prefix: `${prefix}_${key.id}`, scopes: key.scopes, created_at: iso(key.createdAt), expires_at: iso(key.expiresAt) }
  if (key.lastUsedAt !== null) item.last_used_at = iso(key.lastUsedAt)
  return item
}

/**
 * `POST /account/api-keys`, `GET /account/api-keys` and
 * `DELETE /account/api-keys/{id}`. A signed token is needed, so they skip
 * the per-IP request limit, like the session routes.
 */
export function apiKeyRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  // the keys are the user's own credentials: an actor neither makes, sees nor ends them
  const caller = callerOf(ctx, { impersonation: false })

  app.post('/account/api-keys', {
    config: { jwtLogin: GATE(['ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED', 'ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID', 'ERR_JWT_LOGIN_API_KEY_LIMIT']), rateLimit: false },
    schema: {
      ...doc('jwtLoginCreateApiKey', 'Create an API key',
        'Needs a sign-in within `account.recentAuth`. `scopes` of those the site declares (`apiKeys.scopes`), `expires_in` in seconds within `apiKeys.lifetime`. ' +
        'The key is in `data.key` this once: only its hash is kept. Past `apiKeys.maxPerUser` keys, 409 / 257.'),
      body: NewApiKeyBody,
      response: { 200: NewApiKeyReply }
    }
  }, async (request) => {
    const { call } = stateOf(request)
    const { scopes, expires_in: expiresIn } = request.body
    const created = await createOwnApiKey(ctx, call, await caller(request), { name: needed(request.body.name, 'name'), scopes, expiresIn })
    return succeed({ key: created.key, ...keyItem(created, call.settings.apiKeys.prefix) })
  })

  app.get('/account/api-keys', {
    config: { jwtLogin: GATE([]), rateLimit: false },
    schema: {
      ...doc('jwtLoginApiKeys', 'List my API keys', 'The user\'s live keys, oldest first: name, prefix, scopes, when created, last used (to about the per-key limit\'s window, a minute by default) and expiring. Never a key.'),
      querystring: JwtFields,
      response: { 200: ApiKeysReply }
    }
  }, async (request) => {
    const auth = await caller(request)
    const { prefix } = stateOf(request).call.settings.apiKeys
    return succeed({ api_keys: (await listApiKeys(ctx, auth.publicUser.ID)).map(key => keyItem(key, prefix)) })
  })

  app.delete('/account/api-keys/:id', {
    config: { jwtLogin: GATE(['ERR_JWT_LOGIN_API_KEY_NOT_FOUND']), rateLimit: false },
    schema: {
      ...doc('jwtLoginDeleteApiKey', 'End one of my API keys', 'It stops working from the next request on, on every instance. A key that is not one of the user\'s live keys answers 404 / 258.'),
      params: ApiKeyParams,
      querystring: JwtFields,
      response: { 200: ApiKeyEndedReply }
    }
  }, async (request) => {
    await revokeOwnApiKey(ctx, await caller(request), request.params.id)
    return succeed({ id: request.params.id })
  })
}
