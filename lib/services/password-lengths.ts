/**
 * Whether a new password (reset or registration) is within
 * `resetPassword.password`'s lengths, counted in characters (code points),
 * not UTF-16 units: the maximum keeps a huge password from the hasher.
 */
export function withinPasswordLengths (password: string, lengths: { minLength: number, maxLength: number }): boolean {
  const length = [...password].length
  return length >= lengths.minLength && length <= lengths.maxLength
}
