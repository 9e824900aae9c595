// Where the session is kept in bearer mode: memory by default, an async store (a mobile secure store), a localStorage-like store shared by two clients.
import t, { type Test } from 'tap'
import { createClient, memoryStorage, type ClientStorage, type JwtLoginClient } from '../../lib/client.js'
import { ALICE, serve, webStorage } from '../helpers/client.js'

const LIFETIME = 15 * 60_000

/** A Web Storage-like store: `localStorage` of one origin, shared by the clients given it. */
t.test('memoryStorage: each client its own; the default', async (t) => {
  const { base } = await serve(t)
  const one = createClient({ baseUrl: base, storage: memoryStorage() })
  const two = createClient({ baseUrl: base, storage: memoryStorage() })
  t.teardown(() => { one.close(); two.close() })
  await one.signIn({ email: ALICE.email, password: ALICE.password })
  t.type(await one.token(), 'string')
  t.equal(await two.token(), undefined)
  const storage = memoryStorage()
  storage.setItem('k', 'v')
  t.equal(storage.getItem('k'), 'v')
  storage.removeItem('k')
  t.equal(storage.getItem('k'), null)
})

t.test('an async store (a mobile secure store): a client made later finds the session there', async (t) => {
  const { base } = await serve(t)
  const items = new Map<string, string>()
  const later = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 5)) }
  const storage: ClientStorage = {
    getItem: async (key) => { await later(); return items.get(key) ?? null },
    setItem: async (key, value) => { await later(); items.set(key, value) },
    removeItem: async (key) => { await later(); items.delete(key) }
  }
  const first = createClient({ baseUrl: base, storage })
  t.teardown(() => { first.close() })
  const { jwt, refresh_token: refresh } = await first.signIn({ email: ALICE.email, password: ALICE.password })
  t.same(JSON.parse(items.get('jwt-login') ?? 'null'), { jwt, refresh }, 'bearer mode keeps both tokens, as JSON, under the name')
  const second = createClient({ baseUrl: base, storage })
  t.teardown(() => { second.close() })
  t.equal(await second.token(), jwt)
  t.equal((await second.validate()).user.user_login, 'alice')
  await second.signOut()
  t.equal(items.has('jwt-login'), false, 'signed out: the key is removed')
})

/** A host and two clients on one localStorage-like store: the first signed in, the second found its session there. */
async function twoOnOneStore (t: Test): Promise<Awaited<ReturnType<typeof serve>> & { storage: ReturnType<typeof webStorage>, one: JwtLoginClient, two: JwtLoginClient }> {
  const served = await serve(t)
  const storage = webStorage()
  const one = createClient({ baseUrl: served.base, storage, now: served.clock })
  t.teardown(() => { one.close() })
  await one.signIn({ email: ALICE.email, password: ALICE.password })
  const two = createClient({ baseUrl: served.base, storage, now: served.clock })
  t.teardown(() => { two.close() })
  t.equal(await two.token(), one.jwt, 'the stored session')
  return { ...served, storage, one, two }
}

t.test('a localStorage-like store shared by two clients: one refreshes, the other takes its tokens instead of refreshing again', async (t) => {
  const { base, clock, refreshes, storage, one, two } = await twoOnOneStore(t)
  clock.advance(LIFETIME)
  const renewed = await one.token()
  t.equal(refreshes(), 1)
  t.equal(await two.token(), renewed, 'read from the store: no second refresh')
  t.equal(refreshes(), 1)
  t.equal(two.jwt, renewed)

  const named = createClient({ baseUrl: base, storage, name: 'other-api' })
  t.teardown(() => { named.close() })
  t.equal(await named.token(), undefined, 'another name, another key')
  await named.signIn({ email: ALICE.email, password: ALICE.password })
  t.same([...storage.items.keys()].sort(), ['jwt-login', 'other-api'])
})

t.test('the other client signed out of the shared store: this one finds it empty when its token is due and holds no session', async (t) => {
  const { clock, seen, storage, one, two } = await twoOnOneStore(t)
  await one.signOut()
  t.equal(storage.items.has('jwt-login'), false)
  clock.advance(LIFETIME)
  // the store is read again before a refresh: no refresh token is left, so no session and no request
  t.equal(await two.token(), undefined)
  t.equal(two.jwt, undefined)
  t.equal(seen.filter(line => line.endsWith('/auth/refresh')).length, 0)
})
