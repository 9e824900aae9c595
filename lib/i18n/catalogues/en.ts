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
    userDeleted: 'User was successfully deleted.'
  },
  mails: {
    reset: DEFAULT_RESET_TEMPLATES,
    emailCode: {
      subject: 'Your sign-in code',
      text: 'Your sign-in code is {{code}}. It is valid for {{minutes}} minutes and works once.\n\nIf you did not try to sign in, change your password.',
      html: '<p>Your sign-in code is <strong>{{code}}</strong>. It is valid for {{minutes}} minutes and works once.</p><p>If you did not try to sign in, change your password.</p>'
    }
  }
}
