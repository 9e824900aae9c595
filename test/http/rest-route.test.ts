import Fastify from 'fastify'
import t from 'tap'
import jwtLogin, { restRouteRewrite } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { errorCode, loginTokens } from '../helpers/http.js'

const REST = '/?rest_route=/jwt-login/v1'

t.test('every route through ?rest_route=, body and query preserved', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())

  const login = await app.inject({ method: 'POST', url: `${REST}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200, login.body)
  const { jwt, refresh_token: refreshToken } = login.json().data

  const form = await app.inject({
    method: 'POST',
    url: `${REST}/auth`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username: ALICE.login, password: ALICE.password }).toString()
  })
  t.equal(form.statusCode, 200, 'form-encoded body through the query form')

  const encoded = await app.inject({ method: 'POST', url: '/?rest_route=%2Fjwt-login%2Fv1%2Fauth', payload: { login: ALICE.login, password: ALICE.password } })
  t.equal(encoded.statusCode, 200, 'an encoded rest_route')

  const getValidate = await app.inject({ method: 'GET', url: `${REST}/auth/validate&JWT=${jwt as string}` })
  t.equal(getValidate.statusCode, 200, getValidate.body)
  t.equal(getValidate.json().data.jwt[0].token, jwt)

  const queryFirst = await app.inject({ method: 'GET', url: `/?JWT=${jwt as string}&rest_route=/jwt-login/v1/auth/validate` })
  t.equal(queryFirst.statusCode, 200, 'rest_route need not be the first parameter')

  const postValidate = await app.inject({ method: 'POST', url: `${REST}/auth/validate`, payload: { JWT: jwt } })
  t.equal(postValidate.statusCode, 200)

  const noJwt = await app.inject({ method: 'GET', url: `${REST}/auth/validate` })
  t.equal(noJwt.statusCode, 400, 'rest_route itself is not passed on as a parameter')
  t.equal(errorCode(noJwt), 53)

  const refresh = await app.inject({ method: 'POST', url: `${REST}/auth/refresh`, payload: { refresh_token: refreshToken } })
  t.equal(refresh.statusCode, 200)

  const revoke = await app.inject({ method: 'POST', url: `${REST}/auth/revoke`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(revoke.statusCode, 200)
  const revoked = await app.inject({ method: 'POST', url: `${REST}/auth/validate&JWT=${jwt as string}` })
  t.equal(revoked.statusCode, 401)
  t.equal(errorCode(revoked), 55)

  const tooBig = await app.inject({ method: 'POST', url: `${REST}/auth`, payload: { email: ALICE.email, password: ALICE.password, padding: 'x'.repeat(20000) } })
  t.equal(tooBig.statusCode, 400, 'the body limit holds through the query form')
  t.equal(errorCode(tooBig), 203)
})

t.test('what the query form does not serve is a 404', async (t) => {
  const users = new MemoryUserAdapter()
  const app = Fastify()
  app.get('/admin', async () => ({ secret: 'host data' }))
  app.get('/jwt-login/admin', async () => ({ secret: 'host data' }))
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  t.teardown(() => app.close())
  for (const [method, url] of [
    ['GET', '/?rest_route=/wp/v2/users'],
    ['POST', '/?rest_route=/other-plugin/v1/auth'],
    ['POST', '/?rest_route=/jwt-login/v1x/auth'],
    ['GET', '/?rest_route=/jwt-login/v1'],
    ['GET', '/?rest_route=/jwt-login/v1/nothing-here'],
    ['PUT', '/?rest_route=/jwt-login/v1/auth'],
    ['GET', '/?rest_route=/jwt-login/v1/../../admin'],
    ['GET', '/?rest_route=/jwt-login/v1/%2e%2e/%2e%2e/admin'],
    ['GET', '/?rest_route=/jwt-login/v1/../admin'],
    ['GET', '/'],
    ['POST', '/'],
    ['GET', '/?foo=bar'],
    ['GET', '/?rest_route=']
  ] as const) {
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.notMatch(res.body, /host data/)
  }
})

t.test('restRoute: false leaves / to the host', async (t) => {
  const { app } = await buildApp({}, { restRoute: false })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'POST', url: `${REST}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).statusCode, 404)

  const users = new MemoryUserAdapter()
  const host = Fastify()
  host.get('/', async () => ({ home: true }))
  await host.register(jwtLogin, { users, restRoute: false, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  await host.ready()
  t.teardown(() => host.close())
  const home = await host.inject({ method: 'GET', url: '/?rest_route=/jwt-login/v1/auth/validate' })
  t.same(home.json(), { home: true })

  const clash = Fastify()
  clash.get('/', async () => ({ home: true }))
  t.teardown(() => clash.close())
  await t.rejects(async () => {
    await clash.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
    await clash.ready()
  }, { message: /already declared/ }, 'with the query form on, the plugin owns /')
})

t.test('restRouteRewrite() as Fastify rewriteUrl', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ rewriteUrl: restRouteRewrite() })
  app.get('/', async () => ({ home: true }))
  app.get('/page', async (request) => ({ query: request.query }))
  await app.register(jwtLogin, { users, restRoute: false, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  await app.ready()
  t.teardown(() => app.close())

  const { jwt } = await loginTokens(app)
  const login = await app.inject({ method: 'POST', url: `${REST}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200)
  const validate = await app.inject({ method: 'GET', url: `${REST}/auth/validate&JWT=${jwt}` })
  t.equal(validate.statusCode, 200)
  t.same((await app.inject({ method: 'GET', url: '/' })).json(), { home: true })
  t.same((await app.inject({ method: 'GET', url: '/?rest_route=/wp/v2/posts' })).json(), { home: true }, 'other namespaces stay with the host')
  t.same((await app.inject({ method: 'GET', url: '/page?rest_route=/jwt-login/v1/auth&x=1' })).json(), { query: { rest_route: '/jwt-login/v1/auth', x: '1' } }, 'only / is rewritten')

  const rewrite = restRouteRewrite()
  t.equal(rewrite({}), '/')
  t.equal(rewrite({ url: '?rest_route=/jwt-login/v1/auth' }), '/jwt-login/v1/auth')
  t.equal(rewrite({ url: '/?rest_route=/jwt-login/v1/auth/validate&JWT=abc' }), '/jwt-login/v1/auth/validate?JWT=abc')
  t.equal(rewrite({ url: '/plain' }), '/plain')
  t.equal(restRouteRewrite('/custom/v9')({ url: '/?rest_route=/custom/v9/auth' }), '/custom/v9/auth')
  t.equal(restRouteRewrite('/custom/v9')({ url: '/?rest_route=/jwt-login/v1/auth' }), '/?rest_route=/jwt-login/v1/auth')
})

t.test('a custom prefix', async (t) => {
  const { app } = await buildApp({}, { prefix: '/api/login/v2' })
  t.teardown(() => app.close())
  const direct = await app.inject({ method: 'POST', url: '/api/login/v2/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(direct.statusCode, 200)
  const { jwt } = direct.json().data
  const viaQuery = await app.inject({ method: 'GET', url: `/?rest_route=/api/login/v2/auth/validate&JWT=${jwt as string}` })
  t.equal(viaQuery.statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: `${REST}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).statusCode, 404)
})
