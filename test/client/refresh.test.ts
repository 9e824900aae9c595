// Refresh in one process: concurrent callers share one refresh request, the access token is refreshed before it expires (in the background too), and a session whose refresh token is gone ends.
import t from 'tap'
import { createClient, memoryStorage, type SessionEvent } from '../../lib/client.js'
import { secondsLeft } from '../../lib/client/tokens.js'
import { testClock } from '../helpers/app.js'
import { ALICE, nextEvent, serve } from '../helpers/client.js'

const LIFETIME = 15 * 60_000

t.test('50 concurrent callers after expiry: all answer 200, with one refresh request', async (t) => {
  const { base, clock, refreshes } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  const events: SessionEvent[] = []
  client.onSession((event) => { events.push(event) })
  const first = (await client.signIn({ email: ALICE.email, password: ALICE.password })).jwt
  clock.advance(LIFETIME + 10_000)
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await client.fetch('/me')))
  t.same(answers.map(answer => answer.status), Array(50).fill(200))
  t.same(await answers[0]?.json(), { me: 'alice' })
  t.equal(refreshes(), 1)
  t.not(client.jwt, first)
  t.same(events, [{ type: 'signed-in', fromOtherTab: false }, { type: 'refreshed', fromOtherTab: false }])

  const tokens = await Promise.all(Array.from({ length: 50 }, async () => await client.refresh()))
  t.equal(new Set(tokens).size, 1, 'client.refresh() called 50 times at once: one new token')
  t.equal(refreshes(), 2)
  t.equal(client.jwt, tokens[0])
})

t.test('a token that expires within 5 seconds is refreshed before the call; one that cannot be refreshed is sent as it is', async (t) => {
  const { base, clock, refreshes } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME - 4000)
  t.equal((await client.validate()).user.user_login, 'alice')
  t.equal(refreshes(), 1)
  clock.advance(LIFETIME - 10_000)
  t.equal((await client.validate()).user.user_login, 'alice', 'ten seconds left: no refresh')
  t.equal(refreshes(), 1)

  const { base: noRefresh, clock: other } = await serve(t, { refresh: { enabled: false } })
  const bare = createClient({ baseUrl: noRefresh, now: other })
  t.teardown(() => { bare.close() })
  const { jwt } = await bare.signIn({ email: ALICE.email, password: ALICE.password })
  other.advance(LIFETIME + 10_000)
  t.equal(await bare.token(), jwt, 'no refresh token: the expired token, for the server to refuse')
  await t.rejects(bare.validate(), { status: 401, code: 'ERR_JWT_LOGIN_TOKEN_EXPIRED' }, 'refused, and no refresh to try')
  t.equal(bare.jwt, jwt)
})

t.test('the server finds the token expired while the client does not (clocks apart): one refresh, and the call again', async (t) => {
  const { base, clock, refreshes } = await serve(t)
  const late = testClock(clock.now)
  const client = createClient({ baseUrl: base, now: late })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME + 10_000)
  t.equal((await client.validate()).user.user_login, 'alice')
  t.equal(refreshes(), 1)
  await t.rejects(client.sessions(), { name: 'JwtLoginClientError', code: 'ERR_JWT_LOGIN_SESSIONS_DISABLED' }, 'another refusal is thrown as it is, no refresh')
  t.equal(refreshes(), 1)
  // the refresh token is refused too: the session ends, and the first refusal is thrown
  clock.advance(15 * 24 * 3600_000)
  const ended = nextEvent(client, 'ended')
  await t.rejects(client.validate(), { status: 401, code: 'ERR_JWT_LOGIN_TOKEN_EXPIRED' })
  t.same(await ended, { type: 'ended', fromOtherTab: false })
  t.equal(client.jwt, undefined)
  t.equal(await client.token(), undefined)
})

t.test('the refresh token expired: the session ends, token() answers undefined, fetch goes without a token', async (t) => {
  const { base, clock, refreshes, seen } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(15 * 24 * 3600_000)
  const events: string[] = []
  client.onSession((event) => { events.push(event.type) })
  t.equal(await client.token(), undefined)
  t.same(events, ['ended'])
  t.equal(refreshes(), 1)
  const answer = await client.fetch('/me')
  t.equal(answer.status, 401)
  t.equal(seen.filter(line => line === 'GET /me').length, 1, 'a 401 without a session is answered as it is')
  await t.rejects(client.refresh(), { status: 400, code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING' }, 'no refresh token left to send')
})

t.test('a refresh that gets no answer: token() throws it; the session stays', async (t) => {
  const { base, app, clock } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  await app.close()
  clock.advance(LIFETIME)
  await t.rejects(client.token(), { name: 'JwtLoginClientError', status: 0 })
  await t.rejects(client.fetch('/me'), { name: 'JwtLoginClientError', status: 0 })
  t.equal(client.jwt, jwt, 'a network failure ends nothing')
})

t.test('proactive refresh: refreshAhead seconds before expiry (at most half the lifetime), in the background', async (t) => {
  const { base, clock, refreshes } = await serve(t)
  const storage = memoryStorage()
  const first = createClient({ baseUrl: base, now: clock, storage, refreshAhead: 899 })
  const { jwt } = await first.signIn({ email: ALICE.email, password: ALICE.password })
  first.close()
  t.equal(refreshes(), 0, 'a refreshAhead of 14m59s is capped at half the 15 minutes: not due on arrival')
  // 8 minutes on, the session found again (a reload): past half its life, so due at once
  clock.advance(8 * 60_000)
  const client = createClient({ baseUrl: base, now: clock, storage, refreshAhead: 899 })
  t.teardown(() => { client.close() })
  const refreshed = nextEvent(client, 'refreshed')
  client.onSession(() => { client.close() })
  t.same(await refreshed, { type: 'refreshed', fromOtherTab: false })
  t.equal(refreshes(), 1, 'no call asked for it')
  t.not(client.jwt, jwt)

  const { base: quiet, clock: other, refreshes: none } = await serve(t)
  const patient = createClient({ baseUrl: quiet, now: other })
  t.teardown(() => { patient.close() })
  await patient.signIn({ email: ALICE.email, password: ALICE.password })
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(none(), 0, 'the default refreshAhead (60 s) leaves 14 minutes to wait')
})

t.test('a background refresh that fails is kept quiet, and changes nothing', async (t) => {
  const { base, app, clock } = await serve(t)
  const items = new Map<string, string>()
  const storage = { getItem: (key: string) => items.get(key) ?? null, setItem: (key: string, value: string) => { items.set(key, value) }, removeItem: (key: string) => { items.delete(key) } }
  const first = createClient({ baseUrl: base, now: clock, storage })
  t.teardown(() => { first.close() })
  const { jwt } = await first.signIn({ email: ALICE.email, password: ALICE.password })
  await app.close()
  clock.advance(8 * 60_000)
  let tried = 0
  // a client that finds the stored session (a reload), with its refresh due at once, and no server to answer
  const later = createClient({
    baseUrl: base,
    now: clock,
    storage,
    refreshAhead: 899,
    fetch: async (input, init) => {
      tried++
      return await fetch(input, init)
    }
  })
  t.teardown(() => { later.close() })
  t.equal(await later.token(), jwt, 'still fresh: no refresh asked for')
  await new Promise(resolve => setTimeout(resolve, 200))
  t.equal(tried, 1, 'the background refresh was tried')
  t.equal(later.jwt, jwt, 'and its failure changed nothing')
  t.equal(JSON.parse(items.get('jwt-login') ?? '{}').jwt, jwt)
})

t.test('secondsLeft: -1 for a token without a readable exp', async (t) => {
  const payload = (claims: object): string => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`
  t.equal(secondsLeft(payload({ exp: 100 }), 40_000), 60)
  t.equal(secondsLeft(payload({ exp: '100' }), 0), -1)
  t.equal(secondsLeft('not a token', 0), -1)
  t.equal(secondsLeft('a.%%%.b', 0), -1)
  t.equal(secondsLeft(payload(null as unknown as object), 0), -1, 'a payload that is JSON but no object')
})

t.test('the user is locked: the next call finds the token revoked, the refresh answers 403 / 251, and the session ends', async (t) => {
  const { app, base, clock } = await serve(t)
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  await app.jwtLogin.lockUser(1, { reason: 'compromised' })
  const ended = nextEvent(client, 'ended')
  await t.rejects(client.validate(), { status: 401, code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'the first refusal is thrown')
  t.same(await ended, { type: 'ended', fromOtherTab: false })
  t.equal(client.jwt, undefined)
  await t.rejects(client.signIn({ email: ALICE.email, password: ALICE.password }), { status: 403, code: 'ERR_JWT_LOGIN_USER_LOCKED' })
})
