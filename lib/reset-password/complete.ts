// Password reset, second step: the emailed code and a new password; every bad code answers alike, a good one is spent once and ends the account's sessions.
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser, UserAdapter } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { randomToken } from '../core/crypto.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { withinPasswordLengths } from '../services/password-lengths.js'
import { resetCredentials } from '../account/credentials.js'
import { forgetDevices } from '../sessions/devices.js'
import { claimOnce } from '../store/claim.js'
import { readMany } from '../store/read.js'
import { stateKeys } from '../tokens/revocation.js'
import { lockIn } from '../tokens/user-lock.js'
import { isEmail } from '../core/email.js'
import { keys, normalizeCode, parseRecord, type CodeRecord } from './codes.js'

/** How far ahead the cutoff of a password change is set while the host changes the password. */
const PROVISIONAL_CUTOFF_MS = 60_000

/** `PUT /user/reset_password` as the route read it. */
export interface ResetCompleteInput {
  email: string | undefined
  code: string | undefined
  newPassword: string | undefined
}

type CompleteFailure = (reason: 'code_invalid' | 'password_policy', userId: number | null) => JwtLoginError

/** The fields present and well formed, the new password within the length settings. */
function checkCompleteInput (call: Call, input: ResetCompleteInput, fail: CompleteFailure): { email: string, code: string, newPassword: string } {
  const { email, code, newPassword } = input
  if (email === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MISSING')
  if (code === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_CODE_MISSING')
  if (newPassword === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_PASSWORD_MISSING')
  if (!isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED')
  if (!withinPasswordLengths(newPassword, call.settings.resetPassword.password)) throw fail('password_policy', null)
  return { email, code, newPassword }
}

/** A code that matched, with what the completion needs of the read: the record (as read, for the claim) and the user's cutoff. */
interface Matched { raw: string, record: CodeRecord, cutoff: string | null }

/**
 * Every path does one round trip (the code's record and the user's cutoff
 * read, the try counted) and one comparison, so timing tells nothing about
 * the account. The try is counted as the code is read, and the comparison
 * counts only within `maxTries`: concurrent guesses cannot succeed more
 * than `maxTries` times, and one past them answers as a wrong code, at the
 * same time. Answers the match, or throws 62.
 */
async function matchCode (ctx: JwtLoginContext, call: Call, userId: number | null, code: string, fail: CompleteFailure): Promise<Matched> {
  const settings = call.settings.resetPassword
  const [[raw, cutoff], tries] = await Promise.all([
    readMany(ctx.store, [keys.record(userId), stateKeys.userCutoff(userId ?? 'none')]),
    ctx.store.increment(keys.tries(userId), settings.code.lifetimeMs)
  ])
  const record = parseRecord(raw ?? null)
  const live = record !== null && record.exp > ctx.clock()
  const presented = `${live ? record.id : 'decoy'}:${normalizeCode(code, settings.code.alphabet)}`
  const matches = ctx.reset.hasher.matches(call.settings.tokens, live ? record : null, presented)
  if (!live || !matches || tries.count > settings.code.maxTries) throw fail('code_invalid', userId)
  return { raw: raw as string, record, cutoff: cutoff ?? null }
}

/** `PUT /user/reset_password`: one answer (62) for every bad code; a good one is consumed once, unless its account is locked (403 / 251). */
export async function completePasswordReset (ctx: JwtLoginContext, call: Call, input: ResetCompleteInput): Promise<{ message: string }> {
  const fail: CompleteFailure = (reason, userId) => {
    const code = reason === 'code_invalid' ? 'ERR_JWT_LOGIN_RESET_CODE_INVALID' : 'ERR_JWT_LOGIN_PASSWORD_POLICY'
    ctx.events.emit('reset.failed', { step: 'complete', userId, ip: call.ip, reason, errorCode: errorNumber(code) })
    return new JwtLoginError(code)
  }
  const { email, code, newPassword } = checkCompleteInput(call, input, fail)
  const user = await ctx.users.findByEmail(email)
  const publicUser: PublicUser | null = user === null ? null : ctx.users.toPublicUser(user)
  const userId = publicUser?.ID ?? null
  const matched = await matchCode(ctx, call, userId, code, fail)
  // a locked account (`lockUser`), told only to whoever holds its right code: nothing changes, the code stays unspent
  if (lockIn(matched.cutoff, ctx.clock()) !== null) {
    ctx.events.emit('reset.failed', { step: 'complete', userId, ip: call.ip, reason: 'locked', errorCode: errorNumber('ERR_JWT_LOGIN_USER_LOCKED') })
    throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
  }

  // checked before the code is spent, so a rejected password leaves it usable (it costs one try)
  if (ctx.reset.policy !== null && await ctx.reset.policy(newPassword, publicUser as PublicUser) !== true) {
    throw fail('password_policy', userId)
  }
  // an address nobody had proven until this code: what the account held besides the password ends first
  // (the reset ends its sessions and trusted devices); a failure changes no password, and the code stays usable
  const unproven = publicUser?.email_verified === false
  if (unproven) await resetCredentials(ctx, call, userId as number, user, 'password_reset', false)
  await changePassword(ctx, call, { user, userId: userId as number, ...matched, newPassword }, fail)
  if (unproven) await markVerified(ctx, userId as number, user)
  ctx.events.emit('reset.completed', { userId: userId as number, ip: call.ip })
  return { message: ctx.messages.text(call, 'passwordChanged') }
}

/** The code proved the mailbox: the address is verified. A failure is logged; the next reset or verification tries again. */
async function markVerified (ctx: JwtLoginContext, userId: number, user: unknown): Promise<void> {
  try {
    await ctx.users.setEmailVerified?.(user, true)
    ctx.forgetUser(userId)
  } catch (error) {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password was reset, but the email could not be marked verified')
  }
}

interface Change extends Matched { user: unknown, userId: number, newPassword: string }

/**
 * Order, so that no session older than the new password survives and a
 * failure leaves the password as it was and the code usable:
 * 1. in one round trip: the code is claimed (one compare-and-set replaces
 *    it with this request's mark, so of concurrent requests exactly one
 *    goes on), and a provisional cutoff, a minute ahead, ends every
 *    session of the user, including any started while the password
 *    changes (a request whose claim lost or failed takes its cutoff back
 *    without moving the cutoff: nothing of the user's changed);
 * 2. the host sets the password (and the user cache forgets the user);
 * 3. this change's provisional cutoff is replaced by the moment the
 *    password changed (plus `sessions.clockSkew`), so the next sign-in
 *    counts, while the user's trusted devices are forgotten. Cutoffs only
 *    move forward: a newer change's provisional cutoff, or a later cutoff,
 *    stays (compare-and-set on the user's one cutoff entry).
 * A failure in 1–2 after the claim gives the code back — only over this
 * request's own mark, so a code another request has claimed is never
 * revived — and the answer says that sessions may have ended. After 2 the change
 * stands; a failure in 3 leaves the provisional cutoff, which refuses
 * sessions started in the next minute too (fails closed) and is logged.
 */
async function changePassword (ctx: JwtLoginContext, call: Call, change: Change, fail: CompleteFailure): Promise<void> {
  const { userId, record } = change
  const changeId = randomToken(12)
  const [claimed, held] = await Promise.allSettled([
    claimOnce(ctx.store, keys.record(userId), change.raw, () => Math.max(1, record.exp - ctx.clock()), (error) => {
      ctx.log.error({ userId, err: loggedError(error) }, 'jwt-login: a reset code could not be given back after a failure; the user needs a new one')
    }),
    ctx.tokens.holdUserTokens(call.settings, userId, changeId, ctx.clock() + PROVISIONAL_CUTOFF_MS, change.cutoff)
  ])
  const heldAs = held.status === 'fulfilled' ? held.value : undefined
  if (claimed.status === 'rejected' || !claimed.value.won) {
    // the code is not this request's (another request has it, or the claim failed and was given back):
    // its cutoff is taken back as if it had never been, and nothing of the user's changed
    if (held.status === 'fulfilled') {
      await ctx.tokens.cancelHold(call.settings, userId, changeId, heldAs).catch((error: unknown) => {
        ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: a password change that did not start could not take its session cutoff back; new sign-ins of this user are refused for a minute')
      })
    }
    if (claimed.status === 'rejected') throw claimed.reason
    throw fail('code_invalid', userId)
  }
  const claim = claimed.value
  try {
    if (held.status === 'rejected') throw held.reason
    await (ctx.users as Required<UserAdapter<any>>).setPassword(change.user, change.newPassword)
  } catch (error) {
    await Promise.all([claim.giveBack(), ctx.tokens.releaseUserTokens(call.settings, userId, changeId, undefined, heldAs).catch(() => {})])
    throw new JwtLoginError('ERR_JWT_LOGIN_RESET_INCOMPLETE', { cause: error })
  }
  ctx.forgetUser(userId)
  ctx.events.emit('session.ended', { userId, sessionId: null, reason: 'password_reset' })
  // together: the held cutoff already ended the trusted devices (forgetting them is tidying), and a
  // session's start is the start of its sign-in request, so any sign-in that checked the old password
  // started before this moment (plus the clock skew the settings allow between instances)
  await Promise.all([
    forgetDevices(ctx, userId, 'password_reset').catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the user\'s trusted devices could not be forgotten; the password change already ended them')
    }),
    ctx.tokens.releaseUserTokens(call.settings, userId, changeId, ctx.clock(), heldAs).catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password changed, but its session cutoff stays a minute ahead; new sign-ins of this user are refused until then')
    })
  ])
}
