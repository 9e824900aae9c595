// client.fetch for the app's own API: relative URLs, the access token, and on a 401 one refresh and one retry, never more.
import t from 'tap'
import { createClient } from '../../lib/client.js'
import { testClock } from '../helpers/app.js'
import { ALICE, serve } from '../helpers/client.js'

const LIFETIME = 15 * 60_000

t.test('a relative URL resolves against baseUrl; a URL and a Request are taken as they are; the token goes in Authorization', async (t) => {
  const { base, seen } = await serve(t, {}, {}, (app) => {
    app.get('/api/v2/hello', async (request) => ({ authorization: request.headers.authorization ?? null }))
  })
  const client = createClient({ baseUrl: `${base}/api/v2/` })
  t.teardown(() => { client.close() })
  t.same(await (await client.fetch('hello')).json(), { authorization: null }, 'without a session: no header')
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.same(await (await client.fetch('hello')).json(), { authorization: `Bearer ${jwt}` })
  t.same(await (await client.fetch('/me')).json(), { me: 'alice' }, 'a path from the root')
  t.same(await (await client.fetch(new URL('/me', base))).json(), { me: 'alice' }, 'a URL')
  t.same(await (await client.fetch(new Request(`${base}/echo`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } }))).json(), { body: { a: 1 } }, 'a Request')
  t.same(await (await client.fetch(`${base}/echo`, { method: 'POST', body: '{"b":2}', headers: { 'content-type': 'application/json' } })).json(), { body: { b: 2 } }, 'an absolute URL with init')
  t.same(seen.filter(line => !line.includes('/jwt-login/')), ['GET /api/v2/hello', 'GET /api/v2/hello', 'GET /me', 'GET /me', 'POST /echo', 'POST /echo'])
})

t.test('a 401 for a token the server finds expired: one refresh, the request again with its body, a Request too', async (t) => {
  const { base, clock, seen, refreshes } = await serve(t)
  const client = createClient({ baseUrl: base, now: testClock(clock.now) })
  t.teardown(() => { client.close() })
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME + 10_000)
  const request = new Request(`${base}/echo`, { method: 'POST', body: JSON.stringify({ replayed: true }), headers: { 'content-type': 'application/json' } })
  const answer = await client.fetch(request)
  t.equal(answer.status, 200)
  t.same(await answer.json(), { body: { replayed: true } }, 'the body was sent again')
  t.equal(refreshes(), 1)
  t.same(seen.filter(line => line === 'POST /echo').length, 2)
  t.not(client.jwt, jwt)

  clock.advance(LIFETIME + 10_000)
  const withInit = await client.fetch(new Request(`${base}/echo`, { method: 'POST' }), { method: 'POST', body: '{"from":"init"}', headers: { 'content-type': 'application/json' } })
  t.same(await withInit.json(), { body: { from: 'init' } }, 'a Request and an init: the init wins, both times')
  t.equal(refreshes(), 2)
  t.same(seen.filter(line => line === 'POST /echo').length, 4)
})

t.test('a server that keeps refusing gets exactly two requests: one refresh, one retry, then its 401', async (t) => {
  const { base, seen, refreshes } = await serve(t, {}, {}, (app) => {
    app.get('/never', async (_request, reply) => await reply.code(401).send({ no: true }))
  })
  const client = createClient({ baseUrl: base })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const answer = await client.fetch('/never')
  t.equal(answer.status, 401)
  t.same(await answer.json(), { no: true })
  t.equal(seen.filter(line => line === 'GET /never').length, 2)
  t.equal(refreshes(), 1)
})

t.test('a 401 while another caller already refreshed: the newer token, no second refresh', async (t) => {
  let renewDuring: (() => Promise<unknown>) | undefined
  const { base, clock, seen, refreshes } = await serve(t)
  const client = createClient({
    baseUrl: base,
    now: testClock(clock.now),
    fetch: async (input, init) => {
      const answer = await fetch(input, init)
      // the app's other caller refreshes while this request is answered
      if (renewDuring !== undefined && input instanceof Request && input.url.endsWith('/me')) {
        const work = renewDuring
        renewDuring = undefined
        await work()
      }
      return answer
    }
  })
  t.teardown(() => { client.close() })
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME + 10_000)
  renewDuring = async () => await client.refresh()
  const answer = await client.fetch('/me')
  t.equal(answer.status, 200)
  t.equal(refreshes(), 1)
  t.equal(seen.filter(line => line === 'GET /me').length, 2)
  t.not(client.jwt, jwt)
})

t.test('a 401 and a refresh that fails: the first answer, once; without refresh token: the first answer', async (t) => {
  const { base, clock, seen } = await serve(t)
  const client = createClient({ baseUrl: base, now: testClock(clock.now) })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(15 * 24 * 3600_000)
  const answer = await client.fetch('/me')
  t.equal(answer.status, 401)
  t.equal(seen.filter(line => line === 'GET /me').length, 1)
  t.equal(client.jwt, undefined, 'the session ended')

  const { base: other, clock: otherClock, seen: otherSeen } = await serve(t, { refresh: { enabled: false } })
  const bare = createClient({ baseUrl: other, now: testClock(otherClock.now) })
  t.teardown(() => { bare.close() })
  const { jwt } = await bare.signIn({ email: ALICE.email, password: ALICE.password })
  otherClock.advance(LIFETIME + 10_000)
  t.equal((await bare.fetch('/me')).status, 401)
  t.equal(otherSeen.filter(line => line === 'GET /me').length, 1)
  t.equal(bare.jwt, jwt)
})
