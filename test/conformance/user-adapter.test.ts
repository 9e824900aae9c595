// MemoryUserAdapter through the published user adapter suite: a fresh adapter for each rule, and one store for every rule.
import { test } from 'tap'
import { userAdapterSuite, type UserAdapterFixture } from '../../lib/conformance.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'

/**
 * The fixture over `adapter`. A host that records verification says so for
 * the users it seeds too: left out, the memory adapter leaves
 * `email_verified` out, as for a host that does not track it.
 */
function fixtureOf (adapter: MemoryUserAdapter): UserAdapterFixture<MemoryUser> {
  return { adapter, addUser: async (user) => await adapter.addUser({ ...user, emailVerified: true }) }
}

await userAdapterSuite({ test, title: 'MemoryUserAdapter', create: async () => fixtureOf(new MemoryUserAdapter()) })

// the suite's names are its own per test, so rules sharing one store never meet (fewer racing calls: the races ran above)
const shared = new MemoryUserAdapter()
await userAdapterSuite({ test, title: 'MemoryUserAdapter, one store for every rule', parallelism: 10, create: async () => fixtureOf(shared) })
