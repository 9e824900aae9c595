import { domainToASCII } from 'node:url'

const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const MAX_EMAIL_LENGTH = 254

/** Printable ASCII (`!` to `~`): no space, no control, nothing beyond U+007E. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/

/** An email address as the reset and register routes accept it: one `@`, a dotted domain, at most 254 characters. */
export function isEmail (value: string): boolean {
  return value.length <= MAX_EMAIL_LENGTH && EMAIL.test(value)
}

/**
 * Whether an address (`isEmail`) is written as the one mailbox it names, so
 * that no account can be made under a look-alike of another's address: its
 * every character printable ASCII (as WordPress's `is_email` asks), and its
 * domain a valid host name in its ASCII form (an internationalised domain as
 * `xn--` labels that decode under IDNA). A full-width letter (`ｖ`), the
 * Kelvin sign (`K`, U+212A) or any other character that a Unicode fold
 * (NFKC, a case fold, a database collation) could make into an ASCII one is
 * refused, and so is a Unicode local part (RFC 6531): those mail systems do
 * not agree on.
 */
export function isPlainEmail (email: string): boolean {
  if (!PRINTABLE_ASCII.test(email)) return false
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  return domainToASCII(domain) === domain
}

/**
 * Emails compared as jwt-login compares them: ASCII letters folded to lower
 * case first, then both in Unicode NFC; nothing else is folded, so a
 * look-alike (the Kelvin sign for K, a full-width letter) is another email.
 */
export function sameEmail (a: string, b: string): boolean {
  const fold = (email: string): string => email.replace(/[A-Z]+/g, letters => letters.toLowerCase()).normalize('NFC')
  return fold(a) === fold(b)
}
