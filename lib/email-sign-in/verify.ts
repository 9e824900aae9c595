// Sign-in by email, second step: the mailed code signs in the account its address finds (or creates it), answered as `POST /auth` answers.
import type { Call, SessionOrigin, SignInResult } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser } from '../adapters/users.js'
import { resetCredentials } from '../account/credentials.js'
import type { JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { randomToken } from '../core/crypto.js'
import { isEmail } from '../core/email.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { accountSubject, subjectKey, type Hold, type Reservable } from '../services/limits.js'
import { uniqueLogin } from '../services/unique-login.js'
import { endAllSessions } from '../sessions/manage.js'
import { lockKey, refuseLockedAttempt } from '../sessions/lock.js'
import { completeSignIn } from '../sessions/sign-in.js'
import { claimOnce, type Claim } from '../store/claim.js'
import { sessionIndexKey } from '../tokens/session-index.js'
import { codeKey, matchSignInCode, mayRegister, normalizedAddress, readCode, triesKey, type SignInCode } from './codes.js'

/** The first factor of a sign-in by email: the mailbox, proven by its code. */
export const EMAIL: SessionOrigin = Object.freeze({ method: 'email' })

/** How many times a new address's user is looked for again when `createUser` reports it taken. */
const MAX_CREATE_ATTEMPTS = 3

/** `POST /auth/email/verify` as the route read it. */
export interface EmailSignInInput {
  email: string | undefined
  code: string | undefined
}

/** A try as counted: its holds on the lockouts, the code's record as read (`raw`, for the claim), the session index and the cutoff entry, the code's tries. */
interface CountedTry { holds: Hold[], raw: string | null | undefined, read: SignInCode | null, index: string | null, cutoff: string | null, tries: number }

/**
 * Counts the try on the sign-in lockouts (`limits.loginPerAccount` per
 * account and per address, `limits.loginPerIp` per client), reading the
 * address's code, the account's session index and its cutoff entry along
 * (over a lockout: 429, and the code's tries are untouched; a locked
 * account: 403 / 251, see `refuseLockedAttempt`); then on the code read (its
 * tries are named by its id, so a new code starts with none): all before
 * the code is looked at, so a burst of concurrent guesses is checked at
 * most as often as the lockouts and `maxTries` allow.
 */
async function countTry (ctx: JwtLoginContext, call: Call, email: string, userId: number | null): Promise<CountedTry> {
  const { loginPerAccount, loginPerIp } = call.settings.limits
  const named: Reservable = { key: subjectKey('login:account', normalizedAddress(email)), limit: loginPerAccount, onSuccess: 'reset' }
  const client: Reservable = { key: subjectKey('login:ip', clientKey(call.ip)), limit: loginPerIp, onSuccess: 'release' }
  const reservation = await ctx.limiter.reserve([named, client, accountSubject(userId, loginPerAccount)], [codeKey(email), sessionIndexKey(userId), lockKey(userId)])
  // a locked account (`lockUser`): 403 / 251 before the code is looked at (it stays unspent), not counted on the account
  await refuseLockedAttempt(ctx, reservation, client, call.ip, reservation.read[2])
  if (!reservation.ok) {
    ctx.events.emit('login.failed', { ip: call.ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
    throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: reservation.retryAfter })
  }
  const { holds, read: [raw, index, cutoff] } = reservation
  const read = readCode(raw)
  try {
    const { count } = await ctx.store.increment(triesKey(email, read), call.settings.emailSignIn.code.lifetimeMs)
    return { holds, raw, read, index: index ?? null, cutoff: cutoff ?? null, tries: count }
  } catch (error) {
    // not evaluated: the attempt is given back
    await ctx.limiter.release(holds)
    throw error
  }
}

/**
 * `POST /auth/email/verify`: the code mailed to `email` signs in the account
 * the address finds, answered exactly as `POST /auth` answers (refresh
 * token, cookie mode, a two-factor challenge for a user with a second
 * factor: the mailbox is one factor). Every bad code, an address without a
 * code, and a try past `emailSignIn.code.maxTries` answer 401 / 246 after the
 * same work. Order:
 * 1. the user looked up; one round trip: the try counted on the lockouts,
 *    the code, the session index and the cutoff entry read (a locked
 *    account: 403 / 251, the code unspent); one more: the try counted on
 *    the code read;
 * 2. the code compared; wrong: counted as a failure (a wrong guess does not
 *    spend the code until its tries are used up); the right code past its
 *    tries, or a code just claimed: given back, no guess;
 * 3. the code claimed (one compare-and-set: of concurrent uses one goes on);
 * 4. an account whose address was never verified ends what it held (every
 *    session and trusted device, the passkeys, the second factor, its
 *    password: the password retired and the passkeys and second factor
 *    gone before the one cutoff that ends the sessions) and is marked
 *    verified last; a new address's user is created (verified);
 * 5. the sign-in completes as a password's does.
 * A failure in 4–5 gives the code back (only over this request's claim), so
 * the retry finishes: each step of 4 is idempotent, and a code of a new
 * address signs in the user its first try created.
 */
export async function verifyEmailSignIn (ctx: JwtLoginContext, call: Call, input: EmailSignInInput): Promise<SignInResult> {
  const { email, code } = input
  if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID')
  if (code === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING')
  const found = await ctx.users.findByEmail(email)
  const userId = found === null ? null : ctx.users.toPublicUser(found).ID
  const { holds, raw, read, index, cutoff, tries } = await countTry(ctx, call, email, userId)
  const { right, record } = matchSignInCode(ctx, call, read, userId, code, tries)
  if (record === null) {
    // a wrong code is a failed sign-in; the right one past its tries, or one that finds the code just claimed, is no guess
    // (a page opened twice, a double click; nothing can be guessed while the code is claimed): given back
    await (right || (raw !== null && raw !== undefined && read === null) ? ctx.limiter.release(holds) : ctx.limiter.failed(holds))
    throw refused(ctx, call)
  }
  let claim: Claim
  try {
    claim = await claimOnce(ctx.store, codeKey(email), raw as string, () => Math.max(1, record.exp - ctx.clock()), (error) => {
      ctx.log.error({ userId, err: loggedError(error) }, 'jwt-login: a sign-in code could not be given back after a failure; the user needs a new one')
    })
  } catch (error) {
    await ctx.limiter.release(holds)
    throw error
  }
  // a copy of the same right code that lost the race: not a guess, and not this request's sign-in
  if (!claim.won) {
    await ctx.limiter.release(holds)
    throw refused(ctx, call)
  }
  const settling = ctx.limiter.succeeded(holds)
  let signedIn: { user: unknown, result: SignInResult }
  try {
    const { user, startedAt } = found === null ? await newUser(ctx, call, email) : await provenAccount(ctx, call, found, record)
    // the lock was read with the count (a new address's decoy holds none; a lock written since ends the session anyway)
    signedIn = { user, result: await completeSignIn(ctx, call, user, startedAt, EMAIL, { index: found === null || startedAt !== call.startedAt ? undefined : index, cutoff }) }
  } catch (error) {
    await claim.giveBack()
    throw error
  } finally {
    await settling
  }
  const { user, result } = signedIn
  if (!('two_factor_required' in result)) ctx.events.emit('login.succeeded', { userId: ctx.users.toPublicUser(user).ID, ip: call.ip, method: 'email' })
  return result
}

/** The one refusal of a code: 401 / 246, reported as a failed sign-in. */
function refused (ctx: JwtLoginContext, call: Call): JwtLoginError {
  ctx.events.emit('login.failed', { ip: call.ip, reason: 'email_code', errorCode: errorNumber('ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID') })
  return new JwtLoginError('ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID')
}

/** The user to sign in, and when its session starts: the request's start, or just after the cutoff that ended what an unproven account held. */
interface SignInUser { user: unknown, startedAt: number }

/**
 * The account the address finds. One whose address was never verified
 * (`email_verified: false`) was perhaps registered by someone else with
 * this address (account pre-hijacking): what it held ends first (every
 * session and trusted device, the passkeys, the second factor), its
 * password is replaced by a random one nobody knows, and the address is
 * marked verified; its owner sets a password under the account. The new
 * session starts after the cutoff that ended the others.
 */
async function provenAccount (ctx: JwtLoginContext, call: Call, found: unknown, record: SignInCode | null): Promise<SignInUser> {
  const publicUser = ctx.users.toPublicUser(found)
  const afterCutoff = (): number => ctx.clock() + 1 + call.settings.sessions.clockSkewMs
  // proven by an earlier try of this code that then failed: its retry starts after that try's cutoff too
  if (publicUser.email_verified !== false) return { user: found, startedAt: record?.unproven === true ? afterCutoff() : call.startedAt }
  const users = ctx.users
  // registration checks only what it can see: an adapter may report an unproven address and lack what proves it
  if (users.setPassword === undefined || users.setEmailVerified === undefined) {
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('an account\'s address is unverified, and the user adapter lacks setPassword or setEmailVerified to retire its password and record the proof') })
  }
  try {
    // the credentials first, then one cutoff: a sign-in that checked the old password (or a passkey) before they were gone ends too
    await users.setPassword(found, randomToken(32))
    await resetCredentials(ctx, call, publicUser.ID, found, 'email_verified', false)
    await endAllSessions(ctx, call.settings, publicUser.ID, 'email_verified')
    // last: until the address is marked, a retry does all of the above again
    await users.setEmailVerified(found, true)
  } catch (error) {
    // sessions may have ended already: the answer says so, and the retry (the code is given back) finishes
    throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE', { cause: error })
  }
  ctx.forgetUser(publicUser.ID)
  ctx.events.emit('email.verified', { userId: publicUser.ID, ip: call.ip, reset: true })
  const user = await ctx.users.findById(publicUser.ID)
  // the account was removed meanwhile: the code signs in nobody
  if (user === null) throw refused(ctx, call)
  return { user, startedAt: afterCutoff() }
}

/**
 * The user of a code mailed to an address without an account
 * (`emailSignIn.register`), created with the address verified (its code
 * proved it). When `createUser` reports the address or the login taken (a
 * concurrent registration won), the address is looked up again and the
 * account found signs in under the same rules.
 */
async function newUser (ctx: JwtLoginContext, call: Call, email: string, attempt = 1): Promise<SignInUser> {
  // registration turned off since the code was mailed, or the address given in another spelling than the one
  // the code went to (a look-alike the request would have refused): the code creates nobody
  if (!mayRegister(call, email) || ctx.users.createUser === undefined) throw refused(ctx, call)
  try {
    const login = await uniqueLogin(ctx.users, email)
    const user: unknown = await ctx.users.createUser({ email, login, displayName: login, role: call.settings.users.register.defaultRole, emailVerified: true })
    const created: PublicUser = ctx.users.toPublicUser(user)
    ctx.events.emit('email_sign_in.user_registered', { userId: created.ID, ip: call.ip })
    return { user, startedAt: call.startedAt }
  } catch (error) {
    // a taken address or login is the guard's JwtLoginError 38; anything else is an unavailable dependency (503)
    if (!(error instanceof JwtLoginError && error.code === 'ERR_JWT_LOGIN_USER_EXISTS')) throw error
    const found = await ctx.users.findByEmail(email)
    if (found !== null) return await provenAccount(ctx, call, found, null)
    if (attempt === MAX_CREATE_ATTEMPTS) throw error
    return await newUser(ctx, call, email, attempt + 1)
  }
}
