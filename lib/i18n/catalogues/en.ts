/** English: the error table's own messages, and the texts the plugin has always sent. */
import { errorDefinitions, type JwtLoginErrorCode } from '../../core/errors.js'
import { DEFAULT_RESET_TEMPLATES } from '../../../schemas/mail-templates.js'
import type { Catalogue } from '../catalogue.js'

const errors = Object.fromEntries(Object.entries(errorDefinitions).map(([code, { message }]) => [code, message])) as Record<JwtLoginErrorCode, string>

export const en: Catalogue = {
  errors,
  fields: {
    body: 'body field `{{field}}`: {{reason}}',
    querystring: 'query parameter `{{field}}`: {{reason}}',
    params: 'path parameter `{{field}}`: {{reason}}',
    headers: 'header `{{field}}`: {{reason}}',
    other: 'field `{{field}}`: {{reason}}'
  },
  messages: {
    tokenRevoked: 'Token was revoked.',
    sessionEnded: 'The session was ended.',
    everySessionEnded: 'Every session was ended.',
    everyOtherSessionEnded: 'Every other session was ended.',
    deviceForgotten: 'The device is no longer trusted.',
    loggedOut: 'Logged out.',
    passkeyRenamed: 'The passkey was renamed.',
    passkeyDeleted: 'The passkey was deleted.',
    resetRequested: 'If the email belongs to an account, a reset code has been sent to it.',
    passwordChanged: 'User Password has been changed.',
    userCreated: 'User was successfully created.',
    userDeleted: 'User was successfully deleted.',
    verificationSent: 'If the address belongs to an account that is not verified yet, a code has been sent to it.',
    emailVerified: 'The email address is verified.',
    accountPasswordChanged: 'The password was changed.',
    emailChangeSent: 'A code has been sent to the new address; the email changes once it is entered.',
    emailChanged: 'The email address was changed.',
    emailReverted: 'The email address was put back, and every session was ended.',
    twoFactorMethodChanged: 'The second factor was changed.',
    twoFactorDisabled: 'The second factor is off.',
    emailSignInSent: 'If the address may sign in, a code has been sent to it.',
    identityLinked: 'The provider account is linked.',
    identityUnlinked: 'The provider account is unlinked.'
  },
  mails: {
    reset: DEFAULT_RESET_TEMPLATES,
    emailCode: {
      subject: 'Your sign-in code',
      text: 'Your sign-in code is {{code}}. It is valid for {{minutes}} minutes and works once.\n\nIf you did not try to sign in, change your password.',
      html: '<p>Your sign-in code is <strong>{{code}}</strong>. It is valid for {{minutes}} minutes and works once.</p><p>If you did not try to sign in, change your password.</p>'
    },
    verifyEmail: {
      subject: 'Verify your {{site_name}} email address',
      text: 'Hello {{display_name}},\n\nYour verification code is {{code}}. Enter it to confirm that {{email}} is your address for {{site_name}}. It works once and expires in {{expires_in_minutes}} minutes.\n\nIf you did not create an account, ignore this mail.',
      html: '<p>Hello {{display_name}},</p><p>Your verification code is <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Enter it to confirm that {{email}} is your address for {{site_name}}. It works once and expires in {{expires_in_minutes}} minutes.</p><p>If you did not create an account, ignore this mail.</p>'
    },
    emailChange: {
      subject: 'Confirm your new {{site_name}} email address',
      text: 'Hello {{display_name}},\n\nYour confirmation code is {{code}}. Enter it to make {{email}} the address of your {{site_name}} account. It works once and expires in {{expires_in_minutes}} minutes.\n\nIf you did not ask for this, ignore this mail; nothing changes.',
      html: '<p>Hello {{display_name}},</p><p>Your confirmation code is <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Enter it to make {{email}} the address of your {{site_name}} account. It works once and expires in {{expires_in_minutes}} minutes.</p><p>If you did not ask for this, ignore this mail; nothing changes.</p>'
    },
    emailChanged: {
      subject: 'The email address of your {{site_name}} account was changed',
      text: 'Hello {{display_name}},\n\nThe email address of your {{site_name}} account is no longer {{email}}.\nIf you did not change it, put it back with your revert code: {{code}}\nIt works once within {{expires_in_days}} days, and ends every session of the account.',
      html: '<p>Hello {{display_name}},</p><p>The email address of your {{site_name}} account is no longer {{email}}.</p><p>If you did not change it, put it back with your revert code: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong><br>It works once within {{expires_in_days}} days, and ends every session of the account.</p>'
    },
    passwordChanged: {
      subject: 'Your {{site_name}} password was changed',
      text: 'Hello {{display_name}},\n\nThe password of your {{site_name}} account {{email}} was just changed, and your other sessions were ended.\nIf you did not change it, reset your password at once.',
      html: '<p>Hello {{display_name}},</p><p>The password of your {{site_name}} account {{email}} was just changed, and your other sessions were ended.</p><p>If you did not change it, reset your password at once.</p>'
    },
    emailSignIn: {
      subject: 'Your {{site_name}} sign-in code',
      text: 'Your sign-in code is {{code}}. Enter it to sign in to {{site_name}} as {{email}}. It works once and expires in {{expires_in_minutes}} minutes.\n\nIf you did not ask for it, ignore this mail: nobody can sign in without the code.',
      html: '<p>Your sign-in code is <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Enter it to sign in to {{site_name}} as {{email}}. It works once and expires in {{expires_in_minutes}} minutes.</p><p>If you did not ask for it, ignore this mail: nobody can sign in without the code.</p>'
    },
    emailSignInLink: {
      subject: 'Your {{site_name}} sign-in code',
      text: 'Your sign-in code is {{code}}. Enter it to sign in to {{site_name}} as {{email}}, or open this link on the device where you asked for it:\n{{link}}\n\nIt works once and expires in {{expires_in_minutes}} minutes. If you did not ask for it, ignore this mail: nobody can sign in without the code.',
      html: '<p>Your sign-in code is <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong>. Enter it to sign in to {{site_name}} as {{email}}, or <a href="{{link}}">sign in with this link</a> on the device where you asked for it.</p><p>It works once and expires in {{expires_in_minutes}} minutes. If you did not ask for it, ignore this mail: nobody can sign in without the code.</p>'
    }
  }
}
