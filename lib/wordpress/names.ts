// The login, nicename and display name WordPress's wp_insert_user writes for a new user (the defaults of WordPress 6.x, no plugin filters).
import { cleanText, isCleanLogin } from '../users/clean.js'

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

/** `&`, `<` and `>` as entities, an entity already written left as it is (WordPress's kses and `_wp_specialchars` without double encoding). */
function escapeText (text: string): string {
  return text
    .replace(/&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}

/**
 * The display_name WordPress writes: the login when none is given, else the
 * name through the `pre_user_display_name` filters (`sanitize_text_field`,
 * kses, `_wp_specialchars`), so no markup is stored and `&`, `<` and `>`
 * are entities, as in every row WordPress writes itself.
 */
export function wordPressDisplayName (displayName: string, login: string): string {
  return escapeText(cleanText(displayName === '' ? login : displayName))
}
