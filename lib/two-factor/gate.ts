// The gate on every first factor: the two-factor challenge, its interim token and its emailed code.
import type { FirstFactor, SecondFactorGate } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { TwoFactorMethod } from '../adapters/two-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { throwFirstFailure } from '../core/settled.js'
import { challengeCountKey, countSignIn } from '../sessions/sign-in.js'
import { deviceStandsIn } from '../sessions/devices.js'
import type { EmailCodeDelivery, EmailCodeProvider, EmailCodeUndelivered } from './methods/email-code.js'
import type { TwoFactor } from './methods/service.js'
/** A challenge as stored: its method, and the first factor its session will remember (absent in records from before 0.3: a password). */
export interface ChallengeRecord { method: TwoFactorMethod, o?: FirstFactor }

export const challengeKey = (userId: number, challengeId: string): string => `2fa:challenge:${userId}:${challengeId}`

/** Runs a code mail after the answer. Never rejects: a failure is logged and reported, its code already withdrawn. */
async function deliverEmailCode (ctx: Pick<JwtLoginContext, 'events' | 'log'>, userId: number, deliver: EmailCodeDelivery): Promise<void> {
  try {
    await deliver()
    ctx.events.emit('two_factor.code_sent', { userId })
  } catch (error) {
    const { mailError, withdrawError } = error as EmailCodeUndelivered
    if (withdrawError !== null) {
      ctx.log.error({ userId, err: loggedError(withdrawError) }, 'jwt-login: an undelivered two-factor code could not be withdrawn; it expires with its lifetime')
    }
    ctx.log.error({ userId, err: mailError }, 'jwt-login: the two-factor code mail could not be sent; its code was withdrawn')
    ctx.events.emit('two_factor.code_failed', { userId })
  }
}

/**
 * The gate on every first factor: a user with two-factor on gets a challenge
 * in the store and an interim token bound to it (its `sid` is the challenge id).
 *
 * Order: the challenge, then the email code's hash, are stored; the interim
 * token is answered; the code is mailed only after the answer has gone, so a
 * slow or stalled mail server never holds a sign-in. A failed mail withdraws
 * its code (the challenge stays open to backup codes; the user may sign in again).
 */
export function secondFactorGate (ctx: Omit<JwtLoginContext, 'secondFactor'>, twoFactor: TwoFactor): SecondFactorGate {
  return async (user, publicUser, call, origin) => {
    const method = await twoFactor.port.methodOf(publicUser.ID, user)
    if (method === null) return null
    const settings = call.settings.twoFactor
    // the first factor is already proven here, so this answer tells nothing to someone without it
    if (!settings.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_DISABLED')
    // a device this user trusted stands in for the factor on a password sign-in (its token rotates)
    const trusted = await deviceStandsIn(ctx, call, publicUser.ID, origin.method)
    if (trusted !== null) return trusted
    // after a code to the mailbox (sign-in by email), a second code to it would be the same factor again:
    // none is mailed, and the challenge takes a backup code or a passkey
    const mailsCode = method === 'email' && origin.method !== 'email'
    if (mailsCode && twoFactor.email === null) {
      throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('a user has the email method but no mailer is configured') })
    }
    // a session id, so a per-user cutoff (password reset) also ends pending challenges
    const challengeId = ctx.tokens.newSessionId(call.startedAt)
    const key = challengeKey(publicUser.ID, challengeId)
    const record: ChallengeRecord = origin.method === 'password' ? { method } : { method, o: origin }
    const email = mailsCode ? twoFactor.email as EmailCodeProvider : null
    // in one round trip: the count per account and client (whoever holds only the password spends no
    // count of the owner's), the challenge and its emailed code's hash; a count over the limit or a
    // failure takes back what was written (nothing was answered, so nothing of it can be used meanwhile)
    const [counted, stored, issued] = await Promise.allSettled([
      countSignIn(ctx, call, publicUser.ID, challengeCountKey(publicUser.ID, call.ip)),
      ctx.store.set(key, JSON.stringify(record), settings.interimLifetimeMs),
      email?.issue(call.settings.tokens, challengeId, publicUser.user_email, settings.emailCodeLifetimeMs,
        ctx.messages.mail(call, 'emailCode'), call.settings.resetPassword.mail.siteName) ?? null
    ])
    if (counted.status === 'rejected' || stored.status === 'rejected' || issued.status === 'rejected') {
      await Promise.all([
        stored.status === 'fulfilled' ? ctx.store.delete(key).catch(() => {}) : null,
        issued.status === 'fulfilled' ? email?.discard(challengeId) : null
      ])
      throwFirstFailure([counted, stored, issued])
    }
    const delivery = (issued as PromiseFulfilledResult<EmailCodeDelivery | null>).value
    const { token } = ctx.tokens.sign(call.settings, publicUser, 'interim', { sessionId: challengeId, lifetimeMs: settings.interimLifetimeMs })
    ctx.events.emit('two_factor.challenge_issued', { userId: publicUser.ID, method, ip: call.ip })
    if (delivery !== null) setImmediate(() => { deliverEmailCode(ctx, publicUser.ID, delivery) })
    return { two_factor_required: true, jwt: token }
  }
}
