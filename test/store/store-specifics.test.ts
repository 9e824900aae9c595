/**
 * The stores beyond the StateStore contract (which the published suite
 * checks on all four, in test/conformance/state-store*.test.ts): RedisStore's
 * prefixes and connections, MemoryStore's bounds, sweeps and warnings,
 * guardStore, and the request rate limit on the store.
 */
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import t from 'tap'
import { JwtLoginError, MemoryStore, type StateStore } from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'
import { StoreRateLimit } from '../../lib/http/rate-limit-store.js'
import { guardStore } from '../../lib/store/guard.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { ruledStore } from '../helpers/faults.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'

function uniquePrefix (): string {
  return `jwt-login-test-${randomBytes(6).toString('hex')}:`
}

t.test('RedisStore specifics', async (t) => {
  const admin = new Redis(REDIS_URL)
  t.teardown(async () => { await admin.quit() })

  t.test('two stores with different prefixes do not see each other', async (t) => {
    const a = uniquePrefix()
    const b = uniquePrefix()
    const storeA = new RedisStore({ client: admin, prefix: a })
    const storeB = new RedisStore({ client: admin, prefix: b })
    t.teardown(async () => { await deleteKeys(a); await deleteKeys(b) })
    await storeA.set('shared', 'from-a', 10_000)
    await storeA.increment('count', 10_000)
    t.equal(await storeB.get('shared'), null)
    t.equal(await storeB.consume('shared'), null)
    t.equal((await storeB.increment('count', 10_000)).count, 1)
    t.equal(await storeA.get('shared'), 'from-a')
    t.equal(await admin.get(`${a}shared`), 'from-a', 'the key is written under the prefix')
    await storeB.delete('shared')
    t.equal(await storeA.get('shared'), 'from-a', 'delete in B leaves A alone')
  })

  t.test('the default prefix is jwt-login:', async (t) => {
    const key = `conformance-${randomBytes(6).toString('hex')}`
    const store = new RedisStore({ client: admin })
    t.teardown(async () => { await admin.del(`jwt-login:${key}`) })
    await store.set(key, 'v', 10_000)
    t.equal(await admin.get(`jwt-login:${key}`), 'v')
  })

  t.test('a client the store created is closed by close()', async (t) => {
    const store = new RedisStore({ url: REDIS_URL, prefix: uniquePrefix() })
    await store.get('warm-up')
    await Promise.all([store.close(), store.close()])
    await t.resolves(store.close(), 'closing again is fine')
    await t.rejects(store.get('after-close'), 'the connection is closed')
  })

  t.test('a client the host supplied is not closed by close()', async (t) => {
    const client = new Redis(REDIS_URL)
    t.teardown(async () => { await client.quit() })
    const store = new RedisStore({ client, prefix: uniquePrefix() })
    await store.close()
    t.equal(await client.ping(), 'PONG')
    t.equal(await store.get('still-works'), null)
  })
})

t.test('MemoryStore specifics', async (t) => {
  t.test('state is bounded: refuses new keys when full of live entries, 503 / 201; counters have their own bound', async (t) => {
    const clock = testClock()
    const warnings: string[] = []
    const store = new MemoryStore({ maxEntries: 2, clock, onWarning: (m) => warnings.push(m) })
    t.teardown(async () => { await store.close() })
    await store.set('a', '1', 1000)
    await store.set('b', '2', 5000)
    t.equal(warnings.length, 1, 'a warning before it refuses')
    t.match(warnings[0], /holds 2 of at most 2 state entries/)
    const full = await store.set('c', '3', 1000).catch((error: unknown) => error)
    t.ok(full instanceof JwtLoginError)
    t.equal((full as JwtLoginError).code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
    t.equal((full as JwtLoginError).statusCode, 503)
    t.equal((full as JwtLoginError).errorCode, 201)
    await t.rejects(store.compareAndSet('c', null, '3', 1000), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' })
    t.same(await store.increment('new-counter', 1000), { count: 1, ttlMs: 1000 }, 'counters do not compete with state')
    await store.set('a', 'replaced', 1000)
    t.equal(await store.get('a'), 'replaced', 'an existing key can still be replaced')
    t.equal(await store.get('b'), '2', 'nothing was evicted')
    clock.advance(1000)
    await store.set('c', '3', 1000)
    t.equal(await store.get('c'), '3', 'an expired entry made room')
    t.same(store.counts, { state: 2, counters: 1 }, 'the expired counter waits for its slice')
    t.equal(warnings.length, 1, 'one warning while it stays near full')
    await store.delete('b')
    await store.delete('c')
    await store.set('b', '2', 5000)
    await store.set('c', '3', 5000)
    t.equal(warnings.length, 2, 'warned again after it had emptied below the mark')
  })

  t.test('counters: when full, the oldest request rate is evicted (a warning a minute at most); lockout counters never are', async (t) => {
    const clock = testClock()
    const warnings: string[] = []
    const store = new MemoryStore({ maxCounters: 3, clock, onWarning: (m) => warnings.push(m) })
    t.teardown(async () => { await store.close() })
    await store.set('revocation', 'revoked', 600_000)
    await store.increment('fails:account', 600_000)
    for (const key of ['rate:a', 'rate:b']) await store.increment(key, 600_000)
    await store.increment('rate:c', 600_000)
    t.equal(await store.get('rate:a'), null, 'the oldest request rate went')
    t.equal(await store.get('fails:account'), '1', 'the older lockout counter stays')
    t.equal(await store.get('rate:c'), '1')
    t.equal(await store.get('revocation'), 'revoked', 'state is never evicted')
    t.equal(warnings.length, 1)
    t.match(warnings[0], /evicts the oldest request rates/)
    await store.increment('rate:d', 600_000)
    t.equal(warnings.length, 1, 'not again within a minute')
    t.same(store.counts, { state: 1, counters: 3 })

    // only lockout counters left: a new counter is refused, nothing is evicted
    const strict = new MemoryStore({ maxCounters: 2, clock, onWarning: (m) => warnings.push(m) })
    t.teardown(async () => { await strict.close() })
    await strict.increment('fails:x', 600_000)
    await strict.increment('fails:y', 600_000)
    clock.advance(60_000)
    await t.rejects(strict.increment('rate:new', 600_000), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' })
    await t.rejects(strict.increment('fails:z', 600_000), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' })
    t.equal(await strict.get('fails:x'), '1', 'a lockout counter is never evicted')
    t.match(warnings.at(-1), /none of them evictable/)
    t.same((await strict.increment('fails:x', 600_000)).count, 2, 'an existing counter still counts')
    clock.advance(600_000)
    t.same(await strict.increment('fails:z', 600_000), { count: 1, ttlMs: 600_000 }, 'expired counters make room')

    const custom = new MemoryStore({ maxCounters: 1, evictable: (key) => key.startsWith('mine:') })
    t.teardown(async () => { await custom.close() })
    await custom.increment('mine:1', 600_000)
    await custom.increment('mine:2', 600_000)
    t.equal(await custom.get('mine:1'), null, 'the evictable predicate is an option')
  })

  t.test('state: when full, one whole sweep a second finds expired entries the slices have not reached', async (t) => {
    const clock = testClock()
    const store = new MemoryStore({ maxEntries: 20, sweepBatch: 5, clock })
    t.teardown(async () => { await store.close() })
    for (let i = 0; i < 20; i++) await store.set(`s${i}`, '1', i < 10 ? 100 : 600_000)
    clock.advance(101)
    await store.set('new', '1', 600_000)
    t.equal(store.counts.state, 11, 'the ten expired entries went in one sweep')
  })

  t.test('warnings go to an attached logger unless the store was built with onWarning', async (t) => {
    const lines: Array<[object, string]> = []
    const log = { warn: (details: object, message: string) => { lines.push([details, message]) }, error: () => {} }
    const store = new MemoryStore({ maxEntries: 2, maxCounters: 1 })
    t.teardown(async () => { await store.close() })
    store.attachLogger(log)
    await store.set('a', '1', 10_000)
    await store.set('b', '1', 10_000)
    await store.increment('rate:1', 10_000)
    await store.increment('rate:2', 10_000)
    t.match(lines.map(([details]) => details), [{ store: 'memory', state: 2 }, { store: 'memory', state: 2 }])
    t.match(lines[0]?.[1], /state entries/)
    t.match(lines[1]?.[1], /evicts the oldest/)

    const own: string[] = []
    const quiet = new MemoryStore({ maxEntries: 1, onWarning: (m) => own.push(m) })
    t.teardown(async () => { await quiet.close() })
    quiet.attachLogger(log)
    await quiet.set('a', '1', 10_000)
    t.equal(own.length, 1, 'onWarning stays')
    t.equal(lines.length, 2)

    const silent = new MemoryStore({ maxEntries: 1 })
    t.teardown(async () => { await silent.close() })
    await t.resolves(silent.set('a', '1', 10_000), 'no logger: no warning, no error')
  })

  t.test('a key moves between kinds: set over a counter, increment of a set value', async (t) => {
    const store = new MemoryStore()
    t.teardown(async () => { await store.close() })
    await store.increment('k', 10_000)
    await store.set('k', '5', 10_000)
    t.same(store.counts, { state: 1, counters: 0 })
    t.equal((await store.increment('k', 10_000)).count, 6, 'incremented in place')
    t.equal(await store.consume('k'), '6')
    t.equal(store.size, 0)
  })

  t.test('sweepSlice checks a bounded batch and resumes where it stopped', async (t) => {
    const clock = testClock()
    const store = new MemoryStore({ clock, sweepBatch: 4 })
    t.teardown(async () => { await store.close() })
    for (let i = 0; i < 6; i++) await store.set(`s${i}`, '1', 100)
    for (let i = 0; i < 3; i++) await store.increment(`c${i}`, 100)
    clock.advance(101)
    store.sweepSlice()
    t.same(store.counts, { state: 2, counters: 3 }, 'the first four state entries')
    store.sweepSlice()
    t.same(store.counts, { state: 0, counters: 1 }, 'the rest of the state, then two counters')
    store.sweepSlice()
    t.same(store.counts, { state: 0, counters: 0 })
    store.sweepSlice()
    t.equal(store.size, 0, 'a new round on an empty store')
  })

  t.test('sweep() drops expired entries; size counts entries', async (t) => {
    const clock = testClock()
    const store = new MemoryStore({ clock })
    t.teardown(async () => { await store.close() })
    t.equal(store.size, 0)
    await store.set('x', '1', 100)
    await store.set('y', '1', 200)
    await store.increment('z', 300)
    t.equal(store.size, 3)
    clock.advance(150)
    t.equal(store.size, 3, 'expired but not yet swept')
    store.sweep()
    t.equal(store.size, 2)
    clock.advance(1000)
    store.sweep()
    t.equal(store.size, 0)
  })

  t.test('the sweep timer drops expired entries', async (t) => {
    const clock = testClock()
    const store = new MemoryStore({ clock, sweepIntervalMs: 10 })
    t.teardown(async () => { await store.close() })
    await store.set('x', '1', 100)
    clock.advance(101)
    await sleep(40)
    t.equal(store.size, 0)
  })

  t.test('close() clears the entries', async (t) => {
    const store = new MemoryStore()
    await store.set('x', '1', 10_000)
    await store.close()
    t.equal(store.size, 0)
  })
})

function failingStore (): StateStore & { closed: boolean } {
  const fail = async (): Promise<never> => { throw new Error('store down') }
  return { get: fail, set: fail, compareAndSet: fail, consume: fail, increment: fail, delete: fail, closed: false }
}

t.test('guardStore: a store that throws instead of answering a rejected promise fails alike', async (t) => {
  const thrown = new Error('thrown at once')
  const store = { ...new MemoryStore(), getMany: () => { throw thrown }, get: () => { throw thrown } } as unknown as StateStore
  const guarded = guardStore(store)
  for (const [name, call] of [['get', () => guarded.get('k')], ['getMany', () => (guarded.getMany as NonNullable<StateStore['getMany']>)(['k'])]] as const) {
    const error = await call().catch((e: unknown) => e) as JwtLoginError
    t.equal(error.code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', `${name}: 503 / 201`)
    t.equal(error.cause, thrown, `${name} keeps the cause`)
  }
})

t.test('guardStore: every failure becomes 503 / 201 with the cause', async (t) => {
  const guarded = guardStore(failingStore())
  const calls: Array<[string, Promise<unknown>]> = [
    ['get', guarded.get('k')],
    ['set', guarded.set('k', 'v', 1000)],
    ['consume', guarded.consume('k')],
    ['increment', guarded.increment('k', 1000)],
    ['delete', guarded.delete('k')]
  ]
  for (const [name, call] of calls) {
    const error = await call.catch((e: unknown) => e)
    t.ok(error instanceof JwtLoginError, name)
    t.equal((error as JwtLoginError).code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', name)
    t.equal(((error as JwtLoginError).cause as Error).message, 'store down', `${name} keeps the cause`)
  }
  await t.resolves(async () => { await guarded.close?.() }, 'close of a store without close() is fine')

  const full = new MemoryStore({ maxEntries: 1 })
  const guardedFull = guardStore(full)
  await guardedFull.set('a', '1', 1000)
  const error = await guardedFull.set('b', '1', 1000).catch((e: unknown) => e) as JwtLoginError
  t.equal(error.code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.equal((error.cause as Error).message, 'memory store is full', 'a jwt-login error passes through unwrapped')
  t.equal(await guardedFull.get('a'), '1')
  t.equal(await guardedFull.consume('a'), '1')
  t.same(await guardedFull.increment('n', 1000), { count: 1, ttlMs: 1000 })
  await guardedFull.delete('n')
  t.same(await guardedFull.getMany?.(['a', 'absent']), [null, null], 'getMany reaches the store')
  await guardedFull.close?.()
  t.equal(full.size, 0, 'close reaches the store')
})

t.test('guardStore: getMany only when the store has it, its failure 503 / 201 too', async (t) => {
  t.equal(guardStore(failingStore()).getMany, undefined, 'a store without getMany: none, so readers fall back to get')
  const memory = new MemoryStore()
  t.teardown(async () => { await memory.close() })
  const store = ruledStore(memory)
  const guarded = guardStore(store)
  await memory.set('a', '1', 60_000)
  t.same(await guarded.getMany?.(['a', 'b']), ['1', null])
  store.rule = (method) => method === 'getMany'
  const error = await guarded.getMany?.(['a']).catch((e: unknown) => e) as JwtLoginError
  t.equal(error.code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.equal((error.cause as Error).message, 'injected getMany failure', 'with the cause')
})

t.test('guardStore: readAndIncrement only when the store has it, its failure 503 / 201 too', async (t) => {
  t.equal(guardStore(failingStore()).readAndIncrement, undefined, 'a store without it: none, so the limiter reads and counts apart')
  const memory = new MemoryStore()
  t.teardown(async () => { await memory.close() })
  const store = ruledStore(memory)
  const guarded = guardStore(store)
  await memory.set('a', '1', 60_000)
  t.same(await guarded.readAndIncrement?.(['a'], [{ key: 'n', ttlMs: 60_000 }]), { values: ['1'], counts: [{ count: 1, ttlMs: 60_000 }] })
  store.rule = (method, key) => method === 'increment' && key === 'n'
  const error = await guarded.readAndIncrement?.(['a'], [{ key: 'n', ttlMs: 60_000 }]).catch((e: unknown) => e) as JwtLoginError
  t.equal(error.code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.equal((error.cause as Error).message, 'injected readAndIncrement failure', 'with the cause (a rule on a counter\'s increment covers the batch)')
  store.rule = (method, key) => method === 'get' && key === 'a'
  await t.rejects(guarded.readAndIncrement?.(['a'], []) as Promise<unknown>, { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' }, 'and a rule on a read of its keys')
  store.rule = (method) => method === 'getMany'
  t.match(await guarded.readAndIncrement?.([], [{ key: 'n', ttlMs: 60_000 }]), { values: [], counts: [{ count: 2 }] }, 'no key read: no read to fail')
})

t.test('ruledStore: a getMany is also a get of each of its keys', async (t) => {
  const memory = new MemoryStore()
  t.teardown(async () => { await memory.close() })
  const store = ruledStore(memory)
  await memory.set('session:1', 's', 60_000)
  await memory.set('other', 'o', 60_000)
  store.rule = (method, key) => method === 'get' && key.startsWith('session:')
  await t.rejects(store.getMany(['other', 'session:1']), { message: 'injected getMany failure' }, 'a rule on reads of a key')
  t.same(await store.getMany(['other']), ['o'], 'other keys read')
  store.rule = (method, key) => method === 'getMany' && key === 'other session:1'
  await t.rejects(store.getMany(['other', 'session:1']), { message: 'injected getMany failure' }, 'a rule on the batch, its keys joined by spaces')
  t.same(await store.getMany(['session:1']), ['s'])
})

t.test('a failing store makes login answer 503 / 201 (rate limit store fails first)', async (t) => {
  const { app } = await buildApp({}, { store: failingStore(), startDegraded: true })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { success: false, data: { message: 'A dependency is unavailable; nothing was changed.', errorCode: 201, error_code: 201 } })
})

t.test('a store that fails only on reads makes login answer 503 / 201 from the flow', async (t) => {
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  const readsFail = ruledStore(store)
  readsFail.rule = (method) => method === 'get'
  const { app } = await buildApp({}, { store: readsFail, startDegraded: true })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(res.statusCode, 503)
  t.equal(res.json().data.errorCode, 201)
})

t.test('request rate limit per IP: 429 / 200 with Retry-After', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true }, limits: { requestsPerIp: { max: 2, window: '1m' } } })
  t.teardown(() => app.close())
  // a route that spends something guessable (validate, revoke and refresh need a token no one can guess, and are not counted)
  const login = async (): Promise<Awaited<ReturnType<typeof app.inject>>> =>
    await app.inject({ method: 'POST', url: '/jwt-login/v1/auth' })
  t.equal((await login()).statusCode, 400)
  t.equal((await login()).statusCode, 400)
  const limited = await login()
  t.equal(limited.statusCode, 429)
  t.same(limited.json(), { success: false, data: { message: 'Too many requests; retry later.', errorCode: 200, error_code: 200 } })
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After is ${retryAfter}`)
  const other = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', remoteAddress: '10.0.0.9' })
  t.equal(other.statusCode, 400, 'another IP has its own count')
  for (let i = 0; i < 3; i++) {
    const open = await app.inject({ method: 'GET', url: '/jwt-login/v1/auth/validate' })
    t.equal(open.statusCode, 400, 'validate does not count against the limit')
    t.notOk('x-ratelimit-limit' in open.headers, 'and sends no rate-limit headers')
    const refresh = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/refresh' })
    t.equal(refresh.statusCode, 400, 'nor does refresh')
    t.notOk('x-ratelimit-limit' in refresh.headers)
  }
})

t.test('StoreRateLimit counts through the state store and reports its errors', async (t) => {
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  const limit = new StoreRateLimit(store)
  t.equal(limit.child(), limit)
  const ok = await new Promise<unknown[]>(resolve => { limit.incr('1.2.3.4', (...args) => resolve(args), 60_000) })
  t.same(ok, [null, { current: 1, ttl: 60_000 }])
  t.equal(await store.get('rate:1.2.3.4'), '1', 'the counter lives under rate:<key>')

  const broken = new StoreRateLimit(failingStore())
  const failed = await new Promise<unknown[]>(resolve => { broken.incr('1.2.3.4', (...args) => resolve(args), 60_000) })
  t.equal(failed.length, 1)
  t.equal((failed[0] as Error).message, 'store down')
})
