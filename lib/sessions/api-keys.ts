// The end of every API key of a user, beside the end of their sessions (sign-out everywhere, deletion, an address proven), a lock or a password reset.
// Calls: before the user's cutoff is written, the index read (`keysEnd`: what the cutoff's write carries); after it, one compare-and-set
//        of the index to a new generation (`endApiKeys`), then the records deleted (tidying, logged).
import { loggedError } from '../adapters/guard.js'
import type { Settings } from '../config/settings.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import type { ApiKeyEndReason } from '../services/events.js'
import type { KeysEnd } from '../tokens/cutoff-record.js'

/**
 * What the user's cutoff write carries to end every API key of the user
 * created before `at`, in the same compare-and-set as the sessions' end:
 * from then on the key check refuses them, whatever fails after; the entry
 * is kept until the last of them expires. `undefined` when the user holds
 * no live key (the entry stays a bare time). One read of the user's index.
 */
export async function keysEnd (ctx: JwtLoginContext, userId: number, at: number): Promise<KeysEnd | undefined> {
  return await ctx.tokens.apiKeys.endAt(userId, at)
}

/**
 * Ends every API key of the user in their index (one compare-and-set to a
 * new generation: a creation racing the end, which read the index before
 * it, writes nothing; a failure rejects, 503 / 201, and a retry finishes
 * it); the records' deletion after it is tidying, logged on failure. Call
 * it after the user's cutoff is written with `keysEnd`: the keys ended there
 * stop working even when this fails. Event `api_key.revoked` per key.
 */
export async function endApiKeys (ctx: JwtLoginContext, userId: number, reason: ApiKeyEndReason): Promise<void> {
  const ended = await ctx.tokens.apiKeys.endAll(userId, (error) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended API keys could not all be deleted; they no longer work, and expire with their keys')
  })
  for (const keyId of ended) ctx.events.emit('api_key.revoked', { userId, keyId, reason })
}

/**
 * Ends every API key of the user without ending a session (a password
 * reset, whose new password ends the sessions itself): the user's cutoff
 * ends the keys (one compare-and-set, none when the user holds no live
 * key), then `endApiKeys`. Each step is idempotent: a retry finishes it.
 */
export async function endUserApiKeys (ctx: JwtLoginContext, settings: Settings, userId: number, reason: ApiKeyEndReason): Promise<void> {
  const keys = await keysEnd(ctx, userId, ctx.clock() + 1)
  if (keys !== undefined) await ctx.tokens.endUserKeys(settings, userId, keys)
  await endApiKeys(ctx, userId, reason)
}

/** The rejection of an end whose keys' index could not be tidied: the keys no longer work (the cutoff ended them); calling again finishes it. */
export function keysUntidied (cause: unknown): JwtLoginError {
  return new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the user\'s API keys no longer work, but their index could not be changed; calling again finishes it', { cause }) })
}
