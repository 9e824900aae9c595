import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { type MemoryUserAdapter } from '../../lib/testing.js'
import { subjectKey } from '../../lib/services/limits.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { errorCode, login } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'
import { clusterStore, postgresStore } from '../helpers/shared-stores.js'

type Teardown = Parameters<typeof redisStore>[0]

const WRONG = 120
const LIMIT = 10

/** A promise and the function that settles it. */
function gate (): { opened: Promise<void>, open: () => void } {
  let open = (): void => {}
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

/**
 * Counts the adapter's password verifications. With `burst`, each waits
 * until every request of the burst is either answered or verifying, so no
 * verification ends (and no success clears a failure) before every attempt
 * has been counted: the count does not depend on timing.
 */
function countVerifications (users: MemoryUserAdapter, burst?: { total: number, answered: () => number }): { count: () => number, settle: () => void } {
  const original = users.verifyPassword.bind(users)
  const held = gate()
  let count = 0
  const settle = (): void => { if (burst !== undefined && burst.answered() + count === burst.total) held.open() }
  users.verifyPassword = async (user, password) => {
    count++
    settle()
    if (burst !== undefined) await held.opened
    return await original(user, password)
  }
  return { count: () => count, settle }
}

async function fire (app: FastifyInstance, bodies: Array<Record<string, unknown>>, onAnswer: () => void = () => {}): Promise<LightMyRequestResponse[]> {
  return await Promise.all(bodies.map(async (body) => {
    const res = await login(app, body)
    onAnswer()
    return res
  }))
}

const stores: Array<[string, (t: Teardown) => Promise<StateStore | undefined>]> = [
  ['memory store', async () => undefined],
  ['Redis store', async (t) => redisStore(t, 'login-lockout').store],
  ['Redis Cluster store', async (t) => (await clusterStore(t, 'login-lockout')).store],
  ['PostgreSQL store', async (t) => (await postgresStore(t, 'login-lockout')).store]
]

for (const [name, makeStore] of stores) {
  t.test(`${name}: ${WRONG} parallel wrong passwords and the right one are verified at most ${LIMIT} times`, async (t) => {
    // every verification of the burst waits for the others: each needs a hashing slot
    const { app, users } = await buildApp({ passwordHashing: { concurrency: 1024 } }, { store: await makeStore(t) })
    t.teardown(() => app.close())
    const failures: Array<Record<string, unknown>> = []
    app.jwtLogin.events.on('login.failed', (e) => failures.push(e))

    const bodies = [
      { email: ALICE.email, password: ALICE.password },
      ...Array.from({ length: WRONG }, (_, i) => ({ email: ALICE.email, password: `wrong guess ${i}` }))
    ]
    let answered = 0
    const verifications = countVerifications(users, { total: bodies.length, answered: () => answered })
    const answers = await fire(app, bodies, () => { answered++; verifications.settle() })

    const statuses = answers.map(res => res.statusCode)
    const evaluated = statuses.filter(s => s === 200 || s === 401).length
    t.ok(verifications.count() <= LIMIT, `${verifications.count()} verifications`)
    t.equal(evaluated, verifications.count(), 'every verified attempt answered 200 or 401')
    t.ok(statuses.filter(s => s === 200).length <= 1)
    const refused = answers.filter(res => res.statusCode === 429)
    t.equal(refused.length, bodies.length - evaluated, 'every other attempt is refused')
    t.ok(refused.every(res => errorCode(res) === 200 && Number(res.headers['retry-after']) > 0), '429 / 200 with Retry-After')
    t.equal(failures.filter(f => f.reason === 'wrong_credentials').length, statuses.filter(s => s === 401).length)
    t.equal(failures.filter(f => f.reason === 'rate_limited').length, refused.length)
  })

  t.test(`${name}: ${WRONG + 1} parallel guesses at an unknown account are evaluated at most ${LIMIT} times`, async (t) => {
    const { app } = await buildApp({}, { store: await makeStore(t) })
    t.teardown(() => app.close())
    // each evaluated guess spends one dummy verification and emits one `wrong_credentials` event
    let evaluated = 0
    app.jwtLogin.events.on('login.failed', (e) => { if (e.reason === 'wrong_credentials') evaluated++ })
    const bodies = Array.from({ length: WRONG + 1 }, (_, i) => ({ email: 'Nobody@Example.com', password: `guess ${i}` }))
    const answers = await fire(app, bodies)
    t.equal(evaluated, LIMIT)
    t.equal(answers.filter(res => res.statusCode === 401).length, LIMIT)
    t.equal(answers.filter(res => res.statusCode === 429).length, WRONG + 1 - LIMIT)
    t.equal((await login(app, { email: 'nobody@example.com', password: 'one more' })).statusCode, 429, 'locked for the window')
    t.equal(evaluated, LIMIT)
  })
}

t.test('one counter per account, whichever identifier names it', async (t) => {
  const { app, users } = await buildApp({}, { clock: testClock() })
  t.teardown(() => app.close())
  const verifications = countVerifications(users)
  const identifiers = [{ username: 'alice' }, { email: 'ALICE@EXAMPLE.COM' }, { email: 'Alice@example.com' }]
  for (let i = 0; i < LIMIT; i++) {
    const res = await login(app, { ...identifiers[i % 3], password: `wrong ${i}` })
    t.equal(res.statusCode, 401)
  }
  t.equal(verifications.count(), LIMIT)
  for (const identifier of [...identifiers, { login: 'alice' }, { email: ALICE.email }]) {
    const res = await login(app, { ...identifier, password: ALICE.password })
    t.equal(res.statusCode, 429, JSON.stringify(identifier))
    t.equal(res.headers['retry-after'], '900')
  }
  t.equal(verifications.count(), LIMIT, 'the right password is not verified while locked')
})

t.test('an identifier that names no account counts under its trimmed, lower-case form', async (t) => {
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 3, window: '15m' } } })
  t.teardown(() => app.close())
  for (const email of ['ghost@example.com', ' GHOST@example.com', 'Ghost@Example.COM ']) {
    t.equal((await login(app, { email, password: 'wrong' })).statusCode, 401)
  }
  t.equal((await login(app, { email: 'ghost@EXAMPLE.com', password: 'wrong' })).statusCode, 429)
  t.equal((await login(app, { username: 'ghost', password: 'wrong' })).statusCode, 401, 'another identifier of no account is another subject')
})

t.test('known and unknown identifiers cost the same store work', async (t) => {
  const store = new MemoryStore()
  const calls: string[] = []
  for (const method of ['get', 'set', 'consume', 'increment', 'delete'] as const) {
    const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>
    ;(store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      calls.push(method)
      return await original(...args)
    }
  }
  // the limiter's read and counts in one call: each of its counters is an increment as well
  const batch = store.readAndIncrement.bind(store)
  store.readAndIncrement = async (read, increments, options) => {
    calls.push('readAndIncrement', ...increments.map(() => 'increment'))
    return await batch(read, increments, options)
  }
  const { app } = await buildApp({}, { store })
  t.teardown(() => app.close())
  const workOf = async (body: Record<string, unknown>): Promise<string[]> => {
    calls.length = 0
    const res = await login(app, body)
    t.equal(res.statusCode, 401)
    return [...calls]
  }
  const known = await workOf({ email: ALICE.email, password: 'wrong' })
  t.same(await workOf({ email: 'nobody@example.com', password: 'wrong' }), known, 'by email')
  t.same(await workOf({ username: ALICE.login, password: 'wrong' }), known, 'by login name, known')
  t.same(await workOf({ username: 'nobody', password: 'wrong' }), known, 'by login name, unknown')
  t.same(known.filter(call => call === 'increment').length, 6, 'the request limit; the identifier, the IP and the account; the failure')
})

t.test('a success forgives the failures before it, not an attempt still being checked', async (t) => {
  // the slow guess holds its hashing slot: the success beside it needs one of its own
  const { app, users } = await buildApp({ limits: { loginPerAccount: { max: 4, window: '15m' } }, passwordHashing: { concurrency: 2 } })
  t.teardown(() => app.close())
  const original = users.verifyPassword.bind(users)
  const held = gate()
  const verifying = gate()
  users.verifyPassword = async (user, password) => {
    if (password === 'slow guess') {
      verifying.open()
      await held.opened
    }
    return await original(user, password)
  }
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 1' })).statusCode, 401)
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 2' })).statusCode, 401)
  const slow = login(app, { email: ALICE.email, password: 'slow guess' })
  await verifying.opened
  t.equal((await login(app)).statusCode, 200, 'the fourth attempt')
  held.open()
  t.equal((await slow).statusCode, 401)
  // the two failures before the success are forgiven; the slow guess, failed after it, is not
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 3' })).statusCode, 401)
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 4' })).statusCode, 401)
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 5' })).statusCode, 401)
  t.equal((await login(app, { email: ALICE.email, password: 'wrong 6' })).statusCode, 429, 'the slow guess and three more make four')

  const fresh = await buildApp({ limits: { loginPerAccount: { max: 3, window: '15m' } } })
  t.teardown(() => fresh.app.close())
  for (let round = 0; round < 3; round++) {
    t.equal((await login(fresh.app, { email: ALICE.email, password: 'wrong' })).statusCode, 401)
    t.equal((await login(fresh.app, { email: ALICE.email, password: 'wrong' })).statusCode, 401)
    t.equal((await login(fresh.app)).statusCode, 200, 'two failures and a success, again and again')
  }
  for (let i = 0; i < 3; i++) t.equal((await login(fresh.app, { email: ALICE.email, password: 'wrong' })).statusCode, 401)
  t.equal((await login(fresh.app)).statusCode, 429, 'max failures after the last success lock')
})

t.test('successes do not use up the per-IP limit', async (t) => {
  const { app } = await buildApp({ limits: { loginPerIp: { max: 3, window: '15m' } } })
  t.teardown(() => app.close())
  for (let i = 0; i < 5; i++) t.equal((await login(app, undefined, '10.1.1.1')).statusCode, 200)
  for (let i = 0; i < 3; i++) {
    t.equal((await login(app, { email: `user-${i}@example.com`, password: 'wrong' }, '10.1.1.1')).statusCode, 401)
  }
  t.equal((await login(app, undefined, '10.1.1.1')).statusCode, 429, 'three failures lock the IP')
})

t.test('a refused attempt is not counted', async (t) => {
  const store = new MemoryStore()
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 2, window: '15m' }, loginPerIp: { max: 3, window: '15m' } } }, { store })
  t.teardown(() => app.close())
  for (let i = 0; i < 2; i++) t.equal((await login(app, { email: ALICE.email, password: 'wrong' })).statusCode, 401)
  // refused on the account after the lookup: the identifier and the IP get the attempt back
  const byLogin = await login(app, { username: ALICE.login, password: ALICE.password })
  t.equal(byLogin.statusCode, 429)
  t.equal(await store.get(`released:{${subjectKey('login:account', 'alice')}}`), '1')
  t.equal(await store.get(`released:{${subjectKey('login:user', '1')}}`), '1')
  // refused on the identifier before the lookup, then locked: the IP gets them back
  for (let i = 0; i < 4; i++) t.equal((await login(app, { email: ALICE.email, password: ALICE.password })).statusCode, 429)
  t.equal((await login(app, { email: 'bob@example.com', password: 'wrong' })).statusCode, 401, 'the IP has counted two failures: a third is allowed')
  t.equal((await login(app, { email: 'bob@example.com', password: 'wrong' })).statusCode, 429, 'a fourth is not')
})

t.test('a failing verification answers 503 and is given back', async (t) => {
  const { app, users } = await buildApp({ limits: { loginPerAccount: { max: 1, window: '15m' }, loginPerIp: { max: 1, window: '15m' } } })
  t.teardown(() => app.close())
  const original = users.verifyPassword.bind(users)
  users.verifyPassword = async (user, password) => {
    if (password === 'breaks the host') throw new Error('hash service down')
    return await original(user, password)
  }
  for (let i = 0; i < 3; i++) {
    const res = await login(app, { email: ALICE.email, password: 'breaks the host' })
    t.equal(res.statusCode, 503)
    t.equal(errorCode(res), 201)
  }
  t.equal((await login(app)).statusCode, 200, 'nothing was counted on the account or the IP')
})

t.test('a credit left over from an ended window is ignored', async (t) => {
  const store = new MemoryStore()
  await store.set(`forgiven:${subjectKey('login:account', 'ghost')}`, '50', 3_600_000)
  await store.set(`released:${subjectKey('login:ip', '10.3.3.3')}`, '50', 3_600_000)
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 3, window: '15m' }, loginPerIp: { max: 3, window: '15m' } } }, { store })
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) t.equal((await login(app, { username: 'ghost', password: 'wrong' }, '10.2.2.2')).statusCode, 401)
  t.equal((await login(app, { username: 'ghost', password: 'wrong' }, '10.2.2.2')).statusCode, 429, 'the account')
  for (let i = 0; i < 3; i++) t.equal((await login(app, { username: `ghost-${i}`, password: 'wrong' }, '10.3.3.3')).statusCode, 401)
  t.equal((await login(app, { username: 'ghost-3', password: 'wrong' }, '10.3.3.3')).statusCode, 429, 'the IP')
})

t.test('a success at the very end of a window leaves no credit behind', async (t) => {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  const { app, users } = await buildApp({}, { store, clock })
  t.teardown(() => app.close())
  const original = users.verifyPassword.bind(users)
  const held = gate()
  const verifying = gate()
  users.verifyPassword = async (user, password) => {
    verifying.open()
    await held.opened
    return await original(user, password)
  }
  const right = login(app)
  await verifying.opened
  clock.advance(15 * 60_000 - 500)
  held.open()
  t.equal((await right).statusCode, 200)
  for (const key of [`released:${subjectKey('login:user', '1')}`, `released:${subjectKey('login:ip', '127.0.0.1')}`]) {
    t.equal(await store.get(key), null)
  }
})
