// Cookie mode across tabs, in Node: two clients with crossTab, one name, one storage and one cookie jar, as two tabs of a page have them.
// A refresh is marked in storage before it is sent; a tab that finds another's mark from the JWT it holds waits for that refresh's JWT
// instead of rotating the cookie a second time. Also: where the client sends the token, what a page's default storage is, a shared
// store read again, and a passkey helper without its optional peer.
import { register } from 'node:module'
import t, { type Test } from 'tap'
import { createClient, signInWithPasskey, type JwtLoginClient } from '../../lib/client.js'
import { ALICE, cookieJar, PREFIX, serve, webStorage } from '../helpers/client.js'

const LIFETIME = 15 * 60_000
const SETTINGS = { refresh: { enabled: true, cookie: { enabled: true } } }

/** The JWT's own id. */
const jti = (jwt: string): string => (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as { jti: string }).jti

/** A host whose refresh answers wait until `release()`; `waiting()` says whether one is held. */
async function heldRefreshes (t: Test): Promise<Awaited<ReturnType<typeof serve>> & { release: () => void, held: () => number }> {
  let held = 0
  let release = (): void => {}
  let gate = new Promise<void>((resolve) => { release = resolve })
  const served = await serve(t, SETTINGS, {}, (app) => {
    app.addHook('onRequest', async (request) => {
      if (request.url !== `${PREFIX}/auth/refresh`) return
      held++
      await gate
    })
  })
  return {
    ...served,
    held: () => held,
    release: () => {
      release()
      gate = new Promise<void>((resolve) => { release = resolve })
    }
  }
}

t.test('two tabs in cookie mode: the second waits for the first one\'s refresh and takes its JWT, with one refresh request', async (t) => {
  const served = await heldRefreshes(t)
  const jar = cookieJar()
  const storage = webStorage()
  const options = { baseUrl: served.base, mode: 'cookie' as const, fetch: jar.fetch, storage, now: served.clock, crossTab: true, name: 'tabs-wait', lockWait: 60_000 }
  const first = createClient(options)
  const second = createClient(options)
  t.teardown(() => { first.close(); second.close() })
  const { jwt } = await first.signIn({ email: ALICE.email, password: ALICE.password })
  while (second.jwt !== jwt) await new Promise(resolve => setTimeout(resolve, 5))

  served.clock.advance(LIFETIME)
  const refreshing = first.refresh()
  while (served.held() === 0) await new Promise(resolve => setTimeout(resolve, 5))
  t.same(JSON.parse(storage.items.get('tabs-wait:refreshing') ?? '{}'), { by: JSON.parse(storage.items.get('tabs-wait:refreshing') ?? '{}').by, from: jti(jwt), at: served.clock.now }, 'the mark: who, from which JWT, when')
  const waiting = second.refresh()
  await new Promise(resolve => setTimeout(resolve, 150))
  t.equal(served.refreshes(), 1, 'the second tab sent nothing while the first one\'s refresh was under way')
  served.release()
  const [one, two] = await Promise.all([refreshing, waiting])
  t.equal(two, one, 'it took the first one\'s JWT, which came over the channel')
  t.not(one, jwt)
  t.equal(served.refreshes(), 1, 'one refresh request in all')
})

t.test('a mark older than lockWait, or of a JWT already replaced, or the tab\'s own: no wait', async (t) => {
  const served = await serve(t, SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const client = createClient({ baseUrl: served.base, mode: 'cookie', fetch: jar.fetch, storage, now: served.clock, crossTab: true, name: 'tabs-stale', lockWait: 60_000 })
  t.teardown(() => { client.close() })
  const { jwt } = await client.signIn({ email: ALICE.email, password: ALICE.password })
  const within = async <T>(work: Promise<T>): Promise<T | 'waited'> => await Promise.race([work, new Promise<'waited'>(resolve => setTimeout(() => { resolve('waited') }, 2000))])

  storage.items.set('tabs-stale:refreshing', JSON.stringify({ by: 'another tab', from: jti(jwt), at: served.clock.now - 60_001 }))
  const stale = await within(client.refresh())
  t.not(stale, 'waited', 'a mark older than lockWait is given up')
  t.equal(served.refreshes(), 1)

  storage.items.set('tabs-stale:refreshing', JSON.stringify({ by: 'another tab', from: jti(jwt), at: served.clock.now }))
  t.not(await within(client.refresh()), 'waited', 'a mark from a JWT this tab has already replaced')
  t.equal(served.refreshes(), 2)

  t.not(await within(client.refresh()), 'waited', 'its own mark, from its own last refresh')
  t.equal(served.refreshes(), 3)
  storage.items.set('tabs-stale:refreshing', 'not JSON')
  t.not(await within(client.refresh()), 'waited', 'a mark that is not ours to read')
  t.equal(served.refreshes(), 4)
  storage.items.set('tabs-stale:refreshing', 'null')
  t.not(await within(client.refresh()), 'waited', 'nor one that is JSON but no object')
  t.equal(served.refreshes(), 5)
  const current = client.jwt ?? ''
  storage.items.set('tabs-stale:refreshing', JSON.stringify({ by: 'another tab', from: jti(current) }))
  t.not(await within(client.refresh()), 'waited', 'nor one without its time')
  t.equal(served.refreshes(), 6)

  // a new tab (a reload): no JWT yet, the CSRF token in storage; another tab is refreshing from no JWT either
  const reloaded = createClient({ baseUrl: served.base, mode: 'cookie', fetch: jar.fetch, storage, now: served.clock, crossTab: true, name: 'tabs-stale', lockWait: 60_000 })
  t.teardown(() => { reloaded.close() })
  storage.items.set('tabs-stale:refreshing', JSON.stringify({ by: 'another tab', from: 'undefined', at: served.clock.now - 59_900 }))
  t.type(await reloaded.token(), 'string', 'it waited out the other tab\'s mark, then refreshed with the cookie')
  t.equal(served.refreshes(), 7)
})

t.test('a page: cookie mode keeps its CSRF token in localStorage by default; bearer mode keeps nothing there', async (t) => {
  const served = await serve(t, SETTINGS)
  const jar = cookieJar()
  const storage = webStorage()
  const before = Object.getOwnPropertyDescriptor(globalThis, 'localStorage')
  Object.defineProperty(globalThis, 'localStorage', { value: storage, configurable: true, writable: true })
  t.teardown(() => {
    if (before === undefined) Reflect.deleteProperty(globalThis, 'localStorage')
    else Object.defineProperty(globalThis, 'localStorage', before)
  })
  const cookie = createClient({ baseUrl: served.base, mode: 'cookie', fetch: jar.fetch, now: served.clock })
  t.teardown(() => { cookie.close() })
  const { csrf_token: csrf } = await cookie.signIn({ email: ALICE.email, password: ALICE.password })
  t.same(JSON.parse(storage.items.get('jwt-login') ?? '{}'), { csrf }, 'the CSRF token is in localStorage')
  storage.items.clear()

  const bearerHost = await serve(t)
  const bearer = createClient({ baseUrl: bearerHost.base, now: bearerHost.clock })
  t.teardown(() => { bearer.close() })
  await bearer.signIn({ email: ALICE.email, password: ALICE.password })
  t.same([...storage.items.keys()], [], 'bearer mode: memory unless the app chooses')
})

t.test('client.fetch sends the token to the API\'s origins only', async (t) => {
  const served = await serve(t)
  const client = createClient({ baseUrl: served.base, now: served.clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const elsewhere = served.base.replace('127.0.0.1', 'localhost')
  t.equal((await client.fetch('/me')).status, 200, 'the API\'s origin gets it')
  const other = await client.fetch(`${elsewhere}/me`)
  t.equal(other.status, 401, 'another origin (the same server under another name) gets no token')
  t.equal((await other.json() as { data: { errorCode: number } }).data.errorCode, 53)
  t.equal((await client.fetch(new Request(`${elsewhere}/me`))).status, 401, 'nor as a Request')

  const both = createClient({ baseUrl: served.base, now: served.clock, origins: [served.base, elsewhere] })
  t.teardown(() => { both.close() })
  await both.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal((await both.fetch(`${elsewhere}/me`)).status, 200, 'an origin the app lists gets it')
})

t.test('a store shared without crossTab is read again when the token is not fresh', async (t) => {
  const served = await serve(t)
  const storage = webStorage()
  const reader = createClient({ baseUrl: served.base, storage, now: served.clock })
  const writer = createClient({ baseUrl: served.base, storage, now: served.clock })
  t.teardown(() => { reader.close(); writer.close() })
  t.equal(await reader.token(), undefined, 'no session yet')
  const { jwt } = await writer.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal(await reader.token(), jwt, 'the other client\'s sign-in is found')
  await writer.signOut()
  served.clock.advance(LIFETIME)
  t.equal(await reader.token(), undefined, 'and its sign-out, without a request')
  t.equal(served.refreshes(), 0)

  storage.items.set('jwt-login', JSON.stringify({ jwt, refresh: '' }))
  t.equal(await reader.token(), undefined, 'a refresh the server finds without a refresh token (400 / 51) is no session')
  t.equal(served.refreshes(), 1)
})

t.test('a passkey helper without @simplewebauthn/browser names the package to install', async (t) => {
  // a resolve hook that finds no @simplewebauthn/browser, as in an app that did not install the optional peer (this process never loads it)
  register('data:text/javascript,' + encodeURIComponent(
    "export async function resolve (specifier, context, next) { if (specifier === '@simplewebauthn/browser') throw Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' }); return next(specifier, context) }"))
  const client = { passkeySignInOptions: async () => ({ challenge: 'c' }) } as unknown as JwtLoginClient
  const error = await signInWithPasskey(client).catch((error: unknown) => error) as Error & { cause: { code: string } }
  t.equal(error.message, 'fastify-jwt-login/client: the passkey helpers need the package "@simplewebauthn/browser", an optional peer dependency: npm install @simplewebauthn/browser (or pass it as `webauthn`)')
  t.equal(error.cause.code, 'ERR_MODULE_NOT_FOUND', 'the import\'s own error is its cause')
})
