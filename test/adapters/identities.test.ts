// MemoryUserAdapter's linked identities beyond the port's contract (test/conformance/user-adapter.test.ts holds that): what only the memory adapter can be asked.
import t from 'tap'
import { MemoryUserAdapter } from '../../lib/testing.js'

const PASSWORD = 'a password of the sign-up'

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
