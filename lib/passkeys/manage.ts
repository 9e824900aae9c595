// A user's own passkeys: enrol one (after a recent sign-in), list, rename and delete them.
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { Call } from '../adapters/second-factor.js'
import type { StoredPasskey } from '../adapters/passkeys.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import { passkeysOn } from '../webauthn/ceremonies.js'

/** The name of a passkey enrolled without one. */
const DEFAULT_NAME = 'Passkey'

/** The `amr` values of a factor beyond the password: a code, a passkey, or two factors. */
const BEYOND_PASSWORD = ['otp', 'hwk', 'mfa']

/**
 * The ceremonies, and the token's sign-in (or step-up) no older than
 * `passkeys.recentAuth`, so a stolen access token alone cannot plant or
 * remove a passkey. For a user with a second factor, that authentication
 * must have been more than the password (a code, a passkey, or both
 * factors): a passkey verified with its user counts as two factors later,
 * so whoever holds only the password must not enrol one (401 / 220).
 */
async function recentlySignedIn (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<NonNullable<JwtLoginContext['passkeys']>> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  const claims = auth.verified.payload
  requireRecentAuth(claims, call.settings.passkeys.recentAuthMs, ctx.clock())
  const strong = claims.amr?.some(method => BEYOND_PASSWORD.includes(method)) === true
  if (!strong && ctx.twoFactor !== null && await ctx.twoFactor.port.methodOf(auth.publicUser.ID, auth.user) !== null) {
    throw new JwtLoginError('ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED')
  }
  return passkeys
}

/** Refuses one more passkey beyond `passkeys.maxPerUser` (409 / 223). */
function checkRoom (call: Call, held: StoredPasskey[]): void {
  if (held.length >= call.settings.passkeys.maxPerUser) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_LIMIT')
}

/** `POST /passkeys/register/options`: creation options for a new passkey of the token's user, its challenge bound to the token's session. */
export async function registrationOptions (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const passkeys = await recentlySignedIn(ctx, call, auth)
  const held = await passkeys.port.listByUser(auth.publicUser.ID)
  checkRoom(call, held)
  return await passkeys.registrationOptions(call.settings, auth.publicUser, held, auth.verified.payload.sid)
}

/**
 * `POST /passkeys/register`: the new credential, verified against the
 * challenge its options gave this session (spent first), then stored
 * through the port. A credential id registered already (by anyone) is
 * 409 / 222; the bound is checked again, as options may be asked twice.
 */
export async function registerPasskey (ctx: JwtLoginContext, call: Call, auth: Authenticated, credential: RegistrationResponseJSON, name: string | undefined): Promise<StoredPasskey> {
  const passkeys = await recentlySignedIn(ctx, call, auth)
  const userId = auth.publicUser.ID
  const passkey = await passkeys.verifyRegistration(call.settings, credential, { userId, sessionId: auth.verified.payload.sid }, name ?? DEFAULT_NAME)
  checkRoom(call, await passkeys.port.listByUser(userId))
  if (!await passkeys.port.create(passkey)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_EXISTS')
  ctx.events.emit('passkey.registered', { userId, passkeyId: passkey.id, ip: call.ip })
  return passkey
}

/** `GET /passkeys`: the token's user's passkeys, oldest first. */
export async function listPasskeys (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<StoredPasskey[]> {
  return await passkeysOn(ctx.passkeys, call.settings).port.listByUser(auth.publicUser.ID)
}

/** `PATCH /passkeys/{id}`: renames one of the user's passkeys; another's or an unknown one is 404 / 219. */
export async function renamePasskey (ctx: JwtLoginContext, call: Call, auth: Authenticated, id: string, name: string): Promise<void> {
  const userId = auth.publicUser.ID
  if (!await passkeysOn(ctx.passkeys, call.settings).port.rename(userId, id, name)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_NOT_FOUND')
  ctx.events.emit('passkey.renamed', { userId, passkeyId: id, ip: call.ip })
}

/** `DELETE /passkeys/{id}`: after a recent sign-in, deletes one of the user's passkeys; another's or an unknown one is 404 / 219. */
export async function deletePasskey (ctx: JwtLoginContext, call: Call, auth: Authenticated, id: string): Promise<void> {
  const userId = auth.publicUser.ID
  if (!await (await recentlySignedIn(ctx, call, auth)).port.delete(userId, id)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_NOT_FOUND')
  ctx.events.emit('passkey.deleted', { userId, passkeyId: id, ip: call.ip })
}
