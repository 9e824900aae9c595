// Issue 24: two jwt-login instances in one host, each in its own encapsulated plugin, as docs/deployment.md#two-instances-in-one-host shows.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { JwtLoginSettingsError, restRouteRewrite, type JwtLoginOptions } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE } from '../helpers/app.js'
import { claimsOf, errorOf } from '../helpers/http.js'

const KEY_A = { kid: 'site-a', secret: 'a'.repeat(32) + '-secret-of-instance-a' }
const KEY_B = { kid: 'site-b', secret: 'b'.repeat(32) + '-secret-of-instance-b' }

/** Alice in a memory adapter of her own (each instance may have its own users). */
async function usersWithAlice (displayName: string): Promise<MemoryUserAdapter> {
  const users = new MemoryUserAdapter()
  await users.addUser({ ...ALICE, displayName })
  return users
}

/**
 * The host of the docs: each instance in its own encapsulated plugin with
 * its own prefix, keys and users, and a host route behind its own
 * `authenticate`; `restRoute` kept on the first only.
 */
async function twoInstanceHost (t: Test, options: { a?: Partial<JwtLoginOptions>, b?: Partial<JwtLoginOptions>, host?: FastifyServerOptions } = {}): Promise<FastifyInstance> {
  const app = Fastify(options.host)
  t.teardown(() => app.close())
  const users = { a: await usersWithAlice('Alice of A'), b: await usersWithAlice('Alice of B') }
  await app.register(async (scope) => {
    await scope.register(jwtLogin, { users: users.a, prefix: '/a/v1', settings: { tokens: { keys: [KEY_A] } }, ...options.a })
    scope.get('/a/me', { preHandler: scope.jwtLogin.authenticate }, async (request) => ({ instance: 'a', user: request.jwtLogin?.user.display_name }))
    scope.get('/a/kid', async () => ({ kid: scope.jwtLogin.settings.tokens.keys[0]?.kid }))
  })
  await app.register(async (scope) => {
    await scope.register(jwtLogin, { users: users.b, prefix: '/b/v1', restRoute: false, settings: { tokens: { keys: [KEY_B] }, refresh: { enabled: true } }, ...options.b })
    scope.get('/b/me', { preHandler: scope.jwtLogin.authenticate }, async (request) => ({ instance: 'b', user: request.jwtLogin?.user.display_name }))
    scope.get('/b/kid', async () => ({ kid: scope.jwtLogin.settings.tokens.keys[0]?.kid }))
  })
  await app.ready()
  return app
}

async function loginOn (app: FastifyInstance, prefix: string): Promise<{ status: number, jwt: string, body: Record<string, any> }> {
  const res = await app.inject({ method: 'POST', url: `${prefix}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  return { status: res.statusCode, jwt: res.json().data?.jwt, body: res.json() }
}

t.test('two scopes, two prefixes, two sets of settings: each serves its own routes with its own keys', async (t) => {
  const app = await twoInstanceHost(t)
  t.notOk(app.hasDecorator('jwtLogin'), 'the host itself has no instance')
  const a = await loginOn(app, '/a/v1')
  const b = await loginOn(app, '/b/v1')
  t.equal(a.status, 200)
  t.equal(b.status, 200)
  t.equal(a.body.data.refresh_token, undefined, 'A has refresh off')
  t.type(b.body.data.refresh_token, 'string', 'B has it on')
  const headerOf = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString())
  t.equal(headerOf(a.jwt).kid, 'site-a')
  t.equal(headerOf(b.jwt).kid, 'site-b')
  t.equal(claimsOf(a.jwt).sub, '1')
  t.same((await app.inject('/a/kid')).json(), { kid: 'site-a' }, 'scope A\'s fastify.jwtLogin is A')
  t.same((await app.inject('/b/kid')).json(), { kid: 'site-b' }, 'scope B\'s fastify.jwtLogin is B')
})

t.test('a token of one instance is refused by the other, on its routes and behind its authenticate hook', async (t) => {
  const app = await twoInstanceHost(t)
  const a = await loginOn(app, '/a/v1')
  const b = await loginOn(app, '/b/v1')
  const validate = async (prefix: string, jwt: string): Promise<[number, number | undefined]> =>
    errorOf(await app.inject({ method: 'POST', url: `${prefix}/auth/validate`, payload: { JWT: jwt } }))
  t.equal((await validate('/a/v1', a.jwt))[0], 200)
  t.equal((await validate('/b/v1', b.jwt))[0], 200)
  t.equal((await validate('/b/v1', a.jwt))[0], 401, 'B refuses A\'s token')
  t.equal((await validate('/a/v1', b.jwt))[0], 401, 'A refuses B\'s token')

  const me = async (path: string, jwt: string): Promise<{ status: number, body: unknown }> => {
    const res = await app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${jwt}` } })
    return { status: res.statusCode, body: res.json() }
  }
  t.same(await me('/a/me', a.jwt), { status: 200, body: { instance: 'a', user: 'Alice of A' } }, 'A\'s hook: A\'s users')
  t.same(await me('/b/me', b.jwt), { status: 200, body: { instance: 'b', user: 'Alice of B' } }, 'B\'s hook: B\'s users')
  t.equal((await me('/a/me', b.jwt)).status, 401)
  t.equal((await me('/b/me', a.jwt)).status, 401)

  // revoking on A leaves B's session alone
  t.equal((await app.inject({ method: 'POST', url: '/a/v1/auth/revoke', payload: { JWT: a.jwt } })).statusCode, 200)
  t.equal((await validate('/a/v1', a.jwt))[0], 401)
  t.equal((await validate('/b/v1', b.jwt))[0], 200)
})

t.test('the query form serves the instance that keeps restRoute; a second one that keeps it too is refused', async (t) => {
  const app = await twoInstanceHost(t)
  const viaQuery = await app.inject({ method: 'POST', url: '/?rest_route=/a/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(viaQuery.statusCode, 200, 'A answers /?rest_route=')
  t.equal(JSON.parse(Buffer.from((viaQuery.json().data.jwt as string).split('.')[0] as string, 'base64url').toString()).kid, 'site-a')
  t.equal((await app.inject({ method: 'POST', url: '/?rest_route=/b/v1/auth', payload: {} })).statusCode, 404, 'B\'s routes are not in A\'s query form')

  const both = Fastify()
  t.teardown(() => both.close())
  both.register(async (scope) => { await scope.register(jwtLogin, { users: new MemoryUserAdapter(), prefix: '/a/v1', settings: { tokens: { keys: [KEY_A] } } }) })
  both.register(async (scope) => { await scope.register(jwtLogin, { users: new MemoryUserAdapter(), prefix: '/b/v1', settings: { tokens: { keys: [KEY_B] } } }) })
  const error = await both.ready().then(() => null, (error: unknown) => error)
  t.ok(error instanceof JwtLoginSettingsError)
  t.match(error, { path: 'restRoute', message: /GET \/ is already declared .*another jwt-login instance: give it restRoute: false/ })
})

t.test('both instances in the query form: restRoute off on both, one rewriteUrl trying each prefix', async (t) => {
  const a = restRouteRewrite('/a/v1')
  const b = restRouteRewrite('/b/v1')
  const app = await twoInstanceHost(t, {
    host: { rewriteUrl: (req) => { const url = a(req); return url !== req.url ? url : b(req) } },
    a: { restRoute: false }
  })
  const viaB = await app.inject({ method: 'POST', url: '/?rest_route=/b/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(viaB.statusCode, 200)
  t.type(viaB.json().data.refresh_token, 'string', 'B answered')
  const viaA = await app.inject({ method: 'POST', url: '/?rest_route=/a/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(viaA.statusCode, 200)
  t.equal(viaA.json().data.refresh_token, undefined, 'A answered')
})

t.test('the same prefix in both scopes is refused by Fastify as a duplicate route', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  app.register(async (scope) => { await scope.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [KEY_A] } } }) })
  app.register(async (scope) => { await scope.register(jwtLogin, { users: new MemoryUserAdapter(), restRoute: false, settings: { tokens: { keys: [KEY_B] } } }) })
  await t.rejects(async () => { await app.ready() }, { code: 'FST_ERR_DUPLICATED_ROUTE' })
})
