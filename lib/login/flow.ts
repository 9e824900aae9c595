// Password sign-in (`POST /auth`): the account looked up, the attempt counted (and the account's lock read) before the password is checked, the sign-in completed.
import { clientKey } from '../core/client-key.js'
import { loggedError } from '../adapters/logged-error.js'
import type { Call, SignInResult } from '../adapters/second-factor.js'
import type { GateAudit, JwtLoginContext } from '../context/context.js'
import { safeEqual } from '../core/crypto.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { accountSubject, subjectKey, type Reservable } from '../services/limits.js'
import { lockKey, refuseLockedAttempt } from '../sessions/lock.js'
import { completeSignIn, PASSWORD } from '../sessions/sign-in.js'
import { sessionIndexKey } from '../tokens/session-index.js'

/** How an identifier is counted when it names no account: case and surrounding spaces do not make another subject. */
function normalizeIdentifier (identifier: string): string {
  return identifier.trim().toLowerCase()
}

/** `POST /auth` as the route read it: each field a string or absent. */
export interface LoginInput {
  email: string | undefined
  username: string | undefined
  login: string | undefined
  password: string | undefined
  passwordHash: string | undefined
}

/**
 * `POST /auth`, after the route's gate (authentication on, the auth code).
 * An unknown user costs the same password verification as a known one and
 * gets the same answer as a wrong password.
 *
 * Every attempt is counted before its password is verified, so a burst of
 * concurrent guesses is verified at most `limits.loginPerAccount.max` times
 * per account; a success gives its attempt back and clears the account's
 * failures, a refused or unevaluated attempt is given back (`AttemptLimiter`).
 *
 * Store round trips (besides the per-IP request count): the user is looked
 * up first, so the identifier's, the client's and the account's counts go
 * together, with the user's session index and cutoff entry (its lock:
 * 403 / 251 before the password is looked at, not counted on the account:
 * see `refuseLockedAttempt`) read along; after the password,
 * the settling of the counts, the per-account sign-in count and the new
 * session travel together.
 */
export async function passwordLogin (ctx: JwtLoginContext, call: Call, input: LoginInput): Promise<SignInResult> {
  const { settings, ip } = call
  const { email, password, passwordHash } = input
  const identifiers = [email, input.username, input.login].filter(v => v !== undefined)
  if (identifiers.length !== 1) throw new JwtLoginError('ERR_JWT_LOGIN_LOGIN_MISSING')
  if ((password === undefined) === (passwordHash === undefined)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_MISSING')
  if (passwordHash !== undefined && !settings.login.allowPasswordHash) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED')

  const identifier = identifiers[0] as string
  const { loginPerAccount, loginPerIp } = settings.limits
  const named: Reservable = { key: subjectKey('login:account', normalizeIdentifier(identifier)), limit: loginPerAccount, onSuccess: 'reset' }
  const client: Reservable = { key: subjectKey('login:ip', clientKey(ip)), limit: loginPerIp, onSuccess: 'release' }

  // the lookup, then every count in one round trip: the same store work for a known and an unknown identifier
  const user = await findNamed(ctx, input, identifier)
  const userId = user === null ? null : ctx.users.toPublicUser(user).ID
  const reservation = await ctx.limiter.reserve([named, client, accountSubject(userId, loginPerAccount)], [sessionIndexKey(userId), lockKey(userId)])
  const [index, cutoff] = reservation.read
  await refuseLockedAttempt(ctx, reservation, client, ip, cutoff)
  if (!reservation.ok) {
    ctx.events.emit('login.failed', { ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
    throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: reservation.retryAfter })
  }
  const { holds } = reservation
  let valid: boolean
  try {
    valid = await checkCredentials(ctx, user, password, passwordHash)
  } catch (error) {
    // not evaluated (a dependency failed): the attempt is given back
    await ctx.limiter.release(holds)
    throw error
  }

  if (!valid) {
    await ctx.limiter.failed(holds)
    ctx.events.emit('login.failed', { ip, reason: 'wrong_credentials', errorCode: errorNumber('ERR_JWT_LOGIN_WRONG_CREDENTIALS') })
    throw new JwtLoginError('ERR_JWT_LOGIN_WRONG_CREDENTIALS')
  }

  // settled while the session starts: the bookkeeping never fails the sign-in
  const settling = ctx.limiter.succeeded(holds)
  let result: SignInResult
  try {
    // the upgraded hash first: the new session records the password as it is stored now
    if (password !== undefined) await rehash(ctx, user, password, userId as number, ip)
    result = await completeSignIn(ctx, call, user, call.startedAt, PASSWORD, { index, cutoff })
  } finally {
    await settling
  }
  if (!('two_factor_required' in result)) {
    ctx.events.emit('login.succeeded', { userId: userId as number, ip, method: password !== undefined ? 'password' : 'password_hash' })
  }
  return result
}

/**
 * The account the identifier names, as Simple JWT Login 4 looks it up:
 * `email` by email, `username` by login name, `login` by login name and then,
 * when it holds an `@`, by email. Both lookups of a `login` are asked at
 * once, so one naming a login name, one naming an email and one naming
 * nobody wait the same; the login name wins when both match.
 */
async function findNamed (ctx: JwtLoginContext, input: LoginInput, identifier: string): Promise<unknown> {
  const { users } = ctx
  if (input.email !== undefined) return await users.findByEmail(identifier)
  if (input.login === undefined || !identifier.includes('@')) return await users.findByLogin(identifier)
  const [byLogin, byEmail] = await Promise.all([users.findByLogin(identifier), users.findByEmail(identifier)])
  return byLogin ?? byEmail
}

/**
 * The adapter's upgrade of a user's hash after a right password, when it
 * has `rehashPassword`; when it wrote a new hash, the user cache reads the
 * user again, with the hash as it is stored now (a sign-in with nothing to
 * upgrade keeps the cached copy). A failure never fails the sign-in: it is logged
 * (as every port's failure is, without the call's values) and reported as
 * `password.rehash_failed`; the old hash stays for the next sign-in.
 */
async function rehash (ctx: JwtLoginContext, user: unknown, password: string, userId: number, ip: string): Promise<void> {
  if (ctx.users.rehashPassword === undefined) return
  try {
    if (await ctx.users.rehashPassword(user, password)) ctx.forgetUser(userId)
  } catch (error) {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the user\'s password hash could not be upgraded; the sign-in goes on with the old one, and the next sign-in tries again')
    ctx.events.emit('password.rehash_failed', { userId, ip })
  }
}

/** The password (or its hash, when allowed) against the user; an unknown user spends the same time. */
async function checkCredentials (ctx: JwtLoginContext, user: unknown, password: string | undefined, passwordHash: string | undefined): Promise<boolean> {
  if (password !== undefined) {
    if (user !== null) return await ctx.users.verifyPassword(user, password)
    await ctx.spendPasswordTime(password)
    return false
  }
  const stored = user === null || ctx.users.getPasswordHash === undefined ? null : await ctx.users.getPasswordHash(user)
  return safeEqual(passwordHash as string, stored ?? '\u0000no-hash') && stored !== null
}

/** Reports a refusal of the route's gate on the auth code as a failed login. */
export const auditLoginGate: GateAudit = (events, call, error, stage) => {
  if (stage === 'auth_code') events.emit('login.failed', { ip: call.ip, reason: 'auth_code', errorCode: error.errorCode })
}

export { accountSubject }
