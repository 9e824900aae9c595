// The cross-tab logic in Node: two clients with crossTab and one name share the session through Node's real BroadcastChannel; Web Locks and
// `document` are stubbed only inside the test of the branch that needs them (Node has neither), and put back after.
import t, { type Test } from 'tap'
import { createClient, type SessionEvent } from '../../lib/client.js'
import { ALICE, nextEvent, serve, webStorage } from '../helpers/client.js'

const LIFETIME = 15 * 60_000

/** Sets `globalThis[name]` for the rest of the test, and puts back what was there. */
function stubGlobal (t: Test, name: string, value: unknown): void {
  const before = Object.getOwnPropertyDescriptor(globalThis, name)
  Object.defineProperty(globalThis, name, { value, configurable: true, writable: true })
  t.teardown(() => {
    if (before === undefined) Reflect.deleteProperty(globalThis, name)
    else Object.defineProperty(globalThis, name, before)
  })
}

/** Web Locks as a page has them: one holder per name at a time, the others queued; a waiter gives up when its signal aborts. */
function webLocks (): { request: (name: string, options: { signal: AbortSignal }, work: () => Promise<unknown>) => Promise<unknown>, names: string[] } {
  const tails = new Map<string, Promise<unknown>>()
  const names: string[] = []
  return {
    names,
    request: async (name, { signal }, work) => {
      names.push(name)
      const before = tails.get(name) ?? Promise.resolve()
      let release = (): void => {}
      const mine = new Promise<void>((resolve) => { release = resolve })
      tails.set(name, before.then(async () => await mine))
      try {
        await new Promise<void>((resolve, reject) => {
          if (signal.aborted) { reject(signal.reason); return }
          signal.addEventListener('abort', () => { reject(signal.reason) }, { once: true })
          before.then(() => { resolve() }, reject)
        })
        return await work()
      } finally {
        release()
      }
    }
  }
}

t.test('two clients with crossTab and one name: a sign-in, a refresh and a sign-out in one reach the other', async (t) => {
  const { base, clock } = await serve(t)
  const storage = webStorage()
  const one = createClient({ baseUrl: base, storage, now: clock, crossTab: true, name: 'tabs-a' })
  const two = createClient({ baseUrl: base, storage, now: clock, crossTab: true, name: 'tabs-a' })
  const elsewhere = createClient({ baseUrl: base, now: clock, crossTab: true, name: 'tabs-b' })
  t.teardown(() => { one.close(); two.close(); elsewhere.close() })
  const seen: SessionEvent[] = []
  elsewhere.onSession((event) => { seen.push(event) })

  const signedIn = nextEvent(two, 'signed-in')
  const { jwt } = await one.signIn({ email: ALICE.email, password: ALICE.password })
  t.same(await signedIn, { type: 'signed-in', fromOtherTab: true })
  t.equal(two.jwt, jwt)

  clock.advance(LIFETIME)
  const refreshed = nextEvent(two, 'refreshed')
  const renewed = await one.refresh()
  t.same(await refreshed, { type: 'refreshed', fromOtherTab: true })
  t.equal(two.jwt, renewed)

  const out = nextEvent(two, 'signed-out')
  await one.signOut()
  t.same(await out, { type: 'signed-out', fromOtherTab: true })
  t.equal(two.jwt, undefined)
  t.same(seen, [], 'another name hears nothing')
})

t.test('Web Locks: two tabs refreshing at once take turns; the second takes the first one\'s tokens from the store', async (t) => {
  const locks = webLocks()
  stubGlobal(t, 'navigator', { locks })
  const { base, clock, refreshes } = await serve(t)
  const storage = webStorage()
  const one = createClient({ baseUrl: base, storage, now: clock, crossTab: true, name: 'locks-a' })
  t.teardown(() => { one.close() })
  await one.signIn({ email: ALICE.email, password: ALICE.password })
  const two = createClient({ baseUrl: base, storage, now: clock, crossTab: false, name: 'locks-a' })
  t.teardown(() => { two.close() })
  t.equal(await two.token(), one.jwt)
  clock.advance(LIFETIME)
  const [a, b] = await Promise.all([one.refresh(), two.refresh()])
  t.equal(refreshes(), 2, 'the tab without crossTab does not take the lock: both refreshed (the server\'s retry window makes that safe)')
  t.type(a, 'string')
  t.type(b, 'string')

  const three = createClient({ baseUrl: base, storage, now: clock, crossTab: true, name: 'locks-a' })
  t.teardown(() => { three.close() })
  await three.token()
  clock.advance(LIFETIME)
  locks.names.length = 0
  const [c, d] = await Promise.all([one.refresh(), three.refresh()])
  t.same(locks.names, ['locks-a:refresh', 'locks-a:refresh'])
  t.equal(refreshes(), 3, 'with the lock: one refresh for both tabs')
  t.equal(c, d)
})

t.test('a lock held too long: the wait gives up after lockWait and the tab refreshes without it', async (t) => {
  stubGlobal(t, 'navigator', {
    locks: {
      // a tab frozen while holding the lock: the request is granted never
      request: async (_name: string, { signal }: { signal: AbortSignal }) => await new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => { reject(signal.reason) }, { once: true })
      })
    }
  })
  const { base, clock, refreshes } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock, crossTab: true, name: 'frozen', lockWait: 100 })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME)
  const started = Date.now()
  const renewed = await client.refresh()
  t.ok(Date.now() - started >= 90, 'it waited for the lock first')
  t.equal(refreshes(), 1)
  t.equal(client.jwt, renewed)
})

t.test('a refresh refused while holding the lock: thrown as it is, not made again without the lock', async (t) => {
  stubGlobal(t, 'navigator', { locks: webLocks() })
  const { base, clock, refreshes } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock, crossTab: true, name: 'refused' })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(15 * 24 * 3600_000)
  await t.rejects(client.refresh(), { name: 'JwtLoginClientError', status: 401 })
  t.equal(refreshes(), 1)
  t.equal(client.jwt, undefined)
})

t.test('a runtime without BroadcastChannel: crossTab shares nothing, and the client works', async (t) => {
  stubGlobal(t, 'BroadcastChannel', undefined)
  const { base } = await serve(t)
  const one = createClient({ baseUrl: base, crossTab: true, name: 'no-channel' })
  t.teardown(() => { one.close() })
  const { jwt } = await one.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal(one.jwt, jwt)
})

t.test('a page (document): crossTab on by default, no background refresh while hidden, one when it shows again', async (t) => {
  const listeners: Array<() => void> = []
  const document = { visibilityState: 'hidden', addEventListener: (type: string, listener: () => void) => { if (type === 'visibilitychange') listeners.push(listener) } }
  stubGlobal(t, 'document', document)
  const { base, clock, refreshes } = await serve(t)
  const other = createClient({ baseUrl: base, now: clock, name: 'page' })
  const client = createClient({ baseUrl: base, now: clock, name: 'page', refreshAhead: 899 })
  t.teardown(() => { client.close(); other.close() })
  const told = nextEvent(other, 'signed-in')
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.same(await told, { type: 'signed-in', fromOtherTab: true }, 'crossTab by default in a page')
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(refreshes(), 0, 'hidden: the due refresh waits')
  const refreshed = nextEvent(client, 'refreshed')
  client.onSession(() => { client.close() })
  // past half the token's life: due at once when shown
  clock.advance(8 * 60_000)
  document.visibilityState = 'visible'
  for (const listener of listeners) listener()
  await refreshed
  t.equal(refreshes(), 1, 'shown: refreshed at once')
})
