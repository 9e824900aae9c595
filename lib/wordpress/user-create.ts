// The rows WordPress's wp_insert_user writes for a new user, as the WordPress user adapter's createUser writes them.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import { UserExistsError, type NewUser } from '../adapters/users.js'
import { nicenameOf, wordPressDisplayName } from './names.js'
import { serializeCapabilities, userLevel } from './roles.js'
import { defaultMeta, EMAIL_VERIFIED_KEY, NO_PASSWORD_KEY, noPasswordMark, utcNow, type Statements, type WordPressUser } from './user-sql.js'

/** The prefixed meta keys of one site: its capabilities and its user level. */
export interface SiteMetaKeys {
  capabilities: string
  userLevel: string
}

/**
 * Inserts the row and the meta of a new user whose password hash is `hash`
 * (on `connection`, under createUser's lock, in its transaction): a taken
 * email or login, as the columns' collation compares them, throws
 * `UserExistsError`. A user given no password (`hash` is of a random token)
 * gets the `NO_PASSWORD_KEY` mark of that hash.
 */
export async function insertUser (connection: PoolConnection, sql: Statements, keys: SiteMetaKeys, input: NewUser, hash: string): Promise<WordPressUser> {
  const [taken] = await connection.execute<RowDataPacket[]>(sql.taken, [input.email, input.login])
  if (taken.length > 0) throw new UserExistsError()
  const nicename = await freeNicename(connection, sql, nicenameOf(input.login))
  const displayName = wordPressDisplayName(input.displayName, input.login)
  const [inserted] = await connection.execute<ResultSetHeader>(sql.insertUser, [
    input.login, hash, nicename, input.email, utcNow(), displayName
  ])
  const ID = inserted.insertId
  const meta: Array<[string, string]> = [
    ...defaultMeta(input.login),
    [keys.capabilities, serializeCapabilities([input.role])],
    [keys.userLevel, String(userLevel([input.role]))],
    ...(input.emailVerified === undefined ? [] : [[EMAIL_VERIFIED_KEY, input.emailVerified ? '1' : '0'] as [string, string]]),
    ...(input.password === undefined ? [[NO_PASSWORD_KEY, noPasswordMark(hash)] as [string, string]] : [])
  ]
  await connection.execute(
    sql.insertMeta + meta.map(() => '(?, ?, ?)').join(', '),
    meta.flatMap(([key, value]) => [ID, key, value])
  )
  return { ID, user_login: input.login, user_email: input.email, display_name: displayName, user_pass: hash, roles: [input.role], email_verified: input.emailVerified ?? true, no_password_mark: input.password === undefined ? noPasswordMark(hash) : null }
}

/** `nicename`, or, when another user has it, the first free of nicename-2, nicename-3… (each at most 50 characters), as WordPress picks. */
async function freeNicename (connection: PoolConnection, sql: Statements, nicename: string): Promise<string> {
  const taken = async (candidate: string): Promise<boolean> =>
    (await connection.execute<RowDataPacket[]>(sql.nicenameTaken, [candidate]))[0].length > 0
  let candidate = nicename
  for (let suffix = 2; await taken(candidate); suffix++) {
    candidate = `${nicename.slice(0, 49 - String(suffix).length)}-${suffix}`
  }
  return candidate
}
