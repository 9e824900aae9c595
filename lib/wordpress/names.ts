// The login, nicename and display name WordPress's wp_insert_user writes for a new user (the defaults of WordPress 6.x, no plugin filters).
import { cleanText, escapeSpecialChars, isCleanLogin } from '../core/clean-text.js'

/**
 * A login WordPress stores as given: `sanitize_user($login, true)` leaves it
 * unchanged (see isCleanLogin). wp_insert_user would store another name than
 * the one given for any other, so the adapter refuses those.
 */
export function isWordPressLogin (login: string): boolean {
  return isCleanLogin(login)
}

/**
 * The user_nicename WordPress derives from a login it stores as given:
 * its first 50 characters through `sanitize_title`, which for such a login
 * lower-cases it, turns `.` into `-`, drops `@`, turns spaces into `-`,
 * makes runs of `-` one and trims `-` from both ends.
 */
export function nicenameOf (login: string): string {
  return login.slice(0, 50).toLowerCase()
    .replace(/\./g, '-')
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/\s+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
}

/**
 * What WordPress's kses and `_wp_specialchars` leave of text that
 * `sanitize_text_field` cleaned: what is left that looks like a tag (`< b >`,
 * which PHP's strip_tags keeps) removed, `>` and a bare `&` as entities.
 */
function ksesText (text: string): string {
  return escapeSpecialChars(text.replace(/<[^>]*(?:>|$)/g, ''), false)
}

/**
 * The display_name WordPress writes: the login when none is given, else the
 * name through the `pre_user_display_name` filters (`sanitize_text_field`,
 * kses, `_wp_specialchars`), so no markup is stored and `&`, `<` and `>`
 * are entities, as in every row WordPress writes itself.
 */
export function wordPressDisplayName (displayName: string, login: string): string {
  return ksesText(cleanText(displayName === '' ? login : displayName))
}
