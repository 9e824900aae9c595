import fastifyJwt from '@fastify/jwt'
import { createVerifier } from 'fast-jwt'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { loginTokens, post } from '../helpers/http.js'

const HOST_SECRET = 'the-host-application-own-secret-0123456789'

/** A host with its own @fastify/jwt, registered before jwt-login, and a route behind each. */
async function hostWithJwt (t: Test): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(fastifyJwt, { secret: HOST_SECRET })
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  app.get('/host/me', { onRequest: async (request) => { await request.jwtVerify() } }, async (request) => ({ user: request.user }))
  app.get('/host/jwt-login', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ sub: request.jwtLogin?.claims?.sub }))
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/** What @fastify/jwt puts on a host by itself. */
async function bareJwtKeys (): Promise<string[]> {
  const bare = Fastify()
  await bare.register(fastifyJwt, { secret: HOST_SECRET })
  await bare.ready()
  const keys = Object.keys(bare.jwt).sort()
  await bare.close()
  return keys
}

t.test('a host @fastify/jwt registered first is left as it is', async (t) => {
  const app = await hostWithJwt(t)
  t.same(Object.keys(app.jwt).sort(), await bareJwtKeys(), 'fastify.jwt has what @fastify/jwt alone gives it')
  t.same(Object.keys(app.jwt).filter(name => name.startsWith('jwtLogin')), [], 'no jwtLogin_* namespace')
  t.notOk(app.hasRequestDecorator('jwtLoginClaims'), 'no request decorator of a jwt-login namespace')

  const hostToken = app.jwt.sign({ sub: 'host-user' })
  t.equal(createVerifier({ key: HOST_SECRET })(hostToken).sub, 'host-user', 'fastify.jwt.sign signs with the host secret')
  t.equal((app.jwt.verify(hostToken) as { sub: string }).sub, 'host-user', 'fastify.jwt.verify verifies with it')

  const me = await app.inject({ method: 'GET', url: '/host/me', headers: { authorization: `Bearer ${hostToken}` } })
  t.equal(me.statusCode, 200, 'request.jwtVerify works on a host route')
  t.equal(me.json().user.sub, 'host-user')

  const { jwt } = await loginTokens(app)
  t.throws(() => app.jwt.verify(jwt), 'a jwt-login token is not the host\'s: another key signed it')
  t.equal((await app.inject({ method: 'GET', url: '/host/me', headers: { authorization: `Bearer ${jwt}` } })).statusCode, 401)
})

t.test('jwt-login tokens validate beside a host @fastify/jwt, and host tokens do not', async (t) => {
  const app = await hostWithJwt(t)
  const { jwt } = await loginTokens(app)
  const validated = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(validated.statusCode, 200)
  t.equal(validated.json().data.user.user_email, ALICE.email)
  const guarded = await app.inject({ method: 'GET', url: '/host/jwt-login', headers: { authorization: `Bearer ${jwt}` } })
  t.same(guarded.json(), { sub: '1' }, 'fastify.jwtLogin.authenticate on a host route')

  const hostToken = app.jwt.sign({ sub: '1' })
  const refused = await post(app, '/auth/validate', { JWT: hostToken })
  t.equal(refused.statusCode, 401)
  t.equal(refused.json().data.errorCode, 9, 'a host token names no jwt-login key')
})
