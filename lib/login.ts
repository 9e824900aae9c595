import { createHash, timingSafeEqual } from 'node:crypto'
import { checkAuthCode } from './auth-codes.js'
import type { JwtLoginContext, SignInResult } from './context.js'
import { JwtLoginError } from './errors.js'
import { subjectKey, type Counted } from './limits.js'
import { stringField, type Fields } from './params.js'
import { completeSignIn } from './session.js'

function sameSecret (a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}

/**
 * `POST /auth`: the order of checks is the interface's. The auth code is
 * checked before any lookup; an unknown user costs the same password
 * verification as a known one and gets the same answer as a wrong password.
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
  const account: Counted = { key: subjectKey('login:account', identifier.toLowerCase()), limit: settings.limits.loginPerAccount }
  const client: Counted = { key: subjectKey('login:ip', ip), limit: settings.limits.loginPerIp }
  try {
    await ctx.limiter.assertOpen([account, client])
  } catch (error) {
    ctx.events.emit('login.failed', { ip, reason: 'rate_limited', errorCode: 200 })
    throw error
  }

  const user = email !== undefined
    ? await ctx.users.findByEmail(email)
    : await ctx.users.findByLogin(identifier)

  let valid: boolean
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

  if (!valid) {
    await ctx.limiter.fail([account, client])
    ctx.events.emit('login.failed', { ip, reason: 'wrong_credentials', errorCode: 48 })
    throw new JwtLoginError('ERR_JWT_LOGIN_WRONG_CREDENTIALS')
  }

  await ctx.limiter.reset(account)
  const result = await completeSignIn(ctx, user, ip, startedAt)
  if (!('two_factor_required' in result)) {
    ctx.events.emit('login.succeeded', { userId: ctx.users.toPublicUser(user).ID, ip, method: password !== undefined ? 'password' : 'password_hash' })
  }
  return result
}
