// A second-factor code checked against the user's methods, without spending it: one place for the second step and for step-up.
import type { TwoFactorMethod } from '../../adapters/two-factor.js'
import type { Settings } from '../../config/settings.js'
import { subjectKey, type Reservable } from '../../services/limits.js'
import { hashBackupCode } from './backup-codes.js'
import { emailCodeKey } from './email-code.js'
import { totpKeys } from './totp.js'
import type { TwoFactor } from './service.js'

const SIX_DIGITS = /^\d{6}$/

/** The count of wrong codes per account (`twoFactor.perAccount`), across challenges and step-ups; a success clears it. */
export function accountAttempts (userId: number, settings: Settings['twoFactor']): Reservable {
  return { key: subjectKey('2fa:account', String(userId)), limit: settings.perAccount, onSuccess: 'reset' }
}

/**
 * A code checked without spending anything: wrong (`null`), or the method it
 * belongs to with `spend`, which spends the factor (once the caller's own
 * single-use step is won). A backup code can only be checked by spending it.
 */
export interface CheckedCode {
  method: TwoFactorMethod
  /** Whether the code is known to be right (a backup code is known only once spent). */
  right: boolean
  /** A first step of spending, to run before `spend`, beside the caller's own claim (a backup code's claim in the store); `false`: the code is taken. */
  claim?: () => Promise<boolean>
  spend: () => Promise<boolean>
}

/** Spends a checked code: its claim, when it has one, then the spend. */
export async function spendChecked (checked: CheckedCode): Promise<boolean> {
  return (checked.claim === undefined || await checked.claim()) && await checked.spend()
}

/** What checking a code reads, when the caller read it already: the user's last TOTP step, the challenge's emailed code. */
export interface KnownCodeState {
  totpLast?: string | null
  emailCode?: string | null
}

/** The keys of `KnownCodeState`, in its order, for a caller that reads them along with its own. */
export function codeStateKeys (userId: number, challengeId: string): [string, string] {
  return [totpKeys.lastStep(userId), emailCodeKey(challengeId)]
}

/**
 * Six digits go to the primary `method` (TOTP, or the email code of the
 * challenge `claimant`); anything else is a backup code. `claimant` names
 * the attempt: a TOTP step and a backup code are spent under it.
 */
export async function checkCode (twoFactor: TwoFactor, tokens: Settings['tokens'], userId: number, claimant: string, method: TwoFactorMethod, code: string, known: KnownCodeState = {}): Promise<CheckedCode | null> {
  if (method === 'totp' && SIX_DIGITS.test(code)) {
    const step = await twoFactor.totp.match(userId, await twoFactor.port.getTotpSecret(userId), code, known.totpLast)
    return step === null ? null : { method, right: true, spend: async () => await twoFactor.totp.claim(userId, step, claimant) }
  }
  if (method === 'email' && SIX_DIGITS.test(code)) {
    const email = twoFactor.email
    // no mailer: no code was ever mailed (a challenge after sign-in by email mails none either)
    if (email === null) return null
    // the challenge's consume is the single use of an email code: spending it is only tidying up
    return await email.check(tokens, claimant, code, known.emailCode) ? { method, right: true, spend: async () => { await email.discard(claimant); return true } } : null
  }
  // a string that cannot be a backup code is wrong without asking the host
  const hash = hashBackupCode(code)
  if (hash === null) return null
  return {
    method: 'backup_codes',
    right: false,
    claim: async () => await twoFactor.backup.claim(userId, hash, claimant),
    spend: async () => await twoFactor.backup.consume(userId, hash, claimant)
  }
}
