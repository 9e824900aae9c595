/**
 * A jwt-login user adapter on PostgreSQL (the `users` table of schema.sql).
 * A host imports `hashPassword`, `verifyPasswordHash` and the types from 'fastify-jwt-login'; this example
 * imports the plugin's source.
 */
import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import { hashPassword, UserExistsError, verifyPasswordHash, type NewProviderUser, type PublicUser, type UserAdapter } from '../../lib/index.js'
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

const COLUMNS = 'id, login, email, display_name, roles, password_hash, email_verified'

/** PostgreSQL's unique_violation: a taken email (any case) or login. */
export const UNIQUE_VIOLATION = '23505'

export class PostgresUserAdapter implements UserAdapter<PostgresUser> {
  readonly #pool: pg.Pool
  readonly #users: string

  constructor (pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#users = qualified(schema, 'users')
  }

  /**
   * The host's sign-up. The password is hashed with the plugin's argon2id
   * parameters, so a wrong password costs what an unknown user costs (no
   * timing difference to enumerate accounts with). A taken email, in any
   * case, rejects with `code` UNIQUE_VIOLATION from the unique index.
   */
  async addUser (input: NewUser): Promise<PostgresUser> {
    const { rows } = await this.#pool.query<PostgresUser>(
      `INSERT INTO ${this.#users} (login, email, display_name, roles, password_hash, email_verified)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [input.login, input.email, input.displayName ?? input.login, input.roles ?? ['subscriber'], await hashPassword(input.password), input.emailVerified ?? true]
    )
    return rows[0] as PostgresUser
  }

  /**
   * `POST /users` (with the password chosen) and OpenID auto-registration
   * (without: the stored hash is of a random password nobody knows, so
   * password login fails for them at the usual argon2id cost). Two
   * requests racing for one email (any case) or login meet the unique
   * indexes: the loser's unique_violation becomes `UserExistsError`, which
   * the plugin answers 409 / 38 at `POST /users`, and on a provider sign-in
   * by looking the email up again and signing in the user the winner made.
   * `emailVerified` is false at `POST /users` and true from a provider that
   * vouches for the email; not given, the user counts as verified.
   */
  async createUser (input: NewProviderUser): Promise<PostgresUser> {
    try {
      return await this.addUser({
        login: input.login,
        email: input.email,
        password: input.password ?? randomBytes(32).toString('base64url'),
        displayName: input.displayName,
        roles: [input.role],
        emailVerified: input.emailVerified
      })
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw new UserExistsError()
      throw error
    }
  }

  /** Password reset: the plugin has checked the code; store the new hash. */
  async setPassword (user: PostgresUser, newPassword: string): Promise<void> {
    await this.#pool.query(`UPDATE ${this.#users} SET password_hash = $2 WHERE id = $1`, [user.id, await hashPassword(newPassword)])
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

  /**
   * The row or null: an absent user is `null`, never an error. A query that
   * fails throws, which the plugin answers with 503 / 201.
   */
  async #one (sql: string, value: string | number): Promise<PostgresUser | null> {
    const { rows } = await this.#pool.query<PostgresUser>(sql, [value])
    return rows[0] ?? null
  }
}
