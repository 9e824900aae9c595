// Password reset, second step: the emailed code and a new password; every bad code answers alike, a good one is spent once and ends the account's sessions.
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser, UserAdapter } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { randomToken } from '../core/crypto.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { withinPasswordLengths } from '../services/password-lengths.js'
import { forgetDevices } from '../sessions/devices.js'
import { claimOnce } from '../store/claim.js'
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

/**
 * Every path does one read, one counted try and one comparison, so timing
 * tells nothing about the account. The try is counted before comparing:
 * concurrent guesses cannot compare more than `maxTries` times. Answers the
 * raw record (for the claim) and the record, or throws 62.
 */
async function matchCode (ctx: JwtLoginContext, call: Call, userId: number | null, code: string, fail: CompleteFailure): Promise<{ raw: string, record: CodeRecord }> {
  const { store } = ctx
  const settings = call.settings.resetPassword
  const now = ctx.clock()
  const raw = await store.get(keys.record(userId))
  const record = parseRecord(raw)
  const live = record !== null && record.exp > now
  const tries = live
    ? await store.increment(keys.tries(record.id), record.exp - now)
    : await store.increment(keys.decoyTries, 1000)
  const presented = `${live ? record.id : 'decoy'}:${normalizeCode(code, settings.code.alphabet)}`
  const matches = ctx.reset.hasher.matches(call.settings.tokens, live ? record : null, presented)
  if (!live || !matches || tries.count > settings.code.maxTries) throw fail('code_invalid', userId)
  return { raw: raw as string, record }
}

/** `PUT /user/reset_password`: one answer (62) for every bad code; a good one is consumed once. */
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
  const { raw, record } = await matchCode(ctx, call, userId, code, fail)

  // checked before the code is spent, so a rejected password leaves it usable (it costs one try)
  if (ctx.reset.policy !== null && await ctx.reset.policy(newPassword, publicUser as PublicUser) !== true) {
    throw fail('password_policy', userId)
  }
  await changePassword(ctx, call, { user, userId: userId as number, raw, record, newPassword }, fail)
  ctx.events.emit('reset.completed', { userId: userId as number, ip: call.ip })
  return { message: ctx.messages.text(call, 'passwordChanged') }
}

interface Change { user: unknown, userId: number, raw: string, record: CodeRecord, newPassword: string }

/**
 * Order, so that no session older than the new password survives and a
 * failure leaves the password as it was and the code usable:
 * 1. claim the code: one compare-and-set replaces it with this request's
 *    mark, so of concurrent requests exactly one goes on;
 * 2. a provisional cutoff, a minute ahead, ends every session of the
 *    user, including any started while the password changes;
 * 3. the host sets the password (and the user cache forgets the user);
 * 4. this change's provisional cutoff is replaced by the moment the
 *    password changed (plus `sessions.clockSkew`), so the next sign-in
 *    counts. Cutoffs only move forward: a newer change's provisional
 *    cutoff, or a later cutoff, stays (compare-and-set on the user's one
 *    cutoff entry).
 * A failure in 1–3 gives the code back — only over this request's own
 * mark, so a code another request has claimed is never revived; from 2
 * on the answer says that sessions may have ended. After 3 the change
 * stands; a failure in 4 leaves the provisional cutoff, which refuses
 * sessions started in the next minute too (fails closed) and is logged.
 */
async function changePassword (ctx: JwtLoginContext, call: Call, change: Change, fail: CompleteFailure): Promise<void> {
  const { userId, record } = change
  const { won, giveBack } = await claimOnce(ctx.store, keys.record(userId), change.raw, () => Math.max(1, record.exp - ctx.clock()), (error) => {
    ctx.log.error({ userId, err: loggedError(error) }, 'jwt-login: a reset code could not be given back after a failure; the user needs a new one')
  })
  if (!won) throw fail('code_invalid', userId)
  const changeId = randomToken(12)
  try {
    await ctx.tokens.holdUserTokens(call.settings, userId, changeId, ctx.clock() + PROVISIONAL_CUTOFF_MS)
    await (ctx.users as Required<UserAdapter<any>>).setPassword(change.user, change.newPassword)
  } catch (error) {
    await Promise.all([giveBack(), ctx.tokens.releaseUserTokens(call.settings, userId, changeId).catch(() => {})])
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
    ctx.tokens.releaseUserTokens(call.settings, userId, changeId, ctx.clock()).catch((error: unknown) => {
      ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password changed, but its session cutoff stays a minute ahead; new sign-ins of this user are refused until then')
    })
  ])
}
