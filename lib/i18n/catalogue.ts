/**
 * What a language's catalogue holds: a message for every error code, the
 * phrases that name a malformed field, the messages of successful answers
 * and the plugin's two mails. Error codes, statuses and the envelope never
 * change with the language; only these texts do.
 */
import type { FieldDetail, JwtLoginErrorCode } from '../core/errors.js'

/** A mail: each part may hold `{{placeholder}}`s. */
export interface MailText {
  subject: string
  text: string
  html: string
}

/** Where a malformed field sits, as the schema check reports it. */
export type FieldPlace = FieldDetail['place']

/** The messages of successful answers that carry one. */
export type SuccessMessage =
  | 'tokenRevoked'
  | 'sessionEnded'
  | 'everySessionEnded'
  | 'everyOtherSessionEnded'
  | 'deviceForgotten'
  | 'loggedOut'
  | 'passkeyRenamed'
  | 'passkeyDeleted'
  | 'resetRequested'
  | 'passwordChanged'
  | 'userCreated'
  | 'userDeleted'
  | 'verificationSent'
  | 'emailVerified'
  | 'accountPasswordChanged'
  | 'emailChangeSent'
  | 'emailChanged'
  | 'emailReverted'
  | 'twoFactorMethodChanged'
  | 'twoFactorDisabled'
  | 'emailSignInSent'
  | 'identityLinked'
  | 'identityUnlinked'

/** The plugin's mails. */
export type MailName = 'reset' | 'emailCode' | 'verifyEmail' | 'emailChange' | 'emailChanged' | 'passwordChanged' | 'emailSignIn' | 'emailSignInLink'

export interface Catalogue {
  /** Every error code's message: one sentence, ending in a full stop. */
  errors: Record<JwtLoginErrorCode, string>
  /**
   * How the 400 / 203 answer names a malformed field: `{{field}}` is its
   * path (`username`, `device.name`), `{{reason}}` the schema check's own
   * words, in English (optional: a language may leave it out).
   */
  fields: Record<FieldPlace, string>
  messages: Record<SuccessMessage, string>
  mails: Record<MailName, MailText>
}

/** The placeholders the code fills, per part of a catalogue: any other is a mistake. */
export const PLACEHOLDERS = {
  errors: [],
  fields: ['field', 'reason'],
  messages: [],
  mails: {
    reset: ['code', 'display_name', 'email', 'site_name', 'expires_in_minutes'],
    emailCode: ['code', 'minutes', 'site_name'],
    verifyEmail: ['code', 'display_name', 'email', 'site_name', 'expires_in_minutes'],
    emailChange: ['code', 'display_name', 'email', 'site_name', 'expires_in_minutes'],
    emailChanged: ['code', 'display_name', 'email', 'site_name', 'expires_in_days'],
    passwordChanged: ['display_name', 'email', 'site_name'],
    emailSignIn: ['code', 'email', 'site_name', 'expires_in_minutes'],
    emailSignInLink: ['code', 'email', 'site_name', 'expires_in_minutes', 'link']
  }
} as const satisfies { errors: readonly string[], fields: readonly string[], messages: readonly string[], mails: Record<MailName, readonly string[]> }
