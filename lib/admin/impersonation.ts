// Acting as a user (support staff seeing what the user sees): an access token for the user that names its actor (`act`), in the user's session index.
// Calls: users.findById of the user and of the actor, the locks of both and the actor's session index (reads, together), then
//        one compare-and-set of the user's index (the session joins it), then the actor's index read again. A chain that
//        raced in, or a failure of either, ends the new session and takes it back out (best effort: an ended session is
//        never listed). Nothing is written before the refusals of the reads; the token leaves only after the last check.
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError, JwtLoginSettingsError } from '../core/errors.js'
import { durationAt } from '../config/duration.js'
import type { Settings } from '../config/settings.js'
import type { IndexedSession } from '../tokens/session-index.js'
import { discardIndexed } from '../sessions/sign-in.js'
import { IMPERSONATION_MAX_MS, newSessionId } from '../tokens/session-id.js'
import { reasonOf, userIdOf } from './lock.js'

/** How long an impersonation token lives without `lifetime` (ms): 15 minutes. */
export const IMPERSONATION_DEFAULT_MS = 900_000

/** The options of `impersonate`. */
export interface ImpersonateOptions {
  /** Who acts: a user of the adapter (the host checked that they may), written as the token's `act.sub`. */
  actorId: number
  /** The user acted as: the token's `sub`. */
  userId: number
  /** Why (support's note): in the `impersonation.started` event only, never stored. 1 to 500 characters. */
  reason: string
  /** How long the token lives: seconds, or a duration string (`'15m'`); at most 1 hour, 15 minutes without it. */
  lifetime?: number | string
}

/** What `impersonate` answers: the access token (no refresh token), its session and when it expires. */
export interface Impersonation {
  jwt: string
  sessionId: string
  expiresAt: Date
}

/** `lifetime` in ms: more than 0, at most an hour. */
function lifetimeOf (lifetime: number | string | undefined): number {
  if (lifetime === undefined) return IMPERSONATION_DEFAULT_MS
  const ms = durationAt(lifetime, 'impersonate/lifetime', 'option')
  if (!(ms > 0) || ms > IMPERSONATION_MAX_MS) throw new JwtLoginSettingsError('impersonate/lifetime', 'must be a duration of more than 0 and at most 1 hour', 'option')
  return ms
}

/** Whether one of these sessions is an impersonation: its user is being acted as right now. */
const actedAs = (sessions: IndexedSession[]): boolean => sessions.some(session => session.origin?.method === 'impersonation')

/**
 * Issues an access token for `userId` whose claims name `actorId` as the
 * actor (`act: { sub }`, RFC 8693 §4.1): no refresh token, no `auth_time`
 * (never a recent sign-in) and no `amr`. Its session joins the user's index
 * with its actor, counted out of `sessions.maxPerUser`. Rejects with
 * `JwtLoginSettingsError` for bad options or a user or actor the adapter
 * does not find, `JwtLoginError` 251 for a locked user or actor, and 252 for an actor
 * who is being acted as right now (no chains); nothing is written then.
 */
export async function impersonate (ctx: JwtLoginContext, settings: Settings, options: ImpersonateOptions): Promise<Impersonation> {
  const actorId = userIdOf(options?.actorId, 'impersonate/actorId')
  const userId = userIdOf(options.userId, 'impersonate/userId')
  const reason = reasonOf(options.reason, 'impersonate/reason')
  const lifetimeMs = lifetimeOf(options.lifetime)
  if (actorId === userId) throw new JwtLoginSettingsError('impersonate/actorId', 'must be another user than `userId`', 'option')
  const [user, actor, lock, actorLock, actorSessions] = await Promise.all([ctx.users.findById(userId), ctx.users.findById(actorId), ctx.tokens.lockOf(userId), ctx.tokens.lockOf(actorId), ctx.sessions.list(actorId)])
  if (user === null) throw new JwtLoginSettingsError('impersonate/userId', 'is not a user the adapter finds', 'option')
  if (actor === null) throw new JwtLoginSettingsError('impersonate/actorId', 'is not a user the adapter finds', 'option')
  // a locked user is not acted as, and a locked actor (support staff's own account locked) acts as nobody
  if (lock !== null || actorLock !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
  if (actedAs(actorSessions)) throw new JwtLoginError('ERR_JWT_LOGIN_IMPERSONATION_REFUSED')
  // its id says it is an impersonation's: ended by id on any instance, it stays ended while its token may live
  const sessionId = newSessionId(ctx.clock(), true)
  const { token, claims } = ctx.tokens.sign(settings, ctx.users.toPublicUser(user), 'access', { sessionId, lifetimeMs, actor: actorId })
  const expiresAt = claims.exp * 1000
  // what a failure after the index write leaves: the token never left, its session ends and leaves the index (as a sign-in's discard)
  const discard = async (): Promise<void> => { await discardIndexed(ctx, settings, userId, sessionId) }
  let chained: boolean
  try {
    await ctx.sessions.add({ userId, sessionId, endsAt: expiresAt, family: false, origin: { method: 'impersonation', actorId }, ip: '', userAgent: undefined })
    // the actor became someone's impersonation meanwhile: two calls acting as each other's actor
    chained = actedAs(await ctx.sessions.list(actorId))
  } catch (error) {
    await discard()
    throw error
  }
  if (chained) {
    await discard()
    throw new JwtLoginError('ERR_JWT_LOGIN_IMPERSONATION_REFUSED')
  }
  ctx.events.emit('impersonation.started', { actorId, userId, sessionId, reason, expiresAt: new Date(expiresAt).toISOString() })
  return { jwt: token, sessionId, expiresAt: new Date(expiresAt) }
}
