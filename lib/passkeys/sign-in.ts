// Passwordless sign-in with a discoverable passkey: the options without a username, then the assertion for a session (or a two-factor challenge).
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { Call, SessionOrigin, SignInResult } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import { loggedError } from '../adapters/guard.js'
import { completeSignIn } from '../sessions/sign-in.js'
import { passkeysOn } from '../webauthn/ceremonies.js'

/** A passkey verified with its user's PIN or biometrics: two factors in one. */
const VERIFIED_PASSKEY: SessionOrigin = Object.freeze({ method: 'passkey', secondFactor: 'user_verification' })
/** A passkey without user verification: one factor, like a password. */
const PASSKEY: SessionOrigin = Object.freeze({ method: 'passkey' })

/** `POST /auth/passkey/options`: request options without credentials (the authenticator offers the user's own); the challenge is good for one sign-in. */
export async function passkeySignInOptions (ctx: JwtLoginContext, call: Call): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return await passkeysOn(ctx.passkeys, call.settings).authenticationOptions(call.settings, 'sign_in', null)
}

/**
 * `POST /auth/passkey`: the assertion, verified (its challenge spent
 * first), finds its user by the credential; the sign-in ends as a
 * password's does, then the use is recorded (best effort: a failure is
 * logged, the sign-in stands). A passkey verified with user
 * verification counts as two factors (no challenge); without it, a user
 * with a second factor gets the interim token, never a final token on one
 * factor. An unknown credential, a bad signature and a user gone all
 * answer 401 / 216; a locked user's passkey, 403 / 251 (its challenge is
 * spent: the next try asks for new options).
 */
export async function passkeySignIn (ctx: JwtLoginContext, call: Call, credential: AuthenticationResponseJSON): Promise<SignInResult> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  let verified
  let user: unknown
  try {
    verified = await passkeys.verifyAssertion(call.settings, credential, 'sign_in')
    user = await ctx.users.findById(verified.passkey.userId)
    if (user === null) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
  } catch (error) {
    if (error instanceof JwtLoginError && error.statusCode !== 503) {
      ctx.events.emit('login.failed', { ip: call.ip, reason: 'passkey', errorCode: error.errorCode })
    }
    throw error
  }
  let result: SignInResult
  try {
    result = await completeSignIn(ctx, call, user, call.startedAt, verified.userVerified ? VERIFIED_PASSKEY : PASSKEY)
  } catch (error) {
    // a locked user (`lockUser`): a refused sign-in like a refused passkey, and its use is not recorded
    if ((error as JwtLoginError).code === 'ERR_JWT_LOGIN_USER_LOCKED') ctx.events.emit('login.failed', { ip: call.ip, reason: 'locked', errorCode: errorNumber('ERR_JWT_LOGIN_USER_LOCKED') })
    throw error
  }
  // recorded once the sign-in went through (a refused one, 429 or 403, uses nothing); nothing may fail the answer now
  await passkeys.port.recordUse(verified.passkey.id, verified.use).catch((error: unknown) => {
    ctx.log.warn({ userId: verified.passkey.userId, err: loggedError(error) }, 'jwt-login: a passkey\'s use (counter, backup state) could not be recorded; the next use records it')
  })
  if (!('two_factor_required' in result)) ctx.events.emit('login.succeeded', { userId: verified.passkey.userId, ip: call.ip, method: 'passkey' })
  return result
}
