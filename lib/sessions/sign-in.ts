// Where every sign-in ends: the user's lock, the per-account count, the new session (its tokens, its refresh family) and its place in the user's index.
import type { Call, FirstFactor, SecondFactorGate, SessionOrigin, SignInResult } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Settings } from '../config/settings.js'
import { clientKey } from '../core/client-key.js'
import { JwtLoginError } from '../core/errors.js'
import { throwFirstFailure } from '../core/settled.js'
import { countInWindow, subjectKey } from '../services/limits.js'
import { loggedError } from '../adapters/guard.js'
import { fingerprintOf, sealed } from './fingerprint.js'
import { lockKey, refuseLockedIn } from './lock.js'
import { indexedLifetime } from '../tokens/refresh.js'
import { amrOf } from '../tokens/jwt.js'

/** The password first factor. */
export const PASSWORD: FirstFactor = Object.freeze({ method: 'password' })

export interface NewSession {
  sessionId: string
  tokens: { jwt: string, refresh_token?: string }
  /**
   * Writes the session's refresh family and adds it to its user's index
   * (one compare-and-set from `knownIndex`, the index as the flow read it
   * already, when it did), together, ending no other session, before
   * anything single-use is spent: a session that can validate is always
   * listed. A failure throws once both are done; the caller then discards.
   */
  start: (knownIndex?: string | null) => Promise<void>
  /**
   * Forgets a session whose answer was not given: its state ends (the
   * access token too, never delivered) and it leaves the index. Best effort:
   * what fails is listed as ended or expires. `unused`: refused by its count
   * before anything could use it, its entry is deleted rather than marked
   * ended, so that refused sign-ins leave nothing behind.
   */
  discard: (unused?: boolean) => Promise<void>
  /**
   * Once the sign-in is final: `session.started`, and the user's oldest
   * sessions beyond `sessions.maxPerUser` end. Never throws: nothing may fail
   * after a single-use secret was spent, so a failure is logged (the next
   * sign-in trims again).
   */
  settle: () => Promise<void>
}

/**
 * Issues the final token (and a refresh token when enabled) for a new
 * session, with no store call: `start` then writes its refresh family and
 * joins its user's index in one round trip, so a flow can start the session
 * before it spends a single-use secret, and ends older sessions (`settle`)
 * only once the sign-in is final, so a sign-in that fails ends no other
 * session. The session starts at `startedAt` (default: when the request
 * started), and records `fingerprint`, its user's password fingerprint
 * (`fingerprintOf`), sealed, when the adapter has one.
 */
export function prepareSession (ctx: JwtLoginContext, call: Call, user: PublicUser, startedAt: number = call.startedAt, origin: SessionOrigin = PASSWORD, fingerprint?: string): NewSession {
  const { settings } = call
  const sessionId = ctx.tokens.newSessionId(startedAt)
  const amr = amrOf(origin)
  const recorded = fingerprint === undefined ? undefined : sealed(sessionId, fingerprint)
  const { token } = ctx.tokens.sign(settings, user, 'access', { sessionId, auth: { at: startedAt, methods: amr }, fingerprint: recorded })
  const family = settings.refresh.enabled
  // a refresh family slides with each rotation: its index entry has half a lifetime of headroom (see `indexedUntil`)
  const lifetimeMs = family ? indexedLifetime(settings.refresh.lifetimeMs) : settings.tokens.lifetimeMs
  const userId = user.ID
  const { maxPerUser } = settings.sessions
  const refresh = family ? ctx.tokens.newRefreshToken(settings, userId, sessionId, amr, recorded) : null
  // how many entries the index held once this session joined: over the bound, settling trims it
  let joined = 0
  const start = async (knownIndex?: string | null): Promise<void> => {
    throwFirstFailure(await Promise.allSettled([
      refresh?.write(),
      ctx.sessions.add({ userId, sessionId, endsAt: ctx.clock() + lifetimeMs, family, origin, ip: call.ip, userAgent: call.userAgent }, knownIndex).then((count) => { joined = count })
    ]))
  }
  const discard = async (unused = false): Promise<void> => { await discardIndexed(ctx, settings, userId, sessionId, unused) }
  const settle = async (): Promise<void> => {
    ctx.events.emit('session.started', { userId, sessionId, method: origin.method, provider: origin.provider ?? null, secondFactor: origin.secondFactor ?? null, ip: call.ip })
    if (joined <= maxPerUser) return
    // what this sign-in ended: told too when the index write then fails (the sessions stay ended)
    const ended: string[] = []
    try {
      await ctx.sessions.trim(userId, maxPerUser, async (id) => { await ctx.tokens.revokeSession(settings, id); ended.push(id) })
    } catch (error) {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the session index could not be trimmed to sessions.maxPerUser; the next sign-in trims it')
    } finally {
      for (const id of ended) {
        ctx.events.emit('session.evicted', { userId, sessionId: id, reason: 'max_per_user' })
        ctx.events.emit('session.ended', { userId, sessionId: id, reason: 'limit' })
      }
    }
  }
  const tokens = refresh === null ? { jwt: token } : { jwt: token, refresh_token: refresh.token }
  return { sessionId, tokens, start, discard, settle }
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
  return async (user, publicUser, call, origin) => {
    await countSignIn(ctx, call, publicUser.ID, challengeCountKey(publicUser.ID, call.ip))
    return await gate(user, publicUser, call, origin)
  }
}

/** What a sign-in's flow read already of its user's state, so that `completeSignIn` does not read it again (`undefined`: not read). */
export interface KnownReads {
  /** The user's session index. */
  index?: string | null
  /** The user's cutoff entry, which holds the user's lock. */
  cutoff?: string | null
}

/**
 * The end of every first factor (password, passkey, provider, email code,
 * registration): a locked user (`lockUser`) is refused first (403 / 251,
 * from `known.cutoff`, or one read beside the fingerprint's); a user with
 * two-factor on gets a challenge (counted per account and client, see
 * `countedGate`); everyone else is counted per account and gets a session,
 * in one round trip: the count, the session's refresh family and its place
 * in its user's index (from `known.index`, the index as the flow read it
 * already, when it did). A lock written after the read ends the session
 * anyway: it starts at `startedAt`, before the lock. A count over the limit (429) or a failure there
 * forgets the session, and nothing single-use was spent. Both start at
 * `startedAt` (default: when the sign-in request did). With
 * `authentication.requireVerifiedEmail`, a user whose email is known to be
 * unverified is refused first (403 / 231).
 */
export async function completeSignIn (ctx: JwtLoginContext, call: Call, user: unknown, startedAt: number = call.startedAt, origin: SessionOrigin = PASSWORD, known: KnownReads = {}): Promise<SignInResult> {
  const publicUser = ctx.users.toPublicUser(user)
  // both asked before the gate, which may spend a trusted device's token: a failure here spends nothing
  const [cutoff, fingerprinted] = await Promise.allSettled([
    known.cutoff !== undefined ? known.cutoff : ctx.store.get(lockKey(publicUser.ID)),
    fingerprintOf(ctx, user)
  ])
  if (cutoff.status === 'rejected') throw cutoff.reason
  refuseLockedIn(ctx, cutoff.value)
  // after the first factor was right, so the refusal tells nothing to whoever does not hold it
  if (call.settings.authentication.requireVerifiedEmail && publicUser.email_verified === false) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED')
  if (fingerprinted.status === 'rejected') throw fingerprinted.reason
  const fingerprint = fingerprinted.value
  // a passkey verified with its user's PIN or biometrics is two factors already: no gate is asked
  const gated = ctx.secondFactor === null || origin.secondFactor !== undefined ? null : await ctx.secondFactor(user, publicUser, { ...call, startedAt }, origin)
  if (gated !== null && 'jwt' in gated) return gated
  const session = prepareSession(ctx, call, publicUser, startedAt, gated === null ? origin : { ...origin, secondFactor: gated.passed }, fingerprint)
  const [counted, started] = await Promise.allSettled([countSignIn(ctx, call, publicUser.ID, signInKey(publicUser.ID)), session.start(known.index)])
  if (counted.status === 'rejected' || started.status === 'rejected') {
    // nothing was answered: the session ends (a sign-in over its count leaves no entry), and a trusted device's token works again
    await Promise.all([session.discard(started.status === 'fulfilled'), gated?.giveBack?.().catch(() => {})])
    throwFirstFailure([counted, started])
  }
  await session.settle()
  return gated?.answer === undefined ? session.tokens : { ...session.tokens, ...gated.answer }
}

/**
 * What a session whose token never left leaves behind once it is given up
 * (a sign-in or an impersonation that failed after its index write): the
 * session ends (`unused`: it never started, see `discardSession`) and
 * leaves its user's index (best effort: an ended session is never listed).
 */
export async function discardIndexed (ctx: JwtLoginContext, settings: Settings, userId: number, sessionId: string, unused = false): Promise<void> {
  await Promise.all([
    ctx.tokens.discardSession(settings, sessionId, unused),
    ctx.sessions.forget(userId, (id) => id === sessionId).catch(() => {})
  ])
}
