/**
 * A jwt-login user adapter on PostgreSQL (the `users` table of schema.sql).
 * A host imports `hashPassword`, `verifyPasswordHash` and the types from 'fastify-jwt-login'; this example
 * imports the plugin's source.
 */
import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import { hashPassword, IdentityTakenError, UserExistsError, verifyPasswordHash, type IdentityDetails, type LinkedIdentity, type NewProviderUser, type PublicUser, type UserAdapter } from '../../lib/index.js'
import { qualified } from './migrate.js'

/** A row of `users`, as the adapter reads it. */
export interface PostgresUser {
  id: number
  login: string
  email: string
  display_name: string
  roles: string[]
  password_hash: string
  /** Whether the user proved they receive mail at `email` (see schema.sql for the default). */
  email_verified: boolean
  /** False for a user created without a password (a provider sign-in) until one is set. */
  has_password: boolean
}

export interface NewUser {
  login: string
  email: string
  password: string
  displayName?: string
  roles?: string[]
  /** Default true: a user of the host's own sign-up is one the host vouches for. */
  emailVerified?: boolean
}

const COLUMNS = 'id, login, email, display_name, roles, password_hash, email_verified, has_password'

/** A row of `jwt_login_identities`, as listIdentities reads it. */
interface IdentityRow {
  provider: string
  subject: string
  display: string | null
  linked_at: Date
}

/** PostgreSQL's unique_violation: a taken email (any case) or login. */
export const UNIQUE_VIOLATION = '23505'

export class PostgresUserAdapter implements UserAdapter<PostgresUser> {
  readonly #pool: pg.Pool
  readonly #users: string
  readonly #identities: string

  constructor (pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#users = qualified(schema, 'users')
    this.#identities = qualified(schema, 'jwt_login_identities')
  }

  /**
   * The host's sign-up. The password is hashed with the plugin's argon2id
   * parameters, so a wrong password costs what an unknown user costs (no
   * timing difference to enumerate accounts with). A taken email, in any
   * case, rejects with `code` UNIQUE_VIOLATION from the unique index.
   */
  async addUser (input: NewUser): Promise<PostgresUser> {
    return await this.#insert(input, true)
  }

  /**
   * `POST /users` (with the password chosen) and OpenID auto-registration
   * (without: the stored hash is of a random password nobody knows, so
   * password login fails for them at the usual argon2id cost, and
   * `has_password` is false until `setPassword`). Two
   * requests racing for one email (any case) or login meet the unique
   * indexes: the loser's unique_violation becomes `UserExistsError`, which
   * the plugin answers 409 / 38 at `POST /users`, and on a provider sign-in
   * by looking the email up again and signing in the user the winner made.
   * `emailVerified` is false at `POST /users` and true from a provider that
   * vouches for the email; not given, the user counts as verified.
   */
  async createUser (input: NewProviderUser): Promise<PostgresUser> {
    try {
      return await this.#insert({
        login: input.login,
        email: input.email,
        password: input.password ?? randomBytes(32).toString('base64url'),
        displayName: input.displayName,
        roles: [input.role],
        emailVerified: input.emailVerified
      }, input.password !== undefined)
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw new UserExistsError()
      throw error
    }
  }

  /** Password reset: the plugin has checked the code; store the new hash. A user made by a provider has a password from now on. */
  async setPassword (user: PostgresUser, newPassword: string): Promise<void> {
    const hash = await hashPassword(newPassword)
    await this.#pool.query(`UPDATE ${this.#users} SET password_hash = $2, has_password = true WHERE id = $1`, [user.id, hash])
    user.password_hash = hash
    user.has_password = true
  }

  /**
   * Read from the row, not from `user`: the plugin asks it before unlinking
   * a provider, with a record it may have kept since the sign-in, and a
   * stale false there would refuse the unlink. A user gone meanwhile has none.
   */
  async hasPassword (user: PostgresUser): Promise<boolean> {
    const { rows } = await this.#pool.query<{ has_password: boolean }>(`SELECT has_password FROM ${this.#users} WHERE id = $1`, [user.id])
    return rows[0]?.has_password ?? false
  }

  async findByIdentity (provider: string, subject: string): Promise<PostgresUser | null> {
    return await this.#one(`SELECT ${COLUMNS} FROM ${this.#users} WHERE id = (SELECT user_id FROM ${this.#identities} WHERE provider = $1 AND subject = $2)`, provider, subject)
  }

  /**
   * Both rules of the port are the table's unique keys, (provider, subject)
   * and (user_id, provider), so the insert decides atomically and a conflict
   * on either inserts nothing. Only then is the holder read, by a second
   * statement, which sees a racing insert that has committed: when it is
   * this very link (the same sign-in twice), the first one stays and all is
   * well; otherwise the account or the provider is taken. A user deleted
   * meanwhile meets the foreign key: an error the plugin answers with 503.
   */
  async linkIdentity (user: PostgresUser, provider: string, subject: string, details: IdentityDetails): Promise<boolean> {
    const inserted = await this.#pool.query(
      `INSERT INTO ${this.#identities} (provider, subject, user_id, display, linked_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [provider, subject, user.id, details.display, new Date(details.linkedAt)]
    )
    if (inserted.rowCount === 1) return true
    const { rows } = await this.#pool.query<{ user_id: number }>(`SELECT user_id FROM ${this.#identities} WHERE provider = $1 AND subject = $2`, [provider, subject])
    if (rows[0]?.user_id !== user.id) throw new IdentityTakenError()
    return false
  }

  /** Oldest first; two links of one moment in the order of their names, so that the answer never varies. */
  async listIdentities (user: PostgresUser): Promise<LinkedIdentity[]> {
    const { rows } = await this.#pool.query<IdentityRow>(
      `SELECT provider, subject, display, linked_at FROM ${this.#identities} WHERE user_id = $1 ORDER BY linked_at, provider, subject`,
      [user.id]
    )
    return rows.map(row => ({ provider: row.provider, subject: row.subject, display: row.display, linkedAt: row.linked_at.getTime() }))
  }

  /** Only the user's own link goes: the row count tells whether there was one. */
  async unlinkIdentity (user: PostgresUser, provider: string, subject: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(`DELETE FROM ${this.#identities} WHERE user_id = $1 AND provider = $2 AND subject = $3`, [user.id, provider, subject])
    return rowCount === 1
  }

  /** Email verification: the plugin records that the user proved the address (or, false, that they have not). */
  async setEmailVerified (user: PostgresUser, verified: boolean): Promise<void> {
    await this.#pool.query(`UPDATE ${this.#users} SET email_verified = $2 WHERE id = $1`, [user.id, verified])
    user.email_verified = verified
  }

  /**
   * Email change: the plugin has proven the new address by a mailed code,
   * so it is stored verified. Another user with it (in any case) meets the
   * unique index on lower(email), atomically with the update: its
   * unique_violation becomes `UserExistsError`, and nothing changes.
   */
  async setEmail (user: PostgresUser, email: string): Promise<void> {
    try {
      await this.#pool.query(`UPDATE ${this.#users} SET email = $2, email_verified = true WHERE id = $1`, [user.id, email])
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw new UserExistsError()
      throw error
    }
    user.email = email
    user.email_verified = true
  }

  /** Case-insensitive, through the lower(email) index. */
  async findByEmail (email: string): Promise<PostgresUser | null> {
    return await this.#one(`SELECT ${COLUMNS} FROM ${this.#users} WHERE lower(email) = lower($1)`, email)
  }

  async findByLogin (login: string): Promise<PostgresUser | null> {
    return await this.#one(`SELECT ${COLUMNS} FROM ${this.#users} WHERE login = $1`, login)
  }

  async findById (id: number): Promise<PostgresUser | null> {
    return await this.#one(`SELECT ${COLUMNS} FROM ${this.#users} WHERE id = $1`, id)
  }

  /** False for a wrong password, and for a stored hash argon2 cannot read (it never throws). */
  async verifyPassword (user: PostgresUser, password: string): Promise<boolean> {
    return await verifyPasswordHash(user.password_hash, password)
  }

  /** The only user fields that reach a client or a token: never the hash. */
  toPublicUser (user: PostgresUser): PublicUser {
    return { ID: user.id, user_login: user.login, user_email: user.email, display_name: user.display_name, roles: user.roles, email_verified: user.email_verified }
  }

  /** `addUser`, and `createUser` with `hasPassword` false when the plugin gave no password. */
  async #insert (input: NewUser, hasPassword: boolean): Promise<PostgresUser> {
    const { rows } = await this.#pool.query<PostgresUser>(
      `INSERT INTO ${this.#users} (login, email, display_name, roles, password_hash, email_verified, has_password)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [input.login, input.email, input.displayName ?? input.login, input.roles ?? ['subscriber'], await hashPassword(input.password), input.emailVerified ?? true, hasPassword]
    )
    return rows[0] as PostgresUser
  }

  /**
   * The row or null: an absent user is `null`, never an error. A query that
   * fails throws, which the plugin answers with 503 / 201.
   */
  async #one (sql: string, ...values: Array<string | number>): Promise<PostgresUser | null> {
    const { rows } = await this.#pool.query<PostgresUser>(sql, values)
    return rows[0] ?? null
  }
}
