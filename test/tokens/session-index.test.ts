// The session index as a unit, on a memory store with a settable clock: the edges the routes do not reach.
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { providerLogoutKeys, SessionIndex, sessionIndexKey } from '../../lib/tokens/session-index.js'
import { REVOKED, stateKeys } from '../../lib/tokens/revocation.js'
import { newSessionId } from '../../lib/tokens/session-id.js'
import { testClock } from '../helpers/app.js'

const USER = 7
const HOUR = 60 * 60 * 1000

function setup (): { clock: ReturnType<typeof testClock>, store: MemoryStore, index: SessionIndex } {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  return { clock, store, index: new SessionIndex(store, clock) }
}

async function join (index: SessionIndex, clock: ReturnType<typeof testClock>, origin = { method: 'password' as const }): Promise<string> {
  const sessionId = newSessionId(clock.now)
  await index.add({ userId: USER, sessionId, endsAt: clock.now + HOUR, family: false, origin, ip: '192.0.2.1', userAgent: undefined })
  return sessionId
}

t.test('trim: within the bound nothing is read or written; a bound that every entry has left empties the index', async (t) => {
  const { clock, store, index } = setup()
  t.teardown(async () => { await store.close() })
  const one = await join(index, clock)
  t.same(await index.trim(USER, 5, async () => { throw new Error('nothing to end') }), [], 'within the bound (a concurrent trim got there first)')
  clock.advance(1)
  const two = await join(index, clock)
  await store.set(stateKeys.session(one), REVOKED, HOUR)
  await store.set(stateKeys.session(two), REVOKED, HOUR)
  clock.advance(1)
  const three = await join(index, clock)
  await store.set(stateKeys.session(three), REVOKED, HOUR)
  t.same(await index.trim(USER, 1, async () => { throw new Error('nothing live to end') }), [], 'every entry had ended: none to end')
  t.equal(await store.get(sessionIndexKey(USER)), '[]', 'and the index is empty')
})

t.test('extend: a provider session without a sid keeps its provider user\'s key only; a session missing from the index joins it', async (t) => {
  const { clock, store, index } = setup()
  t.teardown(async () => { await store.close() })
  const sessionId = await join(index, clock, { method: 'provider', provider: 'idp1', providerSubject: 'S'.repeat(43) } as never)
  await index.extend(USER, sessionId, clock.now + 10 * HOUR)
  t.equal(await store.get(providerLogoutKeys.subject('idp1', 'S'.repeat(43))), String(USER), 'the provider user\'s key, written with the new end')
  t.equal(await store.get(providerLogoutKeys.session('idp1', '')), null, 'no session key for a provider that gave no sid')
  await index.extend(USER, sessionId, clock.now + 5 * HOUR)
  t.match(await store.get(sessionIndexKey(USER)), new RegExp(`"${sessionId}",${clock.now + 10 * HOUR}`), 'an earlier end never shortens it')

  const missing = newSessionId(clock.now)
  await index.extend(USER, missing, clock.now + 3 * HOUR)
  t.match(JSON.parse(await store.get(sessionIndexKey(USER)) as string), [[sessionId], [missing, clock.now + 3 * HOUR, 1]], 'joined, as a refresh family without its origin')
})
