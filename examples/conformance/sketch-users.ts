/**
 * The user adapter sketched in docs/adapters.md, made concrete over
 * PostgreSQL with `pg`: a `users` table in a schema of its own, and the
 * `addUser` the conformance suite seeds users with. A host imports from
 * 'fastify-jwt-login'; this example imports the plugin's source.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { hashPassword, verifyPasswordHash, type PublicUser, type UserAdapter } from '../../lib/index.js'

export interface Row { id: number, login: string, email: string, name: string, roles: string[], hash: string }

/** The adapter and how the suite seeds it (`userAdapterSuite`'s `create` resolves both). */
export interface SketchUsers {
  adapter: UserAdapter<Row>
  addUser (user: { login: string, email: string, password: string }): Promise<Row>
}

/** A schema of its own with the `users` table; answers its name. */
export async function createUsersTable (pool: pg.Pool): Promise<string> {
  const schema = `sketch_users_${randomBytes(6).toString('hex')}`
  await pool.query(`CREATE SCHEMA ${schema}`)
  await pool.query(`CREATE TABLE ${schema}.users (id serial PRIMARY KEY, login text UNIQUE NOT NULL, email text NOT NULL, name text NOT NULL, roles text[] NOT NULL, hash text NOT NULL)`)
  await pool.query(`CREATE UNIQUE INDEX ON ${schema}.users (lower(email))`)
  return schema
}

export async function dropUsersTable (pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
}

/** The sketch's adapter on `schema`. */
export function sketchUsers (pool: pg.Pool, schema: string): SketchUsers {
  const one = async (sql: string, params: unknown[]): Promise<Row | null> => (await pool.query<Row>(sql, params)).rows[0] ?? null
  const adapter: UserAdapter<Row> = {
    findByEmail: async (email) => await one(`SELECT * FROM ${schema}.users WHERE lower(email) = lower($1)`, [email]),
    findByLogin: async (login) => await one(`SELECT * FROM ${schema}.users WHERE login = $1`, [login]),
    findById: async (id) => await one(`SELECT * FROM ${schema}.users WHERE id = $1`, [id]),
    verifyPassword: async (user, password) => await verifyPasswordHash(user.hash, password),
    toPublicUser: (user): PublicUser => ({ ID: user.id, user_login: user.login, user_email: user.email, display_name: user.name, roles: user.roles }),
    setPassword: async (user, password) => {
      const hash = await hashPassword(password)
      await pool.query(`UPDATE ${schema}.users SET hash = $1 WHERE id = $2`, [hash, user.id])
      user.hash = hash
    }
  }
  const addUser: SketchUsers['addUser'] = async ({ login, email, password }) => {
    const { rows } = await pool.query<Row>(`INSERT INTO ${schema}.users (login, email, name, roles, hash) VALUES ($1, $2, $1, $3, $4) RETURNING *`,
      [login, email, ['subscriber'], await hashPassword(password)])
    return rows[0] as Row
  }
  return { adapter, addUser }
}
