// How the WordPress user adapter checks, writes and upgrades passwords: as a person types them, which WordPress slashes.
import type { Pool, ResultSetHeader } from 'mysql2/promise'
import { hashWordPressPassword, verifyWordPressHash, wordPressHashFormat, wordPressSlash, type WordPressHashFormat, type WordPressHashWrite } from './hashes.js'
import type { Statements } from './user-sql.js'

/** What bcrypt reads of a password. */
const BCRYPT_MAX_BYTES = 72

/** The form `wordPressHashFormat` names for each hash the adapter can write. */
export const WRITTEN_FORMAT: Readonly<Record<WordPressHashWrite, WordPressHashFormat>> = Object.freeze({
  wordpress: 'wordpress',
  bcrypt: 'bcrypt',
  argon2id: 'argon2'
})

/** The forms WordPress writes and checks: of the password as its forms slash it, or (WP-CLI, code) as given. */
const WORDPRESS_FORMATS: ReadonlySet<WordPressHashFormat> = new Set(['wordpress', 'bcrypt', 'phpass', 'md5'])

/**
 * Whether `password`, as a person types it, matches `hash`; false (never a
 * throw) for a wrong one.
 *
 * A hash in a form WordPress writes (`wordpress`, `bcrypt`, `phpass`,
 * `md5`) is checked against the password slashed as WordPress's forms and
 * Simple JWT Login slash it (`wordPressSlash`: its sign-in, profile and
 * reset forms hash and check `it\'s`, not `it's`), and against the password
 * as typed (a hash set by WP-CLI, or by code calling `wp_set_password`
 * unslashed); either matching is a match. An `argon2` hash (jwt-login's own,
 * WordPress gone) is checked as typed only.
 *
 * Timing: the second check runs only when slashing changes the password (it
 * holds `'`, `"`, `\` or a NUL), and then always, beside the first, whatever
 * either answers: for a given password and hash the work is the same
 * whichever form matched, or none: it depends on the password sent and on
 * the stored hash's form only. An unknown account costs the flow's one
 * argon2id check, as before: a WordPress hash already costs other than that,
 * and the two checks, run side by side, take about the time of one (bcrypt
 * runs on libuv's pool; phpass and MD5 are cheap).
 */
export async function verifyTypedWordPressPassword (password: string, hash: string): Promise<boolean> {
  if (typeof password !== 'string' || !WORDPRESS_FORMATS.has(wordPressHashFormat(hash))) return await verifyWordPressHash(password, hash)
  const slashed = wordPressSlash(password)
  if (slashed === password) return await verifyWordPressHash(password, hash)
  const [asSlashed, asTyped] = await Promise.all([verifyWordPressHash(slashed, hash), verifyWordPressHash(password, hash)])
  return asSlashed || asTyped
}

/**
 * A new hash of `password`, as a person types it, in the form `write`: in a
 * WordPress form (`wordpress`, `bcrypt`) of the password slashed, as
 * WordPress's own forms hash it, so that `wp_check_password` accepts what the
 * person types at wp-login.php; as `argon2id` (WordPress gone) of the
 * password as typed. Throws as `hashWordPressPassword` does (over 4096
 * bytes once slashed and trimmed).
 */
export async function hashTypedWordPressPassword (password: string, write: WordPressHashWrite): Promise<string> {
  return await hashWordPressPassword(write === 'argon2id' ? password : wordPressSlash(password), write)
}

/**
 * Whether a hash `password` has just matched is to be rewritten in the form
 * `write`: it is in another form, one no password matches is never
 * rewritten, and a plain bcrypt hash only from a password bcrypt read whole
 * (bcrypt reads 72 bytes, and PHP's stops at a NUL: a longer password, or
 * one with a NUL, may differ from the one the hash was made of). Either form
 * of the password may have matched, so both must fit: the slashed one is
 * the longer, and only the typed one can hold a NUL.
 */
function rehashDue (hash: string, password: string, write: WordPressHashWrite): boolean {
  const format = wordPressHashFormat(hash)
  if (format === 'unknown' || format === WRITTEN_FORMAT[write]) return false
  return format !== 'bcrypt' || (Buffer.byteLength(wordPressSlash(password)) <= BCRYPT_MAX_BYTES && !password.includes('\0'))
}

/** The user fields a rehash reads and writes. */
interface HashedUser {
  ID: number
  user_pass: string
}

/**
 * Rewrites the user's hash in the form `write` (see `hashTypedWordPressPassword`)
 * when it is due (`rehashDue`), only if the row still holds the hash the
 * user was read with (a compare-and-set: a concurrent password change
 * wins), and then updates `user.user_pass`: true when it wrote, false when
 * nothing was due or the row had changed. `password` must be one
 * `verifyTypedWordPressPassword` has just accepted for that hash. Throws when the
 * update fails (a database user without UPDATE on the users table, a lost
 * connection); a row changed meanwhile, or gone, is no failure.
 */
export async function rehashTypedPassword (pool: Pool, sql: Statements, write: WordPressHashWrite, user: HashedUser, password: string): Promise<boolean> {
  const hash = user.user_pass
  if (!rehashDue(hash, password, write)) return false
  const next = await hashTypedWordPressPassword(password, write)
  const [result] = await pool.execute<ResultSetHeader>(sql.upgradeHash, [next, user.ID, hash])
  if (result.affectedRows !== 1) return false
  user.user_pass = next
  return true
}
