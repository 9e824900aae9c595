/** Settings that could never work with the options the host passed: refused at registration and on every reload. */
import { JwtLoginSettingsError } from '../core/errors.js'
import type { Settings } from './settings.js'

/** What the host passed beside the settings that some settings need. */
export interface Equipment {
  /** The `twoFactor` option is given. */
  twoFactor: boolean
}

/** The settings that need an auth code on each request they gate, and whether each is on. */
function gatedByCodes ({ authCodes, resetPassword, users }: Settings): string[] {
  const gates: Array<[string, boolean]> = [
    ...Object.entries(authCodes.requireFor).map(([name, on]): [string, boolean] => [`authCodes/requireFor/${name}`, on]),
    ['resetPassword/requireAuthCode', resetPassword.enabled && resetPassword.requireAuthCode],
    ['users/register/requireAuthCode', users.register.enabled && users.register.requireAuthCode],
    ['users/delete/requireAuthCode', users.delete.enabled && users.delete.requireAuthCode]
  ]
  return gates.filter(([, on]) => on).map(([path]) => path)
}

/**
 * Refuses settings that switch on what can never succeed: a route gated by
 * auth codes with no code in `authCodes.codes` (every request refused, no
 * sign-in ever), trusted devices without the `twoFactor` option (there is
 * no second factor to skip).
 */
export function checkCoherence (settings: Settings, equipment: Equipment): void {
  const gated = gatedByCodes(settings)
  if (settings.authCodes.codes.length === 0 && gated.length > 0) {
    const names = gated.map(path => path.replaceAll('/', '.')).join(', ')
    throw new JwtLoginSettingsError(gated[0] as string, `needs at least one code in authCodes.codes: with none, every request it gates is refused. Give codes, or turn off ${names}`)
  }
  if (settings.twoFactor.rememberDevice.enabled && !equipment.twoFactor) {
    throw new JwtLoginSettingsError('twoFactor/rememberDevice/enabled', 'trusted devices skip a second factor, which needs the `twoFactor` option ({ port }, docs/two-factor.md): pass it, or turn rememberDevice off')
  }
}

/**
 * A warning for settings that may be meant but often are not: CORS origins
 * with CORS off (a host's own @fastify/cors may read them); `null` when none.
 */
export function settingsWarning ({ cors }: Settings): string | null {
  if (cors.enabled || cors.origins.length === 0) return null
  return 'jwt-login: cors.origins is set but cors.enabled is off, so the plugin answers no preflight and sends no CORS header to those origins: ' +
    'turn cors.enabled on, unless the host\'s own CORS reads these origins (docs/browser-apps.md)'
}
