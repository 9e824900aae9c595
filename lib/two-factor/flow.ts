import { hkdfSync } from 'node:crypto'
import type { JwtLoginContext, SecondFactorGate } from '../context.js'
import { JwtLoginError } from '../errors.js'
import { subjectKey, type Counted } from '../limits.js'
import { issueSession } from '../session.js'
import { BackupCodeProvider } from './backup-codes.js'
import { EmailCodeProvider } from './email-code.js'
import { createTotpSecret, TotpProvider } from './totp.js'
import type { TwoFactorEnrollment, TwoFactorMethod, TwoFactorOptions, TwoFactorPort } from './types.js'

const SIX_DIGITS = /^\d{6}$/

/** The two-factor port with its providers, built once at registration. */
export interface TwoFactor {
  port: TwoFactorPort
  totp: TotpProvider
  email: EmailCodeProvider | null
  backup: BackupCodeProvider
  enrollment: TwoFactorEnrollment
}

interface ChallengeRecord { method: TwoFactorMethod }

const challengeKey = (userId: number, challengeId: string): string => `2fa:challenge:${userId}:${challengeId}`
const attemptsKey = (challengeId: string): string => `2fa:attempts:${challengeId}`

/**
 * The key of the email-code hashes. It comes from the signing key, so every
 * instance with the same settings derives the same one and the store alone
 * does not reveal a code.
 */
function emailPepper (ctx: JwtLoginContext): Buffer {
  const signingKey = JSON.stringify(ctx.settings.current.tokens.keys[0])
  return Buffer.from(hkdfSync('sha256', signingKey, 'jwt-login', 'two-factor email code', 32))
}

export function createTwoFactor (ctx: JwtLoginContext, options: TwoFactorOptions): TwoFactor {
  const issuer = options.issuer ?? 'jwt-login'
  const totp = new TotpProvider(ctx.store, ctx.clock)
  const backup = new BackupCodeProvider(options.port, ctx.store)
  return {
    port: options.port,
    totp,
    email: options.mailer === undefined ? null : new EmailCodeProvider(ctx.store, options.mailer, emailPepper(ctx)),
    backup,
    enrollment: {
      createTotpSecret: (label) => createTotpSecret(issuer, label),
      confirmTotp: async (userId, secret, code) => {
        if (!await totp.accept(userId, secret, code)) return false
        await options.port.setTotpSecret(userId, secret)
        return true
      },
      regenerateBackupCodes: async (userId) => await backup.regenerate(userId)
    }
  }
}

/**
 * The gate on every first factor: a user with two-factor on gets a challenge
 * in the store and an interim token bound to it (its `sid` is the challenge id).
 */
export function secondFactorGate (ctx: JwtLoginContext, twoFactor: TwoFactor): SecondFactorGate {
  return async (user, publicUser, ip) => {
    const method = await twoFactor.port.methodOf(publicUser.ID, user)
    if (method === null) return null
    const settings = ctx.settings.current.twoFactor
    // a session id, so a per-user cutoff (password reset) also ends pending challenges
    const challengeId = ctx.tokens.newSessionId()
    const record: ChallengeRecord = { method }
    await ctx.store.set(challengeKey(publicUser.ID, challengeId), JSON.stringify(record), settings.interimLifetimeMs)
    if (method === 'email') {
      if (twoFactor.email === null) {
        throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('a user has the email method but no mailer is configured') })
      }
      await twoFactor.email.issue(challengeId, publicUser.user_email, settings.emailCodeLifetimeMs).catch((error: unknown) => {
        throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
      })
    }
    const { token } = ctx.tokens.sign(publicUser, 'interim', { sessionId: challengeId, lifetimeMs: settings.interimLifetimeMs })
    ctx.events.emit('two_factor.challenge_issued', { userId: publicUser.ID, method, ip })
    return { two_factor_required: true, jwt: token }
  }
}

/** Authentication on (45) and a two-factor port configured (105). */
export function assertTwoFactorOpen (ctx: JwtLoginContext, twoFactor: TwoFactor | null): asserts twoFactor is TwoFactor {
  if (!ctx.settings.current.authentication.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_DISABLED')
  if (twoFactor === null) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE')
}

/** The method a right code belongs to, or `null`. Six digits go to the primary method; anything else is a backup code. */
async function checkCode (twoFactor: TwoFactor, userId: number, challengeId: string, method: TwoFactorMethod, code: string): Promise<TwoFactorMethod | null> {
  if (method !== 'backup_codes' && SIX_DIGITS.test(code)) {
    const right = method === 'totp'
      ? await twoFactor.totp.accept(userId, await twoFactor.port.getTotpSecret(userId), code)
      : await (twoFactor.email as EmailCodeProvider).accept(challengeId, code)
    return right ? method : null
  }
  return await twoFactor.backup.accept(userId, code) ? 'backup_codes' : null
}

/**
 * `POST /auth/2fa`: the interim token and a code for the final token. Every
 * attempt is counted on the challenge before the code is looked at, so even
 * concurrent guesses never exceed the limit; failures also count per account.
 */
export async function completeTwoFactor (
  ctx: JwtLoginContext,
  twoFactor: TwoFactor,
  token: string | undefined,
  code: string | undefined,
  ip: string
): Promise<{ jwt: string, refresh_token?: string }> {
  if (token === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING')
  if (code === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING')
  let claims
  try {
    claims = ctx.tokens.verify(token, 'interim').payload
  } catch (error) {
    throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', { cause: error })
  }
  await ctx.tokens.checkRevoked(claims)
  const userId = Number(claims.sub)
  const user = await ctx.users.findById(userId)
  if (user === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_USER_GONE')

  const settings = ctx.settings.current.twoFactor
  const account: Counted = { key: subjectKey('2fa:account', String(userId)), limit: settings.perAccount }
  await ctx.limiter.assertOpen([account], 'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED')

  const key = challengeKey(userId, claims.sid)
  const raw = await ctx.store.get(key)
  if (raw === null) throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
  const { count: attempt } = await ctx.store.increment(attemptsKey(claims.sid), settings.interimLifetimeMs)
  if (attempt > settings.attemptsPerChallenge) throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')

  const challenge = JSON.parse(raw) as ChallengeRecord
  const method = await checkCode(twoFactor, userId, claims.sid, challenge.method, code)
  if (method === null) {
    ctx.events.emit('two_factor.code_rejected', { userId, ip, attempt })
    if (await ctx.limiter.fail([account])) ctx.events.emit('two_factor.account_locked', { userId, ip })
    if (attempt >= settings.attemptsPerChallenge) {
      await ctx.store.delete(key)
      ctx.events.emit('two_factor.challenge_closed', { userId, ip })
      throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
    }
    throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG')
  }

  // of concurrent right answers on one challenge, one consume wins
  if (await ctx.store.consume(key) === null) throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
  await ctx.limiter.reset(account)
  const session = await issueSession(ctx, ctx.users.toPublicUser(user))
  ctx.events.emit('two_factor.code_accepted', { userId, method, ip })
  return session
}

/**
 * Refuses an interim token offered where a final token or a refresh token
 * belongs (401 / 110). Anything else is left to the route's own checks.
 */
export function refuseInterimToken (ctx: JwtLoginContext, value: string | undefined): void {
  if (value === undefined || value.split('.').length !== 3) return
  try {
    ctx.tokens.verify(value, 'interim')
  } catch {
    return
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_USED')
}
