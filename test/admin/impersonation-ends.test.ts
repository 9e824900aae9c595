// Impersonation (issue 42, review round): an ended impersonation stays ended on every instance as long as its token may live, and the actor's own cutoff (lock, sign-out everywhere) ends the actor's impersonations.
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { MemoryStore, type SettingsInput, type StateStore } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { isImpersonationSession, isSessionId, newSessionId, sessionStart } from '../../lib/tokens/session-id.js'
import { ALICE, buildAccountApp, type AccountApp } from '../helpers/account.js'
import { testClock } from '../helpers/fixtures.js'
import { REDIS_URL, redisStore } from '../helpers/redis-store.js'

const BOB = { login: 'bob', email: 'bob@example.com', password: 'another horse battery staple', emailVerified: true }
const CAROL = { login: 'carol', email: 'carol@example.com', password: 'a third horse battery staple', emailVerified: true }
const MINUTE = 60_000

interface Pair {
  a: AccountApp
  b: AccountApp
  clock: ReturnType<typeof testClock>
  aliceId: number
  bobId: number
  carolId: number
}

/** Two instances on one store, one user adapter and one clock: A impersonates, B is where the user and the actor come back. */
async function pairOf (t: Test, store: StateStore, clock: ReturnType<typeof testClock>, settings: Partial<SettingsInput> = {}): Promise<Pair> {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ ...ALICE, emailVerified: true })
  const bob = await users.addUser(BOB)
  const carol = await users.addUser(CAROL)
  const options = { store, clock, users } as never
  const a = await buildAccountApp(t, { sessions: { enabled: true }, ...settings }, options)
  const b = await buildAccountApp(t, { sessions: { enabled: true }, ...settings }, options)
  return { a, b, clock, aliceId: alice.ID, bobId: bob.ID, carolId: carol.ID }
}

/** A pair on a memory store that keeps time by the test clock. */
async function memoryPair (t: Test, settings: Partial<SettingsInput> = {}): Promise<Pair> {
  const clock = testClock()
  return await pairOf(t, new MemoryStore({ clock }), clock, settings)
}

t.test('an impersonation\'s session id says so, and keeps the form of every session id', async (t) => {
  const at = Date.UTC(2026, 10, 22)
  const acted = newSessionId(at, true)
  const own = newSessionId(at)
  t.ok(isSessionId(acted), 'an impersonation\'s id is a session id')
  t.equal(sessionStart(acted), at, 'it starts where it says')
  t.ok(isImpersonationSession(acted), 'it is known as an impersonation\'s')
  t.notOk(isImpersonationSession(own), 'another session\'s is not')
  t.notOk(isImpersonationSession('foreign'), 'nor a foreign value')
})

t.test('ended by id on another instance, an impersonation stays ended as long as its token may live', async (t) => {
  const { a, b, clock, aliceId, bobId } = await memoryPair(t)
  const { jwt, sessionId } = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket', lifetime: '1h' })
  // the user, on B (which never signed a token of more than 15 minutes), ends the session she sees listed
  t.equal((await b.call('DELETE', `/sessions/${sessionId}`, await b.token())).statusCode, 200, 'ended on B')
  t.equal((await b.call('GET', '/auth/validate', jwt)).statusCode, 401, 'refused at once')
  clock.advance(20 * MINUTE)
  const later = await b.call('GET', '/auth/validate', jwt)
  t.equal(later.statusCode, 401, 'still refused 20 minutes later')
  t.equal(later.json().data.errorCode, 55, 'as revoked')
  clock.advance(39 * MINUTE)
  t.equal((await b.call('GET', '/auth/validate', jwt)).json().data.errorCode, 55, 'and a minute before its expiry')
})

t.test('the actor ending its own impersonation on another instance: it never comes back to start a chain', async (t) => {
  const { a, b, clock, aliceId, bobId, carolId } = await memoryPair(t)
  const { jwt, sessionId } = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket', lifetime: '1h' })
  t.equal((await b.call('DELETE', `/sessions/${sessionId}`, jwt)).statusCode, 200, 'the actor ends it with the token itself, on B')
  clock.advance(16 * MINUTE)
  t.equal((await b.call('GET', '/sessions', jwt)).statusCode, 401, 'refused 16 minutes later')
  // alice is no longer acted as: she may act as carol, and that token names alice
  const chained = await b.app.jwtLogin.impersonate({ actorId: aliceId, userId: carolId, reason: 'her own support work' })
  t.ok(chained.jwt, 'alice, acted as by nobody now, may act herself')
})

t.test('a user\'s cutoff outlives an impersonation token, whatever the refresh lifetime', async (t) => {
  const { a, b, clock, aliceId, bobId } = await memoryPair(t, { refresh: { enabled: true, lifetime: '20m' } })
  const { jwt } = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket', lifetime: '1h' })
  t.equal((await b.call('DELETE', '/sessions', await b.token())).statusCode, 200, 'the user signs out everywhere on B')
  clock.advance(25 * MINUTE)
  t.equal((await b.call('GET', '/auth/validate', jwt)).statusCode, 401, 'the impersonation stays ended past the refresh lifetime')
})

t.test('on one Redis store, two instances: the entries that end an impersonation live as long as its token, an ordinary end as long as before', async (t) => {
  const { store, prefix } = redisStore(t, 'impersonation-ends')
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  t.teardown(async () => { await redis.quit() })
  const { a, b, aliceId, bobId } = await pairOf(t, store, testClock(), { refresh: { enabled: true, lifetime: '20m' } })
  const { jwt, sessionId } = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket', lifetime: '1h' })
  const own = await b.token()
  const ownSession = (await b.app.jwtLogin.verify(own)).sid
  t.equal((await b.call('DELETE', `/sessions/${sessionId}`, own)).statusCode, 200, 'the impersonation ended on B')
  t.equal((await a.call('GET', '/auth/validate', jwt)).statusCode, 401, 'refused on A')
  t.ok(await redis.pttl(`${prefix}session:${sessionId}`) > 59 * MINUTE, 'its end is kept for the hour its token may live')
  t.equal((await b.app.jwtLogin.endSession(aliceId, ownSession)), true, 'an ordinary session ended by id')
  const ordinary = await redis.pttl(`${prefix}session:${ownSession}`)
  t.ok(ordinary > 14 * MINUTE && ordinary <= 16 * MINUTE, `an ordinary end is kept as long as an access token lives (${ordinary} ms)`)
  await b.app.jwtLogin.endAllSessions(aliceId)
  t.ok(await redis.pttl(`${prefix}revoked:user:${aliceId}`) > 59 * MINUTE, 'a cutoff is kept an hour, with a refresh lifetime of 20 minutes')
})

t.test('the actor\'s lock ends the actor\'s impersonations on every instance, and the unlock brings none back', async (t) => {
  const { a, b, clock, aliceId, bobId, carolId } = await memoryPair(t)
  const { jwt, sessionId } = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket', lifetime: '1h' })
  const alicesOwn = await b.token()
  await b.app.jwtLogin.lockUser(bobId, { reason: 'support account compromised' })
  for (const [path, method] of [['/auth/validate', 'GET'], ['/sessions', 'GET'], ['/auth/revoke', 'POST']] as const) {
    const res = await a.call(method, path, jwt)
    t.equal(res.statusCode, 401, `${method} ${path} on A: 401`)
    t.equal(res.json().data.errorCode, 55, `${method} ${path}: revoked`)
  }
  await t.rejects(a.app.jwtLogin.verify(jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55 }, 'verify() refuses it too')
  t.notOk((await a.app.jwtLogin.sessions(aliceId)).some(session => session.id === sessionId), 'the user no longer sees it listed')
  t.equal((await b.call('GET', '/auth/validate', alicesOwn)).statusCode, 200, 'the user\'s own token is not the actor\'s: it works')
  t.ok((await b.app.jwtLogin.impersonate({ actorId: aliceId, userId: carolId, reason: 'not acted as any more' })).jwt, 'the user, no longer acted as, is no chain')
  await b.app.jwtLogin.unlockUser(bobId)
  clock.advance(MINUTE)
  t.equal((await a.call('GET', '/auth/validate', jwt)).statusCode, 401, 'the unlock brings it back on no instance')
})

t.test('the actor\'s sign-out everywhere ends the actor\'s impersonations, a later one works', async (t) => {
  const { a, b, clock, aliceId, bobId } = await memoryPair(t)
  const first = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket' })
  await b.app.jwtLogin.endAllSessions(bobId)
  t.equal((await a.call('GET', '/auth/validate', first.jwt)).statusCode, 401, 'the host signing the actor out everywhere ends it')
  clock.advance(MINUTE)
  const second = await a.app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'ticket' })
  t.equal((await b.call('GET', '/auth/validate', second.jwt)).statusCode, 200, 'one started after the cutoff works')
  // the actor's own sign-out everywhere, keeping the actor's own session: the impersonation is no session of the actor's
  const bobsOwn = await b.token(BOB.email, BOB.password)
  t.equal((await b.call('DELETE', '/sessions?keep_current=true', bobsOwn)).statusCode, 200, 'the actor signs out everywhere else')
  t.equal((await a.call('GET', '/auth/validate', second.jwt)).statusCode, 401, 'the impersonation ended with the rest')
  t.equal((await a.call('GET', '/auth/validate', bobsOwn)).statusCode, 200, 'the actor\'s own session stays')
  t.same(await a.app.jwtLogin.sessions(aliceId), [], 'the user lists none')
})
