import { randomBytes } from 'node:crypto'
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import { UserExistsError, type IdentityDetails, type LinkedIdentity, type NewUser, type PublicUser, type UserAdapter } from '../adapters/users.js'
import { requirePeer } from '../core/peer.js'
import type { WordPressHashWrite } from './hashes.js'
import { isWordPressLogin } from './names.js'
import { parseCapabilities } from './roles.js'
import { insertUser } from './user-create.js'
import { findLinkedUserId, hasPassword, linkIdentity, listIdentities, unlinkIdentity } from './user-identities.js'
import { inTransaction, underLock } from './user-lock.js'
import { hashTypedWordPressPassword, rehashTypedPassword, verifyTypedWordPressPassword, WRITTEN_FORMAT } from './user-passwords.js'
import { EMAIL_VERIFIED_KEY, emailVerifiedOf, NO_PASSWORD_KEY, noPasswordMark, statementsFor, type Statements, type UserRow, type WordPressUser } from './user-sql.js'

export { nicenameOf } from './names.js'
export type { WordPressUser } from './user-sql.js'

const mysql = requirePeer<typeof import('mysql2/promise')>('mysql2/promise', 'fastify-jwt-login/wordpress')

/** The longest email WordPress stores (its user_email column; wp_insert_user refuses a longer one). */
const MAX_EMAIL_LENGTH = 100

/** Where the WordPress database is, and how the adapter writes passwords. */
export interface WordPressUserAdapterOptions {
  /** A host's mysql2/promise pool (the host closes it), or */
  pool?: Pool
  /** a connection URI for a pool the adapter owns and closes in close(). Exactly one of pool and uri. */
  uri?: string
  /** WordPress's $table_prefix (default 'wp_'); letters, digits and underscores only (refuse anything else at construction: it is put into SQL). */
  tablePrefix?: string
  /**
   * Which hash setPassword, createUser (and upgrades) write (default
   * 'wordpress'; 'bcrypt' while a WordPress before 6.8 shares the tables):
   * in a WordPress form of the password as WordPress slashes it, as
   * 'argon2id' of the password as typed (see hashTypedWordPressPassword).
   */
  hashes?: WordPressHashWrite
  /**
   * After a successful password sign-in with a hash not in the `hashes` form
   * (phpass, MD5, plain bcrypt, …), rewrite it in that form (default false):
   * the adapter then has `rehashPassword`, which the sign-in calls.
   */
  upgradeOnSignIn?: boolean
}

/** A table prefix WordPress accepts: it is put into SQL, so nothing else passes. */
const TABLE_PREFIX = /^[A-Za-z0-9_]+$/

/** What a pool the adapter creates gets besides the URI: IDs beyond 2^53 arrive as strings, and a dead server fails fast. */
const POOL_DEFAULTS = Object.freeze({ supportBigNumbers: true, connectTimeout: 2000, connectionLimit: 10 })

/** A user ID as a number; an ID past 2^53 cannot be one exactly, so it throws. */
function userId (value: number | string): number {
  const id = Number(value)
  if (!Number.isSafeInteger(id)) throw new Error('a WordPress user ID is beyond the integers JavaScript holds exactly')
  return id
}

/**
 * Users of an existing WordPress database (MySQL or MariaDB), for a host
 * that keeps WordPress running beside it. Reads `<prefix>users` and the
 * `<prefix>capabilities` user meta; creates users and sets passwords as
 * WordPress's own wp_insert_user and wp_set_password do, so WordPress keeps
 * working with every user the plugin creates or changes. Every statement is
 * parameterised; only the validated table prefix is part of the SQL text.
 *
 * Email and login lookups compare through the columns' collation, which is
 * case-insensitive in every collation WordPress picks. WordPress does not
 * make either column unique: of several matching users, the lowest ID wins.
 *
 * Whether a user's email is verified is the user meta
 * `jwt_login_email_verified` ('1' or '0'); a user without it (one WordPress
 * made) counts as verified: see emailVerifiedOf.
 *
 * A linked provider account is one user meta row, which WordPress deletes
 * with the user: key `jwt_login_identity_<provider>_<SHA-256 of the subject,
 * hex>`, value JSON of `provider`, `subject`, `display`, `linked_at` (ms);
 * written under createUser's lock (see user-identities.ts). A user created
 * without a password has the `jwt_login_no_password` mark until their hash
 * changes (see NO_PASSWORD_KEY); every other user has a password.
 *
 * WordPress caches users in its object cache; with a persistent object cache
 * (Redis, Memcached) WordPress sees a change made here once its entry expires.
 */
export class WordPressUserAdapter implements UserAdapter<WordPressUser> {
  readonly #pool: Pool
  readonly #owned: boolean
  readonly #sql: Statements
  readonly #capabilitiesKey: string
  readonly #userLevelKey: string
  readonly #lockName: string
  readonly #hashes: WordPressHashWrite

  /**
   * With `upgradeOnSignIn` only (else absent, and the sign-in asks nothing):
   * rewrites the hash of a user whose `password` `verifyPassword` has just
   * accepted in the `hashes` form (a WordPress form of the password
   * slashed, argon2id of it as typed), when it is in another form, only if
   * the row still holds the hash the user was read with (a concurrent
   * password change wins), and then updates `user.user_pass`. A plain
   * bcrypt hash is not rewritten from a password bcrypt read only in part
   * (over 72 bytes, or with a NUL). Throws when the update fails (a
   * database user without UPDATE, say): the sign-in goes on with the old
   * hash, warns and emits `password.rehash_failed`, and the next one tries
   * again.
   */
  readonly rehashPassword?: (user: WordPressUser, password: string) => Promise<boolean>

  constructor (options: WordPressUserAdapterOptions) {
    if ((options.pool === undefined) === (options.uri === undefined)) {
      throw new Error('WordPressUserAdapter: give exactly one of the options "pool" and "uri"')
    }
    const prefix = options.tablePrefix ?? 'wp_'
    if (!TABLE_PREFIX.test(prefix)) {
      throw new Error('WordPressUserAdapter: the option "tablePrefix" may hold only letters, digits and underscores')
    }
    this.#sql = statementsFor(prefix)
    this.#capabilitiesKey = `${prefix}capabilities`
    this.#userLevelKey = `${prefix}user_level`
    this.#lockName = `${prefix}jwt_login_create_user`
    this.#hashes = options.hashes ?? 'wordpress'
    if (!Object.hasOwn(WRITTEN_FORMAT, this.#hashes)) {
      throw new Error('WordPressUserAdapter: the option "hashes" must be "wordpress", "bcrypt" or "argon2id"')
    }
    this.#owned = options.pool === undefined
    this.#pool = options.pool ?? mysql.createPool({ ...POOL_DEFAULTS, uri: options.uri })
    if (options.upgradeOnSignIn === true) {
      this.rehashPassword = async (user, password) => await rehashTypedPassword(this.#pool, this.#sql, this.#hashes, user, password)
    }
  }

  /** The user with this email (case-insensitive through the column's collation), the lowest ID of several, or null. */
  async findByEmail (email: string): Promise<WordPressUser | null> {
    return await this.#find(this.#sql.findByEmail, email)
  }

  /** The user with this login (compared as WordPress compares it, through the column's collation), or null. */
  async findByLogin (login: string): Promise<WordPressUser | null> {
    return await this.#find(this.#sql.findByLogin, login)
  }

  /** The user with this ID, or null; an ID that is not a positive whole number is null without a query. */
  async findById (id: number): Promise<WordPressUser | null> {
    if (!Number.isSafeInteger(id) || id < 1) return null
    return await this.#find(this.#sql.findById, id)
  }

  /**
   * Whether `password`, as typed, matches the stored hash, in any form
   * WordPress has written (see verifyWordPressHash): a WordPress form
   * checked against the password as WordPress's forms slash it and as typed
   * (see verifyTypedWordPressPassword), argon2id as typed. False, never a throw, for
   * a wrong one. Changes nothing: `rehashPassword` upgrades the hash.
   */
  async verifyPassword (user: WordPressUser, password: string): Promise<boolean> {
    return await verifyTypedWordPressPassword(password, user.user_pass)
  }

  /**
   * The user's whole stored hash: it changes with every new password (each
   * hash has a fresh salt), whoever sets it (WordPress, WP-CLI, jwt-login's
   * reset or upgrade), as WordPress's own cookies end when a part of it
   * changes. The plugin keeps only a keyed hash of it. `null` while the
   * hash is still the one createUser stored for a user given no password.
   */
  passwordFingerprint (user: WordPressUser): string | null {
    const mark = user.no_password_mark
    return mark != null && mark === noPasswordMark(user.user_pass) ? null : user.user_pass
  }

  /** The fields a client may see: never the hash. */
  toPublicUser (user: WordPressUser): PublicUser {
    return {
      ID: user.ID,
      user_login: user.user_login,
      user_email: user.user_email,
      display_name: user.display_name,
      roles: [...user.roles],
      email_verified: user.email_verified
    }
  }

  /**
   * Stores a hash of `newPassword` in the `hashes` form and clears the
   * user's activation key (a pending WordPress reset link), as WordPress's
   * wp_set_password does. Throws when the user's row is gone.
   */
  async setPassword (user: WordPressUser, newPassword: string): Promise<void> {
    const hash = await hashTypedWordPressPassword(newPassword, this.#hashes)
    const [result] = await this.#pool.execute<ResultSetHeader>(this.#sql.setPassword, [hash, user.ID])
    if (result.affectedRows === 0) throw new Error(`WordPress user ${user.ID} no longer exists; the password was not changed`)
    user.user_pass = hash
  }

  /**
   * Creates a user as WordPress's wp_insert_user does: the row (a
   * user_nicename made unique with a -2, -3… suffix, user_registered in UTC)
   * and the user meta WordPress writes, the role among them. Without
   * `password` the stored hash is of a random token nobody knows. The login
   * must be one WordPress stores as given (isCleanLogin: else this throws,
   * where WordPress would store another name); the display name is written
   * as WordPress's filters leave it (wordPressDisplayName); with
   * `emailVerified` given, the `jwt_login_email_verified` meta too. One
   * transaction under a named lock (see underLock): a taken email or login
   * (as the columns' collation compares) throws `UserExistsError`.
   */
  async createUser (input: NewUser): Promise<WordPressUser> {
    if (!isWordPressLogin(input.login)) throw new Error('WordPressUserAdapter: WordPress would store another login than the one given (see isCleanLogin)')
    const hash = await hashTypedWordPressPassword(input.password ?? randomBytes(32).toString('base64url'), this.#hashes)
    return await underLock(this.#pool, this.#sql, this.#lockName, 'createUser', async (connection) => await insertUser(connection, this.#sql, { capabilities: this.#capabilitiesKey, userLevel: this.#userLevelKey }, input, hash))
  }

  /**
   * Records whether the user's email is verified: the user's
   * `jwt_login_email_verified` meta rows are replaced by one ('1' or '0'),
   * in one transaction under createUser's named lock, so two calls never
   * leave two rows. Throws when the user's row is gone.
   */
  async setEmailVerified (user: WordPressUser, verified: boolean): Promise<void> {
    await underLock(this.#pool, this.#sql, this.#lockName, 'setEmailVerified', async (connection) => {
      await this.#writeEmailVerified(connection, user.ID, verified)
    })
    user.email_verified = verified
  }

  /**
   * Changes the user's email (stored as given) and marks it verified, in one
   * transaction under createUser's named lock: an email another user has
   * (as the column's collation compares, case-insensitively) throws
   * `UserExistsError` and nothing changes. As WordPress's wp_insert_user
   * does, a pending reset link (the activation key) is voided, and an
   * email over 100 characters is refused (it throws). Throws when the user's
   * row is gone. WordPress's own email changes take no such lock.
   */
  async setEmail (user: WordPressUser, email: string): Promise<void> {
    if (email.length > MAX_EMAIL_LENGTH) throw new Error(`WordPressUserAdapter: WordPress stores emails of at most ${MAX_EMAIL_LENGTH} characters`)
    await underLock(this.#pool, this.#sql, this.#lockName, 'setEmail', async (connection) => {
      const [taken] = await connection.execute<RowDataPacket[]>(this.#sql.emailTaken, [email, user.ID])
      if (taken.length > 0) throw new UserExistsError()
      await connection.execute(this.#sql.setEmail, [email, user.ID])
      await this.#writeEmailVerified(connection, user.ID, true)
    })
    user.user_email = email
    user.email_verified = true
  }

  /**
   * Deletes the user's row and all their user meta (their links too), in one transaction.
   * Their posts, comments and links stay: reassigning or deleting content
   * is WordPress's to do. A user already gone resolves.
   */
  async deleteUser (user: WordPressUser): Promise<void> {
    const connection = await this.#pool.getConnection()
    try {
      await inTransaction(connection, async () => {
        await connection.execute(this.#sql.deleteMeta, [user.ID])
        await connection.execute(this.#sql.deleteUser, [user.ID])
      })
    } finally {
      connection.release()
    }
  }

  /** Whether the user has a password: see hasPassword in user-identities.ts. Throws when the user's row is gone. */
  async hasPassword (user: WordPressUser): Promise<boolean> {
    return await hasPassword(this.#pool, this.#sql, user.ID)
  }

  /** The user linked to the provider account (of several, the first linked), or null. */
  async findByIdentity (provider: string, subject: string): Promise<WordPressUser | null> {
    const id = await findLinkedUserId(this.#pool, this.#sql, provider, subject)
    return id === null ? null : await this.findById(userId(id))
  }

  /** Links the provider account to the user under createUser's named lock; a taken one throws `IdentityTakenError` (see linkIdentity in user-identities.ts). */
  async linkIdentity (user: WordPressUser, provider: string, subject: string, details: IdentityDetails): Promise<boolean> {
    return await linkIdentity(this.#pool, this.#sql, this.#lockName, user.ID, provider, subject, details)
  }

  /** The user's links, oldest first. */
  async listIdentities (user: WordPressUser): Promise<LinkedIdentity[]> {
    return await listIdentities(this.#pool, this.#sql, user.ID)
  }

  /** Removes the user's link of the provider account; resolves whether there was one. */
  async unlinkIdentity (user: WordPressUser, provider: string, subject: string): Promise<boolean> {
    return await unlinkIdentity(this.#pool, this.#sql, user.ID, provider, subject)
  }

  /** Ends the pool when the adapter created it (from `uri`); a host's pool stays open. */
  async close (): Promise<void> {
    if (this.#owned) await this.#pool.end()
  }

  /** The first user a find statement matches, with their roles, or null. */
  async #find (sql: string, value: string | number): Promise<WordPressUser | null> {
    const [rows] = await this.#pool.execute<UserRow[]>(sql, [EMAIL_VERIFIED_KEY, NO_PASSWORD_KEY, this.#capabilitiesKey, value])
    const row = rows[0]
    if (row === undefined) return null
    const ID = userId(row.ID)
    return {
      ID,
      user_login: row.user_login,
      user_email: row.user_email,
      display_name: row.display_name,
      user_pass: row.user_pass,
      roles: parseCapabilities(row.capabilities, ID, this.#capabilitiesKey),
      email_verified: emailVerifiedOf(row.email_verified),
      no_password_mark: row.no_password
    }
  }

  /** Replaces the user's email-verified meta rows by one (under the lock, in the transaction); throws when the user's row is gone. */
  async #writeEmailVerified (connection: PoolConnection, id: number, verified: boolean): Promise<void> {
    await connection.execute(this.#sql.deleteEmailVerified, [id, EMAIL_VERIFIED_KEY])
    const [inserted] = await connection.execute<ResultSetHeader>(this.#sql.addMeta, [EMAIL_VERIFIED_KEY, verified ? '1' : '0', id])
    if (inserted.affectedRows === 0) throw new Error(`WordPress user ${id} no longer exists; nothing was changed`)
  }
}
