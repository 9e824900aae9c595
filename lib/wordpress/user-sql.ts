// The SQL of the WordPress user adapter, and what WordPress itself writes for a new user.
import { createHash } from 'node:crypto'
import type { RowDataPacket } from 'mysql2/promise'

/** How long createUser waits for another createUser of the same database to finish, in seconds. */
const CREATE_LOCK_WAIT_SECONDS = 10

/**
 * The user meta where the adapter keeps whether the user's email is
 * verified: '1' or '0'. Not prefixed: an email belongs to the user, not to
 * one site of a network.
 */
export const EMAIL_VERIFIED_KEY = 'jwt_login_email_verified'

/**
 * Whether the email is verified, from the first `EMAIL_VERIFIED_KEY` meta
 * value (null: the user has none). No row counts as verified: such a user
 * was made by WordPress itself (by the site owner, or by a registration
 * WordPress confirms by mail), and WordPress has always let them reset their
 * password by mail; the adapter writes '0' only for a user jwt-login creates
 * with `emailVerified: false`. '1' is verified; anything else ('0', or the ''
 * PHP writes for false) is not.
 */
export function emailVerifiedOf (value: string | null): boolean {
  return value === null || value === '1'
}

/**
 * The user meta that marks a user createUser made without a password: the
 * SHA-256 (hex) of the hash it stored, of a random token nobody knows (see
 * noPasswordMark). Once the user's hash is another (a password set by
 * jwt-login, by WordPress's own reset or profile page, by WP-CLI), the mark
 * no longer matches it and the user has a password, whoever set it.
 */
export const NO_PASSWORD_KEY = 'jwt_login_no_password'

/**
 * The mark of a user whose stored hash is `hash`: a digest of it rather
 * than a second copy, since code that shows or exports user meta may be
 * less careful with it than with user_pass.
 */
export function noPasswordMark (hash: string): string {
  return createHash('sha256').update(hash, 'utf8').digest('hex')
}

/** The user meta WordPress's wp_insert_user writes for a new user, besides the capabilities and the user level. */
export function defaultMeta (login: string): Array<[string, string]> {
  return [
    ['nickname', login],
    ['first_name', ''],
    ['last_name', ''],
    ['description', ''],
    ['rich_editing', 'true'],
    ['syntax_highlighting', 'true'],
    ['comment_shortcuts', 'false'],
    ['admin_color', 'fresh'],
    ['use_ssl', '0'],
    ['show_admin_bar_front', 'true'],
    ['locale', '']
  ]
}

/** A WordPress user as the adapter reads it: a row of `<prefix>users`, the roles of its capabilities meta and its email-verified meta. */
export interface WordPressUser {
  ID: number
  user_login: string
  user_email: string
  display_name: string
  /** The stored hash, in any form WordPress wrote it. */
  user_pass: string
  roles: string[]
  /** From the `jwt_login_email_verified` meta: '1' or no row (a user WordPress made) is true, '0' false. */
  email_verified: boolean
  /** The `jwt_login_no_password` mark of a user createUser made without a password (see NO_PASSWORD_KEY); absent or null: none. */
  no_password_mark?: string | null
}

/** A row of a find: the user's columns, the capabilities meta and the email-verified meta (each null when the user has none). */
export interface UserRow extends RowDataPacket {
  ID: number | string
  user_login: string
  user_email: string
  display_name: string
  user_pass: string
  capabilities: string | null
  email_verified: string | null
  no_password: string | null
}

/** The SQL of the adapter for one table prefix; every value is a `?` parameter. */
export interface Statements {
  findByEmail: string
  findByLogin: string
  findById: string
  upgradeHash: string
  setPassword: string
  lock: string
  unlock: string
  taken: string
  emailTaken: string
  setEmail: string
  deleteEmailVerified: string
  addMeta: string
  nicenameTaken: string
  insertUser: string
  insertMeta: string
  deleteMeta: string
  deleteUser: string
  passwordAndMark: string
  identityHolders: string
  identitiesOf: string
  deleteIdentity: string
}

/** The statements on the tables of `prefix` (already validated). */
export function statementsFor (prefix: string): Statements {
  const users = `\`${prefix}users\``
  const usermeta = `\`${prefix}usermeta\``
  // the row, the email-verified, no-password and capabilities meta in one query (the parameters: EMAIL_VERIFIED_KEY,
  // NO_PASSWORD_KEY, the capabilities key, the value looked up); of several meta rows, WordPress reads the first
  const find = (column: string): string =>
    `SELECT u.ID, u.user_login, u.user_email, u.display_name, u.user_pass, m.meta_value AS capabilities,
       (SELECT v.meta_value FROM ${usermeta} v WHERE v.user_id = u.ID AND v.meta_key = ? ORDER BY v.umeta_id LIMIT 1) AS email_verified,
       (SELECT p.meta_value FROM ${usermeta} p WHERE p.user_id = u.ID AND p.meta_key = ? ORDER BY p.umeta_id LIMIT 1) AS no_password
     FROM ${users} u LEFT JOIN ${usermeta} m ON m.user_id = u.ID AND m.meta_key = ?
     WHERE u.${column} = ? ORDER BY u.ID, m.umeta_id LIMIT 1`
  // a lock name longer than MySQL's 64 characters is replaced by its SHA-256 (64 hex digits)
  const lockName = 'IF(CHAR_LENGTH(CONCAT(DATABASE(), \'.\', ?)) > 64, SHA2(CONCAT(DATABASE(), \'.\', ?), 256), CONCAT(DATABASE(), \'.\', ?))'
  return {
    findByEmail: find('user_email'),
    findByLogin: find('user_login'),
    findById: find('ID'),
    upgradeHash: `UPDATE ${users} SET user_pass = ? WHERE ID = ? AND user_pass = ?`,
    setPassword: `UPDATE ${users} SET user_pass = ?, user_activation_key = '' WHERE ID = ?`,
    lock: `SELECT GET_LOCK(${lockName}, ${CREATE_LOCK_WAIT_SECONDS}) AS locked`,
    unlock: `SELECT RELEASE_LOCK(${lockName}) AS released`,
    taken: `SELECT ID FROM ${users} WHERE user_email = ? OR user_login = ? LIMIT 1`,
    emailTaken: `SELECT ID FROM ${users} WHERE user_email = ? AND ID <> ? LIMIT 1`,
    // a new email voids a pending reset link, as WordPress's wp_insert_user clears the key when the email changes
    setEmail: `UPDATE ${users} SET user_email = ?, user_activation_key = '' WHERE ID = ?`,
    deleteEmailVerified: `DELETE FROM ${usermeta} WHERE user_id = ? AND meta_key = ?`,
    // a meta row (the parameters: key, value, user ID) written only while the user's row exists: none is written for a user deleted meanwhile
    addMeta: `INSERT INTO ${usermeta} (user_id, meta_key, meta_value) SELECT ID, ?, ? FROM ${users} WHERE ID = ?`,
    nicenameTaken: `SELECT ID FROM ${users} WHERE user_nicename = ? LIMIT 1`,
    insertUser: `INSERT INTO ${users}
      (user_login, user_pass, user_nicename, user_email, user_url, user_registered, user_activation_key, user_status, display_name)
      VALUES (?, ?, ?, ?, '', ?, '', 0, ?)`,
    insertMeta: `INSERT INTO ${usermeta} (user_id, meta_key, meta_value) VALUES `,
    deleteMeta: `DELETE FROM ${usermeta} WHERE user_id = ?`,
    deleteUser: `DELETE FROM ${users} WHERE ID = ?`,
    // the parameters: NO_PASSWORD_KEY, the user ID; no row when the user is gone
    passwordAndMark: `SELECT u.user_pass,
       (SELECT v.meta_value FROM ${usermeta} v WHERE v.user_id = u.ID AND v.meta_key = ? ORDER BY v.umeta_id LIMIT 1) AS mark
     FROM ${users} u WHERE u.ID = ?`,
    // The meta_key index finds the rows; the collation would also match a key in another case (a provider
    // "GH" beside "gh"), so the key is compared byte for byte too. A row whose user is gone is no holder.
    identityHolders: `SELECT m.user_id FROM ${usermeta} m JOIN ${users} u ON u.ID = m.user_id
     WHERE m.meta_key = ? AND CAST(m.meta_key AS BINARY) = ? ORDER BY m.umeta_id`,
    // a coarse filter ('_' matches any character, the collation ignores case): the caller checks each key exactly
    identitiesOf: `SELECT meta_key, meta_value FROM ${usermeta} WHERE user_id = ? AND meta_key LIKE 'jwt_login_identity_%' ORDER BY umeta_id`,
    deleteIdentity: `DELETE FROM ${usermeta} WHERE user_id = ? AND meta_key = ? AND CAST(meta_key AS BINARY) = ?`
  }
}

/** UTC now as MySQL's DATETIME text, as WordPress writes user_registered. */
export function utcNow (): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ')
}
