// The check of an API key presented to a host route (`authenticateWith({ apiKey: true })`): the key, its user, its scopes and its limits.
// Calls: the key's record with the client's wrong-key lock (one getMany); then the user's index and cutoff with the count of
//        the key's request (one readAndIncrement, or a getMany and an increment at once); users.findById; the last use, on the first request of the key's window.
//        A wrong key: its count on the client (increment), and from the limit on the client's lock (set).
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { safeEqual } from '../core/crypto.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { counterKey, subjectKey } from '../services/limits.js'
import { batchOf, readMany } from '../store/read.js'
import { apiKeyKeys, decodeRecord, indexHolds, parseApiKey, secretHash } from '../tokens/api-keys.js'
import { endsKey } from '../tokens/cutoff-record.js'
import { stateKeys } from '../tokens/revocation.js'

/** A key as a host route sees it: its id, name and the scopes it carries (those still declared). */
export interface ApiKeyIdentity {
  id: string
  name: string
  scopes: string[]
}

/** A key's holder: the user (as the adapter has it, and public) and the key. */
export interface KeyHolder {
  user: unknown
  publicUser: PublicUser
  apiKey: ApiKeyIdentity
}

/** The hash compared when no record was found: the same work, found or not. */
const NO_HASH = secretHash('')

/** The store keys of a client's wrong keys, named as the attempt limiter names its subjects' counters: the count, and the lock (until when, ms) once past the limit. */
const wrongKeys = (ip: string): { count: string, lock: string } => {
  const subject = { key: subjectKey('api-keys:ip', clientKey(ip)) }
  return { count: counterKey('failed', subject), lock: counterKey('lock', subject) }
}

/**
 * Checks a key for a host route that requires `scopes`: refused while the
 * client is past `apiKeys.limits.wrongKeysPerIp` (429 / 200 with
 * `Retry-After`, the right key too); a key that is malformed, unknown,
 * expired, ended, of a locked user or of a user the adapter no longer
 * finds answers 401 / 254 alike and counts on the client (past the limit
 * 429 / 200); past `apiKeys.limits.perKey` 429 / 256 with `Retry-After`
 * (counted before the adapter is asked); a key without a
 * required scope 403 / 255. Each refusal is the `api_key.refused` event.
 */
export async function authenticateApiKey (ctx: JwtLoginContext, call: Call, key: string, scopes: readonly string[]): Promise<KeyHolder> {
  let keyId: string | null = null
  try {
    return await checkKey(ctx, call, key, scopes, (id) => { keyId = id })
  } catch (error) {
    if (error instanceof JwtLoginError && error.statusCode < 500) ctx.events.emit('api_key.refused', { ip: call.ip, errorCode: errorNumber(error.code), keyId })
    throw error
  }
}

async function checkKey (ctx: JwtLoginContext, call: Call, key: string, scopes: readonly string[], live: (id: string) => void): Promise<KeyHolder> {
  const { apiKeys } = call.settings
  if (!apiKeys.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEYS_DISABLED')
  const client = wrongKeys(call.ip)
  const parsed = parseApiKey(key, apiKeys.prefix)
  const [lock, raw = null] = await readMany(ctx.store, parsed === null ? [client.lock] : [client.lock, apiKeyKeys.record(parsed.id)])
  const now = ctx.clock()
  const lockedUntil = Number(lock ?? 0)
  if (lockedUntil > now) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil((lockedUntil - now) / 1000)) })
  const wrong = async (): Promise<never> => await refuseWrongKey(ctx, call, client)
  const record = decodeRecord(raw)
  // compared in constant time, found or not
  const right = safeEqual(parsed === null ? NO_HASH : secretHash(parsed.secret), record?.h ?? NO_HASH)
  if (parsed === null || record === null || !right || record.e <= now) return await wrong()
  // the right secret: the key's use counted with the reads of its user's index and cutoff, in one round trip where the store batches
  const [[index, cutoff], uses] = await readAndCount(ctx, [apiKeyKeys.index(record.u), stateKeys.userCutoff(record.u)], apiKeyKeys.uses(parsed.id), apiKeys.limits.perKey.windowMs)
  // listed by its index, its user not locked, and created after any end of the user's keys (a lock, a sign-out everywhere...)
  if (!indexHolds(index ?? null, parsed.id, now) || endsKey(cutoff ?? null, record.c, now)) return await wrong()
  live(parsed.id)
  // counted before the adapter is asked: a key past its limit costs the host nothing
  if (uses.count > apiKeys.limits.perKey.max) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(uses.ttlMs / 1000)) })
  const user = await ctx.users.findById(record.u)
  if (user === null) return await wrong()
  if (uses.count === 1) {
    // the key was used (a scope it lacks refuses the request, not the key): on the first request of the key's window,
    // once per window, so a burst writes once (best effort: a lost write only makes the listing's last use older)
    await ctx.store.set(apiKeyKeys.used(parsed.id), String(now), Math.max(1, record.e - now)).catch(() => {})
  }
  // a scope the host no longer declares is no longer carried
  const carried = record.s.filter(scope => apiKeys.scopes.includes(scope))
  if (!scopes.every(scope => carried.includes(scope))) throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_SCOPE')
  return { user, publicUser: ctx.users.toPublicUser(user), apiKey: { id: parsed.id, name: record.n, scopes: carried } }
}

/**
 * Reads `keys` and counts `counter` (in a window of `windowMs`): one call of
 * the store's `readAndIncrement` when it has one, else a `getMany` and an
 * `increment` at once. The reads need not come before the count.
 */
async function readAndCount (ctx: JwtLoginContext, keys: string[], counter: string, windowMs: number): Promise<[Array<string | null>, { count: number, ttlMs: number }]> {
  const batch = batchOf(ctx.store)
  if (batch === null) return await Promise.all([readMany(ctx.store, keys), ctx.store.increment(counter, windowMs)])
  const { values, counts } = await batch(keys, [{ key: counter, ttlMs: windowMs }])
  // without `unlessAbove`, every counter is counted
  return [values, counts[0] as { count: number, ttlMs: number }]
}

/**
 * A wrong key: counted on the client, then 401 / 254; the count that
 * reaches the limit locks the client for the rest of the window, and a
 * count past it (a burst whose requests all read no lock) answers 429 / 200
 * with `Retry-After`: at most `max` wrong keys are answered 401 a window.
 */
async function refuseWrongKey (ctx: JwtLoginContext, call: Call, client: { count: string, lock: string }): Promise<never> {
  const limit = call.settings.apiKeys.limits.wrongKeysPerIp
  const { count, ttlMs } = await ctx.store.increment(client.count, limit.windowMs)
  if (count >= limit.max) await ctx.store.set(client.lock, String(ctx.clock() + ttlMs), Math.max(1, ttlMs))
  if (count > limit.max) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(ttlMs / 1000)) })
  throw new JwtLoginError('ERR_JWT_LOGIN_API_KEY_INVALID')
}
