// MemoryUserAdapter's linked identities: the conformance suite, and what only the memory adapter can be asked.
import t from 'tap'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { identityConformance } from '../helpers/identity-conformance.js'

const PASSWORD = 'a password of the sign-up'

identityConformance<MemoryUser>(t, 'MemoryUserAdapter', async () => {
  const adapter = new MemoryUserAdapter()
  return {
    adapter,
    addUser: async (email, options) => await adapter.addUser({ login: email.split('@')[0] as string, email, password: options?.password ?? PASSWORD })
  }
})

// One store for every case: the suite's names are its own per case, so cases must not meet in a shared store either.
const shared = new MemoryUserAdapter()
identityConformance<MemoryUser>(t, 'MemoryUserAdapter, one store for every case', async () => ({
  adapter: shared,
  addUser: async (email, options) => await shared.addUser({ login: email, email, password: options?.password ?? PASSWORD })
}))

t.test('a link to a user removed meanwhile is refused, and leaves no link behind', async (t) => {
  const users = new MemoryUserAdapter()
  const gone = await users.addUser({ login: 'gone', email: 'gone@example.com', password: PASSWORD })
  await users.removeUser(gone.ID)
  await t.rejects(users.linkIdentity(gone, 'github', '583231', { display: null, linkedAt: 1 }), { message: /no user/ }, 'not a taken identity: the store answers 503')
  t.equal(await users.findByIdentity('github', '583231'), null)
  const heir = await users.addUser({ login: 'heir', email: 'heir@example.com', password: PASSWORD })
  await users.linkIdentity(heir, 'github', '583231', { display: null, linkedAt: 2 })
  t.equal(await users.findByIdentity('github', '583231'), heir, 'the account is free for another user')
})
