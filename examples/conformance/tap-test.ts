/**
 * docs/adapters.md's "Testing your adapter" with tap: the published suite
 * over the sketch's adapter. Run it as `npx tap tap-test.ts` with
 * DATABASE_URL set.
 */
import pg from 'pg'
import t from 'tap'
// a host imports from 'fastify-jwt-login/conformance'
import { userAdapterSuite } from '../../lib/conformance.js'
import { createUsersTable, dropUsersTable, sketchUsers } from './sketch-users.js'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const schema = await createUsersTable(pool)
t.teardown(async () => {
  await dropUsersTable(pool, schema)
  await pool.end()
})

// tap's `t.test`, bound to `t`, is the test function
await userAdapterSuite({ test: t.test.bind(t), create: async () => sketchUsers(pool, schema) })
