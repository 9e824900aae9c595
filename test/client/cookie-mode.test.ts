// Cookie mode in Node: the server keeps the refresh token in its httpOnly cookie (kept here by a cookie jar: Node's fetch keeps none),
// the client keeps only the CSRF token in storage and sends it on refresh and sign-out.
import t from 'tap'
import { createClient } from '../../lib/client.js'
import { ALICE, cookieJar, nextEvent, PREFIX, serve, webStorage } from '../helpers/client.js'

const LIFETIME = 15 * 60_000
const COOKIE = '__Host-jwt-login-refresh'
const SETTINGS = { refresh: { enabled: true, cookie: { enabled: true } } }

t.test('sign-in, refresh with the CSRF header and the cookie, a reload, sign-out', async (t) => {
  const { base, clock, refreshes } = await serve(t, SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const client = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock })
  t.teardown(() => { client.close() })
  const answer = await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.type(answer.csrf_token, 'string')
  t.equal(answer.refresh_token, undefined, 'no answer gives the refresh token out')
  t.same(JSON.parse(storage.items.get('jwt-login') ?? 'null'), { csrf: answer.csrf_token }, 'storage keeps the CSRF token alone')
  const first = jar.cookies.get(COOKIE)
  t.type(first, 'string')
  t.equal(jar.sent[0]?.credentials, 'include')

  clock.advance(LIFETIME)
  t.equal((await client.fetch('/me')).status, 200)
  t.equal(refreshes(), 1)
  const refresh = jar.sent.find(request => request.url.endsWith(`${PREFIX}/auth/refresh`))
  t.equal(refresh?.headers.get('x-csrf-token'), answer.csrf_token)
  t.same(await refresh?.json(), {}, 'no refresh token in the body: the cookie carries it')
  t.not(jar.cookies.get(COOKIE), first, 'the cookie was rotated')

  // a reload: the page's memory is gone, the CSRF token and the cookie stay
  const reloaded = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock })
  t.teardown(() => { reloaded.close() })
  t.equal(reloaded.jwt, undefined)
  const jwt = await reloaded.token()
  t.type(jwt, 'string')
  t.equal(refreshes(), 2)
  t.equal((await reloaded.validate()).user.user_login, 'alice')
  t.equal(jar.sent.find(request => request.url.endsWith(`${PREFIX}/auth/validate`))?.headers.get('x-csrf-token'), null, 'only refresh and revoke carry the CSRF token')

  await reloaded.signOut()
  const revoke = jar.sent.findLast(request => request.url.endsWith(`${PREFIX}/auth/revoke`))
  t.equal(revoke?.headers.get('x-csrf-token'), answer.csrf_token)
  t.equal(jar.cookies.has(COOKIE), false, 'the cookie was cleared')
  t.equal(storage.items.has('jwt-login'), false)
  t.equal(reloaded.jwt, undefined)
})

t.test('a CSRF token of another session: the refresh is refused (403, 209) and the session ends', async (t) => {
  const { base, clock } = await serve(t, SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const client = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  storage.items.set('jwt-login', JSON.stringify({ csrf: 'another-sessions-token' }))
  clock.advance(LIFETIME)
  const ended = nextEvent(client, 'ended')
  t.equal(await client.token(), undefined, 'the refresh was refused (403 / 209): the session ended, no token')
  await ended
  t.equal(storage.items.has('jwt-login'), false)
  t.equal(client.jwt, undefined)
})

t.test('a step-up answer (a JWT alone) keeps the CSRF token', async (t) => {
  const { base } = await serve(t, SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const client = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage })
  t.teardown(() => { client.close() })
  const { csrf_token: csrf } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  const { jwt } = await client.stepUp({ password: ALICE.password })
  t.equal(client.jwt, jwt)
  t.same(JSON.parse(storage.items.get('jwt-login') ?? 'null'), { csrf })
  t.type(await client.refresh(), 'string', 'the CSRF token kept in memory still refreshes')
})
