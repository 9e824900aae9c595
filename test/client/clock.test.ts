// The client's clock against the server's: expiry judged by the server's time (a device whose clock is off neither refreshes in a
// loop nor sends expired tokens), and the background refresh never due on arrival (a short lifetime, a long one).
import t from 'tap'
import { createClient } from '../../lib/client.js'
import { testClock } from '../helpers/app.js'
import { ALICE, serve } from '../helpers/client.js'

const settle = async (ms = 300): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

t.test('a device clock 20 minutes fast or slow: tokens judged by the server\'s time, no refresh on arrival, none in a loop', async (t) => {
  for (const offset of [20 * 60_000, -20 * 60_000]) {
    const { base, clock, refreshes } = await serve(t)
    const device = testClock(clock.now + offset)
    const client = createClient({ baseUrl: base, now: device })
    t.teardown(() => { client.close() })
    const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
    t.equal(await client.token(), jwt, `${offset > 0 ? 'fast' : 'slow'}: the new token is fresh`)
    t.equal((await client.fetch('/me')).status, 200)
    await settle()
    t.equal(refreshes(), 0, 'no refresh, in the background either')

    // 14 minutes later by both clocks: still fresh; 15 minutes later: expired, one refresh
    clock.advance(14 * 60_000)
    device.advance(14 * 60_000)
    t.equal(await client.token(), jwt)
    clock.advance(60_000)
    device.advance(60_000)
    const next = await client.token()
    t.not(next, jwt)
    t.equal(refreshes(), 1, 'one refresh when the server\'s time says so')
    await settle()
    t.equal(refreshes(), 1, 'and no more')
  }
})

t.test('a one-minute token and the default refreshAhead (60 s): refreshed at about half its life, not on arrival', async (t) => {
  const { base, clock, refreshes } = await serve(t, { tokens: { keys: [{ kid: 'k1', secret: 'test-secret-that-is-at-least-32-bytes-long!' }], lifetime: '1m' } })
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  await settle()
  t.equal(refreshes(), 0, 'no refresh on arrival')
})

t.test('a token of 40 days from some other server: the background refresh is not due at once (setTimeout takes at most 2³¹ − 1 ms)', async (t) => {
  // jwt-login caps tokens.lifetime at a day; a stub server (one function's unit test) answers a longer one
  const now = Date.UTC(2026, 10, 29)
  const jwt = `h.${Buffer.from(JSON.stringify({ iat: now / 1000, exp: now / 1000 + 40 * 86400 })).toString('base64url')}.s`
  let refreshed = 0
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    now: () => now,
    fetch: async (input) => {
      if (String(input).endsWith('/auth/refresh')) refreshed++
      return new Response(JSON.stringify({ success: true, data: { jwt, refresh_token: 'r' } }), { status: 200 })
    }
  })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  await settle()
  t.equal(refreshed, 0)
})

t.test('a server token without iat: no clock correction, refreshAhead as given', async (t) => {
  const claims = (body: object): string => `h.${Buffer.from(JSON.stringify(body)).toString('base64url')}.s`
  const now = Date.UTC(2026, 10, 29)
  const jwt = claims({ exp: now / 1000 + 900 })
  let refreshed = 0
  // one function's unit test: a stub server answering a sign-in whose token has no iat
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    now: () => now,
    refreshAhead: 900,
    fetch: async (input) => {
      if (String(input).endsWith('/auth/refresh')) refreshed++
      return new Response(JSON.stringify({ success: true, data: { jwt, refresh_token: 'r' } }), { status: 200 })
    }
  })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal(await client.token(), jwt, 'fresh by the device\'s own clock')
  await settle()
  t.ok(refreshed >= 1, 'refreshAhead (900 of 900 s) taken as given: due at once')
})
