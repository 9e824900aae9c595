import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { hashPassword, verifyPasswordHash } from '../adapters/users.js'
import { requirePeer } from '../core/peer.js'

const bcrypt = requirePeer<typeof import('bcrypt')>('bcrypt', 'fastify-jwt-login/wordpress')

/**
 * The form of a stored WordPress password hash:
 * - `wordpress`: WordPress 6.8+, `$wp$2y$…`, bcrypt over an HMAC-SHA384 of the password;
 * - `bcrypt`: plain bcrypt, `$2y$`, `$2a$` or `$2b$` (PHP's `password_hash`, older plugins);
 * - `phpass`: the portable phpass hash, `$P$` (WordPress before 6.8) or `$H$` (phpBB);
 * - `md5`: 32 lower-case hex digits, from WordPress before 2.5 or a hand-set password;
 * - `argon2`: `$argon2id$` or `$argon2i$`, a hash already upgraded;
 * - `unknown`: anything else, which no password matches.
 */
export type WordPressHashFormat = 'wordpress' | 'bcrypt' | 'phpass' | 'md5' | 'argon2' | 'unknown'

/**
 * The form a new hash is written in: 'wordpress' (`$wp$2y$`, WordPress 6.8+,
 * the default), 'bcrypt' (`$2y$`, accepted by every WordPress version) or
 * 'argon2id' (jwt-login's own, once WordPress is gone).
 */
export type WordPressHashWrite = 'wordpress' | 'bcrypt' | 'argon2id'

/** The bcrypt cost WordPress writes (PHP's default before 8.4), and so does jwt-login. */
export const WORDPRESS_BCRYPT_COST = 10

/** The longest password WordPress hashes or checks, in UTF-8 bytes (PHP's `strlen`). */
const MAX_PASSWORD_BYTES = 4096

/** What PHP's `trim` strips from both ends, and so WordPress from a password: no other space. */
const PHP_TRIMMED = new Set([' ', '\t', '\n', '\r', '\0', '\v'])

/** The alphabet of phpass's salts, counts and digests. */
const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** How many MD5 rounds of a phpass check run before the event loop gets a turn (a few milliseconds' work). */
const PHPASS_ROUNDS_PER_TURN = 1024

const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/
const WORDPRESS = /^\$wp\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/
const PHPASS = /^\$[PH]\$[./0-9A-Za-z]{31}$/
const MD5 = /^[0-9a-f]{32}$/
const ARGON2 = /^\$argon2id?\$/

/** The form of a stored hash, by its prefix and length. */
export function wordPressHashFormat (hash: string): WordPressHashFormat {
  if (typeof hash !== 'string') return 'unknown'
  if (WORDPRESS.test(hash)) return 'wordpress'
  if (BCRYPT.test(hash)) return 'bcrypt'
  if (PHPASS.test(hash)) return 'phpass'
  if (MD5.test(hash)) return 'md5'
  if (ARGON2.test(hash)) return 'argon2'
  return 'unknown'
}

/**
 * Whether `password` matches `hash` as WordPress's `wp_check_password`
 * checks the string it is given; false (never a throw) for a wrong password
 * or an unreadable hash. WordPress's sign-in hands it the password slashed
 * (see wordPressSlash); `verifyTypedWordPressPassword` checks what a person
 * types, in both forms.
 *
 * As WordPress does, the password loses the spaces, tabs, line ends, NULs and
 * vertical tabs around it (PHP's `trim`, no other space), an empty one never
 * matches, and one over 4096 UTF-8 bytes never matches. Plain bcrypt reads
 * the first 72 bytes of the password and stops at a NUL, as PHP's does, so a
 * longer password signs in by its first 72 bytes; the WordPress 6.8 form
 * hashes an HMAC of the whole password first, so every byte counts.
 * MD5 and phpass digests are compared in constant time.
 */
export async function verifyWordPressHash (password: string, hash: string): Promise<boolean> {
  const format = wordPressHashFormat(hash)
  if (typeof password !== 'string' || format === 'unknown') return false
  const typed = phpTrim(password)
  const bytes = Buffer.from(typed, 'utf8')
  if (bytes.length === 0 || bytes.length > MAX_PASSWORD_BYTES) return false
  switch (format) {
    case 'wordpress':
      return await bcryptMatches(prehash(bytes), hash.slice(3))
    case 'bcrypt':
      return await bcryptMatches(bytes.subarray(0, endOfCString(bytes)), hash)
    case 'phpass':
      return await phpassMatches(bytes, hash)
    case 'md5':
      return sameAscii(createHash('md5').update(bytes).digest('hex'), hash)
    case 'argon2':
      return await verifyPasswordHash(hash, typed)
  }
}

/**
 * A new hash of `password` as given (as `wp_set_password` hashes the string
 * it is given: WP-CLI's, not a form's, which is slashed; see
 * `hashTypedWordPressPassword`), trimmed as WordPress trims it, in the form
 * `format` asks (see `WordPressHashWrite`), bcrypt at cost
 * `WORDPRESS_BCRYPT_COST`. Throws when the trimmed password is over 4096
 * UTF-8 bytes (WordPress would refuse it), or when plain bcrypt is asked
 * for a password with a NUL inside (PHP's bcrypt refuses it too); the
 * message never holds the password.
 */
export async function hashWordPressPassword (password: string, format: WordPressHashWrite = 'wordpress'): Promise<string> {
  const typed = phpTrim(password)
  const bytes = Buffer.from(typed, 'utf8')
  if (bytes.length > MAX_PASSWORD_BYTES) throw new Error(`a WordPress password is at most ${MAX_PASSWORD_BYTES} bytes (UTF-8)`)
  switch (format) {
    case 'wordpress':
      return `$wp${await bcryptHash(prehash(bytes))}`
    case 'bcrypt':
      if (endOfCString(bytes) < bytes.length) throw new Error('plain bcrypt cannot hash a password holding a NUL character; write the \'wordpress\' form')
      return await bcryptHash(bytes)
    case 'argon2id':
      return await hashPassword(typed)
    default:
      throw new Error(`unknown WordPress hash form "${String(format)}": use 'wordpress', 'bcrypt' or 'argon2id'`)
  }
}

/**
 * `text` as WordPress slashes what a form or a REST request sends
 * (`wp_slash`, PHP's `addslashes`): a backslash before each `'`, `"` and
 * `\`, and a NUL as the two characters `\0`. WordPress's sign-in,
 * profile and reset forms hash and check a password so slashed (the
 * request's fields are slashed at start by `wp_magic_quotes`), trimmed after.
 */
export function wordPressSlash (text: string): string {
  return text.replace(/[\\'"\0]/g, (character) => character === '\0' ? '\\0' : `\\${character}`)
}

/** `text` without PHP's trimmed characters at either end. */
function phpTrim (text: string): string {
  let start = 0
  let end = text.length
  while (start < end && PHP_TRIMMED.has(text.charAt(start))) start++
  while (end > start && PHP_TRIMMED.has(text.charAt(end - 1))) end--
  return text.slice(start, end)
}

/** Where a C string of these bytes ends: at the first NUL, or the length. */
function endOfCString (bytes: Buffer): number {
  const nul = bytes.indexOf(0)
  return nul === -1 ? bytes.length : nul
}

/** What WordPress 6.8 hands bcrypt: base64 of HMAC-SHA384 keyed `wp-sha384` (64 characters, under bcrypt's 72-byte limit). */
function prehash (password: Buffer): string {
  return createHmac('sha384', 'wp-sha384').update(password).digest('base64')
}

/**
 * Whether bcrypt accepts `data` for a `$2a$`, `$2b$` or `$2y$` hash. PHP's
 * three are one algorithm; the `bcrypt` package reads `$2b$` so, but not
 * `$2y$`, and its `$2a$` counts length as OpenBSD's once did.
 */
async function bcryptMatches (data: Buffer | string, hash: string): Promise<boolean> {
  return await bcrypt.compare(data, `$2b$${hash.slice(4)}`)
}

/** A bcrypt hash of `data` at WordPress's cost, with PHP's `$2y$` prefix. */
async function bcryptHash (data: Buffer | string): Promise<string> {
  const hash = await bcrypt.hash(data, WORDPRESS_BCRYPT_COST)
  return `$2y$${hash.slice(4)}`
}

/**
 * Whether `password` matches a portable phpass hash: MD5 of salt and
 * password, then 2^n rounds of MD5 over digest and password, n the index of
 * the fourth character (7 to 30, as phpass allows), compared with the whole
 * 34-character hash.
 */
async function phpassMatches (password: Buffer, hash: string): Promise<boolean> {
  const log2 = ITOA64.indexOf(hash.charAt(3))
  if (log2 < 7 || log2 > 30) return false
  const rounds = 2 ** log2
  let digest = createHash('md5').update(hash.slice(4, 12), 'latin1').update(password).digest()
  for (let round = 1; round <= rounds; round++) {
    digest = createHash('md5').update(digest).update(password).digest()
    if (round % PHPASS_ROUNDS_PER_TURN === 0) await nextTurn()
  }
  return sameAscii(hash.slice(0, 12) + encode64(digest), hash)
}

/** phpass's own encoding: each three bytes, low bits first, as four characters of ITOA64 (a shorter tail as fewer). */
function encode64 (bytes: Buffer): string {
  let text = ''
  for (let at = 0; at < bytes.length; at += 3) {
    const group = bytes.subarray(at, at + 3)
    const value = group.readUIntLE(0, group.length)
    for (let shift = 0; shift <= 6 * group.length; shift += 6) text += ITOA64.charAt((value >> shift) & 0x3f)
  }
  return text
}

/** Whether two ASCII strings of one known length are equal, in constant time. */
function sameAscii (computed: string, stored: string): boolean {
  return timingSafeEqual(Buffer.from(computed, 'latin1'), Buffer.from(stored, 'latin1'))
}
