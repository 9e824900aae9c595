import fastifyCookie from '@fastify/cookie'
import fastifyCors from '@fastify/cors'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import jwtLogin, { type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, buildHost, HS_SECRET } from '../helpers/app.js'
import { errorCode, errorOf } from '../helpers/http.js'
import { readPage } from '../helpers/markdown.js'

const PREFIX = '/jwt-login/v1'
const APP = 'https://app.example.com'
const OTHER = 'https://evil.example.com'
const CORS_ON = { cors: { enabled: true, origins: [APP] } } satisfies Partial<SettingsInput>

/** Every route of the plugin with the method a browser would preflight it for. */
const ROUTES: Array<[method: string, path: string]> = [
  ['POST', '/auth'],
  ['POST', '/auth/2fa'],
  ['POST', '/auth/email'],
  ['POST', '/auth/email/verify'],
  ['GET', '/auth/validate'],
  ['POST', '/auth/validate'],
  ['POST', '/auth/refresh'],
  ['POST', '/auth/revoke'],
  ['POST', '/user/reset_password'],
  ['PUT', '/user/reset_password'],
  ['GET', '/oauth/token'],
  ['POST', '/oauth/token']
]

async function preflight (app: FastifyInstance, url: string, method: string, origin = APP, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, ...headers } })
}

function corsHeaders (res: LightMyRequestResponse): string[] {
  return Object.keys(res.headers).filter(name => name.startsWith('access-control-'))
}

async function login (app: FastifyInstance, origin?: string, prefix = PREFIX): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: `${prefix}/auth`,
    headers: origin === undefined ? {} : { origin },
    payload: { email: ALICE.email, password: ALICE.password }
  })
}

t.test('off by default: a preflight is a 404 in the envelope, and no answer has a CORS header', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const res = await preflight(app, `${PREFIX}/auth`, 'POST')
  t.equal(res.statusCode, 404)
  t.equal(errorCode(res), 207)
  t.same(corsHeaders(res), [])
  const answer = await login(app, APP)
  t.equal(answer.statusCode, 200)
  t.same(corsHeaders(answer), [], 'a real request from a page gets no CORS header either')
})

t.test('on: every route answers its preflight in both URL forms, with the methods, headers and max-age', async (t) => {
  const { app } = await buildApp({ ...CORS_ON, cors: { ...CORS_ON.cors, maxAge: '2h' } })
  t.teardown(() => app.close())
  for (const [method, path] of ROUTES) {
    for (const url of [`${PREFIX}${path}`, `/?rest_route=${PREFIX}${path}`]) {
      const res = await preflight(app, url, method, APP, { 'access-control-request-headers': 'content-type, authorization' })
      t.equal(res.statusCode, 204, `${method} ${url}`)
      t.equal(res.headers['access-control-allow-origin'], APP, `${method} ${url}: the origin echoed`)
      t.equal(res.headers['access-control-allow-methods'], 'GET, POST, PUT, PATCH, DELETE')
      t.equal(res.headers['access-control-allow-headers'], 'content-type, authorization, x-csrf-token')
      t.equal(res.headers['access-control-max-age'], '7200')
      t.equal(res.headers['access-control-allow-credentials'], undefined, 'credentials off unless set')
      t.match(res.headers.vary, /Origin/, 'caches keep answers apart by origin')
    }
  }
})

t.test('on: a real answer names the origin and exposes Retry-After; a 429 does too', async (t) => {
  const { app } = await buildApp({ ...CORS_ON, limits: { requestsPerIp: { max: 1, window: '1m' } } })
  t.teardown(() => app.close())
  const first = await login(app, APP)
  t.equal(first.statusCode, 200)
  t.equal(first.headers['access-control-allow-origin'], APP)
  t.equal(first.headers['access-control-expose-headers'], 'retry-after')
  const limited = await login(app, APP)
  t.equal(limited.statusCode, 429)
  t.equal(errorCode(limited), 200)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After is sent')
  t.equal(limited.headers['access-control-allow-origin'], APP, 'the page can read the 429')
  t.equal(limited.headers['access-control-expose-headers'], 'retry-after', 'and its Retry-After')
})

t.test('credentials on: Access-Control-Allow-Credentials on preflights and answers', async (t) => {
  const { app } = await buildApp({ cors: { enabled: true, origins: [APP, 'http://localhost:5173'], credentials: true } })
  t.teardown(() => app.close())
  const res = await preflight(app, `${PREFIX}/auth/refresh`, 'POST', 'http://localhost:5173')
  t.equal(res.headers['access-control-allow-origin'], 'http://localhost:5173', 'each listed origin is echoed, never a wildcard')
  t.equal(res.headers['access-control-allow-credentials'], 'true')
  const answer = await login(app, APP)
  t.equal(answer.headers['access-control-allow-credentials'], 'true')
})

t.test('a disallowed origin gets no CORS header, on the preflight and on the answer', async (t) => {
  const { app } = await buildApp({ cors: { enabled: true, origins: [APP], credentials: true } })
  t.teardown(() => app.close())
  for (const origin of [OTHER, 'null', `${APP}:8443`, 'http://app.example.com']) {
    const res = await preflight(app, `${PREFIX}/auth`, 'POST', origin)
    t.equal(res.statusCode, 404, `${origin}: the preflight fails`)
    t.same(corsHeaders(res), [], `${origin}: no CORS header`)
    const answer = await login(app, origin)
    t.same(corsHeaders(answer), [], `${origin}: the answer has none either (the browser hides it from the page)`)
  }
  const bare = await app.inject({ method: 'OPTIONS', url: `${PREFIX}/auth` })
  t.equal(bare.statusCode, 404, 'an OPTIONS without Origin is no preflight')
  t.same(corsHeaders(bare), [])
})

t.test('an OPTIONS from an allowed origin without Access-Control-Request-Method gets the same answer, not a text/plain 400', async (t) => {
  const { app } = await buildApp(CORS_ON)
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'OPTIONS', url: `${PREFIX}/auth`, headers: { origin: APP } })
  t.equal(res.statusCode, 204)
  t.equal(res.headers['access-control-allow-origin'], APP)
})

t.test('live: a reload changes the origins and turns CORS off and on again; turned on when it was off at registration, it waits for a restart', async (t) => {
  const keys = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
  let settings: SettingsInput = { ...keys, cors: { enabled: true, origins: [APP] } }
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, settings: async () => settings })
  await app.ready()
  t.teardown(() => app.close())

  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST')).statusCode, 204, 'on at start')
  settings = { ...keys, cors: { enabled: true, origins: [OTHER] } }
  await app.jwtLogin.reloadSettings()
  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST')).statusCode, 404, 'an origin taken off the list is refused')
  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST', OTHER)).headers['access-control-allow-origin'], OTHER)
  settings = { ...keys, cors: { enabled: false, origins: [OTHER] } }
  await app.jwtLogin.reloadSettings()
  t.same(corsHeaders(await login(app, OTHER)), [], 'off')
  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST', OTHER)).statusCode, 404)
  settings = { ...keys, cors: { enabled: true, origins: [OTHER] } }
  await app.jwtLogin.reloadSettings()
  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST', OTHER)).statusCode, 204, 'on again')

  let offSettings: SettingsInput = keys
  const lines: string[] = []
  const off = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await off.register(jwtLogin, { users, settings: async () => offSettings })
  await off.ready()
  t.teardown(() => off.close())
  offSettings = { ...keys, cors: { enabled: true, origins: [APP] }, authentication: { enabled: false } }
  await off.jwtLogin.reloadSettings()
  t.equal((await preflight(off, `${PREFIX}/auth`, 'POST')).statusCode, 404, 'off at registration: CORS waits for a restart')
  t.same(errorOf(await login(off, APP)), [403, 45], 'but the rest of that reload is in force (a kill switch is not held back)')
  offSettings = { ...keys, cors: { enabled: true, origins: [OTHER] } }
  await off.jwtLogin.reloadSettings()
  t.equal(lines.filter(line => line.includes('takes effect at the next restart')).length, 1, 'one warning says so')
})

t.test('off at registration, the plugin answers no preflight: a host\'s own preflight handler answers its paths and the plugin\'s', async (t) => {
  const { app } = await buildHost((host) => {
    host.options('*', async (_request, reply) => { await reply.code(204).header('x-host-preflight', 'yes').send() })
  })
  t.teardown(() => app.close())
  for (const url of [`${PREFIX}/auth`, `/?rest_route=${PREFIX}/auth`, '/jwt-login/v1-admin/x']) {
    const res = await preflight(app, url, 'POST')
    t.equal(res.headers['x-host-preflight'], 'yes', `OPTIONS ${url} is the host's`)
  }
  // every method on `/` is the query form's (the host could serve no request that a preflight of `/` would allow)
  const root = await preflight(app, '/?JWT=abc', 'POST')
  t.same([root.statusCode, root.headers['x-host-preflight']], [404, undefined], 'OPTIONS / without rest_route: the host\'s 404')
  t.equal(root.json().message, 'Route OPTIONS:/?JWT=[redacted] not found', 'given the URL with its query values redacted')
})

t.test("on, the plugin's preflights stay under its prefix: a host path that only starts with the prefix string keeps the host's handler", async (t) => {
  const { app } = await buildHost((host) => {
    host.options('*', async (_request, reply) => { await reply.code(204).header('x-host-preflight', 'yes').send() })
    host.put('/jwt-login/v1-admin/users', async () => ({ ok: true }))
  }, { cors: { enabled: true, origins: [APP], credentials: true } }, { restRoute: false })
  t.teardown(() => app.close())
  const res = await preflight(app, '/jwt-login/v1-admin/users', 'PUT')
  t.equal(res.headers['x-host-preflight'], 'yes', "the host's own preflight handler answers")
  t.same(corsHeaders(res), [], 'and the plugin adds no CORS header')
  t.equal((await preflight(app, `${PREFIX}/auth`, 'POST')).headers['access-control-allow-origin'], APP, "the plugin's own paths are its")
})

t.test('a prefix with a trailing slash serves CORS under it', async (t) => {
  const { app } = await buildApp(CORS_ON, { prefix: '/api/' })
  t.teardown(() => app.close())
  const res = await preflight(app, '/api/auth', 'POST')
  t.equal(res.statusCode, 204)
  t.equal(res.headers['access-control-allow-origin'], APP)
  t.equal((await login(app, APP, '/api')).headers['access-control-allow-origin'], APP)
})

t.test("with prefix '' cors.enabled is refused: its preflights would cover every host route", async (t) => {
  const app = Fastify()
  app.register(jwtLogin, { users: new MemoryUserAdapter(), prefix: '', settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...CORS_ON } })
  await t.rejects(async () => { await app.ready() }, { path: 'cors/enabled', message: /register @fastify\/cors for the whole app/ })
  await app.close()
})

t.test("the host's other routes are not touched", async (t) => {
  const { app } = await buildHost((host) => {
    host.get('/host/data', async () => ({ ok: true }))
  }, CORS_ON)
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/host/data', headers: { origin: APP } })
  t.equal(res.statusCode, 200)
  t.same(corsHeaders(res), [], 'no CORS header on a host route')
  const pre = await preflight(app, '/host/data', 'GET')
  t.equal(pre.statusCode, 404, "the host's own 404: the plugin answers no preflight outside its prefix")
  t.same(corsHeaders(pre), [])
  const root = await preflight(app, '/', 'GET')
  t.equal(root.statusCode, 404, 'OPTIONS / without rest_route is not the plugin\'s')
  t.same(corsHeaders(root), [])
})

t.test('a host that registered @fastify/cors and @fastify/cookie itself keeps them; the plugin registers neither again', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(fastifyCors, { origin: ['https://host-app.example.com'], methods: ['GET', 'POST', 'PUT'] })
  // the host's defaults for its own cookies must not reach the refresh cookie
  await app.register(fastifyCookie, { secret: 'a host cookie secret of 32 bytes!!', parseOptions: { domain: 'example.com', signed: true, partitioned: true } })
  await app.register(jwtLogin, {
    users,
    // the recipe: cors settings off, the allowed pages still listed for cookie mode's Origin check
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true, cookie: { enabled: true } }, cors: { origins: [APP] } }
  })
  await app.ready()
  t.teardown(() => app.close())

  const hostPage = await preflight(app, `${PREFIX}/user/reset_password`, 'PUT', 'https://host-app.example.com')
  t.equal(hostPage.statusCode, 204, "the host's @fastify/cors answers the preflight")
  t.equal(hostPage.headers['access-control-allow-origin'], 'https://host-app.example.com')
  const viaRestRoute = await preflight(app, `/?rest_route=${PREFIX}/auth`, 'POST', 'https://host-app.example.com')
  t.equal(viaRestRoute.statusCode, 204, 'in the rest_route form too')

  const signedIn = await login(app, 'https://host-app.example.com')
  t.equal(signedIn.statusCode, 403, 'cookie mode still refuses an origin not in cors.origins')
  t.equal(errorCode(signedIn), 208)
  const fromApp = await login(app, APP)
  t.equal(fromApp.statusCode, 200, 'an origin in cors.origins may sign in')
  const cookie = fromApp.headers['set-cookie'] as string
  t.match(cookie, /^__Host-jwt-login-refresh=[\w-]+\.[\w-]+\.\d+;/, "the cookie is set with the host's @fastify/cookie, unsigned")
  t.notMatch(cookie, /Domain|Partitioned/i, "without the host's Domain (browsers drop a __Host- cookie with one) or Partitioned")
  const refreshed = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth/refresh`,
    headers: { origin: APP, cookie: cookie.split(';')[0] as string, 'x-csrf-token': fromApp.json().data.csrf_token }
  })
  t.equal(refreshed.statusCode, 200, 'and the cookie refreshes')
})

t.test('registration warns when the host has @fastify/cors and the cors settings are on', async (t) => {
  const lines: string[] = []
  const users = new MemoryUserAdapter()
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(fastifyCors)
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...CORS_ON } })
  await app.ready()
  t.teardown(() => app.close())
  t.ok(lines.some(line => line.includes('registered @fastify/cors itself')), 'the warning says the settings are not used')
})

t.test("OPTIONS / stays the host's when it declared it before the plugin; declared after, it is refused by name", async (t) => {
  const users = new MemoryUserAdapter()
  const before = Fastify()
  before.options('/', async () => 'host preflight')
  await before.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...CORS_ON } })
  await before.ready()
  t.teardown(() => before.close())
  const res = await preflight(before, `/?rest_route=${PREFIX}/auth`, 'POST')
  t.equal(res.body, 'host preflight', "the host's OPTIONS / answers")

  const wildcard = Fastify()
  wildcard.options('/*', async () => 'host wildcard')
  await wildcard.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...CORS_ON } })
  await wildcard.ready()
  t.teardown(() => wildcard.close())
  t.equal((await preflight(wildcard, '/', 'POST')).body, 'host wildcard', "a host's OPTIONS /* keeps /")

  const after = Fastify()
  await after.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...CORS_ON } })
  t.throws(() => after.options('/', async () => 'late'), /OPTIONS \/ is already declared by jwt-login, and the cors settings answer/)
  t.throws(() => after.options('/*', async () => 'late'), /leave cors.enabled off/)
  t.throws(() => after.options('*', async () => 'late'), /OPTIONS \* \(a wildcard that also answers \/\) is already declared by jwt-login/)
  await after.close()
})

t.test('cookie mode: a browser request without Origin from another page (a link, an <img>) to a route that sets the cookie is refused (login CSRF)', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true, cookie: { enabled: true } } })
  t.teardown(() => app.close())
  const navigate = (site: string): Promise<LightMyRequestResponse> => app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    headers: { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': site },
    payload: { email: ALICE.email, password: ALICE.password }
  })
  for (const site of ['cross-site', 'same-site', 'none']) {
    const res = await navigate(site)
    t.equal(res.statusCode, 403, `${site} navigation`)
    t.equal(errorCode(res), 208)
    t.equal(res.headers['set-cookie'], undefined, 'no cookie is set')
  }
  t.equal((await navigate('same-origin')).statusCode, 200, 'a navigation from the host\'s own pages is fine')
  const sibling = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, headers: { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-site' }, payload: { email: ALICE.email, password: ALICE.password } })
  t.same([sibling.statusCode, errorCode(sibling)], [403, 208], 'a browser request from another page without Origin (a sibling subdomain) is refused')
  const client = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(client.statusCode, 200, 'a POST from a client that is no browser (no Origin, no Sec-Fetch-Site) passes')
  const linked = await app.inject({ method: 'GET', url: `${PREFIX}/oauth/token?provider=idp&code=attacker` })
  t.same([linked.statusCode, errorCode(linked)], [403, 208], 'a GET without Origin or Sec-Fetch-Site (an <img> in an old browser) is refused: POST /oauth/token is the form to use')
  const imageTag = await app.inject({ method: 'GET', url: `${PREFIX}/oauth/token?provider=idp&code=attacker`, headers: { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-site' } })
  t.same([imageTag.statusCode, errorCode(imageTag)], [403, 208], 'an <img> on a sibling subdomain is refused before the provider is looked at')
})

t.test('the docs recipe for a host\'s own @fastify/cors allows what the plugin\'s CORS allows (issue 34: DELETE and PATCH were blocked)', async (t) => {
  const page = readPage('docs/browser-apps.md')
  const recipe = page.slice(page.indexOf('## Registering @fastify/cors yourself'))
  const list = (name: string): string => {
    const found = new RegExp(`${name}: \\[([^\\]]*)\\]`).exec(recipe)
    return (found?.[1] ?? '').replaceAll("'", '')
  }
  const { app } = await buildApp(CORS_ON)
  t.teardown(() => app.close())
  const res = await preflight(app, `${PREFIX}/sessions`, 'DELETE', APP, { 'access-control-request-headers': 'authorization' })
  t.equal(list('methods'), res.headers['access-control-allow-methods'])
  t.equal(list('allowedHeaders'), res.headers['access-control-allow-headers'])
  const answer = await login(app, APP)
  t.equal(list('exposedHeaders'), answer.headers['access-control-expose-headers'])
})
