// Issue 43: with `@opentelemetry/api` installed and no SDK registered the plugin records nothing and calls straight through; without the API nothing is wrapped at all; an SDK registered after the plugin, before ready(), is found at ready(). The tests run in order: the SDK is registered (once per process) in the last one.
import Fastify, { type FastifyInstance, type RouteHandlerMethod } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin from '../../lib/index.js'
import { traceFlows } from '../../lib/http/traced-routes.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { loadOtel, metricsRecorded, tracesRecorded, type OtelApi } from '../../lib/telemetry/otel.js'
import { SCOPE_NAME, Telemetry, withoutTelemetry } from '../../lib/telemetry/telemetry.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { login, loginTokens, post } from '../helpers/http.js'

const api = loadOtel() as OtelApi
const GAUGES = { hashingQueue: () => ({ signIns: 0, newPasswords: 0 }) }

/** The handler each route of `app` ends up with, by method and path, as the last onRoute hook sees it. */
function handlers (app: FastifyInstance): Map<string, RouteHandlerMethod> {
  const seen = new Map<string, RouteHandlerMethod>()
  app.addHook('onRoute', (route) => { seen.set(`${String(route.method)} ${route.url}`, route.handler) })
  return seen
}

t.test('the API without an SDK: available, not live; a store call goes straight through', async (t) => {
  t.not(api, null, 'the API is installed')
  t.equal(tracesRecorded(api), false, 'no tracer provider')
  t.equal(metricsRecorded(api, api.metrics.getMeter(SCOPE_NAME)), false, 'no meter provider')
  const telemetry = new Telemetry({ api, userIds: () => true, gauges: GAUGES })
  t.equal(telemetry.available, true)
  t.equal(telemetry.live, false)
  const answer = Promise.resolve('value')
  t.equal(telemetry.runner('store', 'memory')('get', () => answer), answer, 'the very promise the store answered')
  t.equal(telemetry.observe('user.locked', { userId: 1, reason: 'note' }), undefined, 'an event is ignored')
  t.equal(telemetry.lockout('login:ip:aGFzaA'), undefined, 'a lockout is ignored')
  t.equal(telemetry.retried(), undefined, 'a retry outside a flow is ignored')
  telemetry.refresh()
  t.equal(telemetry.live, false, 'and nothing of it made the telemetry live')
  t.equal(telemetry.runner('users')('findById', () => answer), answer, 'calls still go straight through')
  telemetry.close()
})

t.test('the API without an SDK: the routes answer as ever', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  const tokens = await loginTokens(app)
  t.equal((await post(app, '/auth/refresh', { refresh_token: tokens.refresh_token })).statusCode, 200)
  t.equal((await login(app, { email: ALICE.email, password: 'wrong' })).statusCode, 401)
  t.equal((await post(app, '/auth/validate', { JWT: tokens.jwt })).statusCode, 200)
})

/** An app whose routes (`routes`, one handler for all) were declared after `traceFlows`, and the handler each route ended with. */
async function tracedApp (t: Test, telemetry: Telemetry, routes: Array<['GET' | 'POST', string]>): Promise<{ app: FastifyInstance, seen: ReturnType<typeof handlers>, handler: RouteHandlerMethod }> {
  const app = Fastify()
  traceFlows(app, telemetry)
  const seen = handlers(app)
  const handler: RouteHandlerMethod = async () => ({ answered: true })
  for (const [method, url] of routes) app.route({ method, url, handler })
  await app.ready()
  t.teardown(() => app.close())
  return { app, seen, handler }
}

t.test('the API without an SDK: flow routes are wrapped, and call their handlers straight through', async (t) => {
  const { app, seen, handler } = await tracedApp(t, new Telemetry({ api, userIds: () => false, gauges: GAUGES }), [['POST', '/auth'], ['GET', '/jwks']])
  t.not(seen.get('POST /auth'), handler, 'a flow\'s route is wrapped')
  t.equal(seen.get('GET /jwks'), handler, 'a route that runs no flow is not')
  t.same((await app.inject({ method: 'POST', url: '/auth' })).json(), { answered: true })
})

t.test('without the API: loadOtel answers null, nothing is wrapped, runner calls straight through', async (t) => {
  t.equal(loadOtel('no-such-package'), null)
  const telemetry = withoutTelemetry()
  t.equal(telemetry.available, false)
  t.equal(telemetry.live, false)
  telemetry.refresh()
  t.equal(telemetry.live, false, 'a refresh finds nothing without the API')
  const answer = Promise.resolve(1)
  t.equal(telemetry.runner('users')('findById', () => answer), answer, 'the port\'s own promise')
  telemetry.close()

  const { app, seen, handler } = await tracedApp(t, telemetry, [['POST', '/auth'], ['POST', '/auth/refresh']])
  t.equal(seen.get('POST /auth'), handler, 'the original handler')
  t.equal(seen.get('POST /auth/refresh'), handler)
  t.same((await app.inject({ method: 'POST', url: '/auth' })).json(), { answered: true })
})

t.test('an SDK registered after the plugin\'s registration, before ready(), is found at ready()', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  // registered here, after the plugin: the first SDK of this process
  const { registerOtel } = await import('../helpers/otel.js')
  const otel = registerOtel()
  t.equal(await otel.value('jwt_login.sign_ins'), 0, 'nothing counted before ready()')
  await app.ready()
  t.equal((await login(app)).statusCode, 200)
  t.equal(await otel.value('jwt_login.sign_ins', { 'jwt_login.method': 'password', 'jwt_login.outcome': 'success' }), 1, 'the sign-in is counted')
  t.ok(await otel.value('jwt_login.store.duration') > 0, 'its store calls timed')
  t.equal(await otel.value('jwt_login.hashing.queue', { 'jwt_login.queue': 'sign_ins' }), 0, 'the gauges read')
  const spans = otel.finished().map(span => span.name)
  t.ok(spans.includes('jwt-login.sign_in'), 'its flow span')
  t.ok(spans.some(name => name.startsWith('store.')), 'and its store calls\' spans')
})
