// The PostgreSQL example's user adapter (examples/postgres/users.ts) through the published user adapter suite: a schema of its own for each rule.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { after, test } from 'tap'
import { migrate } from '../../examples/postgres/migrate.js'
import { PostgresUserAdapter, type PostgresUser } from '../../examples/postgres/users.js'
import { userAdapterSuite, type UserAdapterFixture } from '../../lib/conformance.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

// ten connections, so that the suite's concurrent calls really meet in the database
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 })
after(async () => { await pool.end() })

interface Made extends UserAdapterFixture<PostgresUser> {
  schema: string
}

await userAdapterSuite<PostgresUser, Made>({
  test,
  title: 'PostgresUserAdapter',
  create: async () => {
    const schema = `jwt_login_conform_${randomBytes(6).toString('hex')}`
    await migrate(pool, schema)
    const adapter = new PostgresUserAdapter(pool, schema)
    // the host's own sign-up: the example's addUser, not createUser
    return { adapter, addUser: async (user) => await adapter.addUser(user), schema }
  },
  destroy: async ({ schema }) => { await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`) }
})
