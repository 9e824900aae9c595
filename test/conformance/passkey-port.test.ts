// The passkey ports of the package and of the PostgreSQL example through the published suite, as an adapter author runs it.
import { test } from 'tap'
import { PostgresPasskeyStore } from '../../examples/postgres/passkeys.js'
import { passkeyPortSuite } from '../../lib/conformance.js'
import { MemoryPasskeyStore } from '../../lib/testing.js'
import { exampleSchema, type ExampleSchema } from '../helpers/postgres-example-schema.js'

// The memory store keeps credentials of any user id: nothing to make first.
await passkeyPortSuite({ test, title: 'MemoryPasskeyStore', create: async () => ({ port: new MemoryPasskeyStore() }) })

// Each test on a schema of its own; the table's foreign key wants each user the suite picks in `users` first.
const schemas = new WeakMap<object, ExampleSchema>()
await passkeyPortSuite({
  test,
  title: 'PostgresPasskeyStore',
  create: async () => {
    const made = await exampleSchema()
    const fixture = { port: new PostgresPasskeyStore(made.pool, made.schema), user: made.addUser }
    schemas.set(fixture, made)
    return fixture
  },
  destroy: async (fixture) => { await schemas.get(fixture)?.drop() }
})
