// The SQL of the WordPress user adapter, and what WordPress itself writes for a new user.
import type { RowDataPacket } from 'mysql2/promise'

/** How long createUser waits for another createUser of the same database to finish, in seconds. */
const CREATE_LOCK_WAIT_SECONDS = 10

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

/** A row of a find: the user's columns and the capabilities meta (null when the user has none). */
export interface UserRow extends RowDataPacket {
  ID: number | string
  user_login: string
  user_email: string
  display_name: string
  user_pass: string
  capabilities: string | null
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
  nicenameTaken: string
  insertUser: string
  insertMeta: string
  deleteMeta: string
  deleteUser: string
}

/** The statements on the tables of `prefix` (already validated). */
export function statementsFor (prefix: string): Statements {
  const users = `\`${prefix}users\``
  const usermeta = `\`${prefix}usermeta\``
  // the row and the capabilities meta in one query; of several meta rows, WordPress reads the first
  const find = (column: string): string =>
    `SELECT u.ID, u.user_login, u.user_email, u.display_name, u.user_pass, m.meta_value AS capabilities
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
    nicenameTaken: `SELECT ID FROM ${users} WHERE user_nicename = ? LIMIT 1`,
    insertUser: `INSERT INTO ${users}
      (user_login, user_pass, user_nicename, user_email, user_url, user_registered, user_activation_key, user_status, display_name)
      VALUES (?, ?, ?, ?, '', ?, '', 0, ?)`,
    insertMeta: `INSERT INTO ${usermeta} (user_id, meta_key, meta_value) VALUES `,
    deleteMeta: `DELETE FROM ${usermeta} WHERE user_id = ?`,
    deleteUser: `DELETE FROM ${users} WHERE ID = ?`
  }
}

/** UTC now as MySQL's DATETIME text, as WordPress writes user_registered. */
export function utcNow (): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ')
}
