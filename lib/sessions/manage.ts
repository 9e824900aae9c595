// A user's sessions seen and ended: the list, one session ended, every session ended (sign out everywhere).
import type { Settings } from '../config/settings.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import type { SessionEndReason } from '../services/events.js'
import type { IndexedSession } from '../tokens/session-index.js'
import { loggedError } from '../adapters/guard.js'
import { forgetDevices } from './devices.js'

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
  await Promise.all(ids.map(async (id) => { await ctx.tokens.revokeSession(settings, id) }))
  ctx.forgetUser(userId)
  for (const id of ids) ctx.events.emit('session.ended', { userId, sessionId: id, reason })
  const ended = new Set(ids)
  await ctx.sessions.forget(userId, (id) => ended.has(id)).catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended sessions could not leave their user\'s session index; they are not listed, and leave it at a later sign-in')
  })
}

/**
 * Ends one of the user's own sessions. A session that is not the user's
 * live one (another user's, ended, unknown) answers 404 / 213 alike, and
 * nothing changes.
 */
export async function endOwnSession (ctx: JwtLoginContext, settings: Settings, userId: number, sessionId: string, reason: SessionEndReason): Promise<void> {
  const sessions = await ctx.sessions.list(userId)
  if (!sessions.some(session => session.id === sessionId)) throw new JwtLoginError('ERR_JWT_LOGIN_SESSION_NOT_FOUND')
  await endSessions(ctx, settings, userId, [sessionId], reason)
}

/**
 * Signs a user out everywhere: one write of the user's cutoff ends every
 * session started before now (its access tokens already issued included, on
 * the next request, on every instance; also those the index does not list,
 * such as tokens the host signed), but `keep`; then the trusted devices are
 * forgotten and the index keeps `keep` only (tidying, logged on failure).
 */
export async function endAllSessions (ctx: JwtLoginContext, settings: Settings, userId: number, reason: 'sign_out_everywhere' | 'host', keep?: string): Promise<void> {
  // ends the sessions started in this very millisecond too (a session starts at its ms)
  await ctx.tokens.revokeUserTokens(settings, userId, ctx.clock() + 1, keep)
  ctx.forgetUser(userId)
  ctx.events.emit('session.ended', keep === undefined ? { userId, sessionId: null, reason } : { userId, sessionId: null, reason, kept: keep })
  // the cutoff already ended the devices trusted before it: what follows is tidying
  await Promise.all([
    ctx.sessions.forget(userId, (id) => id !== keep).catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: ended sessions could not leave their user\'s session index; they are not listed, and leave it at a later sign-in')
    }),
    forgetDevices(ctx, userId, 'sign_out_everywhere').catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the user\'s trusted devices could not be forgotten; the sign-out everywhere already ended them')
    })
  ])
}
