// The provider accounts linked to WordPress users, kept as user meta so that WordPress deletes them with the user, and whether a user has a password besides them.
import { createHash } from 'node:crypto'
import type { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import { IdentityTakenError, type IdentityDetails, type LinkedIdentity } from '../adapters/users.js'
import { underLock } from './user-lock.js'
import { NO_PASSWORD_KEY, noPasswordMark, type Statements } from './user-sql.js'

/** The provider names jwt-login gives (the keys of `oauth.providers`); no other name is put into a meta key. */
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * A link's meta key, exactly, with the provider's name as its group. The
 * digest has a fixed length, so a provider name with underscores is read
 * back whole.
 */
const IDENTITY_KEY = /^jwt_login_identity_([A-Za-z0-9_-]{1,64})_[0-9a-f]{64}$/

/** A link's meta value, as JSON: the key's provider and subject in full, and what is shown of the account. */
interface StoredLink {
  provider: string
  subject: string
  display: string | null
  /** When it was linked, in ms since the epoch. */
  linked_at: number
}

/**
 * The meta key of the link of `subject` at `provider`:
 * `jwt_login_identity_<provider>_<SHA-256 of the subject's UTF-8, in hex>`.
 * The subject is hashed so that finding its user is one equality on the
 * indexed meta_key (meta_value is an unindexed longtext), whatever the
 * subject's length: the key has at most 148 characters, all within the 191
 * the index holds. Null for a provider name jwt-login never gives, and for
 * a subject that is not well-formed Unicode (UTF-8 would make two such
 * subjects one).
 */
function identityKey (provider: string, subject: string): string | null {
  if (!PROVIDER_NAME.test(provider)) return null
  const bytes = Buffer.from(subject, 'utf8')
  if (bytes.toString('utf8') !== subject) return null
  return `jwt_login_identity_${provider}_${createHash('sha256').update(bytes).digest('hex')}`
}

/** The ID (as the driver answers it) of the user linked to the provider account, or null; of several, the one linked first. */
export async function findLinkedUserId (pool: Pool, sql: Statements, provider: string, subject: string): Promise<number | string | null> {
  const key = identityKey(provider, subject)
  if (key === null) return null
  const [rows] = await pool.execute<RowDataPacket[]>(sql.identityHolders, [key, key])
  return (rows[0]?.user_id as number | string | undefined) ?? null
}

/**
 * Links the provider account to user `userId`, in one transaction under the
 * adapter's named lock (`lockName`, see underLock), since WordPress has no
 * unique index on user meta: when the account is linked to another user,
 * or the user has another account of the provider, it throws
 * `IdentityTakenError` and writes nothing; when it is linked to this user
 * already, it keeps the first link and resolves `false` (`true` when it linked). Throws when the user's row
 * is gone, and for a provider name or subject `identityKey` refuses.
 */
export async function linkIdentity (pool: Pool, sql: Statements, lockName: string, userId: number, provider: string, subject: string, details: IdentityDetails): Promise<boolean> {
  const key = identityKey(provider, subject)
  if (key === null) throw new Error('WordPressUserAdapter: a provider name of letters, digits, "_" and "-" (at most 64) and a subject of well-formed Unicode are linked, nothing else')
  const link: StoredLink = { provider, subject, display: details.display, linked_at: details.linkedAt }
  return await underLock(pool, sql, lockName, 'linkIdentity', async (connection) => {
    const [holders] = await connection.execute<RowDataPacket[]>(sql.identityHolders, [key, key])
    if (holders.some((row) => String(row.user_id) === String(userId))) return false
    if (holders.length > 0) throw new IdentityTakenError()
    const [own] = await connection.execute<RowDataPacket[]>(sql.identitiesOf, [userId])
    if (own.some((row) => IDENTITY_KEY.exec(row.meta_key as string)?.[1] === provider)) throw new IdentityTakenError()
    const [inserted] = await connection.execute<ResultSetHeader>(sql.addMeta, [key, JSON.stringify(link), userId])
    if (inserted.affectedRows === 0) throw new Error(`WordPress user ${userId} no longer exists; nothing was linked`)
    return true
  })
}

/**
 * The user's links, oldest first (in the order their rows were written).
 * A meta row of a link's key whose value is not the link of that key
 * throws, naming the user and the key (as a damaged capabilities meta does).
 */
export async function listIdentities (pool: Pool, sql: Statements, userId: number): Promise<LinkedIdentity[]> {
  const [rows] = await pool.execute<RowDataPacket[]>(sql.identitiesOf, [userId])
  return rows
    .filter((row) => IDENTITY_KEY.test(row.meta_key as string))
    .map((row) => readLink(userId, row.meta_key as string, row.meta_value as string | null))
}

/** Removes the user's link of the provider account; resolves whether there was one. */
export async function unlinkIdentity (pool: Pool, sql: Statements, userId: number, provider: string, subject: string): Promise<boolean> {
  const key = identityKey(provider, subject)
  if (key === null) return false
  const [deleted] = await pool.execute<ResultSetHeader>(sql.deleteIdentity, [userId, key, key])
  return deleted.affectedRows > 0
}

/**
 * Whether the user has a password: false only while the user's stored
 * hash is still the one createUser wrote for a user given none (the
 * `NO_PASSWORD_KEY` mark matches it). Read from the database, so a password
 * WordPress set meanwhile counts. Throws when the user's row is gone.
 */
export async function hasPassword (pool: Pool, sql: Statements, userId: number): Promise<boolean> {
  const [[row]] = await pool.execute<RowDataPacket[]>(sql.passwordAndMark, [NO_PASSWORD_KEY, userId])
  if (row === undefined) throw new Error(`WordPress user ${userId} no longer exists`)
  return row.mark !== noPasswordMark(row.user_pass as string)
}

/** The link a meta row holds, or a throw when it is not the link of its key. */
function readLink (userId: number, key: string, value: string | null): LinkedIdentity {
  const link = parseJson(value) as Partial<StoredLink> | null
  if (
    typeof link?.provider !== 'string' || typeof link.subject !== 'string' ||
    (link.display !== null && typeof link.display !== 'string') || typeof link.linked_at !== 'number' ||
    identityKey(link.provider, link.subject) !== key
  ) {
    throw new Error(`WordPress user ${userId}: the meta ${key} does not hold the link of its key`)
  }
  return { provider: link.provider, subject: link.subject, display: link.display, linkedAt: link.linked_at }
}

/** `value` parsed as JSON, or null when it is none. */
function parseJson (value: string | null): unknown {
  try {
    return JSON.parse(value ?? 'null')
  } catch {
    return null
  }
}
