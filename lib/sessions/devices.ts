// Trusted devices as the flows use them: trusted after a second factor, standing in for it on a password sign-in, listed and forgotten.
import type { Call, SecondFactorPassed, SessionOrigin } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { JwtLoginContext } from '../context/context.js'
import type { AccountEndReason } from '../services/events.js'
import { JwtLoginError } from '../core/errors.js'
import type { TrustedDevice } from '../tokens/trusted-devices.js'

/** The user's trusted devices (not expired, not ended by a cutoff). */
export async function listDevices (ctx: JwtLoginContext, userId: number): Promise<TrustedDevice[]> {
  return await ctx.tokens.devices.list(userId)
}

/** Forgets one of the user's own devices; another user's, or an unknown one, is 404 / 214 and changes nothing. */
export async function forgetOwnDevice (ctx: JwtLoginContext, userId: number, deviceId: string): Promise<void> {
  if (!await ctx.tokens.devices.forget(userId, deviceId)) throw new JwtLoginError('ERR_JWT_LOGIN_DEVICE_NOT_FOUND')
  ctx.events.emit('device.forgotten', { userId, deviceId, reason: 'user' })
}

/**
 * Trusts the device of a sign-in whose second factor was just spent, when
 * the client asked and `twoFactor.rememberDevice` is on; answers its token.
 * The device is dated from when the sign-in started (`signedInAt`), as its
 * session is, so a cutoff between the two steps ends both.
 * Never throws (nothing may fail after a spend): a failure is logged and the
 * sign-in answers without a device token.
 */
export async function trustDevice (ctx: JwtLoginContext, call: Call, userId: number, signedInAt: number): Promise<string | undefined> {
  const remember = call.settings.twoFactor.rememberDevice
  try {
    const trusted = await ctx.tokens.devices.trust({ userId, trustedAt: signedInAt, lifetimeMs: remember.lifetimeMs, max: remember.maxPerUser, ip: call.ip, userAgent: call.userAgent })
    ctx.events.emit('device.trusted', { userId, deviceId: trusted.deviceId, ip: call.ip })
    for (const deviceId of trusted.dropped) ctx.events.emit('device.forgotten', { userId, deviceId, reason: 'limit' })
    return trusted.token
  } catch (error) {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the device could not be trusted; the sign-in answered without a device token')
    return undefined
  }
}

/**
 * A device token presented on a password sign-in, for a user whose second
 * factor is asked: a trusted device of this user stands in for it, and its
 * rotated token goes into the answer; anything else (no token, switched
 * off, a provider sign-in, another user's, expired, ended) is `null`, and
 * the second factor is asked as usual.
 */
export async function deviceStandsIn (ctx: Pick<JwtLoginContext, 'tokens'>, call: Call, userId: number, firstFactor: SessionOrigin['method']): Promise<SecondFactorPassed | null> {
  if (call.deviceToken === undefined || firstFactor !== 'password' || !call.settings.twoFactor.rememberDevice.enabled) return null
  const used = await ctx.tokens.devices.use(userId, call.deviceToken)
  return used === null ? null : { passed: 'trusted_device', answer: { device_token: used.token }, giveBack: used.giveBack }
}

/** Forgets every trusted device of a user, for the host after a change of the user's second factor. */
export async function forgetDevices (ctx: JwtLoginContext, userId: number, reason: 'host' | 'sign_out_everywhere' | 'password_reset' | 'user_deleted' | AccountEndReason): Promise<void> {
  await ctx.tokens.devices.forgetAll(userId)
  ctx.events.emit('device.forgotten', { userId, deviceId: null, reason })
}
