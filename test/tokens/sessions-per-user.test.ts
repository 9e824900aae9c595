import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { generateBackupCodes, MemoryStore, type StateStore } from '../../lib/index.js'
import { SessionIndex, sessionIndexKey } from '../../lib/tokens/session-index.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { contendedStore } from '../helpers/faults.js'
import { errorOf } from '../helpers/http.js'
import { collect } from '../helpers/oauth.js'
import { redisStore } from '../helpers/redis-store.js'
import { BOB, buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

// Defect 5 of the attack report: nothing bounded one user's live sessions, so 1,999 sign-ins of one
// account filled a 2,000-entry memory store and every user's sign-in answered 503 afterwards.

const AUTH = '/jwt-login/v1/auth'
const signIn = async (app: Awaited<ReturnType<typeof buildApp>>['app'], password = ALICE.password): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password } })
const validate = async (app: Awaited<ReturnType<typeof buildApp>>['app'], jwt: string): Promise<number> =>
  (await app.inject({ method: 'POST', url: `${AUTH}/validate`, headers: { authorization: `Bearer ${jwt}` } })).statusCode

const stores: Array<[string, (t: Test) => StateStore]> = [
  ['memory', () => new MemoryStore()],
  ['redis', (t) => redisStore(t, 'sessions-per-user').store]
]

for (const [kind, makeStore] of stores) {
  t.test(`${kind}: beyond sessions.maxPerUser the user's oldest session ends, with an event`, async (t) => {
    const clock = testClock()
    const { app } = await buildApp({ refresh: { enabled: true }, sessions: { maxPerUser: 3 } }, { clock, store: makeStore(t) })
    t.teardown(() => app.close())
    const evicted = collect(app, 'session.evicted')
    const sessions: Array<{ jwt: string, refresh_token: string }> = []
    for (let i = 0; i < 5; i++) {
      clock.advance(1000)
      sessions.push((await signIn(app)).json().data)
    }
    t.same(await Promise.all(sessions.map(async s => await validate(app, s.jwt))), [401, 401, 200, 200, 200], 'the two oldest ended')
    t.equal(evicted.length, 2)
    t.same(evicted.map(e => e.reason), ['max_per_user', 'max_per_user'])
    const refreshed = await app.inject({ method: 'POST', url: `${AUTH}/refresh`, payload: { refresh_token: sessions[0]?.refresh_token } })
    t.same(errorOf(refreshed), [401, 51], 'its refresh token too')

    // a session the user ended makes room: no live session is ended for it
    await app.inject({ method: 'POST', url: `${AUTH}/revoke`, headers: { authorization: `Bearer ${String(sessions[4]?.jwt)}` } })
    clock.advance(1000)
    const next = (await signIn(app)).json().data
    t.equal(evicted.length, 2, 'nothing evicted')
    t.same(await Promise.all([sessions[2], sessions[3], next].map(async s => await validate(app, String(s?.jwt)))), [200, 200, 200])
  })

  t.test(`${kind}: without refresh tokens, sessions leave the index when their token expires`, async (t) => {
    const clock = testClock()
    const store = makeStore(t)
    const { app } = await buildApp({ sessions: { maxPerUser: 2 }, tokens: { keys: [{ kid: 'k1', secret: 'test-secret-that-is-at-least-32-bytes-long!' }], lifetime: '1m' } }, { clock, store })
    t.teardown(() => app.close())
    const evicted = collect(app, 'session.evicted')
    const first = (await signIn(app)).json().data.jwt
    clock.advance(1000)
    const second = (await signIn(app)).json().data.jwt
    clock.advance(1000)
    await signIn(app)
    t.equal(evicted.length, 1)
    t.equal(await validate(app, first), 401, 'the oldest ended')
    t.equal(await validate(app, second), 200)
    clock.advance(61_000)
    await signIn(app)
    await signIn(app)
    t.equal(evicted.length, 1, 'the expired sessions left on their own')
    const index = JSON.parse(await store.get(sessionIndexKey(1)) as string) as unknown[]
    t.equal(index.length, 2, 'the index holds the live sessions only')
  })

  t.test(`${kind}: limits.signInsPerAccount refuses sign-ins with the right password beyond it`, async (t) => {
    const clock = testClock()
    const { app, users } = await buildApp({ limits: { signInsPerAccount: { max: 3, window: '1h' } } }, { clock, store: makeStore(t) })
    t.teardown(() => app.close())
    await users.addUser({ login: 'bob', email: 'bob@example.com', password: 'bob password 1234', displayName: 'Bob' })
    const limited = collect(app, 'signin.limited')
    for (let i = 0; i < 3; i++) t.equal((await signIn(app)).statusCode, 200)
    t.same(errorOf(await signIn(app, 'a wrong password')), [401, 48], 'a wrong password is not a sign-in')
    const refused = await signIn(app)
    t.same(errorOf(refused), [429, 200])
    t.ok(Number(refused.headers['retry-after']) > 3500, 'Retry-After: the rest of the window')
    t.same(limited, [{ userId: 1, ip: '127.0.0.1' }])
    t.equal((await app.inject({ method: 'POST', url: AUTH, payload: { email: 'bob@example.com', password: 'bob password 1234' } })).statusCode, 200, 'another account signs in')
  })
}

t.test('one account cannot fill the memory store: every other user still signs in', async (t) => {
  const store = new MemoryStore({ maxEntries: 200 })
  const { app, users } = await buildApp({ refresh: { enabled: true }, limits: { loginPerIp: { max: 1000 }, requestsPerIp: { max: 1000 } } }, { store })
  t.teardown(() => app.close())
  await users.addUser({ login: 'bob', email: 'bob@example.com', password: 'bob password 1234', displayName: 'Bob' })
  const answers: number[] = []
  for (let i = 0; i < 160; i++) answers.push((await signIn(app)).statusCode)
  t.equal(answers.filter(s => s === 200).length, 100, 'limits.signInsPerAccount (100 an hour by default)')
  t.equal(answers.filter(s => s === 429).length, 60)
  t.ok(store.counts.state <= 101, `one entry per sign-in let through (50 live sessions, 50 ended ones until their access tokens expire) and the index (${store.counts.state})`)
  t.equal((await app.inject({ method: 'POST', url: AUTH, payload: { email: 'bob@example.com', password: 'bob password 1234' } })).statusCode, 200, 'another user signs in')
})

t.test('a session index update that keeps losing its compare-and-set gives up with 503 / 201', async (t) => {
  const memory = new MemoryStore()
  t.teardown(async () => { await memory.close() })
  const contended = contendedStore(memory)
  const index = new SessionIndex(contended, Date.now)
  const error = await index.add({ userId: 1, sessionId: 's', endsAt: Date.now() + 1000, family: false, origin: { method: 'password' }, ip: '192.0.2.1', userAgent: undefined }).then(() => null, (e: unknown) => e)
  t.match(error, { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', statusCode: 503 })
})

t.test('a wrong second factor ends none of the user\'s sessions; a right one ends the oldest beyond the bound', async (t) => {
  const { app, submit, interim, secret, clock } = await buildTwoFactorApp({ settings: { sessions: { maxPerUser: 2 } } })
  t.teardown(() => app.close())
  const evicted = collect(app, 'session.evicted')
  const sessions: string[] = []
  for (let i = 0; i < 2; i++) {
    clock.advance(30_000)
    sessions.push((await submit({ JWT: await interim(), code: await totpAt(secret, clock.now) })).json().data.jwt)
  }
  // whoever holds only the password: any well-formed backup code reaches the spend, and fails there
  for (let i = 0; i < 3; i++) {
    t.same(errorOf(await submit({ JWT: await interim(), code: generateBackupCodes(1).codes[0] })), [401, 109])
  }
  t.same(await Promise.all(sessions.map(async jwt => await validate(app, jwt))), [200, 200], 'both sessions live')
  t.equal(evicted.length, 0)
  clock.advance(30_000)
  const third = (await submit({ JWT: await interim(), code: await totpAt(secret, clock.now) })).json().data.jwt
  t.same(await Promise.all([...sessions, third].map(async jwt => await validate(app, jwt))), [401, 200, 200], 'the first to join ended')
  t.equal(evicted.length, 1)
})

t.test('two-factor challenges count per account and client: the password alone cannot lock the owner out', async (t) => {
  const { app, login, submit, secret, clock } = await buildTwoFactorApp({ settings: { limits: { signInsPerAccount: { max: 3, window: '1h' } } } })
  t.teardown(() => app.close())
  const from = async (remoteAddress: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${AUTH}`, payload: { email: BOB.email, password: BOB.password }, remoteAddress })
  for (let i = 0; i < 3; i++) t.equal((await from('198.51.100.7')).statusCode, 200, 'a challenge for the attacker')
  t.same(errorOf(await from('198.51.100.7')), [429, 200], 'the attacker\'s address is over the limit')
  const owner = await login()
  t.equal(owner.statusCode, 200, 'the owner, from another address, still gets a challenge')
  t.equal((await submit({ JWT: owner.json().data.jwt, code: await totpAt(secret, clock.now) })).statusCode, 200, 'and signs in')
})
