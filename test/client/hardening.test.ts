// What an adversarial review of the client found, each against a listening host: a 401 that is no token's fault, a sign-out in cookie
// mode with an expired token, a refresh answer after a sign-out, a pending second factor across a refresh, tokens sent over the channel
// kept in the tab's own storage, a shared store's sign-in and sign-out told to the listeners, a call that never answers, the origins
// as written, and the cookie-mode refresh mark: held until lockWait, and removed after a refresh that failed.
import t from 'tap'
import { createClient } from '../../lib/client.js'
import { buildAccountApp } from '../helpers/account.js'
import { ALICE, cookieJar, PREFIX, serve, webStorage } from '../helpers/client.js'
import { totpAt } from '../helpers/fixtures.js'

const LIFETIME = 15 * 60_000
const COOKIE_SETTINGS = { refresh: { enabled: true, cookie: { enabled: true } } }

/** A gate the host's refresh route waits on: `held()` counts the refreshes that reached it, `open()` lets them through. */
function gate (): { wait: () => Promise<void>, open: () => void, held: () => number } {
  let held = 0
  let open = (): void => {}
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { wait: async () => { held++; await opened }, open: () => { open() }, held: () => held }
}

const until = async (done: () => boolean): Promise<void> => { while (!done()) await new Promise(resolve => setTimeout(resolve, 5)) }

t.test('client.fetch: a 401 that asks for a step-up (insufficient_user_authentication) is answered as it is, without a refresh', async (t) => {
  const { base, clock, refreshes } = await serve(t, {}, {}, (app) => {
    app.get('/recent', { onRequest: app.jwtLogin.authenticateWith({ maxAge: '5m' }) }, async () => ({ ok: true }))
  })
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal((await client.fetch('/recent')).status, 200)
  clock.advance(6 * 60_000)
  const answer = await client.fetch('/recent')
  t.equal(answer.status, 401)
  t.match(answer.headers.get('www-authenticate'), /insufficient_user_authentication/)
  t.equal(refreshes(), 0, 'no refresh: a new access token of the same sign-in would not help')
})

t.test('cookie mode: signOut with an expired access token revokes with the cookie and the CSRF token, without a refresh first', async (t) => {
  const { base, clock, refreshes, seen } = await serve(t, COOKIE_SETTINGS)
  const jar = cookieJar()
  const client = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage: webStorage(), now: clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME + 60_000)
  await client.signOut()
  t.equal(refreshes(), 0)
  t.equal(seen.at(-1), `POST ${PREFIX}/auth/revoke`)
  t.equal(jar.cookies.has('__Host-jwt-login-refresh'), false, 'the server ended the session and cleared its cookie')
})

t.test('a refresh answered after a sign-out does not bring the session back', async (t) => {
  const held = gate()
  // the refresh is made, and its answer held back until the sign-out is done
  const { base, clock } = await serve(t, {}, {}, (app) => {
    app.addHook('onSend', async (request) => { if (request.url === `${PREFIX}/auth/refresh`) await held.wait() })
  })
  const storage = webStorage()
  const client = createClient({ baseUrl: base, now: clock, storage })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const refreshing = client.refresh()
  await until(() => held.held() === 1)
  await client.signOut()
  held.open()
  t.type(await refreshing, 'string', 'the caller gets its answer')
  t.equal(client.jwt, undefined, 'but the session stays signed out')
  t.equal(storage.items.has('jwt-login'), false)
})

t.test('a pending second factor survives a refresh of the session already open', async (t) => {
  const kit = await buildAccountApp(t)
  const base = await kit.app.listen({ port: 0, host: '127.0.0.1' })
  const client = createClient({ baseUrl: base, now: kit.clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const { secret } = await client.enrolTotp()
  await client.confirmTotp({ code: await totpAt(secret, kit.clock.now) })
  // signing in again (another account, or a re-authentication) while the session is open: the second factor is asked for
  t.equal((await client.signIn({ email: ALICE.email, password: ALICE.password })).two_factor_required, true)
  const open = client.jwt
  await client.refresh()
  t.not(client.jwt, open, 'the open session was refreshed')
  t.equal(client.twoFactorPending, true, 'and the sign-in still waits for its code')
  kit.clock.advance(30_000)
  await client.completeTwoFactor({ code: await totpAt(secret, kit.clock.now) })
  t.equal(client.twoFactorPending, false)
})

t.test('tokens sent over the channel are kept in the tab\'s own storage too (sessionStorage): a reload does not bring back a spent refresh token', async (t) => {
  const { base, clock } = await serve(t)
  const mine = webStorage()
  const theirs = webStorage()
  const tab = createClient({ baseUrl: base, now: clock, storage: mine, crossTab: true, name: 'own-storage' })
  const other = createClient({ baseUrl: base, now: clock, storage: theirs, crossTab: true, name: 'own-storage' })
  t.teardown(() => { tab.close(); other.close() })
  await other.signIn({ email: ALICE.email, password: ALICE.password })
  await until(() => tab.jwt !== undefined)
  await other.refresh()
  await until(() => tab.jwt === other.jwt)
  t.equal(mine.items.get('own-storage'), theirs.items.get('own-storage'), 'this tab stored what the other sent')
})

t.test('a store shared without crossTab: the other client\'s sign-in and sign-out reach the listeners', async (t) => {
  const { base, clock } = await serve(t)
  const storage = webStorage()
  const reader = createClient({ baseUrl: base, storage, now: clock })
  const writer = createClient({ baseUrl: base, storage, now: clock })
  t.teardown(() => { reader.close(); writer.close() })
  const events: string[] = []
  reader.onSession((event) => { events.push(`${event.type} ${event.fromOtherTab}`) })
  t.equal(await reader.token(), undefined)
  await writer.signIn({ email: ALICE.email, password: ALICE.password })
  t.type(await reader.token(), 'string')
  await writer.signOut()
  clock.advance(LIFETIME)
  t.equal(await reader.token(), undefined)
  t.same(events, ['signed-in true', 'signed-out true'])
})

t.test('a call that never answers is given up after timeout: status 0, and the session stays', async (t) => {
  const held = gate()
  const { base, clock } = await serve(t, {}, {}, (app) => {
    app.addHook('onRequest', async (request) => { if (request.url === `${PREFIX}/auth/refresh`) await held.wait() })
  })
  t.teardown(() => { held.open() })
  // signed in by a client without the short timeout, on the same storage: a password check on a busy machine may take longer than 200 ms
  const storage = webStorage()
  const signer = createClient({ baseUrl: base, now: clock, storage })
  t.teardown(() => { signer.close() })
  const { jwt } = await signer.signIn({ email: ALICE.email, password: ALICE.password })
  const client = createClient({ baseUrl: base, now: clock, storage, timeout: 200 })
  t.teardown(() => { client.close() })
  t.equal(await client.token(), jwt, 'the session found in storage')
  await t.rejects(client.refresh(), { name: 'JwtLoginClientError', status: 0 })
  t.equal(client.jwt, jwt, 'a refresh without an answer ends nothing')
})

t.test('origins as written: a trailing slash or a path is the same origin', async (t) => {
  const { base, clock } = await serve(t)
  const elsewhere = base.replace('127.0.0.1', 'localhost')
  const client = createClient({ baseUrl: `${base}/`, now: clock, origins: [`${base}/`, `${elsewhere}/api/`] })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal((await client.fetch('/me')).status, 200)
  t.equal((await client.fetch(`${elsewhere}/me`)).status, 200)
})

t.test('cookie mode: another tab\'s mark that never ends is waited on for lockWait, then this tab refreshes; a failed refresh removes its mark', async (t) => {
  const { base, clock, refreshes, app } = await serve(t, COOKIE_SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const client = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock, crossTab: true, name: 'held-mark', lockWait: 200 })
  t.teardown(() => { client.close() })
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  const jti = (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as { jti: string }).jti
  storage.items.set('held-mark:refreshing', JSON.stringify({ by: 'a frozen tab', from: jti, at: clock.now + 60_000 }))
  t.not(await client.refresh(), jwt, 'it waited out lockWait, then refreshed itself')
  t.equal(refreshes(), 1)
  t.equal(storage.items.has('held-mark:refreshing'), false, 'and removed its own mark')

  // another tab's refresh that ends without a JWT for this one (it failed): its mark goes, this tab waits a moment more, then refreshes
  // (here a new tab, which holds no JWT yet, and another new tab's mark from no JWT either)
  storage.items.set('held-mark:refreshing', JSON.stringify({ by: 'another tab', from: 'undefined', at: clock.now }))
  setTimeout(() => { storage.items.delete('held-mark:refreshing') }, 100)
  const fresh = createClient({ baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock, crossTab: true, name: 'held-mark', lockWait: 60_000 })
  t.teardown(() => { fresh.close() })
  t.type(await fresh.token(), 'string', 'it refreshed once the mark was gone')
  t.equal(refreshes(), 2)

  await app.close()
  await t.rejects(client.refresh(), { name: 'JwtLoginClientError', status: 0 })
  t.equal(storage.items.has('held-mark:refreshing'), false, 'a refresh that failed removes its mark too')
})
