import { randomBytes } from 'node:crypto'
import mysql, { type Pool, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise'
import { serialize } from 'php-serialize'

/** The local MariaDB/MySQL server, without a database. */
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306'

/** The character set and collation WordPress picks on a server that has utf8mb4_unicode_520_ci. */
const CHARSET_COLLATE = 'DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci'

/** WordPress's `$max_index_length`: the indexed prefix of meta_key, in characters. */
const MAX_INDEX_LENGTH = 191

/** The users and usermeta tables as WordPress's schema (wp-admin/includes/schema.php, single site) defines them. */
function schemaOf (prefix: string): string[] {
  return [
    `CREATE TABLE \`${prefix}users\` (
      ID bigint(20) unsigned NOT NULL auto_increment,
      user_login varchar(60) NOT NULL default '',
      user_pass varchar(255) NOT NULL default '',
      user_nicename varchar(50) NOT NULL default '',
      user_email varchar(100) NOT NULL default '',
      user_url varchar(100) NOT NULL default '',
      user_registered datetime NOT NULL default '0000-00-00 00:00:00',
      user_activation_key varchar(255) NOT NULL default '',
      user_status int(11) NOT NULL default '0',
      display_name varchar(250) NOT NULL default '',
      PRIMARY KEY  (ID),
      KEY user_login_key (user_login),
      KEY user_nicename (user_nicename),
      KEY user_email (user_email)
    ) ${CHARSET_COLLATE}`,
    `CREATE TABLE \`${prefix}usermeta\` (
      umeta_id bigint(20) unsigned NOT NULL auto_increment,
      user_id bigint(20) unsigned NOT NULL default '0',
      meta_key varchar(255) default NULL,
      meta_value longtext,
      PRIMARY KEY  (umeta_id),
      KEY user_id (user_id),
      KEY meta_key (meta_key(${MAX_INDEX_LENGTH}))
    ) ${CHARSET_COLLATE}`
  ]
}

/** A user to insert as WordPress stores one. */
export interface WordPressRow {
  login: string
  email: string
  /** The stored hash, as WordPress wrote it. */
  pass: string
  displayName?: string
  /** Written as the capabilities meta WordPress writes (role → true). */
  roles?: string[]
  /** The capabilities meta value as is, instead of `roles`; null writes no capabilities meta. */
  rawCapabilities?: string | null
  /** An explicit ID (default: the next one). */
  id?: number | string
  /** A pending reset key, as WordPress's get_password_reset_key stores it. */
  activationKey?: string
}

/** A column of `<prefix>users` as the test reads it back. */
export interface StoredUser extends RowDataPacket {
  ID: number
  user_login: string
  user_pass: string
  user_nicename: string
  user_email: string
  user_url: string
  user_registered: string
  user_activation_key: string
  user_status: number
  display_name: string
}

export interface WordPressDb {
  /** A pool on the database (the helper ends it on teardown). */
  pool: Pool
  /** The database's URI, for an adapter that makes its own pool. */
  uri: string
  database: string
  prefix: string
  /** Inserts a user row and its capabilities meta; answers the ID. */
  insertUser: (row: WordPressRow) => Promise<number>
  /** The user's row, or undefined. */
  readUser: (id: number) => Promise<StoredUser | undefined>
  /** The first value of the user's meta `key`, or null when there is none. */
  readMeta: (id: number, key: string) => Promise<string | null>
  /** Every meta key the user has, in the order written. */
  metaKeys: (id: number) => Promise<string[]>
}

interface Teardown { teardown: (fn: () => Promise<void>) => void }

/**
 * A fresh database `jwtlogin_wp_<random hex>` on the local server with
 * WordPress's users and usermeta tables under `prefix`; dropped when `t` ends.
 */
export async function createWordPressDb (t: Teardown, { prefix = 'wp_' }: { prefix?: string } = {}): Promise<WordPressDb> {
  const database = `jwtlogin_wp_${randomBytes(6).toString('hex')}`
  const admin = await mysql.createConnection(MYSQL_URL)
  await admin.query(`CREATE DATABASE \`${database}\` ${CHARSET_COLLATE}`)
  const uri = `${MYSQL_URL}/${database}`
  const pool = mysql.createPool({ uri, connectionLimit: 5 })
  t.teardown(async () => {
    await pool.end()
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``)
    await admin.end()
  })
  for (const statement of schemaOf(prefix)) await pool.query(statement)
  const users = `\`${prefix}users\``
  const usermeta = `\`${prefix}usermeta\``

  async function insertUser (row: WordPressRow): Promise<number> {
    const [result] = await pool.execute<ResultSetHeader>(
      `INSERT INTO ${users} (ID, user_login, user_pass, user_nicename, user_email, user_registered, user_activation_key, display_name)
       VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(), ?, ?)`,
      [row.id ?? null, row.login, row.pass, row.login.toLowerCase(), row.email, row.activationKey ?? '', row.displayName ?? row.login]
    )
    const id = Number(row.id ?? result.insertId)
    const capabilities = row.rawCapabilities !== undefined
      ? row.rawCapabilities
      : serialize(Object.fromEntries((row.roles ?? ['subscriber']).map((role) => [role, true])))
    if (capabilities !== null) {
      await pool.execute(`INSERT INTO ${usermeta} (user_id, meta_key, meta_value) VALUES (?, ?, ?)`, [row.id ?? id, `${prefix}capabilities`, capabilities])
    }
    return id
  }

  async function readUser (id: number): Promise<StoredUser | undefined> {
    const [rows] = await pool.execute<StoredUser[]>(`SELECT * FROM ${users} WHERE ID = ?`, [id])
    return rows[0]
  }

  async function readMeta (id: number, key: string): Promise<string | null> {
    const [rows] = await pool.execute<RowDataPacket[]>(
      `SELECT meta_value FROM ${usermeta} WHERE user_id = ? AND meta_key = ? ORDER BY umeta_id LIMIT 1`, [id, key]
    )
    return (rows[0]?.meta_value as string | undefined) ?? null
  }

  async function metaKeys (id: number): Promise<string[]> {
    const [rows] = await pool.execute<RowDataPacket[]>(`SELECT meta_key FROM ${usermeta} WHERE user_id = ? ORDER BY umeta_id`, [id])
    return rows.map((row) => row.meta_key as string)
  }

  return { pool, uri, database, prefix, insertUser, readUser, readMeta, metaKeys }
}
