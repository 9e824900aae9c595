// A user's sessions seen and ended: the list, one session ended, every session ended (sign out everywhere).
import type { Settings } from '../config/settings.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import type { AccountEndReason, SessionEndReason } from '../services/events.js'
import type { IndexedSession } from '../tokens/session-index.js'
import { loggedError } from '../adapters/guard.js'
import { forgetDevices } from './devices.js'
import { sessionStart } from '../tokens/session-id.js'
import { endApiKeys, keysEnd, keysUntidied } from './api-keys.js'

/**
 * A user's live sessions, oldest sign-in first: two reads (the index, then
 * each session's state with the user's cutoff). A session ended by any path
 * is never listed, whatever the index still holds.
 */
export async function listSessions (ctx: JwtLoginContext, userId: number): Promise<IndexedSession[]> {
  return await ctx.sessions.list(userId)
}

/**
 * Ends sessions of a user by id: one write each (its state becomes
 * `revoked`, so its access and refresh tokens are refused on the next
 * request, on every instance), then the index forgets them (tidying: a
 * failure there is logged, and the ended sessions are not listed anyway).
 */
export async function endSessions (ctx: JwtLoginContext, settings: Settings, userId: number, ids: readonly string[], reason: SessionEndReason): Promise<void> {
  if (ids.length === 0) return
  const results = await Promise.allSettled(ids.map(async (id) => { await ctx.tokens.revokeSession(settings, id) }))
  const ended = new Set(ids.filter((_, i) => results[i]?.status === 'fulfilled'))
  ctx.forgetUser(userId)
  // those that ended are told even when another failed (a retry no longer lists them)
  for (const id of ended) ctx.events.emit('session.ended', { userId, sessionId: id, reason })
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')
  await ctx.sessions.forget(userId, (id) => ended.has(id)).catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended sessions could not leave their user\'s session index; they are not listed, and leave it at a later sign-in')
  })
  if (failed !== undefined) throw failed.reason
}

/**
 * Ends one of the user's own sessions; answers `false`, and changes
 * nothing, when it is not one of the user's live sessions (another user's,
 * ended, unknown: alike).
 */
export async function endOwnSession (ctx: JwtLoginContext, settings: Settings, userId: number, sessionId: string, reason: SessionEndReason): Promise<boolean> {
  const sessions = await ctx.sessions.list(userId)
  if (!sessions.some(session => session.id === sessionId)) return false
  await endSessions(ctx, settings, userId, [sessionId], reason)
  return true
}

/** What a sign-out everywhere does when the session it should keep has already ended. */
export type KeepEnded =
  /** The caller's own session (`DELETE /sessions?keep_current=true`): 401 / 55, and nothing changes when a cutoff had ended it. */
  | 'refuse'
  /** The host's wish (`endAllSessions(userId, { keep })`): every session ends, that one too. */
  | 'end-all'

/**
 * Signs a user out everywhere: one write of the user's cutoff ends every
 * session started before now (its access tokens already issued included, on
 * the next request, on every instance; also those the index does not list,
 * such as tokens the host signed), but `keep`; then the trusted devices are
 * forgotten and the index keeps `keep` only (tidying, logged on failure).
 * Every API key of the user ends as well, but with a password change: in
 * the cutoff's own write (`keysEnd`), then in their index (`endApiKeys`); a
 * failure there rejects (503 / 201), the sessions and the keys ended, and a
 * retry finishes it.
 * When `keep` has already ended (a concurrent sign-out everywhere from
 * another of the user's sessions, a password change, or an end of that one
 * session), `ifEnded` says what follows. Answers whether `keep` was kept.
 */
export async function endAllSessions (ctx: JwtLoginContext, settings: Settings, userId: number, reason: 'sign_out_everywhere' | 'host' | 'user_deleted' | AccountEndReason, keep?: string, ifEnded: KeepEnded = 'refuse'): Promise<boolean> {
  // ends the sessions started in this very millisecond too (a session starts at its ms)
  const at = ctx.clock() + 1
  // the API keys end too, but with a password change (a key is no password): in the same write as the cutoff
  const endsKeys = reason !== 'password_changed'
  const keys = endsKeys ? await keysEnd(ctx, userId, at) : undefined
  let cutoff = await ctx.tokens.revokeUserTokens(settings, userId, at, keep, keys)
  if (cutoff.endedBefore) {
    // a request from a session a concurrent cutoff had ended changes nothing: it must not end the session that cutoff kept
    if (ifEnded === 'refuse') throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
    cutoff = await ctx.tokens.revokeUserTokens(settings, userId, at, undefined, keys)
  }
  const kept = cutoff.kept ? keep : undefined
  ctx.forgetUser(userId)
  ctx.events.emit('session.ended', kept === undefined ? { userId, sessionId: null, reason } : { userId, sessionId: null, reason, kept })
  // the index too, after the cutoff, so a creation racing both keeps nothing; the keys the cutoff ended stay ended if this fails
  if (endsKeys) await endApiKeys(ctx, userId, reason === 'host' ? 'sign_out_everywhere' : reason).catch((error: unknown) => { throw keysUntidied(error) })
  // the cutoff already ended the devices trusted before it: what follows is tidying
  // (a session that started after the cutoff, on an instance whose clock is ahead, stays listed)
  await Promise.all([
    ctx.sessions.forget(userId, (id) => id !== kept && sessionStart(id) < cutoff.until).catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended sessions could not leave their user\'s session index; they are not listed, and leave it at a later sign-in')
    }),
    forgetDevices(ctx, userId, reason).catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the user\'s trusted devices could not be forgotten; the sign-out everywhere already ended them')
    })
  ])
  // the caller's session was ended meanwhile on its own (`DELETE /sessions/{id}` from another session): the others ended, and so did it
  if (keep !== undefined && kept === undefined && ifEnded === 'refuse') throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
  return kept !== undefined
}
