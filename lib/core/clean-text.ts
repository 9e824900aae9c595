// Registration input as WordPress cleans it: login names by the rules of sanitize_user (strict), display names by those of sanitize_text_field; and names shown as given (an API key's), without hidden characters.

/**
 * A login name that WordPress's `sanitize_user($login, true)` leaves as it
 * is: only a-z, A-Z, 0-9, `_ . - @` and single spaces between them. Any
 * other character is one that function removes or changes (tags, `%xx`
 * octets, `&…;` entities, accents, everything outside ASCII), and edge or
 * doubled whitespace is what it trims and collapses.
 */
const CLEAN_LOGIN = /^[A-Za-z0-9_.@-]+(?: [A-Za-z0-9_.@-]+)*$/

/** Whether WordPress would store `login` as given; WordPress itself refuses a login that sanitizing changes. */
export function isCleanLogin (login: string): boolean {
  return CLEAN_LOGIN.test(login)
}

/** Half of a surrogate pair without the other: text that is no Unicode, as invalid UTF-8 is to WordPress. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const PHP_TRIMMED = ' \t\n\r\0\v'

/** PHP's `trim` with its default characters: space, tab, line breaks, NUL and vertical tab. */
function phpTrim (text: string): string {
  let start = 0
  let end = text.length
  while (start < end && PHP_TRIMMED.includes(text[start] as string)) start++
  while (end > start && PHP_TRIMMED.includes(text[end - 1] as string)) end--
  return text.slice(start, end)
}

/** A `<` that opens nothing (no `>` before the next `<` or the end) is text: it becomes `&lt;` (WordPress's wp_pre_kses_less_than). */
function escapeLoneLessThan (text: string): string {
  return text.replace(/<[^>]*?(?:(?=<)|>|$)/g, (match) => match.endsWith('>') ? match : escapeSpecialChars(match, true))
}

/** An `&` that starts no entity, as WordPress's kses normalises it. */
const BARE_AMPERSAND = /&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);)/g

/** `&`, `<`, `>` (and with `quotes`, `"` and `'`) as entities, an entity already written left as it is (WordPress's `_wp_specialchars` without double encoding; unlike the mail templates' `escapeHtml`, an entity already written is kept). */
export function escapeSpecialChars (text: string, quotes: boolean): string {
  const escaped = text.replace(BARE_AMPERSAND, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return quotes ? escaped.replace(/"/g, '&quot;').replace(/'/g, '&#039;') : escaped
}

/** Tags and the content of script and style elements removed (WordPress's wp_strip_all_tags); a `<` before a space is no tag, as for PHP's strip_tags. */
function stripTags (text: string): string {
  return text
    .replace(/<(script|style)[^>]*?>[\s\S]*?<\/\1>/gi, '')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<(?![\s])[^>]*>/g, '')
}

/**
 * A display name as WordPress's `sanitize_text_field` leaves it: tags and
 * the content of script and style elements removed, line breaks, tabs and
 * runs of spaces made one space, `%xx` octets removed, trimmed. A string
 * that is not well-formed UTF-16 (a lone surrogate, which WordPress would
 * see as invalid UTF-8) cleans to ''.
 */
export function cleanText (text: string): string {
  if (LONE_SURROGATE.test(text)) return ''
  let cleaned = text.includes('<') ? phpTrim(stripTags(escapeLoneLessThan(text))) : text
  cleaned = phpTrim(cleaned.replace(/[\r\n\t ]+/g, ' '))
  let found = false
  for (let octet = /%[a-f0-9]{2}/i.exec(cleaned); octet !== null; octet = /%[a-f0-9]{2}/i.exec(cleaned)) {
    cleaned = cleaned.replaceAll(octet[0], '')
    found = true
  }
  return found ? phpTrim(cleaned.replace(/ +/g, ' ')) : cleaned
}

/**
 * A control or format character (C0, C1, DEL, bidi overrides and isolates,
 * zero-width and other invisible characters) or half of a surrogate pair:
 * what text shown as given must not hold. The zero-width joiner is allowed
 * (emoji sequences use it).
 */
const HIDDEN = /(?!\u200D)[\p{Cc}\p{Cf}\p{Cs}]/u

/** Whether `text` holds a character that would hide or reorder what is shown (`HIDDEN`). */
export function hasHiddenCharacters (text: string): boolean {
  return HIDDEN.test(text)
}
