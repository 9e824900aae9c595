// The second factor from the account: TOTP enrolment (a pending secret until its first code), backup codes, the primary method, turning it off.
import QRCode from 'qrcode'
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { TwoFactorMethod, TwoFactorPort } from '../adapters/two-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import type { TwoFactor } from '../two-factor/methods/service.js'

/** How long a new TOTP secret waits for its first code. */
export const PENDING_TOTP_MS = 10 * 60 * 1000

/** The `amr` values of a factor beyond the password: a code, a passkey, or two factors. */
const BEYOND_PASSWORD = ['otp', 'hwk', 'mfa']

const pendingKey = (userId: number): string => `account:totp-pending:${userId}`

/** The module and the port's optional methods, present (the route's switch needs the `twoFactor` option; registration checks `setMethod`). */
function moduleOf (ctx: JwtLoginContext): TwoFactor & { port: Required<TwoFactorPort> } {
  return ctx.twoFactor as TwoFactor & { port: Required<TwoFactorPort> }
}

/**
 * A sign-in (or step-up) within `account.recentAuth`; when the user has a
 * second factor on, one that was more than the password (a code, a
 * passkey, both factors): a stolen session or a password alone cannot
 * replace or remove the second factor. Answers the current method.
 */
async function recentEnough (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<TwoFactorMethod | null> {
  const claims = auth.verified.payload
  requireRecentAuth(claims, call.settings.account.recentAuthMs, ctx.clock())
  const method = await moduleOf(ctx).port.methodOf(auth.publicUser.ID, auth.user)
  if (method !== null && claims.amr?.some(value => BEYOND_PASSWORD.includes(value)) !== true) throw new JwtLoginError('ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED')
  return method
}

export interface PendingTotp { secret: string, otpauth_uri: string, qr_svg: string }

/**
 * `POST /account/2fa/totp`: a new secret, kept in the state store for 10
 * minutes until `confirmTotp`; an existing secret keeps working until then.
 * The QR code is an SVG of the `otpauth://` URI, which holds the secret:
 * the answer is `no-store`.
 */
export async function startTotp (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<PendingTotp> {
  await recentEnough(ctx, call, auth)
  const { secret, uri } = moduleOf(ctx).enrollment.createTotpSecret(auth.publicUser.user_email)
  await ctx.store.set(pendingKey(auth.publicUser.ID), secret, PENDING_TOTP_MS)
  return { secret, otpauth_uri: uri, qr_svg: await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }) }
}

/**
 * `POST /account/2fa/totp/confirm`: a code of the pending secret (spent, so
 * it signs nobody in). A wrong code stores nothing (400 / 239); no pending
 * secret is 409 / 240. Right: the secret replaces any earlier one (trusted
 * devices are forgotten), TOTP becomes the primary method when there was
 * none, and a user without unused backup codes gets 10, shown once. A
 * failure after the secret was stored answers 503 with the secret kept (the
 * code is spent): the retry with the next code finds the secret stored and
 * answers new backup codes, so none stays unseen.
 */
export async function confirmTotp (ctx: JwtLoginContext, call: Call, auth: Authenticated, code: string): Promise<{ backupCodes: string[] | null }> {
  const userId = auth.publicUser.ID
  const twoFactor = moduleOf(ctx)
  const secret = await ctx.store.get(pendingKey(userId))
  if (secret === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOTP_NOT_PENDING')
  // the host holds this very secret already: an earlier confirmation of it failed after storing it, and no answer showed codes
  const retried = await twoFactor.port.getTotpSecret(userId) === secret
  if (!await twoFactor.enrollment.confirmTotp(userId, secret, code)) throw new JwtLoginError('ERR_JWT_LOGIN_TOTP_CODE_WRONG')
  const method = await twoFactor.port.methodOf(userId, auth.user)
  if (method === null) await twoFactor.port.setMethod(userId, 'totp')
  const left = twoFactor.port.countBackupCodes === undefined ? (method === null ? 0 : 1) : await twoFactor.port.countBackupCodes(userId)
  const backupCodes = left === 0 || retried ? await twoFactor.enrollment.regenerateBackupCodes(userId) : null
  // the enrolment is done: a pending secret left behind expires on its own and confirms nothing new
  await ctx.store.delete(pendingKey(userId)).catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: a confirmed TOTP secret could not leave the pending state; it expires in 10 minutes')
  })
  ctx.events.emit('two_factor.totp_changed', { userId, ip: call.ip })
  if (method === null) ctx.events.emit('two_factor.enabled', { userId, method: 'totp', ip: call.ip })
  return { backupCodes }
}

/** `POST /account/2fa/backup-codes`: 10 new codes, shown once; the old ones stop working. */
export async function newBackupCodes (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<string[]> {
  await recentEnough(ctx, call, auth)
  const codes = await moduleOf(ctx).enrollment.regenerateBackupCodes(auth.publicUser.ID)
  ctx.events.emit('two_factor.backup_codes_regenerated', { userId: auth.publicUser.ID, ip: call.ip })
  return codes
}

/** The methods the user can choose as the primary one: those enrolled, and the email code when a mailer is given. */
export async function availableMethods (ctx: JwtLoginContext, call: Call, userId: number, backupCodesLeft: number | null): Promise<TwoFactorMethod[]> {
  const twoFactor = moduleOf(ctx)
  const passkeysOn = ctx.passkeys !== null && call.settings.passkeys.enabled
  const [secret, passkeys] = await Promise.all([twoFactor.port.getTotpSecret(userId), passkeysOn ? ctx.passkeys?.port.listByUser(userId) : undefined])
  const methods: TwoFactorMethod[] = []
  if (secret !== null) methods.push('totp')
  if (twoFactor.email !== null) methods.push('email')
  if (backupCodesLeft !== null && backupCodesLeft > 0) methods.push('backup_codes')
  if (passkeys !== undefined && passkeys.length > 0) methods.push('passkey')
  return methods
}

/** `PUT /account/2fa`: the primary method, one the user can use (else 400 / 241); turns the second factor on when it was off. */
export async function setPrimaryMethod (ctx: JwtLoginContext, call: Call, auth: Authenticated, method: TwoFactorMethod): Promise<void> {
  const userId = auth.publicUser.ID
  const current = await recentEnough(ctx, call, auth)
  const port = moduleOf(ctx).port
  const left = port.countBackupCodes === undefined ? null : await port.countBackupCodes(userId)
  if (!(await availableMethods(ctx, call, userId, left)).includes(method)) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE')
  await port.setMethod(userId, method)
  ctx.events.emit(current === null ? 'two_factor.enabled' : 'two_factor.method_changed', { userId, method, ip: call.ip })
}

/** `DELETE /account/2fa`: the second factor off, its backup codes gone, every trusted device forgotten. The TOTP secret stays with the host, unused. */
export async function turnOff (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<void> {
  const userId = auth.publicUser.ID
  await recentEnough(ctx, call, auth)
  const port = moduleOf(ctx).port
  await port.setMethod(userId, null)
  await Promise.all([port.replaceBackupCodes(userId, []), ctx.tokens.devices.forgetAll(userId)])
  ctx.events.emit('device.forgotten', { userId, deviceId: null, reason: 'second_factor_changed' })
  ctx.events.emit('two_factor.disabled', { userId, ip: call.ip })
}
