// Sign-in by email, first step: a code for the address, mailed after the answer; the same answer and work for an address without an account.
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { mailLater } from '../account/mail.js'
import { clientKey } from '../core/client-key.js'
import { isEmail } from '../core/email.js'
import { JwtLoginError } from '../core/errors.js'
import { countInWindow, subjectKey } from '../services/limits.js'
import { codeKey, makeSignInCode, mayRegister, normalizedAddress, writeSignInCode } from './codes.js'

/**
 * Counts the request per client IP, per address and per account, in one
 * round trip. Over the IP's or the address's limit: 429 (the address's
 * count runs whether it has an account or not). Over the account's (every
 * spelling the host matches to it counts together): the same answer as any
 * other, with no code written and no mail (a 429 there would tell that the
 * address has an account): `false`. An unknown address counts a decoy.
 */
async function countRequest (ctx: JwtLoginContext, call: Call, email: string, user: PublicUser | null): Promise<boolean> {
  const { perAddress, perAccount, perIp } = call.settings.emailSignIn.limits
  const [ipWait, addressWait, accountWait] = await Promise.all([
    countInWindow(ctx.store, subjectKey('email-signin-requests:ip', clientKey(call.ip)), perIp),
    countInWindow(ctx.store, subjectKey('email-signin-requests:email', normalizedAddress(email)), perAddress),
    countInWindow(ctx.store, subjectKey('email-signin-requests:user', user === null ? 'none' : String(user.ID)), perAccount)
  ])
  const wait = ipWait ?? addressWait
  if (wait !== null) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: wait })
  // an address without an account counts on a decoy shared by all of them: only its own count (per address) limits it
  return user === null || accountWait === null
}

/** The link of the mail: the page, the code and the address in its fragment, which no browser sends to a server. */
function linkOf (linkUrl: string, code: string, email: string): string {
  return `${linkUrl}#${new URLSearchParams({ code, email }).toString()}`
}

/**
 * `POST /auth/email`: writes a code for an address that has an account (or,
 * with `emailSignIn.register`, for a new one) and mails it after the
 * answer, with the link when `emailSignIn.linkUrl` is set. Order, the same
 * store calls whatever the address: the user lookup; the request counted
 * per IP, per address and per account together (429 over the first two);
 * then one round trip: the code written (it replaces the address's older
 * one; its tries, named by its id, start at none), or a read. A mail that cannot be sent
 * withdraws its code.
 */
export async function requestEmailSignIn (ctx: JwtLoginContext, call: Call, input: { email: string | undefined }): Promise<{ message: string }> {
  const { email } = input
  if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID')
  const settings = call.settings.emailSignIn
  const found = await ctx.users.findByEmail(email)
  const user = found === null ? null : ctx.users.toPublicUser(found)
  const sends = await countRequest(ctx, call, email, user) && (user !== null || mayRegister(call, email))
  // the same work for an address that gets no code: a code, its hash, the mail and one store round trip
  const issued = makeSignInCode(ctx, call, email, user)
  const to = user?.user_email ?? email
  const values = {
    // the address as asked: the code is kept under it, and the mail names what to type with the code
    email,
    expires_in_minutes: String(Math.ceil(settings.code.lifetimeMs / 60_000)),
    link: settings.linkUrl === '' ? '' : linkOf(settings.linkUrl, issued.code, email)
  }
  if (sends) {
    await writeSignInCode(ctx, call, email, issued)
    mailLater(ctx, call, { name: settings.linkUrl === '' ? 'emailSignIn' : 'emailSignInLink', to, userId: user?.ID ?? null, values, code: issued })
  } else {
    await ctx.store.get(codeKey(email))
  }
  ctx.events.emit('email_sign_in.requested', { userId: sends ? user?.ID ?? null : null, ip: call.ip, register: sends && user === null })
  return { message: ctx.messages.text(call, 'emailSignInSent') }
}
