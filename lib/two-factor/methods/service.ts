// The two-factor module: the host's port with the three methods' providers and the enrolment helpers, built once at registration.
import type { TwoFactorEnrollment, TwoFactorOptions, TwoFactorPort } from '../../adapters/two-factor.js'
import type { Clock } from '../../core/clock.js'
import type { StateStore } from '../../store/types.js'
import { BackupCodeProvider } from './backup-codes.js'
import { EmailCodeProvider } from './email-code.js'
import { createTotpSecret, TotpProvider } from './totp.js'

/** The two-factor port with its providers. */
export interface TwoFactor {
  port: TwoFactorPort
  totp: TotpProvider
  email: EmailCodeProvider | null
  backup: BackupCodeProvider
  enrollment: TwoFactorEnrollment
}

/**
 * Builds the providers over the state store. `secretChanging` runs once a
 * new TOTP secret's first code was right, before the secret is stored: the
 * devices trusted under the old one are forgotten there.
 */
export function createTwoFactor (store: StateStore, clock: Clock, options: TwoFactorOptions, secretChanging: (userId: number) => Promise<void>): TwoFactor {
  const issuer = options.issuer ?? 'jwt-login'
  const totp = new TotpProvider(store, clock)
  const backup = new BackupCodeProvider(options.port, store)
  return {
    port: options.port,
    totp,
    email: options.mailer === undefined ? null : new EmailCodeProvider(store, options.mailer),
    backup,
    enrollment: {
      createTotpSecret: (label) => createTotpSecret(issuer, label),
      confirmTotp: async (userId, secret, code) => {
        if (!await totp.accept(userId, secret, code)) return false
        // first: a failure here stores no secret (nothing half changed); the next code confirms again
        await secretChanging(userId)
        await options.port.setTotpSecret(userId, secret)
        return true
      },
      regenerateBackupCodes: async (userId) => await backup.regenerate(userId)
    }
  }
}
