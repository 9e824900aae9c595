import { createHash, timingSafeEqual } from 'node:crypto'
import { checkAuthCode } from './auth-codes.js'
import type { JwtLoginContext, SignInResult } from './context.js'
import { JwtLoginError } from './errors.js'
import { clientKey } from './client-key.js'
import { subjectKey, type Hold, type Reservable } from './limits.js'
import { stringField, type Fields } from './params.js'
import { completeSignIn } from './session.js'

function sameSecret (a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}

/** How an identifier is counted when it names no account: case and surrounding spaces do not make another subject. */
function normalizeIdentifier (identifier: string): string {
  return identifier.trim().toLowerCase()
}

/** Counts the attempt on `subjects`, or answers 429 / 200 with `Retry-After`. */
async function reserve (ctx: JwtLoginContext, subjects: Reservable[], ip: string): Promise<Hold[]> {
  const reservation = await ctx.limiter.reserve(subjects)
  if (reservation.ok) return reservation.holds
  ctx.events.emit('login.failed', { ip, reason: 'rate_limited', errorCode: 200 })
  throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: reservation.retryAfter })
}

/**
 * `POST /auth`: the order of checks is the interface's. The auth code is
 * checked before any lookup; an unknown user costs the same password
 * verification as a known one and gets the same answer as a wrong password.
 *
 * Every attempt is counted before its password is verified, so a burst of
 * concurrent guesses is verified at most `limits.loginPerAccount.max` times
 * per account; a success gives its attempt back and clears the account's
 * failures, a refused or unevaluated attempt is given back (`AttemptLimiter`).
 */
export async function passwordLogin (ctx: JwtLoginContext, fields: Fields, ip: string): Promise<SignInResult> {
  const startedAt = ctx.clock()
  const settings = ctx.settings.current
  if (!settings.authentication.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_DISABLED')
  if (settings.authCodes.requireFor.auth) {
    try {
      checkAuthCode(fields[settings.authCodes.parameter], settings.authCodes.codes, ctx.clock())
    } catch (error) {
      ctx.events.emit('login.failed', { ip, reason: 'auth_code', errorCode: (error as JwtLoginError).errorCode })
      throw error
    }
  }

  const email = stringField(fields, 'email')
  const username = stringField(fields, 'username')
  const login = stringField(fields, 'login')
  const identifiers = [email, username, login].filter(v => v !== undefined)
  if (identifiers.length !== 1) throw new JwtLoginError('ERR_JWT_LOGIN_LOGIN_MISSING')

  const password = stringField(fields, 'password')
  const passwordHash = stringField(fields, 'password_hash')
  if ((password === undefined) === (passwordHash === undefined)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_MISSING')
  if (passwordHash !== undefined && !settings.login.allowPasswordHash) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED')

  const identifier = identifiers[0] as string
  const { loginPerAccount, loginPerIp } = settings.limits
  const named: Reservable = { key: subjectKey('login:account', normalizeIdentifier(identifier)), limit: loginPerAccount, onSuccess: 'reset' }
  const client: Reservable = { key: subjectKey('login:ip', clientKey(ip)), limit: loginPerIp, onSuccess: 'release' }

  // Counting comes first, then the lookup, then the account's own counter, then the
  // verification: the same store work for a known and an unknown identifier.
  let holds = await reserve(ctx, [named, client], ip)
  let user: unknown
  let valid: boolean
  try {
    user = email !== undefined
      ? await ctx.users.findByEmail(email)
      : await ctx.users.findByLogin(identifier)
    // one counter per account, whichever identifier named it; an unknown identifier counts a decoy that never refuses
    const account: Reservable = user === null
      ? { key: subjectKey('login:user', 'none'), limit: { max: Infinity, windowMs: loginPerAccount.windowMs }, onSuccess: 'reset' }
      : { key: subjectKey('login:user', String(ctx.users.toPublicUser(user).ID)), limit: loginPerAccount, onSuccess: 'reset' }
    holds = [...holds, ...await reserve(ctx, [account], ip)]

    if (password !== undefined) {
      if (user === null) {
        await ctx.spendPasswordTime(password)
        valid = false
      } else {
        valid = await ctx.users.verifyPassword(user, password)
      }
    } else {
      const stored = user === null || ctx.users.getPasswordHash === undefined ? null : await ctx.users.getPasswordHash(user)
      valid = sameSecret(passwordHash as string, stored ?? '\u0000no-hash') && stored !== null
    }
  } catch (error) {
    // not evaluated (refused on the account, or a dependency failed): the attempt is given back
    await ctx.limiter.release(holds)
    throw error
  }

  if (!valid) {
    await ctx.limiter.failed(holds)
    ctx.events.emit('login.failed', { ip, reason: 'wrong_credentials', errorCode: 48 })
    throw new JwtLoginError('ERR_JWT_LOGIN_WRONG_CREDENTIALS')
  }

  await ctx.limiter.succeeded(holds)
  const result = await completeSignIn(ctx, user, ip, startedAt)
  if (!('two_factor_required' in result)) {
    ctx.events.emit('login.succeeded', { userId: ctx.users.toPublicUser(user).ID, ip, method: password !== undefined ? 'password' : 'password_hash' })
  }
  return result
}
