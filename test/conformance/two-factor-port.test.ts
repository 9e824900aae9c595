// The two-factor ports of the package and of the PostgreSQL example through the published suite, as an adapter author runs it.
import { test } from 'tap'
import { PostgresTwoFactorStore } from '../../examples/postgres/two-factor.js'
import { twoFactorPortSuite } from '../../lib/conformance.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { exampleSchema, type ExampleSchema } from '../helpers/postgres-example-schema.js'

await twoFactorPortSuite({
  test,
  title: 'MemoryTwoFactorStore',
  // the memory store reads nothing of the user's record: the id is enough
  create: async () => ({ port: new MemoryTwoFactorStore(), user: async (userId: number) => ({ id: userId }) })
})

// Each test on a schema of its own; the user adapter's record is the row's id, which is all the port reads.
const schemas = new WeakMap<object, ExampleSchema>()
await twoFactorPortSuite({
  test,
  title: 'PostgresTwoFactorStore',
  create: async () => {
    const made = await exampleSchema()
    const fixture = {
      port: new PostgresTwoFactorStore(made.pool, made.schema),
      user: async (userId: number) => {
        await made.addUser(userId)
        return { id: userId }
      }
    }
    schemas.set(fixture, made)
    return fixture
  },
  destroy: async (fixture) => { await schemas.get(fixture)?.drop() }
})
