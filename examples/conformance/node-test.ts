/**
 * docs/adapters.md's "Testing your adapter" with node:test: the published
 * suite over the sketch's adapter. Run it as `node --import tsx --test
 * node-test.ts` (or `node --import tsx node-test.ts`) with DATABASE_URL set.
 */
import { after, test } from 'node:test'
import pg from 'pg'
// a host imports from 'fastify-jwt-login/conformance'
import { userAdapterSuite } from '../../lib/conformance.js'
import { createUsersTable, dropUsersTable, sketchUsers } from './sketch-users.js'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const schema = await createUsersTable(pool)
after(async () => {
  await dropUsersTable(pool, schema)
  await pool.end()
})

// every rule of the UserAdapter contract, one test each; what the adapter does not provide is skipped, named
await userAdapterSuite({ test, create: async () => sketchUsers(pool, schema) })
