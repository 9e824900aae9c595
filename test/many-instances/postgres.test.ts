import { randomBytes } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { runManyInstances } from '../helpers/many-instances.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

// Three host processes on the local PostgreSQL, in a schema of this run's own (dropped at the end);
// each host runs the store's migrate() at start, all three at once.
const schema = `jwt_login_many_${randomBytes(6).toString('hex')}`
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)

await runManyInstances(t, {
  kind: 'postgres',
  env: { DATABASE_URL, PG_TABLE: `${schema}.jwt_login_state` },
  cleanup: async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
    await admin.end()
  }
})
