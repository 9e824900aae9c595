// What the account settings need of the options: refused at registration and on every reload, naming the fix.
import type { TwoFactorOptions } from '../adapters/two-factor.js'
import type { UserAdapter } from '../adapters/users.js'
import { provides, requireCapability, TWO_FACTOR_PORT_MANIFEST, USER_ADAPTER_MANIFEST } from '../adapters/manifest.js'
import type { Settings } from '../config/settings.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import type { Mailer } from '../mail/types.js'

/** The options the account settings look at. */
export interface AccountEquipment {
  users: UserAdapter<any>
  mailer?: Mailer
  twoFactor?: TwoFactorOptions
}

const has = (users: UserAdapter<any>, name: string): boolean => provides(USER_ADAPTER_MANIFEST, users, name)

/** Each setting that needs a method of the user adapter or the mailer: the first unmet one is refused. */
function needs (settings: Settings): Array<[path: string, on: boolean, capability: string, what: string]> {
  const { account, users, authentication, emailSignIn } = settings
  return [
    ['emailSignIn/enabled', emailSignIn.enabled, 'mailer', 'sign-in by email'],
    ['emailSignIn/register', emailSignIn.enabled && emailSignIn.register, 'createUser', 'registering the new users of sign-in by email'],
    ['account/enabled', account.enabled, 'setEmailVerified', 'the account routes verify emails'],
    ['account/enabled', account.enabled, 'mailer', 'the account routes mail codes and notices'],
    ['account/password/enabled', account.enabled && account.password.enabled, 'setPassword', 'changing the password'],
    ['account/email/enabled', account.enabled && account.email.enabled, 'setEmail', 'changing the email'],
    ['users/register/verifyEmail', users.register.verifyEmail, 'setEmailVerified', 'verifying the email of a new user'],
    ['users/register/verifyEmail', users.register.verifyEmail, 'mailer', 'mailing the new user a code'],
    ['authentication/requireVerifiedEmail', authentication.requireVerifiedEmail, 'setEmailVerified', 'requiring a verified email'],
    ['authentication/requireVerifiedEmail', authentication.requireVerifiedEmail, 'mailer', 'requiring a verified email (its code goes by mail)']
  ]
}

/**
 * Refuses account settings the options cannot serve, and registration
 * beside a provider that matches accounts by email on an adapter that
 * cannot record verification: anyone could register someone else's
 * address, and its owner's provider sign-in would land in that account.
 */
export function checkAccountSetup (settings: Settings, options: AccountEquipment): void {
  for (const [path, on, method, what] of needs(settings)) {
    if (!on) continue
    if (method === 'mailer' && options.mailer === undefined) throw new JwtLoginSettingsError(path, `${what} needs the \`mailer\` option`)
    if (method !== 'mailer') requireCapability(USER_ADAPTER_MANIFEST, options.users, method, path, what)
  }
  const { account } = settings
  if (account.enabled && account.twoFactor.enabled && options.twoFactor !== undefined) {
    requireCapability(TWO_FACTOR_PORT_MANIFEST, options.twoFactor.port, 'setMethod', 'account/twoFactor/enabled', 'the account\'s two-factor routes', 'turn account.twoFactor.enabled off, or add it (docs/two-factor.md)')
  }
  checkEmailSignInSetup(settings, options.users)
  const matching = Object.entries(settings.oauth.providers).find(([, provider]) => provider.enabled)
  if (settings.users.register.enabled && matching !== undefined) {
    requireCapability(USER_ADAPTER_MANIFEST, options.users, 'setEmailVerified', 'users/register/enabled', `registration beside provider sign-in (oauth.providers.${matching[0]})`,
      'a provider signs in the account its email finds, so an account registered with someone else\'s address must be known as unverified (docs/account.md#no-pre-hijack)')
  }
}

/**
 * Sign-in by email signs in the account its address finds, as a provider
 * does: beside registration by password, the adapter must record which
 * addresses were never proven; and an account whose address was never
 * proven gets its password retired at its first sign-in by email (whoever
 * registered the address must not keep it), which needs `setPassword`.
 */
function checkEmailSignInSetup ({ emailSignIn, users }: Settings, adapter: UserAdapter<any>): void {
  if (!emailSignIn.enabled) return
  if (users.register.enabled) {
    requireCapability(USER_ADAPTER_MANIFEST, adapter, 'setEmailVerified', 'users/register/enabled', 'registration beside sign-in by email',
      'a code signs in the account its address finds, so an account registered with someone else\'s address must be known as unverified (docs/account.md#no-pre-hijack)')
  }
  if (has(adapter, 'setEmailVerified')) {
    requireCapability(USER_ADAPTER_MANIFEST, adapter, 'setPassword', 'emailSignIn/enabled', 'sign-in by email',
      'it retires the password of an account whose address was never verified (docs/email-sign-in.md)')
  }
}
