// Every URL form WordPress answers for a REST route, with `aliases`: the trailing slash, any letter case of the route,
// `/index.php/wp-json/…` and `/index.php?rest_route=…`; the prefix itself stays exact.
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import jwtLogin, { restRouteRewrite } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { collectRouteShapes, routeCase, RouteShapes } from '../../lib/http/alias-forms.js'
import { ALICE, buildApp, buildHost, HS_SECRET, registrationThrew } from '../helpers/app.js'
import { claimsOf, errorCode, errorOf } from '../helpers/http.js'

const WP = '/wp-json/simple-jwt-login/v1'
const OTHER = '/api/auth/v1'
const KEYS = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
const credentials = { email: ALICE.email, password: ALICE.password }
const wrong = { email: ALICE.email, password: 'not the password' }

const signIn = async (app: FastifyInstance, url: string, payload: object = credentials): Promise<[number, number | undefined]> =>
  errorOf(await app.inject({ method: 'POST', url, payload }))

t.test('sign-in through every form WordPress answers, with the aliases option', async (t) => {
  const { app } = await buildApp({}, { aliases: [WP, OTHER] })
  t.teardown(() => app.close())
  const forms = [
    // the two
    '/index.php?rest_route=/simple-jwt-login/v1/auth',
    '/wp-json/simple-jwt-login/v1/auth/',
    // trailing slashes, as WordPress's untrailingslashit cuts them
    '/wp-json/simple-jwt-login/v1/auth//',
    '/?rest_route=/simple-jwt-login/v1/auth/',
    // the route in any letter case (WordPress matches a route with a case-insensitive pattern)
    '/wp-json/Simple-JWT-Login/V1/AUTH',
    '/wp-json/SIMPLE-JWT-LOGIN/v1/Auth/',
    '/?rest_route=/Simple-JWT-Login/v1/AUTH',
    '/index.php?rest_route=/SIMPLE-JWT-LOGIN/V1/auth/',
    // PATH_INFO permalinks
    '/index.php/wp-json/simple-jwt-login/v1/auth',
    '/index.php/wp-json/simple-jwt-login/V1/Auth/',
    // an alias outside /wp-json is a route of its own: any case, trailing slashes, both query forms
    '/API/Auth/V1/auth/',
    '/index.php?rest_route=/api/AUTH/v1/AUTH',
    // the prefix's query form on /index.php, as on /
    '/index.php?rest_route=/jwt-login/v1/auth',
    // and a query after the route
    '/wp-json/simple-jwt-login/V1/auth/?lang=en',
    '/index.php?lang=en&rest_route=/simple-jwt-login/v1/AUTH/'
  ]
  for (const url of forms) t.same(await signIn(app, url), [200, undefined], `POST ${url}`)

  const { jwt } = (await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: credentials })).json().data
  for (const url of [
    `/wp-json/simple-jwt-login/v1/Auth/Validate/?JWT=${jwt as string}`,
    `/index.php?rest_route=/simple-jwt-login/v1/auth/VALIDATE&JWT=${jwt as string}`,
    `/index.php/wp-json/SIMPLE-jwt-login/v1/auth/validate?JWT=${jwt as string}`
  ]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, `GET ${url.split('JWT=')[0] as string}`)
    t.equal(res.json().data.user.ID, 1, 'the JWT passed on with the query')
  }
  const unknown = await app.inject({ method: 'POST', url: '/wp-json/SIMPLE-jwt-login/v1/Nothing-Here/', payload: credentials })
  t.same(errorOf(unknown), [404, 207], 'a path under an alias that names no route: the plugin\'s 404')
})

t.test('the prefix stays exact; /wp-json, /index.php and the parameter name too, as WordPress matches them', async (t) => {
  const { app } = await buildHost((app) => {
    app.get('/admin', async () => ({ secret: 'host data' }))
    app.post('/wp-json/other-plugin/v1/auth', async () => ({ host: 'other plugin' }))
    app.post('/wp-json/:namespace/v2/*', async () => ({ host: 'any namespace' }))
  }, {}, { aliases: [WP, OTHER] })
  t.teardown(() => app.close())

  for (const url of [
    '/jwt-login/v1/auth/',
    '/jwt-login/v1/AUTH',
    '/?rest_route=/jwt-login/v1/auth/',
    '/index.php?rest_route=/jwt-login/v1/Auth'
  ]) t.same(await signIn(app, url), [404, 207], `POST ${url}: the plugin's 404`)
  for (const url of [
    '/JWT-LOGIN/v1/auth',
    '/?rest_route=/JWT-LOGIN/v1/auth',
    '/WP-JSON/simple-jwt-login/v1/auth',
    '/INDEX.PHP/wp-json/simple-jwt-login/v1/auth',
    '/index.php/WP-JSON/simple-jwt-login/v1/auth',
    '/INDEX.PHP?rest_route=/simple-jwt-login/v1/auth',
    '/?REST_ROUTE=/simple-jwt-login/v1/auth',
    '/index.php/api/auth/v1/auth',
    '/wp-json/simple-jwt-loginx/v1/auth',
    '/index.php/wp-json/simple-jwt-login/v1x/auth',
    '/wp-jsonx/simple-jwt-login/v1/auth'
  ]) {
    const res = await app.inject({ method: 'POST', url, payload: credentials })
    t.equal(res.statusCode, 404, `POST ${url}: the host's 404`)
    t.not(errorCode(res), 207)
  }
  t.same((await app.inject({ method: 'POST', url: '/wp-json/other-plugin/v1/auth', payload: credentials })).json(), { host: 'other plugin' }, 'another plugin\'s route stays its own')
  t.same((await app.inject({ method: 'POST', url: '/wp-json/Simple-JWT-Login/v2/auth', payload: credentials })).json(), { host: 'any namespace' }, 'a host route beside the alias in another case stays the host\'s')
  t.same(await signIn(app, '/wp-json/Simple-JWT-Login/v1/auth'), [200, undefined], 'and the alias in any case is the plugin\'s')
  for (const url of [
    '/index.php?rest_route=/SIMPLE-jwt-login/v1/../../admin',
    '/?rest_route=/simple-jwt-login/V1/%2e%2e/%2e%2e/admin'
  ]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, `GET ${url}`)
    t.notMatch(res.body, /host data/, 'no way out of the prefix')
  }
})

t.test('one per-IP sign-in count across the forms, the gates and CORS the same on each', async (t) => {
  const { app } = await buildApp({
    limits: { loginPerIp: { max: 4, window: '1m' } }
  }, { aliases: [WP] })
  t.teardown(() => app.close())
  for (const url of [
    '/wp-json/simple-jwt-login/v1/auth',
    '/wp-json/SIMPLE-JWT-LOGIN/V1/AUTH/',
    '/index.php?rest_route=/simple-jwt-login/v1/auth',
    '/index.php/wp-json/simple-jwt-login/v1/auth'
  ]) t.same(await signIn(app, url, wrong), [401, 48], `a wrong password through ${url}`)
  const limited = await signIn(app, '/jwt-login/v1/auth')
  t.equal(limited[0], 429, 'the fifth attempt, through the prefix, is over the one count of the four forms')

  const gated = await buildApp({ authCodes: { codes: [{ code: 'the-code' }], requireFor: { auth: true } } }, { aliases: [WP] })
  t.teardown(() => gated.app.close())
  t.same(await signIn(gated.app, '/index.php/wp-json/Simple-JWT-Login/v1/auth/'), [400, 94], 'the auth-code gate holds on every form')
  t.same(await signIn(gated.app, '/index.php?rest_route=/simple-jwt-login/V1/auth', { ...credentials, AUTH_KEY: 'the-code' }), [200, undefined])

  const origin = 'https://app.example.test'
  const cors = await buildApp({ cors: { enabled: true, origins: [origin] } }, { aliases: [WP] })
  t.teardown(() => cors.app.close())
  for (const url of ['/index.php?rest_route=/simple-jwt-login/v1/auth', '/index.php/wp-json/SIMPLE-jwt-login/v1/auth/']) {
    const preflight = await cors.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST' } })
    t.equal(preflight.statusCode, 204, `the plugin's CORS answers the preflight of ${url}`)
    t.equal(preflight.headers['access-control-allow-origin'], origin)
    const refused = await cors.app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://evil.example.test', 'access-control-request-method': 'POST' } })
    t.same(errorOf(refused), [404, 207], 'and refuses another origin\'s')
    t.equal(refused.headers['access-control-allow-origin'], undefined)
  }
})

t.test('a route parameter keeps its case: only the route\'s own segments take the plugin\'s', async (t) => {
  const { app } = await buildApp({ sessions: { enabled: true } }, { aliases: [WP] })
  t.teardown(() => app.close())
  const { jwt } = (await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: credentials })).json().data
  const sid = claimsOf(jwt).sid as string
  const headers = { authorization: `Bearer ${jwt as string}` }
  const upper = await app.inject({ method: 'DELETE', url: `/wp-json/SIMPLE-jwt-login/v1/Sessions/${sid.toUpperCase()}`, headers })
  t.not(upper.statusCode, 200, 'the id in another case names no session of the user')
  const listed = await app.inject({ method: 'GET', url: '/wp-json/simple-jwt-login/v1/SESSIONS/', headers })
  t.equal(listed.json().data.sessions.length, 1, 'the session is still there')
  const ended = await app.inject({ method: 'DELETE', url: `/index.php/wp-json/Simple-JWT-Login/v1/SESSIONS/${sid}/`, headers })
  t.equal(ended.statusCode, 200, 'the id as sent, under the route in any case, ends it')

  const shapes = new RouteShapes()
  const host = Fastify()
  await host.register(async (scope) => {
    collectRouteShapes(scope, shapes)
    scope.get('/passkeys', async () => ({}))
    scope.get('/passkeys/:id', async () => ({}))
    scope.get('/passkeys/register', async () => ({}))
    scope.get('/passkeys/register', { constraints: { version: '2.0.0' } }, async () => ({}))
    scope.get('/files/*', async () => ({}))
    scope.get('/*', async () => ({}))
  }, { prefix: '/p' })
  await host.ready()
  t.teardown(() => host.close())
  t.equal(shapes.shapes.length, 5, 'each path once')
  t.same([...shapes.exact], ['/passkeys', '/passkeys/register'], 'the static paths, for the exact match')
  t.equal(routeCase('/PASSKEYS/Register', shapes), '/passkeys/register', 'a static segment rather than a parameter')
  t.equal(routeCase('/Passkeys/AbC_d-9', shapes), '/passkeys/AbC_d-9', 'a parameter as sent')
  t.equal(routeCase('/PASSKEYS/', shapes), '/PASSKEYS/', 'an empty segment is no parameter: the catch-all takes it as sent')
  t.equal(routeCase('/Files/A/B', shapes), '/files/A/B', 'what a wildcard takes, as sent')
  t.equal(routeCase('/Nothing/Here', shapes), '/Nothing/Here', 'the catch-all: as sent')
  t.equal(routeCase('/Nothing', new RouteShapes()), '/Nothing', 'no route: as sent')
  t.equal(routeCase('', shapes), '', 'the prefix itself')
  t.equal(routeCase('/passkeys/register', shapes), '/passkeys/register', 'a static route in its own case: as sent, without a scan')
})

t.test('under a host prefix, every form sits under it', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(async (scope) => {
    await scope.register(jwtLogin, { users, aliases: [WP], settings: KEYS })
  }, { prefix: '/site' })
  await app.ready()
  t.teardown(() => app.close())
  for (const url of [
    '/site?rest_route=/jwt-login/v1/auth',
    '/site/?rest_route=/simple-jwt-login/v1/AUTH/',
    '/site/index.php?rest_route=/jwt-login/v1/auth',
    '/site/wp-json/Simple-JWT-Login/v1/auth/',
    '/site/index.php/wp-json/simple-jwt-login/v1/auth',
    // an encoded character in the alias: the router reads it decoded, and so does the forwarding
    '/site/wp-json/simple%2Djwt-login/v1/auth'
  ]) t.same(await signIn(app, url), [200, undefined], `POST ${url}`)
  t.equal((await app.inject({ method: 'POST', url: '/?rest_route=/jwt-login/v1/auth', payload: credentials })).statusCode, 404, 'not outside the scope')
})

t.test('a host route on /index.php: refused by name, as on /; restRoute off leaves it to the host, and restRouteRewrite answers', async (t) => {
  const before = await registrationThrew({}, (app) => { app.get('/index.php', async () => ({ legacy: true })) })
  t.match(before, {
    name: 'JwtLoginSettingsError',
    path: 'restRoute',
    message: 'GET /index.php is already declared by the host (or another jwt-login instance: give it restRoute: false), and restRoute (on by default) serves /index.php?rest_route= on /index.php: to keep your own /index.php, register jwt-login with restRoute: false and pass restRouteRewrite() to Fastify({ rewriteUrl }), which still answers /index.php?rest_route='
  })
  const after = Fastify()
  t.teardown(() => after.close())
  await after.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { ...KEYS, cors: { enabled: true, origins: ['https://app.example.test'] } } })
  t.throws(() => after.post('/index.php', async () => ({})), { name: 'JwtLoginSettingsError', path: 'restRoute', message: /POST \/index\.php is already declared by jwt-login/ })
  t.throws(() => after.route({ method: 'OPTIONS', url: '/index.php', handler: async () => ({}) }), { path: 'restRoute', message: /preflights of \/index\.php\?rest_route= on OPTIONS \/index\.php/ })
  t.throws(() => after.head('/index.php', async () => {}), { path: 'restRoute', message: /takes every method on \/index\.php/ })

  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const host = Fastify({ rewriteUrl: restRouteRewrite('/jwt-login/v1', [WP]) })
  host.get('/index.php', async () => ({ legacy: true }))
  await host.register(jwtLogin, { users, aliases: [WP], restRoute: false, settings: KEYS })
  await host.ready()
  t.teardown(() => host.close())
  t.same((await host.inject({ method: 'GET', url: '/index.php?p=1' })).json(), { legacy: true }, 'the host keeps its /index.php')
  t.same((await host.inject({ method: 'GET', url: '/index.php?rest_route=/wp/v2/posts' })).json(), { legacy: true }, 'and other namespaces on it')
  for (const url of ['/index.php?rest_route=/jwt-login/v1/auth', '/index.php?rest_route=/SIMPLE-JWT-LOGIN/v1/auth', '/?rest_route=/simple-jwt-login/v1/Auth/']) {
    t.same(await signIn(host, url), [200, undefined], `restRouteRewrite answers POST ${url}`)
  }
  const rewrite = restRouteRewrite('/jwt-login/v1', [WP])
  t.equal(rewrite({ url: '/index.php?rest_route=/jwt-login/v1/auth&x=1' }), '/jwt-login/v1/auth?x=1')
  t.equal(rewrite({ url: '/index.php?rest_route=/SIMPLE-JWT-LOGIN/v1/auth' }), '/jwt-login/v1/auth', 'a route in the plugin\'s case reaches the prefix')
  t.equal(rewrite({ url: '/?rest_route=/simple-jwt-login/v1/Auth/' }), `${WP}/Auth/`, 'another reaches the alias, which finds its case')
  t.equal(rewrite({ url: '/index.php?rest_route=/jwt-login/v1/Auth/' }), '/jwt-login/v1/Auth/', 'the prefix\'s route as sent: exact (the plugin\'s 404)')
  t.equal(rewrite({ url: '/index.php/x?rest_route=/jwt-login/v1/auth' }), '/index.php/x?rest_route=/jwt-login/v1/auth', 'only / and /index.php')
})

t.test('aliases that differ only in letter case are refused, as the prefix is', async (t) => {
  t.match(await registrationThrew({ aliases: ['/WP-JSON/simple-jwt-login/v1', WP] }), { name: 'JwtLoginSettingsError', path: 'aliases/1', message: /in any letter case/ })
  t.match(await registrationThrew({ aliases: ['/JWT-Login/v1'] }), { name: 'JwtLoginSettingsError', path: 'aliases/0' })
  t.equal(await registrationThrew({ aliases: ['/wp-json/jwt-login/v1', '/Api/v1.0/my_auth~x/2'] }), null, 'the prefix\'s namespace under /wp-json, and the characters of a path')
  t.match(await registrationThrew({ aliases: [WP, '/wp-json/jwt-auth/v1', '/wp-json/sjl-api/v1'] }), {
    name: 'JwtLoginSettingsError',
    path: 'aliases/2',
    message: 'jwt-login: invalid option aliases/2: differs from aliases/1 in its letters only: answering both in every letter case, Fastify\'s router cannot tell them apart (/wp-json/()-()/()1, a run of letters as "()"); keep one of them'
  })

  const several = await buildApp({}, { aliases: [WP, '/wp-json/simple-jwt-login/v2', '/wp-json/jwt-auth/v1'] })
  t.teardown(() => several.app.close())
  for (const url of ['/wp-json/SIMPLE-jwt-login/V1/auth', '/wp-json/simple-JWT-login/v2/auth/', '/index.php/wp-json/JWT-Auth/v1/auth']) {
    t.same(await signIn(several.app, url), [200, undefined], `POST ${url}: several aliases under /wp-json`)
  }
  t.equal((await several.app.inject({ method: 'POST', url: '/wp-json/simple-jwt-login/V3/auth', payload: credentials })).statusCode, 404, 'and only them')
  const { app } = await buildApp({}, { aliases: ['/Api/v1.0/my_auth~x/2'] })
  t.teardown(() => app.close())
  for (const url of ['/api/V1.0/MY_AUTH~X/2/auth/', '/Api/v1.0/my_auth~x/2/auth', '/?rest_route=/API/v1.0/my_auth~x/2/Auth']) {
    t.same(await signIn(app, url), [200, undefined], `POST ${url}`)
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/v1x0/my_auth~x/2/auth', payload: credentials })).statusCode, 404, 'a dot is a dot')
})
