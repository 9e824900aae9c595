// Password reset, first step: a code for a known email, mailed after the answer; the same answer and work for an unknown one.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Call } from '../adapters/second-factor.js'
import { loggedError, type LoggedError } from '../adapters/guard.js'
import type { PublicUser } from '../adapters/users.js'
import type { GateAudit, JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { randomCode, randomToken } from '../core/crypto.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { renderMail } from '../mail/templates.js'
import type { Mailer, MailMessage } from '../mail/types.js'
import { countInWindow, subjectKey, type Counted } from '../services/limits.js'
import { claimOnce } from '../store/claim.js'
import { isEmail } from '../core/email.js'
import { keys, type CodeRecord } from './codes.js'

/** Reports a refusal of a reset route's gate on the auth code. */
export function auditResetGate (step: 'request' | 'complete'): GateAudit {
  return (events, call, error, stage) => {
    if (stage === 'auth_code') events.emit('reset.failed', { step, userId: null, ip: call.ip, reason: 'auth_code', errorCode: error.errorCode })
  }
}

/** An email as the request limit counts it: NFKC, lower case, trimmed, so its spellings count together. */
function normalizedEmail (email: string): string {
  return email.normalize('NFKC').toLowerCase().trim()
}

/**
 * Counts the request per IP, per address and per account, all in one round
 * trip; over the IP's or the address's limit answers 429. The account is
 * counted per user, so every spelling the host matches to it counts
 * together; over its limit the request still answers as any other (a 429
 * there would tell that the email has an account): the answer is `false`,
 * and no code is written and no mail goes. An unknown email counts a decoy,
 * for the same store work.
 */
async function countRequest (ctx: JwtLoginContext, call: Call, subjects: Counted[], user: PublicUser | null): Promise<boolean> {
  const limit = call.settings.resetPassword.limits.perEmail
  const account = subjectKey('reset-requests:user', user === null ? 'none' : String(user.ID))
  const [waits, accountWait] = await Promise.all([
    Promise.all(subjects.map(async s => await countInWindow(ctx.store, s.key, s.limit))),
    countInWindow(ctx.store, account, limit)
  ])
  const over = waits.filter(wait => wait !== null)
  if (over.length > 0) {
    ctx.events.emit('reset.failed', { step: 'request', userId: null, ip: call.ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
    throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(...over) })
  }
  if (user === null || accountWait === null) return true
  ctx.events.emit('reset.failed', { step: 'request', userId: user.ID, ip: call.ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
  return false
}

/**
 * `POST /user/reset_password`: stores a new code for a known email and mails
 * it after the answer; unknown emails get the same answer after the same work.
 * Order, the same store calls whether the email has an account or not: the
 * user lookup; the request counted per IP, per address (normalised) and per
 * account (a decoy counter for an unknown email), together, in one round
 * trip (over the IP's or the address's limit, 429; over the account's,
 * silently no code); then one store round trip: the write of the code (it
 * replaces any older code, and its tries start again), or a read. The mail
 * goes after the answer. A failure before the write changes nothing but the
 * counters; the retry asks again.
 */
export async function requestPasswordReset (ctx: JwtLoginContext, call: Call, input: { email: string | undefined }): Promise<{ message: string }> {
  const { email } = input
  const settings = call.settings.resetPassword
  if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID')
  const user = await ctx.users.findByEmail(email)
  const publicUser: PublicUser | null = user === null ? null : ctx.users.toPublicUser(user)
  const sends = await countRequest(ctx, call, [
    { key: subjectKey('reset-requests:ip', clientKey(call.ip)), limit: settings.limits.perIp },
    { key: subjectKey('reset-requests:email', normalizedEmail(email)), limit: settings.limits.perEmail }
  ], publicUser)
  // the same work for an unknown email: a code, its hash, the mail and one store round trip
  const code = randomCode(settings.code.length, settings.code.alphabet)
  const id = randomToken(16)
  const record: CodeRecord = { id, ...ctx.reset.hasher.hash(call.settings.tokens, `${id}:${code}`), exp: ctx.clock() + settings.code.lifetimeMs }
  // the settings' own texts for every language; what they leave out, in the request's
  const mail = renderMail({ ...ctx.messages.mail(call, 'reset'), ...settings.mail.templates }, {
    code,
    display_name: publicUser?.display_name ?? email,
    email: publicUser?.user_email ?? email,
    site_name: settings.mail.siteName,
    expires_in_minutes: String(Math.ceil(settings.code.lifetimeMs / 60_000))
  })
  if (publicUser === null || !sends) {
    await ctx.store.get(keys.record(publicUser?.ID ?? null))
  } else {
    const raw = JSON.stringify(record)
    await Promise.all([ctx.store.set(keys.record(publicUser.ID), raw, settings.code.lifetimeMs), ctx.store.delete(keys.tries(publicUser.ID))])
    // after the answer has gone: neither the mailer's work nor its latency shows in the response time
    const written = { userId: publicUser.ID, raw, exp: record.exp }
    setImmediate(() => { deliver(ctx, call, written, code, { to: publicUser.user_email, ...mail }) })
  }
  ctx.events.emit('reset.requested', { userId: publicUser?.ID ?? null, ip: call.ip })
  return { message: ctx.messages.text(call, 'resetRequested') }
}

/** A code record as the request wrote it. */
interface WrittenCode { userId: number, raw: string, exp: number }

/** Sends with bounded retries. Never rejects: on final failure the code is withdrawn, logged and reported. */
async function deliver (ctx: JwtLoginContext, call: Call, written: WrittenCode, code: string, message: MailMessage): Promise<void> {
  const { userId } = written
  const { retries, retryDelayMs } = call.settings.resetPassword.mail
  for (let attempt = 1; ; attempt++) {
    try {
      await (ctx.reset.mailer as Mailer).send(message)
      ctx.events.emit('reset.code_sent', { userId, attempts: attempt })
      return
    } catch (error) {
      if (attempt > retries || ctx.reset.stop.signal.aborted) {
        // the mailer's error may echo the message: its code and the recipient's address
        await withdraw(ctx, written, attempt, loggedError(error, [code, message]))
        return
      }
    }
    await sleep(retryDelayMs, undefined, { signal: ctx.reset.stop.signal }).catch((aborted: unknown) => aborted)
  }
}

/**
 * Withdraws an undelivered code by claiming it (one compare-and-set from the
 * value this request wrote): a newer code for the same user, written in
 * between, is another value and keeps working.
 */
async function withdraw (ctx: JwtLoginContext, written: WrittenCode, attempts: number, error: LoggedError): Promise<void> {
  const { userId } = written
  try {
    await claimOnce(ctx.store, keys.record(userId), written.raw, () => Math.max(1, written.exp - ctx.clock()), () => {})
  } catch (storeError) {
    ctx.log.error({ userId, err: loggedError(storeError) }, 'jwt-login: an undelivered reset code could not be withdrawn; it expires with its lifetime')
  }
  ctx.log.error({ userId, attempts, err: error }, 'jwt-login: the reset mail could not be sent; its code was withdrawn')
  ctx.events.emit('reset.code_failed', { userId, attempts })
}
