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

/** Builds the providers over the state store. */
export function createTwoFactor (store: StateStore, clock: Clock, options: TwoFactorOptions): TwoFactor {
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
        await options.port.setTotpSecret(userId, secret)
        return true
      },
      regenerateBackupCodes: async (userId) => await backup.regenerate(userId)
    }
  }
}
