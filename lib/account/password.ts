// `PUT /account/password`: the current password (or a recent sign-in that was not by password alone), the policy of a reset, every other session ended, a notice mailed.
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser, UserAdapter } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { accountSubject } from '../services/limits.js'
import { withinPasswordLengths } from '../services/password-lengths.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import { keepFingerprint } from '../sessions/fingerprint.js'
import { endAllSessions } from '../sessions/manage.js'
import { mailLater } from './mail.js'

export interface PasswordChangeInput {
  currentPassword: string | undefined
  newPassword: string
}

/**
 * The current password, counted on the account's sign-in lockout
 * (`limits.loginPerAccount`) as a sign-in's would be: a wrong one fails a
 * try (401 / 238), and a locked account answers 429 before any check.
 * Without it, the token's sign-in (or step-up) must be within
 * `account.recentAuth` and more than a password (a provider, a passkey, a
 * code): a user without a password has none to give.
 */
async function proveHolder (ctx: JwtLoginContext, call: Call, auth: Authenticated, currentPassword: string | undefined): Promise<void> {
  const claims = auth.verified.payload
  if (currentPassword === undefined) {
    requireRecentAuth(claims, call.settings.account.recentAuthMs, ctx.clock())
    if (claims.amr === undefined || claims.amr.every(method => method === 'pwd')) throw new JwtLoginError('ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED')
    return
  }
  const reservation = await ctx.limiter.reserve([accountSubject(auth.publicUser.ID, call.settings.limits.loginPerAccount)], [])
  if (!reservation.ok) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: reservation.retryAfter })
  let right: boolean
  try {
    right = await ctx.users.verifyPassword(auth.user, currentPassword)
  } catch (error) {
    await ctx.limiter.release(reservation.holds)
    throw error
  }
  if (right) {
    await ctx.limiter.succeeded(reservation.holds)
    return
  }
  await ctx.limiter.failed(reservation.holds)
  ctx.events.emit('login.failed', { ip: call.ip, reason: 'wrong_credentials', errorCode: errorNumber('ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG') })
  throw new JwtLoginError('ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG')
}

/**
 * Order, so that no other session outlives the old password and a failure
 * leaves it as it was: the holder proven; the new password checked (the
 * lengths and the host's policy, as a reset's: 400 / 204); every other
 * session and trusted device ended (one cutoff write that keeps the
 * caller's session; a failure changes nothing); the host sets the password;
 * the cutoff written again, so a sign-in with the old password that raced
 * the change ends too (a failure there is logged: only such a race
 * survives it); then the kept session records the new password
 * fingerprint (a failure is logged: that session ends at its next
 * refresh). The notice mail goes after the answer.
 */
export async function changeOwnPassword (ctx: JwtLoginContext, call: Call, auth: Authenticated, input: PasswordChangeInput): Promise<void> {
  const userId = auth.publicUser.ID
  await proveHolder(ctx, call, auth, input.currentPassword)
  if (!withinPasswordLengths(input.newPassword, call.settings.resetPassword.password)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
  if (ctx.reset.policy !== null && await ctx.reset.policy(input.newPassword, auth.publicUser) !== true) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
  const keep = auth.verified.payload.sid
  await endAllSessions(ctx, call.settings, userId, 'password_changed', keep)
  await (ctx.users as Required<UserAdapter<any>>).setPassword(auth.user, input.newPassword)
  ctx.forgetUser(userId)
  await endAllSessions(ctx, call.settings, userId, 'password_changed', keep, 'end-all').catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password changed, but the second end of the other sessions failed; a sign-in that raced the change may stay')
  })
  // then the kept session records the new password fingerprint, or its next refresh would end it as a change made elsewhere
  // (one after the other, so the store sees the same calls in the same order each time)
  await keepFingerprint(ctx, call.settings, userId, keep).catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password changed, but the kept session could not record its new fingerprint; its next refresh ends it')
  })
  ctx.events.emit('password.changed', { userId, ip: call.ip, othersEnded: true })
  if (call.settings.account.password.notify) notify(ctx, call, auth.publicUser)
}

function notify (ctx: JwtLoginContext, call: Call, user: PublicUser): void {
  mailLater(ctx, call, { name: 'passwordChanged', to: user.user_email, userId: user.ID, values: { display_name: user.display_name, email: user.user_email } })
}
