/** The reset mail's default texts: the settings schema's defaults for `resetPassword.mail`. */

/** A mail as settings describe it: each part may hold `{{placeholder}}`s. */
export interface MailTemplates {
  subject: string
  text: string
  html: string
}

/** The reset mail a host gets unless its settings give their own texts. */
export const DEFAULT_RESET_TEMPLATES: MailTemplates = {
  subject: 'Your {{site_name}} password reset code',
  text: [
    'Hello {{display_name}},',
    '',
    'Someone asked to reset the password of the {{site_name}} account {{email}}.',
    'Your reset code is: {{code}}',
    '',
    'It works once and expires in {{expires_in_minutes}} minutes.',
    'If you did not ask for it, ignore this mail; your password stays as it is.'
  ].join('\n'),
  html: [
    '<p>Hello {{display_name}},</p>',
    '<p>Someone asked to reset the password of the {{site_name}} account {{email}}.</p>',
    '<p>Your reset code is: <strong style="font-family:monospace;font-size:1.4em">{{code}}</strong></p>',
    '<p>It works once and expires in {{expires_in_minutes}} minutes.<br>',
    'If you did not ask for it, ignore this mail; your password stays as it is.</p>'
  ].join('\n')
}
