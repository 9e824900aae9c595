const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const MAX_EMAIL_LENGTH = 254

/** An email address as the reset and register routes accept it: one `@`, a dotted domain, at most 254 characters. */
export function isEmail (value: string): boolean {
  return value.length <= MAX_EMAIL_LENGTH && EMAIL.test(value)
}
