// API keys created, listed and ended: by the user at /account/api-keys (a final token of their own sign-in) and by the host's API.
// Calls: create: (the route's token checked by its gate) the index read, then the session's entry and the user's cutoff
//        (or the cutoff alone for the host), the record written, the index's compare-and-set (ApiKeys.create).
//        list: the index, then the records with their last use. revoke: the index read, the record deleted, the index's compare-and-set.
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Settings } from '../config/settings.js'
import { JwtLoginError, JwtLoginSettingsError, type FieldDetail } from '../core/errors.js'
import { hasHiddenCharacters } from '../core/clean-text.js'
import { en } from '../i18n/catalogues/en.js'
import { fieldPhrase } from '../i18n/messages.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import type { ApiKeyInfo } from '../tokens/api-keys.js'
import { userIdOf } from './lock.js'
import { API_KEY_ID_PATTERN, API_KEY_NAME_MAX } from '../../schemas/api-keys.js'

/** A key's id as the route's schema takes it. */
const KEY_ID = new RegExp(API_KEY_ID_PATTERN)

/** What a new key asks for. */
export interface ApiKeyRequest {
  /** A name the user recognises it by: 1 to 100 characters. */
  name: string
  /** Scopes of `apiKeys.scopes`; none: the key works only on host routes that ask for no scope. */
  scopes?: string[]
  /** Its lifetime in seconds, within `apiKeys.lifetime.min` and `max`; default `apiKeys.lifetime.default`. */
  expiresIn?: number
}

/** A key just created: the key itself (shown this once), with its listing fields. */
export interface CreatedApiKey extends ApiKeyInfo {
  key: string
}

/** How a request that does not fit is refused: 400 on a route, `JwtLoginSettingsError` on the host's API. */
type Refuse = (field: 'name' | 'scopes' | 'expiresIn', reason: string) => never

/** A request checked against the settings: its name, scopes (declared, each once) and lifetime (ms). */
function checked (settings: Settings, request: ApiKeyRequest, refuse: Refuse): { name: string, scopes: string[], lifetimeMs: number } {
  const { apiKeys } = settings
  const { name, scopes = [], expiresIn } = request
  // counted in code points, as the route's schema counts; no control or format character: the name is shown in listings and admin pages as given
  if (typeof name !== 'string' || name.trim() === '' || [...name].length > API_KEY_NAME_MAX || hasHiddenCharacters(name)) {
    refuse('name', `must be a text of 1 to ${API_KEY_NAME_MAX} characters, without control or format characters`)
  }
  if (!Array.isArray(scopes) || scopes.some(scope => typeof scope !== 'string' || !apiKeys.scopes.includes(scope)) || new Set(scopes).size !== scopes.length) {
    refuse('scopes', `must be distinct scopes of apiKeys.scopes (${apiKeys.scopes.join(', ')})`)
  }
  const { defaultMs, minMs, maxMs } = apiKeys.lifetime
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn * 1000 < minMs || expiresIn * 1000 > maxMs)) {
    refuse('expiresIn', `must be a whole number of seconds from ${Math.ceil(minMs / 1000)} to ${Math.floor(maxMs / 1000)}`)
  }
  return { name, scopes: [...scopes], lifetimeMs: expiresIn === undefined ? defaultMs : expiresIn * 1000 }
}

/**
 * `POST /account/api-keys`: the user's own final token (the route's caller
 * refuses an impersonation token, 403 / 252), from a sign-in within `account.recentAuth` (401 /
 * 220); the request checked (400 / 259); the key created unless the
 * token's session ends meanwhile (401 / 55: a sign-out everywhere or a lock
 * racing the creation leaves no key) or the user holds `apiKeys.maxPerUser`
 * keys (409 / 257). Event `api_key.created`.
 */
export async function createOwnApiKey (ctx: JwtLoginContext, call: Call, auth: Authenticated, request: ApiKeyRequest): Promise<CreatedApiKey> {
  const claims = auth.verified.payload
  requireRecentAuth(claims, call.settings.account.recentAuthMs, ctx.clock())
  const wanted = checked(call.settings, request, (field, reason) => {
    const detail: FieldDetail = { place: 'body', field: field === 'expiresIn' ? 'expires_in' : field, reason }
    // a name is any text: a malformed one is a malformed request; a scope or lifetime is the site's to allow
    throw new JwtLoginError(field === 'name' ? 'ERR_JWT_LOGIN_BAD_REQUEST' : 'ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID', { field: detail, detail: fieldPhrase(en, detail) })
  })
  const userId = auth.publicUser.ID
  const created = await ctx.tokens.apiKeys.create({
    ...wanted,
    userId,
    prefix: call.settings.apiKeys.prefix,
    max: call.settings.apiKeys.maxPerUser,
    check: async () => { if (await ctx.tokens.isRevoked(claims)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED') }
  })
  ctx.events.emit('api_key.created', { userId, keyId: created.info.id, ip: call.ip })
  return { ...created.info, key: created.key }
}

/**
 * The host's `createApiKey`: API keys on (else 403 / 253), a user the
 * adapter finds and the request checked (else `JwtLoginSettingsError`), the
 * user not locked (403 / 251, also when a lock races the creation), within
 * `apiKeys.maxPerUser` (409 / 257). Event `api_key.created` (`ip: null`).
 */
export async function createApiKeyFor (ctx: JwtLoginContext, settings: Settings, userId: number, request: ApiKeyRequest): Promise<CreatedApiKey> {
  if (!settings.apiKeys.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEYS_DISABLED')
  const id = userIdOf(userId, 'createApiKey/userId')
  const wanted = checked(settings, request ?? {}, (field, reason) => { throw new JwtLoginSettingsError(`createApiKey/${field}`, reason, 'option') })
  if (await ctx.users.findById(id) === null) throw new JwtLoginSettingsError('createApiKey/userId', 'is not a user the adapter finds', 'option')
  const created = await ctx.tokens.apiKeys.create({
    ...wanted,
    userId: id,
    prefix: settings.apiKeys.prefix,
    max: settings.apiKeys.maxPerUser,
    check: async () => { if (await ctx.tokens.lockOf(id) !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED') }
  })
  ctx.events.emit('api_key.created', { userId: id, keyId: created.info.id, ip: null })
  return { ...created.info, key: created.key }
}

/** The user's live keys, oldest first: never a key or its hash. */
export async function listApiKeys (ctx: JwtLoginContext, userId: number): Promise<ApiKeyInfo[]> {
  return await ctx.tokens.apiKeys.list(userId)
}

/** `DELETE /account/api-keys/{id}`: one of the user's own keys ends (404 / 258 for any other id), by their own sign-in (the route's caller refuses an impersonation token). */
export async function revokeOwnApiKey (ctx: JwtLoginContext, auth: Authenticated, keyId: string): Promise<void> {
  const userId = auth.publicUser.ID
  if (!await ctx.tokens.apiKeys.revoke(userId, keyId)) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_NOT_FOUND')
  ctx.events.emit('api_key.revoked', { userId, keyId, reason: 'user' })
}

/** The host's `revokeApiKey`: answers whether `keyId` was a live key of the user (nothing changes otherwise). */
export async function revokeApiKeyFor (ctx: JwtLoginContext, userId: number, keyId: string): Promise<boolean> {
  const id = userIdOf(userId, 'revokeApiKey/userId')
  if (typeof keyId !== 'string' || !KEY_ID.test(keyId)) throw new JwtLoginSettingsError('revokeApiKey/id', 'must be the id of an API key', 'option')
  const revoked = await ctx.tokens.apiKeys.revoke(id, keyId)
  if (revoked) ctx.events.emit('api_key.revoked', { userId: id, keyId, reason: 'host' })
  return revoked
}
