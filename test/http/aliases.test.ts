import Fastify from 'fastify'
import t from 'tap'
import jwtLogin, { restRouteRewrite } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { errorCode } from '../helpers/http.js'

const WP = '/wp-json/simple-jwt-login/v1'
const WP_QUERY = '/?rest_route=/simple-jwt-login/v1'
const OTHER = '/api/auth/v1'
const ORIGIN = 'https://app.example.test'

const credentials = { email: ALICE.email, password: ALICE.password }

t.test('one instance answers its prefix, each alias, and the query form of each', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } }, { aliases: [WP, OTHER] })
  t.teardown(() => app.close())

  const forms = ['/jwt-login/v1', WP, OTHER, '/?rest_route=/jwt-login/v1', WP_QUERY, `/?rest_route=${OTHER}`]
  for (const base of forms) {
    const login = await app.inject({ method: 'POST', url: `${base}/auth`, payload: credentials })
    t.equal(login.statusCode, 200, `sign-in through ${base}`)
    const { jwt, refresh_token: refreshToken } = login.json().data
    const join = base.includes('?') ? '&' : '?'
    const validate = await app.inject({ method: 'GET', url: `${base}/auth/validate${join}JWT=${jwt as string}` })
    t.equal(validate.statusCode, 200, `validate through ${base}`)
    t.equal(validate.json().data.user.ID, 1)
    const refresh = await app.inject({ method: 'POST', url: `${base}/auth/refresh`, payload: { refresh_token: refreshToken } })
    t.equal(refresh.statusCode, 200, `refresh through ${base}`)
    const wrong = await app.inject({ method: 'POST', url: `${base}/auth`, payload: { ...credentials, password: 'wrong password' } })
    t.equal(wrong.statusCode, 401)
    t.equal(errorCode(wrong), 48, `the same error envelope through ${base}`)
    const unknown = await app.inject({ method: 'GET', url: `${base}/nothing-here` })
    t.equal(unknown.statusCode, 404, `an unknown path through ${base}`)
    t.equal(errorCode(unknown), 207)
  }

  const wpJsonQuery = await app.inject({ method: 'POST', url: '/?rest_route=/wp-json/simple-jwt-login/v1/auth', payload: credentials })
  t.equal(wpJsonQuery.statusCode, 404, 'the query form names a /wp-json alias without /wp-json, as WordPress does')
  const outside = await app.inject({ method: 'POST', url: '/wp-json/other-plugin/v1/auth', payload: credentials })
  t.equal(outside.statusCode, 404, 'a path beside the alias stays the host\'s')
  t.not(outside.json().errorCode, 48)
})

t.test('the gates, limits and settings hold on every form', async (t) => {
  const { app } = await buildApp({
    authCodes: { codes: [{ code: 'the-code' }], requireFor: { auth: true } },
    limits: { requestsPerIp: { max: 3, window: '1m' } }
  }, { aliases: [WP] })
  t.teardown(() => app.close())

  const gated = await app.inject({ method: 'POST', url: `${WP}/auth`, payload: credentials })
  t.equal(gated.statusCode, 400, 'the auth-code gate holds on the alias')
  t.equal(errorCode(gated), 94)
  const queried = await app.inject({ method: 'POST', url: `${WP_QUERY}/auth`, payload: credentials })
  t.equal(errorCode(queried), 94, 'and on its query form')
  const passed = await app.inject({ method: 'POST', url: `${WP}/auth`, payload: { ...credentials, AUTH_KEY: 'the-code' } })
  t.equal(passed.statusCode, 200)
  // one per-IP count across every form: the third request above was the last
  const limited = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: credentials })
  t.equal(limited.statusCode, 429, 'the request limit counts every form together')
  t.equal(errorCode(limited), 200)
})

t.test('CORS and cookie mode behave the same on an alias', async (t) => {
  const { app } = await buildApp({
    refresh: { enabled: true, cookie: { enabled: true } },
    cors: { enabled: true, origins: [ORIGIN], credentials: true }
  }, { aliases: [WP] })
  t.teardown(() => app.close())

  const preflight = await app.inject({
    method: 'OPTIONS',
    url: `${WP}/auth`,
    headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }
  })
  t.equal(preflight.statusCode, 204, 'the alias answers preflights with the plugin\'s CORS')
  t.equal(preflight.headers['access-control-allow-origin'], ORIGIN)
  const refused = await app.inject({ method: 'POST', url: `${WP}/auth`, headers: { origin: 'https://evil.example.test' }, payload: credentials })
  t.equal(refused.statusCode, 403, 'an origin outside cors.origins is refused on the alias')
  t.equal(errorCode(refused), 208)

  const login = await app.inject({ method: 'POST', url: `${WP}/auth`, headers: { origin: ORIGIN }, payload: credentials })
  t.equal(login.statusCode, 200, login.body)
  const cookie = String(login.headers['set-cookie'])
  t.match(cookie, /^__Host-jwt-login-refresh=[^;]+;.*Path=\//, 'the refresh cookie is set for / on the alias too')
  const value = cookie.split(';')[0] as string
  const refresh = await app.inject({
    method: 'POST',
    url: `${WP}/auth/refresh`,
    headers: { origin: ORIGIN, cookie: value, 'x-csrf-token': login.json().data.csrf_token }
  })
  t.equal(refresh.statusCode, 200, 'and the cookie refreshes through the alias')
})

t.test('the OpenAPI document lists the prefix only', async (t) => {
  const swagger = (await import('@fastify/swagger')).default
  const users = new MemoryUserAdapter()
  const app = Fastify()
  await app.register(swagger, { openapi: { info: { title: 't', version: '1' } } })
  await app.register(jwtLogin, { users, aliases: [WP], settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  await app.ready()
  t.teardown(() => app.close())
  const paths = Object.keys((app.swagger() as { paths: Record<string, unknown> }).paths)
  t.ok(paths.includes('/jwt-login/v1/auth'))
  t.notOk(paths.some(path => path.startsWith('/wp-json')), 'no alias path in the document')
})

t.test('aliases under a host prefix, and restRouteRewrite with aliases', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(async (scope) => {
    await scope.register(jwtLogin, { users, aliases: [WP], restRoute: false, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  }, { prefix: '/site' })
  await app.ready()
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: `/site${WP}/auth`, payload: credentials })
  t.equal(login.statusCode, 200, 'an alias sits under the scope\'s prefix as the routes do')

  const rewrite = restRouteRewrite('/jwt-login/v1', [WP])
  t.equal(rewrite({ url: `${WP_QUERY}/auth&x=1` }), '/jwt-login/v1/auth?x=1')
  t.equal(rewrite({ url: '/?rest_route=/jwt-login/v1/auth' }), '/jwt-login/v1/auth')
  t.equal(rewrite({ url: '/?rest_route=/other/v1/auth' }), '/?rest_route=/other/v1/auth')
  t.equal(restRouteRewrite()({ url: WP_QUERY }), WP_QUERY, 'without aliases the WordPress namespace is not served')
})

t.test('aliases are checked at registration', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['/wp-json/simple-jwt-login/v1', 'aliases'],
    [['wp-json/x'], 'aliases/0'],
    [['/wp-json/x/'], 'aliases/0'],
    [['/x?y=1'], 'aliases/0'],
    [['/x/:id'], 'aliases/0'],
    [['/x/*'], 'aliases/0'],
    [[''], 'aliases/0'],
    [[42], 'aliases/0'],
    [['/jwt-login/v1'], 'aliases/0'],
    [[WP, WP], 'aliases/1']
  ]
  for (const [aliases, path] of cases) {
    const app = Fastify()
    const registering = async (): Promise<void> => {
      await app.register(jwtLogin, { users: new MemoryUserAdapter(), aliases: aliases as string[], settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
      await app.ready()
    }
    await t.rejects(registering, { name: 'JwtLoginSettingsError', path }, `${JSON.stringify(aliases)} is refused at ${path}`)
    await app.close()
  }
})
