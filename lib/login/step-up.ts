// Step-up: the user of a live session authenticates again (password, code or passkey) for a fresh access token of the same session.
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import type { Reservable } from '../services/limits.js'
import type { Authenticated } from '../sessions/authenticate.js'
import { accountAttempts, checkCode, spendChecked } from '../two-factor/methods/check.js'
import { accountSubject } from './flow.js'
import { passkeysOn } from '../webauthn/ceremonies.js'

/** `POST /auth/step-up` as the route read it: one factor, or the password and a code. */
export interface StepUpInput {
  password: string | undefined
  /** A TOTP code or a backup code (an emailed code would need a mail first: not offered). */
  code: string | undefined
  passkey: AuthenticationResponseJSON | undefined
}

/** A factor that passed: how the session's event names it, and its `amr`. */
interface Passed { method: string, amr: string[] }

/** `POST /auth/step-up/options`: request options for the token's user's passkeys, the challenge bound to the token's session. */
export async function stepUpOptions (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  const held = await passkeys.port.listByUser(auth.publicUser.ID)
  if (held.length === 0) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_NOT_FOUND')
  return await passkeys.authenticationOptions(call.settings, 'step_up', held, { userId: auth.publicUser.ID, sessionId: auth.verified.payload.sid })
}

/**
 * `POST /auth/step-up`: with a valid access token and one factor (or the
 * password and a code: two), a fresh access token of the same session whose
 * `auth_time` is now and whose `amr` names the factors. No new session, no new refresh family; a later refresh
 * answers tokens of the session's sign-in again (a step-up is for the
 * action at hand). Passwords and codes are counted as at sign-in, per
 * account, before they are checked.
 */
export async function stepUp (ctx: JwtLoginContext, call: Call, auth: Authenticated, input: StepUpInput): Promise<{ jwt: string }> {
  const { password, code, passkey } = input
  const given = [password, code, passkey].filter(value => value !== undefined).length
  // one factor, or the password with a code (two factors: `mfa`)
  if (given === 0 || (given === 2 && passkey !== undefined) || given === 3) throw new JwtLoginError('ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING')
  const passed = passkey !== undefined
    ? await checkPasskey(ctx, call, auth, passkey)
    : await checkFactors(ctx, call, auth, password, code)
  const { sid, pfp } = auth.verified.payload
  const { token } = ctx.tokens.sign(call.settings, auth.publicUser, 'access', { sessionId: sid, auth: { at: ctx.clock(), methods: passed.amr }, fingerprint: pfp })
  ctx.events.emit('session.stepped_up', { userId: auth.publicUser.ID, sessionId: sid, method: passed.method, ip: call.ip })
  return { jwt: token }
}

/** The password, the code, or the password then the code (each counted on its own limit; the code is not looked at after a wrong password). */
async function checkFactors (ctx: JwtLoginContext, call: Call, auth: Authenticated, password: string | undefined, code: string | undefined): Promise<Passed> {
  const first = password === undefined ? null : await checkPassword(ctx, call, auth, password)
  const second = code === undefined ? null : await checkSecondFactor(ctx, call, auth, code)
  if (first === null) return second as Passed
  if (second === null) return first
  return { method: `password+${second.method}`, amr: ['pwd', 'otp', 'mfa'] }
}

/** Runs `check` counted on `subject`: a refusal stays counted, a success clears the count, a check that did not run is given back. */
async function counted (ctx: JwtLoginContext, subject: Reservable, locked: 'ERR_JWT_LOGIN_RATE_LIMITED' | 'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', check: () => Promise<boolean>): Promise<boolean> {
  const reservation = await ctx.limiter.reserve([subject])
  if (!reservation.ok) throw new JwtLoginError(locked, { retryAfter: reservation.retryAfter })
  let ok: boolean
  try {
    ok = await check()
  } catch (error) {
    await ctx.limiter.release(reservation.holds)
    throw error
  }
  await (ok ? ctx.limiter.succeeded(reservation.holds) : ctx.limiter.failed(reservation.holds))
  return ok
}

/** The password, counted on the account's login limit (the sign-in's own counter, `limits.loginPerAccount`); wrong is 401 / 48 as at sign-in. */
async function checkPassword (ctx: JwtLoginContext, call: Call, auth: Authenticated, password: string): Promise<Passed> {
  const subject = accountSubject(auth.publicUser.ID, call.settings.limits.loginPerAccount)
  if (!await counted(ctx, subject, 'ERR_JWT_LOGIN_RATE_LIMITED', async () => await ctx.users.verifyPassword(auth.user, password))) {
    throw new JwtLoginError('ERR_JWT_LOGIN_WRONG_CREDENTIALS')
  }
  return { method: 'password', amr: ['pwd'] }
}

/** A TOTP code (six digits) or a backup code, spent once, counted on the account's second-step limit; wrong is 401 / 109. */
async function checkSecondFactor (ctx: JwtLoginContext, call: Call, auth: Authenticated, code: string): Promise<Passed> {
  const { twoFactor } = ctx
  if (twoFactor === null || !call.settings.twoFactor.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE')
  const userId = auth.publicUser.ID
  const subject = accountAttempts(userId, call.settings.twoFactor)
  // the claim names this step-up, so a host's retry of a backup code after a lost answer finds it spent by itself;
  // six digits are a TOTP code (an emailed code would need a mail first), anything else a backup code
  const claim = ctx.tokens.newSessionId()
  let method = 'totp'
  const ok = await counted(ctx, subject, 'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', async () => {
    const checked = await checkCode(twoFactor, call.settings.tokens, userId, claim, 'totp', code)
    if (checked === null) return false
    method = checked.method
    return await spendChecked(checked)
  })
  if (!ok) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG')
  return { method, amr: ['otp'] }
}

/**
 * A passkey's assertion for the options of `/auth/step-up/options` (this
 * session's challenge): verified, its use recorded, then its challenge
 * spent, so a port that fails spends nothing and the same answer's retry
 * goes through; of concurrent copies, one spends it. Refused is 401 / 216.
 */
async function checkPasskey (ctx: JwtLoginContext, call: Call, auth: Authenticated, response: AuthenticationResponseJSON): Promise<Passed> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  const verified = await passkeys.verifyUnspent(call.settings, response, 'step_up', { userId: auth.publicUser.ID, sessionId: auth.verified.payload.sid })
  await passkeys.port.recordUse(verified.passkey.id, verified.use)
  if (!await verified.spend()) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
  return { method: 'passkey', amr: verified.userVerified ? ['hwk', 'user', 'mfa'] : ['hwk'] }
}
