/** A mail as settings describe it: each part may hold `{{placeholder}}`s. */
export interface MailTemplates {
  subject: string
  text: string
  html: string
}

/** What the reset mail's placeholders stand for. */
export interface ResetMailValues {
  code: string
  display_name: string
  email: string
  site_name: string
  expires_in_minutes: string
}

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

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g

export function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string)
}

/**
 * Fills `{{name}}` placeholders from `values` in one pass, so a value that
 * itself looks like a placeholder stays as it is. Unknown names are left
 * untouched, so a typo in a template shows in the mail instead of vanishing.
 */
export function renderTemplate (template: string, values: Record<string, string>, escape: (value: string) => string = (value) => value): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => Object.hasOwn(values, name) ? escape(values[name] as string) : whole)
}

/** The three parts of a mail; values are HTML-escaped in the HTML part and the subject is kept on one line. */
export function renderMail (templates: MailTemplates, values: ResetMailValues): MailTemplates {
  const fields = values as unknown as Record<string, string>
  return {
    subject: renderTemplate(templates.subject, fields).replace(/[\r\n]+/g, ' '),
    text: renderTemplate(templates.text, fields),
    html: renderTemplate(templates.html, fields, escapeHtml)
  }
}
