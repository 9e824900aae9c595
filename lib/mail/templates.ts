/** The reset mail from its templates: placeholders filled, values escaped in the HTML part. */
import type { MailTemplates } from '../../schemas/mail-templates.js'

// the defaults live beside the settings schema, which takes them as its defaults
export { DEFAULT_RESET_TEMPLATES, type MailTemplates } from '../../schemas/mail-templates.js'

/** What the reset mail's placeholders stand for. */
export interface ResetMailValues {
  code: string
  display_name: string
  email: string
  site_name: string
  expires_in_minutes: string
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g

/** The text with the five HTML-special characters escaped, safe inside an element or a quoted attribute. */
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
