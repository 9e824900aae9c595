// Email verification: a code mailed to the account's address (asked with a session, or by address alone), and the code that proves it.
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { isEmail, sameEmail } from '../core/email.js'
import { JwtLoginError } from '../core/errors.js'
import { countInWindow, subjectKey } from '../services/limits.js'
import type { Authenticated } from '../sessions/authenticate.js'
import { accountKeys, makeCode, matchCode, spendCode, writeCode } from './codes.js'
import { resetCredentials } from './credentials.js'
import { mailLater } from './mail.js'

/** An address as the limits count it: NFKC, lower case, trimmed. */
const counted = (email: string): string => email.normalize('NFKC').toLowerCase().trim()

/**
 * Counts a mailed code per client IP and, for a known account, per account
 * (`account.limits`), in one round trip; over the IP's limit 429. Over the
 * account's: 429 when the caller holds a session of it, else the same
 * answer as for any address, with no code written (a 429 would tell that
 * the address has an account). An unknown address counts a decoy.
 */
export async function countCodeMail (ctx: JwtLoginContext, call: Call, userId: number | null, signedIn: boolean): Promise<boolean> {
  const { perIp, perAccount } = call.settings.account.limits
  const [ipWait, accountWait] = await Promise.all([
    countInWindow(ctx.store, subjectKey('account-codes:ip', clientKey(call.ip)), perIp),
    countInWindow(ctx.store, subjectKey('account-codes:user', userId === null ? 'none' : String(userId)), perAccount)
  ])
  const wait = ipWait ?? (signedIn ? accountWait : null)
  if (wait !== null) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: wait })
  return userId !== null && accountWait === null
}

/** Writes a verification code for the user's current address and mails it after the answer. */
export async function issueVerification (ctx: JwtLoginContext, call: Call, user: PublicUser): Promise<void> {
  const lifetimeMs = call.settings.account.code.lifetimeMs
  const issued = makeCode(ctx, call, 'verify', user.ID, { userId: user.ID, email: user.user_email }, lifetimeMs)
  await writeCode(ctx, 'verify', user.ID, issued, lifetimeMs)
  mailLater(ctx, call, {
    name: 'verifyEmail',
    to: user.user_email,
    userId: user.ID,
    code: issued,
    values: { display_name: user.display_name, email: user.user_email, expires_in_minutes: String(Math.ceil(lifetimeMs / 60_000)) }
  })
  ctx.events.emit('email.verification_requested', { userId: user.ID, ip: call.ip })
}

/**
 * `POST /account/email/verification`: with a session, a code to its
 * account's address (409 / 237 when verified already); without one, for
 * `email`, the same answer, store work and timing whether the address has
 * an unverified account, a verified one, or none.
 */
export async function requestVerification (ctx: JwtLoginContext, call: Call, auth: Authenticated | null, email: string | undefined): Promise<void> {
  if (auth !== null) {
    if (auth.publicUser.email_verified !== false) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY')
    await countCodeMail(ctx, call, auth.publicUser.ID, true)
    await issueVerification(ctx, call, auth.publicUser)
    return
  }
  if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_INVALID')
  const found = await ctx.users.findByEmail(email)
  const user = found === null ? null : ctx.users.toPublicUser(found)
  const pending = user !== null && user.email_verified === false
  const sends = await countCodeMail(ctx, call, pending ? user.ID : null, false)
  // the address's own count, so that one address cannot be mailed more than the account could
  const addressWait = await countInWindow(ctx.store, subjectKey('account-codes:email', counted(email)), call.settings.account.limits.perAccount)
  if (addressWait !== null) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: addressWait })
  if (pending && sends) {
    await issueVerification(ctx, call, user)
    return
  }
  // the same store work for an address that gets no code
  makeCode(ctx, call, 'verify', null, { userId: 0, email }, 1)
  await ctx.store.get(accountKeys.code('verify', null))
  ctx.events.emit('email.verification_requested', { userId: null, ip: call.ip })
}

/**
 * `POST /account/email/verify`: the code proves the address, which must
 * still be the account's. With a session of the account, everything stays
 * (its holder read the mailbox). Without one (the code and `email`), what
 * the account held before is ended first (every session and trusted
 * device, the passkeys, the second factor): whoever registered someone
 * else's address keeps nothing once its owner proves it. Order: the code
 * spent (one of concurrent requests goes on), that ending, then the
 * adapter's `setEmailVerified`; a failure gives the code back, and the
 * retry finishes the work.
 */
export async function verifyEmail (ctx: JwtLoginContext, call: Call, auth: Authenticated | null, input: { email?: string, code: string }): Promise<void> {
  let user: unknown = auth?.user ?? null
  if (auth === null) {
    if (input.email === undefined || !isEmail(input.email)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_INVALID')
    user = await ctx.users.findByEmail(input.email)
  }
  const publicUser = user === null ? null : ctx.users.toPublicUser(user)
  const matched = await matchCode(ctx, call, 'verify', publicUser?.ID ?? null, input.code)
  const owner = publicUser as PublicUser
  if (!sameEmail(matched.record.email, owner.user_email)) throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID')
  const claim = await spendCode(ctx, matched)
  try {
    if (auth === null) await resetCredentials(ctx, call, owner.ID, user, 'email_verified', true)
    await (ctx.users.setEmailVerified as NonNullable<typeof ctx.users.setEmailVerified>)(user, true)
  } catch (error) {
    await claim.giveBack()
    throw auth === null ? new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE', { cause: error }) : error
  }
  ctx.forgetUser(owner.ID)
  ctx.events.emit('email.verified', { userId: owner.ID, ip: call.ip, reset: auth === null })
}
