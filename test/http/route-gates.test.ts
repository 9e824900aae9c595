import Fastify, { type FastifyRequest } from 'fastify'
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { SettingsHolder } from '../../lib/config/holder.js'
import type { JwtLoginContext } from '../../lib/context/context.js'
import { addGateHooks, stateOf } from '../../lib/http/gates.js'
import { JwtLoginEvents } from '../../lib/services/events.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorCode, loginTokens, post } from '../helpers/http.js'

// the gate of each route is its own preHandler, made when the route is registered (issue 37)

/** The parts of the context the gate hooks read: the ports given, the clock and the events. */
function gateContext (): JwtLoginContext {
  return { twoFactor: null, passkeys: null, users: {}, clock: () => 1_000, events: new JwtLoginEvents(), store: new MemoryStore() } as unknown as JwtLoginContext
}

t.test('a route\'s gate runs before its own preHandler, and only on a route that declares one', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const settings = await SettingsHolder.create({ tokens: { keys: [{ kid: 'k', secret: 'a secret of at least thirty-two bytes!' }] }, authentication: { enabled: false } }, { ttlMs: 0, onInvalid: () => {}, accept: () => {} })
  const order: string[] = []
  const own = async (request: FastifyRequest): Promise<void> => { order.push(`own ${request.url}`) }
  await app.register(async (scope) => {
    addGateHooks(scope, gateContext(), settings)
    scope.get('/gated', { config: { jwtLogin: { feature: 'validate' } }, preHandler: own }, async () => ({ ok: true }))
    scope.get('/gated-many', { config: { jwtLogin: { authentication: false } }, preHandler: [own, own] }, async () => ({ ok: true }))
    scope.get('/open', { preHandler: own }, async (request) => ({ call: stateOf(request).call.startedAt }))
  })
  // authentication off: the gated route is refused by its gate, before its own preHandler
  const refused = await app.inject({ method: 'GET', url: '/gated' })
  t.equal(refused.statusCode, 403, 'refused by the gate')
  t.same(order, [], 'its own preHandler never ran')
  t.equal(refused.headers['cache-control'], 'no-store')
  const many = await app.inject({ method: 'GET', url: '/gated-many' })
  t.equal(many.statusCode, 200, 'a gate that lets the request through')
  t.same(order, ['own /gated-many', 'own /gated-many'], 'then both of the route\'s own preHandlers')
  const open = await app.inject({ method: 'GET', url: '/open' })
  t.same(open.json(), { call: 1_000 }, 'a route without a gate still has the request\'s snapshot')
  t.equal(open.headers.pragma, 'no-cache')
})

t.test('the routes of the plugin: gated alike inside and outside the cookie routes\' scopes', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true }, validate: { enabled: false } })
  t.teardown(() => app.close())
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: 'a.b.c' })), 82, 'validate off: its gate answers, outside the cookie scope')
  const { jwt } = await loginTokens(app)
  t.equal((await post(app, '/auth/revoke', { JWT: jwt })).statusCode, 200, 'revoke, inside a cookie scope')
  t.equal((await post(app, '/auth', { email: ALICE.email, password: 'wrong password' })).statusCode, 401)
})
