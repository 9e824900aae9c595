// A schema of the PostgreSQL example made for one conformance test and dropped after it, with users of the ids a suite picks.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { migrate, qualified } from '../../examples/postgres/migrate.js'
import { DATABASE_URL } from './shared-stores.js'

export interface ExampleSchema {
  pool: pg.Pool
  schema: string
  /** Makes the row of `users` with this id (once: a second call finds it there). */
  addUser: (userId: number) => Promise<void>
  /** Drops the schema with everything in it and closes the pool. */
  drop: () => Promise<void>
}

/**
 * The example's tables in a schema of their own. Ten connections, so that
 * the suites' concurrent calls really meet in the database.
 */
export async function exampleSchema (): Promise<ExampleSchema> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 })
  const schema = `jwt_login_conformance_${randomBytes(6).toString('hex')}`
  await migrate(pool, schema)
  const users = qualified(schema, 'users')
  return {
    pool,
    schema,
    // the suites pick the ids, so the identity column is overridden; straight SQL, as no password is needed here
    addUser: async (userId) => {
      await pool.query(
        `INSERT INTO ${users} (id, login, email, display_name, password_hash) OVERRIDING SYSTEM VALUE
         VALUES ($1, $2, $3, $2, 'not a hash') ON CONFLICT (id) DO NOTHING`,
        [userId, `user-${userId}`, `user-${userId}@example.com`]
      )
    },
    drop: async () => {
      try {
        await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
      } finally {
        await pool.end()
      }
    }
  }
}
