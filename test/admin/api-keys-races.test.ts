// API keys under concurrency, on the memory store and on Redis: creations against maxPerUser, creations against a sign-out everywhere, one key's limit; two instances on one Redis.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { MemoryStore } from '../../lib/store/memory.js'
import type { StateStore } from '../../lib/store/types.js'
import { createKey, keysApp, signIn, withKey, type KeysApp } from '../helpers/api-keys.js'
import { PREFIX } from '../helpers/http.js'
import { REDIS_URL, redisStore } from '../helpers/redis-store.js'
import { RedisStore } from '../../lib/redis.js'

const STORES: Array<['memory' | 'redis', (t: Test) => StateStore | undefined]> = [
  ['memory', () => new MemoryStore()],
  ['redis', (t) => redisStore(t, 'api-keys-races').store]
]

/** A keys app on the store `make` makes. */
async function appOn (t: Test, make: (t: Test) => StateStore | undefined, settings: Parameters<typeof keysApp>[0]): Promise<KeysApp & { store: StateStore }> {
  const store = make(t) as StateStore
  const built = await keysApp(settings, { store })
  t.teardown(() => built.app.close())
  return { ...built, store }
}

/**
 * Holds every write of a key's record until released: `arrived` resolves
 * once `count` creations wait there (past their gate, their read of the
 * index and their session's check), `release(n)` lets `n` of them go on.
 */
function holdRecords (store: StateStore, count: number): { arrived: Promise<void>, release: (n: number) => void } {
  const waiting: Array<() => void> = []
  let arrive: () => void = () => {}
  const arrived = new Promise<void>(resolve => { arrive = resolve })
  const set = store.set.bind(store)
  store.set = async (key, value, ttlMs) => {
    if (key.startsWith('api-key:')) {
      await new Promise<void>(resolve => { waiting.push(resolve) })
      if (waiting.length === 0) store.set = set
    }
    await set(key, value, ttlMs)
  }
  const check = (): void => { if (waiting.length >= count) arrive() }
  const timer = setInterval(check, 2)
  arrived.then(() => { clearInterval(timer) }, () => {})
  return { arrived, release: (n) => { for (const go of waiting.splice(0, n)) go() } }
}

/** How many of `statuses` are each status. */
function tally (statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

for (const [kind, make] of STORES) {
  t.test(`${kind}: 50 creations at once leave exactly maxPerUser keys; the others answer 409 / 257`, async (t) => {
    const { app } = await appOn(t, make, { apiKeys: { maxPerUser: 10 } })
    const jwt = await signIn(app)
    const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => await createKey(app, jwt, { name: `key ${i}` })))
    t.same(tally(answers.map(res => res.statusCode)), { 200: 10, 409: 40 })
    t.ok(answers.filter(res => res.statusCode === 409).every(res => res.json().data.errorCode === 257))
    const listed = await app.jwtLogin.listApiKeys(1)
    t.equal(listed.length, 10)
    t.same(listed.map(key => key.id).sort(), answers.filter(res => res.statusCode === 200).map(res => res.json().data.id as string).sort(), 'the keys answered are the keys kept')
  })

  t.test(`${kind}: 50 creations against one sign-out everywhere: no key survives it`, async (t) => {
    const { app, store } = await appOn(t, make, { apiKeys: { maxPerUser: 100 } })
    const jwt = await signIn(app)
    const signOut = await signIn(app)
    const held = holdRecords(store, 50)
    const creations = Array.from({ length: 50 }, async (_, i) => await createKey(app, jwt, { name: `key ${i}` }))
    await held.arrived
    // half of them go on before the sign-out everywhere, the others while it runs
    held.release(25)
    await sleep(50)
    const everywhere = app.inject({ method: 'DELETE', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${signOut}` } })
    held.release(25)
    const [ended, ...answers] = await Promise.all([everywhere, ...creations])
    t.equal(ended?.statusCode, 200)
    const statuses = tally(answers.map(res => res.statusCode))
    t.same(Object.keys(statuses).filter(status => status !== '200' && status !== '401'), [], `created, or refused as from an ended session: ${JSON.stringify(statuses)}`)
    t.ok((statuses[200] ?? 0) > 0 && (statuses[401] ?? 0) > 0, 'some of each')
    t.same(await app.jwtLogin.listApiKeys(1), [], 'none listed')
    const keys = answers.filter(res => res.statusCode === 200).map(res => res.json().data.key as string)
    // each from its own client: past 20 wrong keys a client is answered 429
    const uses = await Promise.all(keys.map(async (key, i) => (await withKey(app, key, { path: '/any', ip: `10.7.0.${i}` })).statusCode))
    t.ok(uses.every(status => status === 401), `none of the ${keys.length} keys answered works`)
  })

  t.test(`${kind}: one key's limit holds under 50 requests at once; 429 / 256 with Retry-After, never 401`, async (t) => {
    const { app } = await appOn(t, make, { apiKeys: { limits: { perKey: { max: 20, window: '1m' } } } })
    const { key } = (await createKey(app, await signIn(app))).json().data as { key: string }
    const answers = await Promise.all(Array.from({ length: 50 }, async () => await withKey(app, key)))
    t.same(tally(answers.map(res => res.statusCode)), { 200: 20, 429: 30 })
    t.ok(answers.filter(res => res.statusCode === 429).every(res => res.json().data.errorCode === 256 && Number(res.headers['retry-after']) > 0))
  })

  t.test(`${kind}: 50 wrong keys at once from one client, the limit 20: 20 answer 401, the others 429 / 200 with Retry-After`, async (t) => {
    const { app } = await appOn(t, make, {})
    const { key } = (await createKey(app, await signIn(app))).json().data as { key: string }
    const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => await withKey(app, `jwtl_${'A'.repeat(16)}_${String(i).padStart(43, 'B')}`, { ip: '10.6.6.6' })))
    t.same(tally(answers.map(res => res.statusCode)), { 401: 20, 429: 30 })
    t.ok(answers.filter(res => res.statusCode === 429).every(res => res.json().data.errorCode === 200 && Number(res.headers['retry-after']) > 0))
    t.equal((await withKey(app, key, { ip: '10.6.6.6' })).statusCode, 429, 'the client is locked out, the right key too')
    t.equal((await withKey(app, key, { ip: '10.6.6.7' })).statusCode, 200, 'another client is not')
  })

  t.test(`${kind}: 50 ends of one key at once: one 200 and one api_key.revoked, the others 404 / 258`, async (t) => {
    const { app } = await appOn(t, make, {})
    const jwt = await signIn(app)
    const { id } = (await createKey(app, jwt)).json().data as { id: string }
    let events = 0
    app.jwtLogin.events.on('api_key.revoked', () => { events++ })
    const answers = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({ method: 'DELETE', url: `${PREFIX}/account/api-keys/${id}`, headers: { authorization: `Bearer ${jwt}` } })))
    t.same(tally(answers.map(res => res.statusCode)), { 200: 1, 404: 49 })
    t.ok(answers.filter(res => res.statusCode === 404).every(res => res.json().data.errorCode === 258))
    t.equal(events, 1)
  })
}

t.test('two instances on one Redis: a key created on one works on the other, ends there when revoked or locked here, and counts its limit once', async (t) => {
  const { store, prefix } = redisStore(t, 'api-keys-instances')
  const other = new RedisStore({ url: REDIS_URL, prefix })
  t.teardown(async () => { await other.close() })
  const settings = { apiKeys: { limits: { perKey: { max: 4, window: '1m' } } } }
  const a = await keysApp(settings, { store })
  const b = await keysApp(settings, { store: other })
  t.teardown(async () => { await a.app.close(); await b.app.close() })
  const jwt = await signIn(a.app)
  const first = (await createKey(a.app, jwt)).json().data as { key: string, id: string }
  t.equal((await withKey(b.app, first.key)).statusCode, 200, 'created on A, taken on B')
  t.equal((await withKey(a.app, first.key)).statusCode, 200)
  t.same((await Promise.all([withKey(a.app, first.key), withKey(b.app, first.key), withKey(a.app, first.key)])).map(res => res.statusCode).sort(), [200, 200, 429], 'one count across both')
  t.equal(await b.app.jwtLogin.revokeApiKey(1, first.id), true, 'revoked on B')
  t.equal((await withKey(a.app, first.key)).statusCode, 401, 'refused on A')

  const second = (await createKey(b.app, await signIn(b.app))).json().data as { key: string }
  t.equal((await withKey(a.app, second.key)).statusCode, 200)
  await a.app.jwtLogin.lockUser(1, { reason: 'compromised' })
  t.equal((await withKey(b.app, second.key)).statusCode, 401, 'locked on A, refused on B')
})
