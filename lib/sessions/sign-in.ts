// Where every sign-in ends: the per-account count, the new session (its tokens, its refresh family) and its place in the user's index.
import type { Call, SecondFactorGate, SignInResult } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { JwtLoginError } from '../core/errors.js'
import { countInWindow, subjectKey } from '../services/limits.js'

export interface NewSession {
  sessionId: string
  tokens: { jwt: string, refresh_token?: string }
  /**
   * Adds the session to its user's index once the sign-in is final, and
   * ends the user's oldest sessions beyond `sessions.maxPerUser` (one read,
   * one compare-and-set, and a revocation for each ended one).
   */
  record: () => Promise<void>
}

/**
 * Issues the final token (and a refresh token when enabled) for a new
 * session. Its only store call is the one write of the session's refresh
 * family, so a flow can prepare the session before it spends a single-use
 * secret, and nothing can fail after the secret is spent: the session joins
 * its user's index (`record`) only once the sign-in is final, so a sign-in
 * that fails ends no other session. The session starts at `startedAt`
 * (default: when the request started).
 */
export async function prepareSession (ctx: JwtLoginContext, call: Call, user: PublicUser, startedAt: number = call.startedAt): Promise<NewSession> {
  const { settings } = call
  const sessionId = ctx.tokens.newSessionId(startedAt)
  const { token } = ctx.tokens.sign(settings, user, 'access', { sessionId })
  const family = settings.refresh.enabled
  const record = async (): Promise<void> => {
    // what this sign-in ended: told too when the index write then fails (the sessions stay ended)
    const ended = new Set<string>()
    let told: Iterable<string> = ended
    try {
      told = await ctx.sessions.add({
        userId: user.ID,
        sessionId,
        endsAt: ctx.clock() + (family ? settings.refresh.lifetimeMs : settings.tokens.lifetimeMs),
        family,
        max: settings.sessions.maxPerUser
      }, {
        live: async (ids) => await ctx.tokens.liveSessions(ids),
        end: async (id) => { await ctx.tokens.revokeSession(settings, id); ended.add(id) }
      })
    } finally {
      for (const id of told) ctx.events.emit('session.evicted', { userId: user.ID, sessionId: id, reason: 'max_per_user' })
    }
  }
  if (!family) return { sessionId, tokens: { jwt: token }, record }
  return { sessionId, tokens: { jwt: token, refresh_token: await ctx.tokens.issueRefreshToken(settings, user.ID, sessionId) }, record }
}

/**
 * Counts a sign-in on `limits.signInsPerAccount`, under `key`: per account
 * for a sign-in that starts a session, per account and client for one that
 * starts a two-factor challenge (so whoever holds only the password cannot
 * spend the account's own count and lock its owner out). Over the limit,
 * 429 / 200 with `Retry-After`.
 */
export async function countSignIn (ctx: Pick<JwtLoginContext, 'store' | 'events'>, call: Call, userId: number, key: string): Promise<void> {
  const retryAfter = await countInWindow(ctx.store, key, call.settings.limits.signInsPerAccount)
  if (retryAfter === null) return
  ctx.events.emit('signin.limited', { userId, ip: call.ip })
  throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter })
}

/** The key of the per-account sign-in count. */
export const signInKey = (userId: number): string => `signins:${userId}`

/** The key of the count of sign-ins that may start a challenge: per account and client address. */
export const challengeCountKey = (userId: number, ip: string): string => subjectKey('signins', `${userId}:${clientKey(ip)}`)

/**
 * A host's own second-factor gate, counted on `limits.signInsPerAccount`
 * per account and client before it is asked (what it will answer is known
 * only after, and a challenge it stores must be counted), as the built-in
 * gate counts the challenges it starts. A sign-in it lets through is then
 * counted per account as well.
 */
export function countedGate (ctx: Pick<JwtLoginContext, 'store' | 'events'>, gate: SecondFactorGate): SecondFactorGate {
  return async (user, publicUser, call) => {
    await countSignIn(ctx, call, publicUser.ID, challengeCountKey(publicUser.ID, call.ip))
    return await gate(user, publicUser, call)
  }
}

/**
 * The end of every first factor (password or provider): a user with
 * two-factor on gets a challenge (counted per account and client, see
 * `countedGate`); everyone else is counted per account and gets a session, recorded
 * in the user's index before the answer (a failure there forgets the
 * session and answers 503: nothing single-use was spent). Both start at
 * `startedAt` (default: when the sign-in request did).
 */
export async function completeSignIn (ctx: JwtLoginContext, call: Call, user: unknown, startedAt: number = call.startedAt): Promise<SignInResult> {
  const publicUser = ctx.users.toPublicUser(user)
  if (ctx.secondFactor !== null) {
    const challenge = await ctx.secondFactor(user, publicUser, { ...call, startedAt })
    if (challenge !== null) return challenge
  }
  await countSignIn(ctx, call, publicUser.ID, signInKey(publicUser.ID))
  const session = await prepareSession(ctx, call, publicUser, startedAt)
  try {
    await session.record()
  } catch (error) {
    await ctx.tokens.discardSession(session.sessionId)
    throw error
  }
  return session.tokens
}
