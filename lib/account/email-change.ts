// Change of email: a code to the new address (nothing changes before it is entered), the change with a notice and a revert code to the old one, and the revert.
import type { Call } from '../adapters/second-factor.js'
import type { UserAdapter } from '../adapters/users.js'
import { loggedError } from '../adapters/guard.js'
import type { JwtLoginContext } from '../context/context.js'
import { isEmail, isPlainEmail, sameEmail } from '../core/email.js'
import { JwtLoginError } from '../core/errors.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import { accountKeys, makeCode, matchCode, spendCode, writeCode } from './codes.js'
import { resetCredentials } from './credentials.js'
import { mailLater } from './mail.js'
import { countCodeMail } from './verification.js'

/** The longest address the account takes: WordPress's `user_email` column. */
const MAX_EMAIL_LENGTH = 100

/** An address as a revert code is filed under: the user no longer has it. */
const revertSubject = (email: string): string => email.normalize('NFKC').toLowerCase().trim()

const setEmailOf = (ctx: JwtLoginContext): NonNullable<UserAdapter['setEmail']> => ctx.users.setEmail as NonNullable<UserAdapter['setEmail']>

/** Whether a `setEmail` that threw made `email` the user's address all the same (read again past the user cache; a failed read: no). */
async function landed (ctx: JwtLoginContext, userId: number, email: string): Promise<boolean> {
  ctx.forgetUser(userId)
  try {
    const user = await ctx.users.findById(userId)
    return user !== null && sameEmail(ctx.users.toPublicUser(user).user_email, email)
  } catch {
    return false
  }
}

/** A taken address (the adapter's `UserExistsError`, 38 from the guard) answers 235, naming no account. */
function taken (error: unknown): boolean {
  return error instanceof JwtLoginError && error.code === 'ERR_JWT_LOGIN_USER_EXISTS'
}

/**
 * `POST /account/email`: after a sign-in within `account.recentAuth`, a
 * code to `new_email` (well formed, plain ASCII as at registration, not the
 * account's own: else 400 / 236). Whether another account has the address
 * is not looked at here (the answer would tell); the confirmation says so.
 */
export async function requestEmailChange (ctx: JwtLoginContext, call: Call, auth: Authenticated, newEmail: string): Promise<void> {
  const { publicUser } = auth
  requireRecentAuth(auth.verified.payload, call.settings.account.recentAuthMs, ctx.clock())
  if (newEmail.length > MAX_EMAIL_LENGTH || !isEmail(newEmail) || !isPlainEmail(newEmail) || sameEmail(newEmail, publicUser.user_email)) {
    throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_INVALID')
  }
  await countCodeMail(ctx, call, publicUser.ID, true)
  const lifetimeMs = call.settings.account.code.lifetimeMs
  const issued = makeCode(ctx, call, 'change', publicUser.ID, { userId: publicUser.ID, email: newEmail }, lifetimeMs)
  await writeCode(ctx, 'change', publicUser.ID, issued, lifetimeMs)
  mailLater(ctx, call, {
    name: 'emailChange',
    to: newEmail,
    userId: publicUser.ID,
    code: issued,
    values: { display_name: publicUser.display_name, email: newEmail, expires_in_minutes: String(Math.ceil(lifetimeMs / 60_000)) }
  })
  ctx.events.emit('email.change_requested', { userId: publicUser.ID, ip: call.ip })
}

/**
 * `POST /account/email/confirm`: the code from the new address. Order: the
 * code spent (of concurrent confirms, one goes on); the old address's revert
 * code written (a failure gives the code back: nothing changed); the host's
 * `setEmail` (an address another account has meanwhile: 409 / 235, the code
 * spent; another failure gives it back, unless the address is found changed
 * all the same: then the change stands). The notice with the revert code
 * goes to the old address after the answer.
 */
export async function confirmEmailChange (ctx: JwtLoginContext, call: Call, auth: Authenticated, code: string): Promise<void> {
  const { publicUser } = auth
  const userId = publicUser.ID
  const matched = await matchCode(ctx, call, 'change', userId, code)
  const newEmail = matched.record.email
  const oldEmail = publicUser.user_email
  const claim = await spendCode(ctx, matched)
  const lifetimeMs = call.settings.account.email.revertLifetimeMs
  const revert = makeCode(ctx, call, 'revert', revertSubject(oldEmail), { userId, email: oldEmail }, lifetimeMs)
  try {
    await writeCode(ctx, 'revert', revertSubject(oldEmail), revert, lifetimeMs)
    await setEmailOf(ctx)(auth.user, newEmail)
  } catch (error) {
    if (taken(error)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_TAKEN')
    // the host changed it, then threw: the change is made, so the code stays spent and the old address is told
    if (!await landed(ctx, userId, newEmail)) {
      await claim.giveBack()
      throw error
    }
  }
  ctx.forgetUser(userId)
  mailLater(ctx, call, {
    name: 'emailChanged',
    to: oldEmail,
    userId,
    code: revert,
    values: { display_name: publicUser.display_name, email: oldEmail, expires_in_days: String(Math.ceil(lifetimeMs / 86_400_000)) }
  })
  ctx.events.emit('email.changed', { userId, ip: call.ip })
}

/**
 * `POST /account/email/revert`: the old address and its revert code, no
 * token (whoever changed the address may hold every session). Puts the old
 * address back and ends what the account holds besides its password: every
 * session and trusted device, the passkeys and the second factor (whoever
 * changed the address may have added them); the owner then resets the
 * password by mail. Revert codes issued before the last revert are dead,
 * so an address the account held in between cannot take it back. Order:
 * the code spent; that ending and `setEmail` (a failure gives the code
 * back: 503 / 242; an address taken meanwhile: 409 / 235); then the floor
 * for older revert codes (a failure is logged).
 */
export async function revertEmail (ctx: JwtLoginContext, call: Call, input: { email: string, code: string }): Promise<void> {
  if (!isEmail(input.email)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_INVALID')
  const matched = await matchCode(ctx, call, 'revert', revertSubject(input.email), input.code)
  const { record } = matched
  const [user, floor] = await Promise.all([ctx.users.findById(record.userId), ctx.store.get(accountKeys.revertFloor(record.userId))])
  if (user === null || (floor !== null && Number(floor) >= record.issuedAt)) throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID')
  const claim = await spendCode(ctx, matched)
  const lifetimeMs = call.settings.account.email.revertLifetimeMs
  try {
    await resetCredentials(ctx, call, record.userId, user, 'email_reverted', true)
    await setEmailOf(ctx)(user, record.email)
  } catch (error) {
    if (taken(error)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_TAKEN')
    // put back all the same (the host did it, then threw): the code stays spent
    if (!await landed(ctx, record.userId, record.email)) {
      await claim.giveBack()
      throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE', { cause: error })
    }
  }
  ctx.forgetUser(record.userId)
  await ctx.store.set(accountKeys.revertFloor(record.userId), String(ctx.clock()), lifetimeMs).catch((error: unknown) => {
    ctx.log.error({ userId: record.userId, err: loggedError(error) }, 'jwt-login: an email was put back, but the revert codes issued before could not be ended; they expire with their lifetime')
  })
  ctx.events.emit('email.reverted', { userId: record.userId, ip: call.ip })
}
