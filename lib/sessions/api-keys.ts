// The end of every API key of a user, beside the end of their sessions (sign-out everywhere, deletion) or a lock.
import { loggedError } from '../adapters/guard.js'
import type { JwtLoginContext } from '../context/context.js'
import type { ApiKeyEndReason } from '../services/events.js'

/**
 * Ends every API key of the user (one compare-and-set of the user's index:
 * a failure there changes nothing and rejects, 503 / 201; the records'
 * deletion after it is tidying, logged on failure). Call it after the
 * user's cutoff is written: a creation racing both then keeps nothing.
 * Event `api_key.revoked` per key.
 */
export async function endApiKeys (ctx: JwtLoginContext, userId: number, reason: ApiKeyEndReason): Promise<void> {
  const ended = await ctx.tokens.apiKeys.endAll(userId, (error) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended API keys could not all be deleted; they no longer work, and expire with their keys')
  })
  for (const keyId of ended) ctx.events.emit('api_key.revoked', { userId, keyId, reason })
}
