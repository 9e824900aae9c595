// The spans of the flows: each route's flow span, its store and port calls as children, its audit events, and its outcome.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { registerOtel } from '../helpers/otel.js'
import jwtLogin, { type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { JwtLoginError } from '../../lib/core/errors.js'
import { MemoryStore } from '../../lib/store/memory.js'
import type { FlowSpec } from '../../lib/telemetry/flows.js'
import { NO_TELEMETRY, Telemetry, withoutTelemetry } from '../../lib/telemetry/telemetry.js'
import { traceFlows } from '../../lib/http/traced-routes.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { loadOtel, type OtelApi } from '../../lib/telemetry/otel.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { codeIn } from '../helpers/fixtures.js'
import { errorCode, login, loginTokens, post, PREFIX } from '../helpers/http.js'
import { afterAnswers, RecordingMailBox } from '../helpers/email-sign-in.js'

const otel = registerOtel()
const api = loadOtel() as OtelApi
const tracer = trace.getTracer('host')

const SPAN_KIND = { INTERNAL: 0, SERVER: 1, CLIENT: 2 }
const STATUS = { UNSET: 0, OK: 1, ERROR: 2 }

const idOf = (span: ReadableSpan): string => span.spanContext().spanId
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
const named = (name: string): ReadableSpan[] => otel.finished().filter(span => span.name === name)
const childrenOf = (span: ReadableSpan): ReadableSpan[] => otel.finished().filter(child => parentOf(child) === idOf(span))

/** The one finished span of that name. */
function only (t: Test, name: string): ReadableSpan {
  const spans = named(name)
  t.equal(spans.length, 1, `one ${name} span`)
  return spans[0] as ReadableSpan
}

/** The finished flow spans' names, in the order they ended. */
const flowNames = (): string[] => otel.finished().filter(span => span.name.startsWith('jwt-login.')).map(span => span.name)

/** A memory store whose `method` throws while `failing` is set. */
class FailingStore extends MemoryStore {
  failing: string | null = null

  override async readAndIncrement (...args: Parameters<MemoryStore['readAndIncrement']>): ReturnType<MemoryStore['readAndIncrement']> {
    if (this.failing === 'readAndIncrement') throw new StoreConnectionLost('connection to redis://user:hunter2@db lost')
    return await super.readAndIncrement(...args)
  }
}

class StoreConnectionLost extends Error {}

const GAUGES = { hashingQueue: () => ({ signIns: 0, newPasswords: 0 }) }

/** The plugin's telemetry on `otelApi`, as the plugin makes it. */
const telemetryOf = (otelApi: OtelApi, userIds = false): Telemetry => new Telemetry({ api: otelApi, userIds: () => userIds, gauges: GAUGES })
class DirectoryDown extends Error {}

async function app (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const built = await buildApp(settings, options)
  t.teardown(() => built.app.close())
  otel.spans.reset()
  return built
}

t.test('a password sign-in: the flow span, its store and port calls as children, its events', async (t) => {
  const { app: host } = await app(t)
  const res = await login(host)
  t.equal(res.statusCode, 200)

  const flow = only(t, 'jwt-login.sign_in')
  t.same(flow.attributes, { 'jwt_login.flow': 'sign_in', 'http.route': '/jwt-login/v1/auth', 'jwt_login.outcome': 'success' })
  t.equal(flow.kind, SPAN_KIND.INTERNAL)
  t.equal(flow.status.code, STATUS.UNSET)
  t.equal(flow.parentSpanContext, undefined, 'no host span: the flow span is the root')
  t.equal(flow.instrumentationScope.name, 'fastify-jwt-login')

  const children = childrenOf(flow)
  t.equal(children.length, otel.finished().length - 1, 'every other span is a child of the flow span')
  const names = children.map(span => span.name)
  t.ok(names.includes('users.findByEmail'))
  t.ok(names.includes('users.verifyPassword'))
  t.ok(names.some(name => name.startsWith('store.')))
  for (const child of children) {
    t.equal(child.spanContext().traceId, flow.spanContext().traceId)
    t.equal(child.status.code, STATUS.UNSET, `${child.name} did not fail`)
    const [port, ...operation] = child.name.split('.')
    if (port === 'store') {
      t.equal(child.kind, SPAN_KIND.CLIENT, `${child.name} is a client span`)
      t.same(child.attributes, { 'jwt_login.port': 'store', 'jwt_login.operation': operation.join('.'), 'db.operation.name': operation.join('.'), 'db.system': 'memory' })
    } else {
      t.equal(child.kind, SPAN_KIND.INTERNAL, `${child.name} is an internal span`)
      t.same(child.attributes, { 'jwt_login.port': port, 'jwt_login.operation': operation.join('.') })
    }
  }

  const events = flow.events.map(event => event.name)
  t.ok(events.includes('login.succeeded'))
  t.ok(events.includes('session.started'))
  const succeeded = flow.events.find(event => event.name === 'login.succeeded')
  t.equal(succeeded?.attributes?.['jwt_login.method'], 'password')
  for (const event of flow.events) t.notOk('user.id' in (event.attributes ?? {}), `${event.name}: no user.id without telemetry.userIds`)
})

/** A host with @fastify/otel's plugin registered before jwt-login (alice seeded), and a host route that calls the plugin. */
async function otelHost (t: Test, options: { ignorePaths?: string }): Promise<FastifyInstance> {
  const instrumentation = new FastifyOtelInstrumentation({ registerOnInitialization: false, ...options })
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(instrumentation.plugin())
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  await host.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  host.get('/host', async () => await host.jwtLogin.isLocked(1))
  await host.ready()
  return host
}

t.test('under @fastify/otel: the flow span is a child of the host request span, and its calls are its children', async (t) => {
  const host = await otelHost(t, {})
  otel.spans.reset()

  t.equal((await login(host)).statusCode, 200)
  const request = only(t, 'request')
  t.equal(request.attributes['fastify.root'], '@fastify/otel')
  const flow = only(t, 'jwt-login.sign_in')
  t.equal(parentOf(flow), idOf(request), "the flow span's parent is the request span (not a hook's)")
  t.equal(flow.spanContext().traceId, request.spanContext().traceId)
  const children = childrenOf(flow).map(span => span.name)
  t.ok(children.includes('users.findByEmail'), "the flow's calls are its children, not the host's handler span's")
  t.ok(children.includes('users.verifyPassword'))
  t.same(flow.events.map(event => event.name).sort(), ['login.succeeded', 'session.started'], 'the events are on the flow span')
  const handler = otel.finished().find(span => span.attributes['fastify.type'] === 'request-handler') as ReadableSpan
  t.same(handler.events, [], "no event on the host's handler span")

  // a host route that calls the plugin: its store calls are children of the host's spans, and no flow span
  otel.spans.reset()
  t.equal((await host.inject({ method: 'GET', url: '/host' })).statusCode, 200)
  t.same(flowNames(), [])
  const read = named('store.get')
  t.ok(read.length > 0, 'a store call in a host span is traced')
  t.ok(read.every(span => parentOf(span) !== undefined))
})

t.test('a route @fastify/otel ignores: the flow span has no host parent', async (t) => {
  const host = await otelHost(t, { ignorePaths: `${PREFIX}/auth` })
  otel.spans.reset()
  t.equal((await login(host)).statusCode, 200)
  t.same(named('request'), [])
  const flow = only(t, 'jwt-login.sign_in')
  t.equal(flow.parentSpanContext, undefined)
  t.ok(childrenOf(flow).some(span => span.name === 'users.findByEmail'))
})

t.test('a wrong password: refused, with the error code and type', async (t) => {
  const { app: host } = await app(t)
  const res = await login(host, { email: ALICE.email, password: 'not the password' })
  t.equal(res.statusCode, 401)
  const flow = only(t, 'jwt-login.sign_in')
  t.equal(flow.attributes['jwt_login.outcome'], 'refused')
  t.equal(flow.attributes['jwt_login.error_code'], errorCode(res))
  t.match(flow.attributes['error.type'], /^ERR_JWT_LOGIN_/)
  t.equal(flow.status.code, STATUS.UNSET, 'a refusal is no error of the service')
  t.ok(flow.events.some(event => event.name === 'login.failed'))
})

t.test('rate limited: 429 is the outcome rate_limited', async (t) => {
  const { app: host } = await app(t, { limits: { loginPerAccount: { max: 1, window: '15m' } } })
  const wrong = { email: ALICE.email, password: 'not the password' }
  let res = await login(host, wrong)
  for (let i = 0; i < 5 && res.statusCode !== 429; i++) res = await login(host, wrong)
  t.equal(res.statusCode, 429)
  const flows = named('jwt-login.sign_in')
  const last = flows[flows.length - 1] as ReadableSpan
  t.equal(last.attributes['jwt_login.outcome'], 'rate_limited')
  t.equal(last.attributes['jwt_login.error_code'], errorCode(res))
  t.equal(last.status.code, STATUS.UNSET)
})

t.test('a locked user: the outcome locked (251)', async (t) => {
  const { app: host } = await app(t)
  await host.jwtLogin.lockUser(1, { reason: 'support ticket 4711' })
  const res = await login(host)
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 251)
  const flow = only(t, 'jwt-login.sign_in')
  t.equal(flow.attributes['jwt_login.outcome'], 'locked')
  t.equal(flow.attributes['jwt_login.error_code'], 251)
  t.equal(flow.attributes['error.type'], 'ERR_JWT_LOGIN_USER_LOCKED')
})

t.test('a store that fails: the outcome error, the failing store span in error', async (t) => {
  const store = new FailingStore()
  t.teardown(() => store.close())
  const { app: host } = await app(t, {}, { store })
  store.failing = 'readAndIncrement'
  const res = await login(host)
  t.equal(res.statusCode, 503)
  const flow = only(t, 'jwt-login.sign_in')
  t.equal(flow.attributes['jwt_login.outcome'], 'error')
  t.equal(flow.attributes['error.type'], 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.equal(flow.attributes['jwt_login.error_code'], errorCode(res))
  t.equal(flow.status.code, STATUS.ERROR)
  const failed = only(t, 'store.readAndIncrement')
  t.equal(parentOf(failed), idOf(flow))
  t.equal(failed.attributes['error.type'], 'StoreConnectionLost', "the store's own error class")
  t.equal(failed.status.code, STATUS.ERROR)
  t.equal(failed.status.message, undefined, 'no message')
  t.notOk(JSON.stringify(otel.finished().map(span => [span.attributes, span.events, span.status])).includes('hunter2'))
})

t.test("a host adapter that throws: the port span's error.type is the class, and no span carries the message", async (t) => {
  const { app: host, users } = await app(t)
  const message = `directory bind failed for ${ALICE.email} with ${ALICE.password}`
  users.findByEmail = async () => { throw new DirectoryDown(message) }
  let res = await login(host)
  t.equal(res.statusCode, 503)
  let flow = only(t, 'jwt-login.sign_in')
  t.equal(flow.attributes['jwt_login.outcome'], 'error')
  t.equal(flow.status.code, STATUS.ERROR)
  let failed = only(t, 'users.findByEmail')
  t.equal(parentOf(failed), idOf(flow))
  t.equal(failed.attributes['error.type'], 'DirectoryDown')
  t.equal(failed.status.code, STATUS.ERROR)

  // the same, thrown before the adapter answers a promise
  otel.spans.reset()
  users.findByEmail = () => { throw new DirectoryDown(message) }
  res = await login(host)
  t.equal(res.statusCode, 503)
  flow = only(t, 'jwt-login.sign_in')
  failed = only(t, 'users.findByEmail')
  t.equal(failed.attributes['error.type'], 'DirectoryDown')
  t.equal(failed.status.code, STATUS.ERROR)
  t.equal(flow.attributes['jwt_login.outcome'], 'error')
  const everything = JSON.stringify(otel.finished().map(span => [span.name, span.attributes, span.events, span.status]))
  t.notOk(everything.includes('directory bind failed'))
  t.notOk(everything.includes(ALICE.email))
})

t.test('the other flows by their span names; a refresh rotated, retried, reused', async (t) => {
  const mail = new RecordingMailBox()
  const { app: host } = await app(t, {
    refresh: { enabled: true },
    sessions: { enabled: true },
    resetPassword: { enabled: true, mail: { retries: 0 } }
  }, { mailer: mail })
  const first = await loginTokens(host)
  const bearer = { authorization: `Bearer ${first.jwt}` }

  otel.spans.reset()
  const second = (await post(host, '/auth/refresh', { refresh_token: first.refresh_token })).json().data
  t.type(second.refresh_token, 'string')
  const retry = await post(host, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(retry.statusCode, 200, 'the previous token again, within refresh.reuseInterval')
  t.equal(retry.json().data.refresh_token, second.refresh_token, 'the same successor')
  const third = (await post(host, '/auth/refresh', { refresh_token: second.refresh_token })).json().data
  t.type(third.refresh_token, 'string')
  const reuse = await post(host, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(reuse.statusCode, 401, 'an older token is a reuse')
  const madeUp = await post(host, '/auth/refresh', { refresh_token: 'not-a-refresh-token' })
  t.equal(madeUp.statusCode, 401)
  const refreshes = named('jwt-login.refresh')
  t.same(refreshes.map(span => span.attributes['jwt_login.outcome']), ['rotated', 'retried', 'rotated', 'reuse', 'refused'])
  t.ok(refreshes[3]?.events.some(event => event.name === 'refresh.reused'))
  t.ok(refreshes.every(span => span.attributes['http.route'] === `${PREFIX}/auth/refresh`))

  const fresh = await loginTokens(host)
  const freshBearer = { authorization: `Bearer ${fresh.jwt}` }
  otel.spans.reset()
  t.equal((await host.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: freshBearer })).statusCode, 200)
  t.equal((await post(host, '/auth/validate', { JWT: fresh.jwt })).statusCode, 200)
  t.equal((await host.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: freshBearer })).statusCode, 200)
  t.equal((await post(host, '/auth/revoke', { JWT: fresh.jwt })).statusCode, 200)
  t.equal((await post(host, '/auth/validate', { JWT: first.jwt }, bearer)).statusCode, 401)
  t.equal((await post(host, '/user/reset_password', { email: ALICE.email })).statusCode, 200)
  await afterAnswers()
  const code = codeIn((mail.sent[0] as { text: string }).text)
  const complete = await host.inject({ method: 'PUT', url: `${PREFIX}/user/reset_password`, payload: { email: ALICE.email, code, new_password: 'a brand new passphrase' } })
  t.equal(complete.statusCode, 200)
  t.same(flowNames(), [
    'jwt-login.validate',
    'jwt-login.validate',
    'jwt-login.sessions',
    'jwt-login.revoke',
    'jwt-login.validate',
    'jwt-login.reset.request',
    'jwt-login.reset.complete'
  ])
  const validates = named('jwt-login.validate')
  t.same(validates.map(span => span.attributes['http.route']), [`${PREFIX}/auth/validate`, `${PREFIX}/auth/validate`, `${PREFIX}/auth/validate`])
  t.same(validates.map(span => span.attributes['jwt_login.outcome']), ['success', 'success', 'refused'])
  const request = only(t, 'jwt-login.reset.request')
  t.equal(request.attributes['jwt_login.outcome'], 'success')
  const sends = named('mailer.send')
  t.equal(sends.length, 1, 'the reset mail is a port call')
  t.equal(parentOf(sends[0] as ReadableSpan), idOf(request), "the mail sent after the answer is still the request flow's child")
  t.equal(only(t, 'jwt-login.reset.complete').attributes['jwt_login.outcome'], 'success')
})

t.test('store and port spans only under a span: a call outside any span is timed, not traced', async (t) => {
  const { app: host } = await app(t)
  const before = await otel.value('jwt_login.store.duration', { 'jwt_login.operation': 'get', 'jwt_login.outcome': 'ok' })
  t.equal(await host.jwtLogin.isLocked(1), false)
  t.same(otel.finished(), [], 'no span without an active span')
  t.ok(await otel.value('jwt_login.store.duration', { 'jwt_login.operation': 'get', 'jwt_login.outcome': 'ok' }) > before, 'the store call was timed')

  // in a host's span: the store calls are its children, and the audit event is its event (without the host's note)
  await tracer.startActiveSpan('host.job', async (span) => {
    await host.jwtLogin.lockUser(1, { reason: 'called about Jane Roe at +1 555 0100' })
    span.end()
  })
  const job = only(t, 'host.job')
  const calls = childrenOf(job)
  t.ok(calls.some(span => span.name === 'users.findById'))
  t.ok(calls.some(span => span.name.startsWith('store.')))
  const locked = job.events.find(event => event.name === 'user.locked')
  t.ok(locked, 'user.locked is an event of the active span')
  t.same(locked?.attributes, {}, "the host's note stays out")
})

t.test('a host whose handler is sync: traceFlows wraps it all the same', async (t) => {
  const telemetry = telemetryOf(api)
  t.teardown(() => { telemetry.close() })
  const scope = async (instance: FastifyInstance, chosen: unknown): Promise<void> => {
    traceFlows(instance, chosen as Telemetry)
    instance.get('/auth/validate', (_request, reply) => { reply.code(201); return { sync: true } })
    instance.get('/jwks', () => ({ keys: [] }))
  }
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(async (instance) => { await scope(instance, telemetry) }, { prefix: '/live' })
  await host.register(async (instance) => { await scope(instance, { available: true, live: false }) }, { prefix: '/idle' })
  await host.register(async (instance) => { await scope(instance, withoutTelemetry()) }, { prefix: '/none' })
  await host.ready()
  otel.spans.reset()
  for (const prefix of ['/live', '/idle', '/none']) {
    const res = await host.inject({ method: 'GET', url: `${prefix}/auth/validate` })
    t.equal(res.statusCode, 201)
    t.same(res.json(), { sync: true })
    t.equal((await host.inject({ method: 'GET', url: `${prefix}/jwks` })).statusCode, 200)
  }
  const flow = only(t, 'jwt-login.validate')
  t.same(flow.attributes, { 'jwt_login.flow': 'validate', 'http.route': '/live/auth/validate', 'jwt_login.outcome': 'success' })
  t.same(flowNames(), ['jwt-login.validate'], 'no flow while not live nor without the API; /jwks runs none')
})

// The class itself, for the paths no route takes: sync handlers, thrown non-errors, each counter kind, an SDK with traces or metrics only.

/** The API as seen before an SDK registered its tracer provider (metrics still recorded). */
const withoutTraces = { ...api, trace: Object.assign(Object.create(api.trace) as OtelApi['trace'], { getTracerProvider: () => new api.ProxyTracerProvider() }) } as OtelApi
/** The API as seen before an SDK registered its meter provider (traces still recorded). */
const withoutMetrics = { ...api, metrics: { getMeter: () => api.createNoopMeter() } } as OtelApi
/** The API with no SDK at all. */
const withoutSdk = { ...withoutTraces, metrics: withoutMetrics.metrics } as OtelApi

const SPEC: FlowSpec = { name: 'unit' }
const status = (code: number) => () => code

/** Throws `value`, whatever it is (a host's code may throw anything). */
function raise (value: unknown): never {
  throw value
}

/** What `run` threw. */
function thrown (run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('it did not throw')
}

t.test('Telemetry.flow: a sync handler, by the status it answered', async (t) => {
  const telemetry = telemetryOf(api)
  t.teardown(() => { telemetry.close() })
  otel.spans.reset()
  t.equal(telemetry.flow(SPEC, '/r', () => 'answer', status(204)), 'answer')
  telemetry.flow(SPEC, '/r', () => undefined, status(404))
  telemetry.flow(SPEC, '/r', () => null, status(429))
  telemetry.flow(SPEC, '/r', () => 0, status(503))
  const spans = named('jwt-login.unit')
  t.same(spans.map(span => span.attributes['jwt_login.outcome']), ['success', 'refused', 'rate_limited', 'error'])
  t.same(spans.map(span => span.status.code), [STATUS.UNSET, STATUS.UNSET, STATUS.UNSET, STATUS.ERROR])
  t.ok(spans.every(span => !('error.type' in span.attributes) && !('jwt_login.error_code' in span.attributes)), 'nothing was thrown')
})

t.test('Telemetry.flow: thrown synchronously, or rejected, with anything', async (t) => {
  const telemetry = telemetryOf(api)
  t.teardown(() => { telemetry.close() })
  otel.spans.reset()
  const boom = new TypeError('a message that names alice@example.com')
  t.equal(thrown(() => telemetry.flow(SPEC, '/r', () => { throw boom }, status(200))), boom, 'rethrown as it was')
  const limited = new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED')
  t.equal(thrown(() => telemetry.flow(SPEC, '/r', () => { throw limited }, status(200))), limited)
  t.equal(thrown(() => telemetry.flow(SPEC, '/r', () => raise(null), status(200))), null)
  const bare = Object.create(null) as object
  t.equal(thrown(() => telemetry.flow(SPEC, '/r', () => { throw bare }, status(200))), bare)
  const anonymous = new (class {})()
  t.equal(thrown(() => telemetry.flow(SPEC, '/r', () => { throw anonymous }, status(200))), anonymous)
  const Weird = { 'not a name!': class extends Error {} }['not a name!']
  await t.rejects(telemetry.flow(SPEC, '/r', async () => { throw new Weird('x') }, status(200)))
  await t.rejects(telemetry.flow(SPEC, '/r', async () => raise(undefined), status(200)))
  await t.rejects(telemetry.flow(SPEC, '/r', async () => { throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED') }, status(200)))
  const spans = named('jwt-login.unit')
  t.same(spans.map(span => [span.attributes['jwt_login.outcome'], span.attributes['error.type'], span.attributes['jwt_login.error_code']]), [
    ['error', 'TypeError', undefined],
    ['rate_limited', 'ERR_JWT_LOGIN_RATE_LIMITED', 200],
    ['error', '_OTHER', undefined],
    ['error', '_OTHER', undefined],
    ['error', '_OTHER', undefined],
    ['error', '_OTHER', undefined],
    ['error', 'String', undefined],
    ['locked', 'ERR_JWT_LOGIN_USER_LOCKED', 251]
  ])
  t.notOk(JSON.stringify(spans.map(span => [span.attributes, span.events, span.status])).includes('alice'), 'never the message')
})

t.test('Telemetry.flow: what its events tell, each counter kind, and user.id only with userIds', async (t) => {
  for (const userIds of [false, true]) {
    const telemetry = telemetryOf(api, userIds)
    t.teardown(() => { telemetry.close() })
    otel.spans.reset()
    const note = (event: string, payload: Record<string, unknown>) => async () => { telemetry.observe(event, payload) }
    await telemetry.flow({ name: 'provider', counter: { kind: 'sign_in', method: 'provider' } }, '/r', note('login.succeeded', { userId: 7, provider: 'github', ip: '203.0.113.9' }), status(200))
    await telemetry.flow({ name: 'provider', counter: { kind: 'sign_in', method: 'provider' } }, '/r', async () => {}, status(200))
    await telemetry.flow({ name: 'password', counter: { kind: 'sign_in', method: 'password' } }, '/r', note('two_factor.challenge_issued', { userId: 7 }), status(200))
    await telemetry.flow({ name: 'second', counter: { kind: 'second_factor' } }, '/r', note('two_factor.code_accepted', { userId: 7, method: 'totp' }), status(200))
    await telemetry.flow({ name: 'second', counter: { kind: 'second_factor' } }, '/r', note('two_factor.code_accepted', { userId: 7, method: 42 }), status(401))
    await telemetry.flow({ name: 'refresh', counter: { kind: 'refresh' } }, '/r', async () => { telemetry.retried() }, status(200))
    await telemetry.flow({ name: 'refresh', counter: { kind: 'refresh' } }, '/r', async () => {}, status(401))
    await telemetry.flow({ name: 'reset', counter: { kind: 'reset', step: 'complete' } }, '/r', async () => {}, status(200))
    telemetry.retried() // outside a flow: nothing to note
    const outcomes = otel.finished().map(span => [span.name, span.attributes['jwt_login.outcome']])
    t.same(outcomes, [
      ['jwt-login.provider', 'success'],
      ['jwt-login.provider', 'success'],
      ['jwt-login.password', 'second_factor'],
      ['jwt-login.second', 'success'],
      ['jwt-login.second', 'refused'],
      ['jwt-login.refresh', 'retried'],
      ['jwt-login.refresh', 'refused'],
      ['jwt-login.reset', 'success']
    ])
    const first = otel.finished()[0] as ReadableSpan
    t.equal(first.attributes['user.id'], userIds ? '7' : undefined, `user.id on the flow span only with userIds (${String(userIds)})`)
    t.same(first.events[0]?.attributes, userIds ? { 'jwt_login.provider': 'github', 'user.id': '7' } : { 'jwt_login.provider': 'github' }, 'no ip')
  }
  t.ok(await otel.value('jwt_login.provider_sign_ins', { 'jwt_login.provider': 'github' }) > 0)
  t.ok(await otel.value('jwt_login.provider_sign_ins', { 'jwt_login.provider': 'unknown' }) > 0)
  t.ok(await otel.value('jwt_login.second_factors', { 'jwt_login.method': 'totp' }) > 0)
  t.ok(await otel.value('jwt_login.refreshes', { 'jwt_login.outcome': 'retried' }) > 0)
  t.ok(await otel.value('jwt_login.resets', { 'jwt_login.step': 'complete' }) > 0)
})

t.test('Telemetry.call: a span under an active span only, its name, its failures', async (t) => {
  const telemetry = telemetryOf(api)
  t.teardown(() => { telemetry.close() })
  otel.spans.reset()
  t.equal(await telemetry.call('users', 'findById', undefined, async () => 'outside'), 'outside')
  t.same(otel.finished(), [], 'no active span: no span')
  await tracer.startActiveSpan('host', async (host) => {
    t.equal(await telemetry.call('passwordPolicy', 'passwordPolicy', undefined, async () => 'ok'), 'ok')
    await telemetry.call('store', 'get', undefined, async () => null)
    const sync = new RangeError('sync')
    await t.rejects(telemetry.call('store', 'set', 'redis', () => { throw sync }), sync, 'a sync throw rejects')
    await t.rejects(telemetry.call('mailer', 'send', undefined, async () => raise(undefined)))
    host.end()
  })
  const host = only(t, 'host')
  const calls = childrenOf(host)
  t.same(calls.map(span => [span.name, span.attributes, span.status.code]), [
    ['passwordPolicy', { 'jwt_login.port': 'passwordPolicy', 'jwt_login.operation': 'passwordPolicy' }, STATUS.UNSET],
    ['store.get', { 'jwt_login.port': 'store', 'jwt_login.operation': 'get', 'db.operation.name': 'get' }, STATUS.UNSET],
    ['store.set', { 'jwt_login.port': 'store', 'jwt_login.operation': 'set', 'db.operation.name': 'set', 'db.system': 'redis', 'error.type': 'RangeError' }, STATUS.ERROR],
    ['mailer.send', { 'jwt_login.port': 'mailer', 'jwt_login.operation': 'send', 'error.type': 'String' }, STATUS.ERROR]
  ])
  t.ok(await otel.value('jwt_login.port.duration', { 'jwt_login.port': 'mailer', 'jwt_login.operation': 'send', 'jwt_login.outcome': 'error' }) > 0)
  t.ok(await otel.value('jwt_login.store.duration', { 'jwt_login.operation': 'set', 'jwt_login.outcome': 'error' }) > 0)
})

t.test('Telemetry without traces, without metrics, without an SDK, without the API', async (t) => {
  otel.spans.reset()
  const metricsOnly = telemetryOf(withoutTraces)
  const tracesOnly = telemetryOf(withoutMetrics)
  const idle = telemetryOf(withoutSdk)
  const none = withoutTelemetry()
  t.teardown(() => { metricsOnly.close(); tracesOnly.close(); idle.close(); none.close() })
  t.same([metricsOnly.live, tracesOnly.live, idle.live, none.live], [true, true, false, false])
  t.same([metricsOnly.available, idle.available, none.available], [true, true, false])
  none.refresh()
  t.equal(NO_TELEMETRY.userIds(), false, 'without the API: no user IDs')
  t.same(NO_TELEMETRY.gauges.hashingQueue(), { signIns: 0, newPasswords: 0 }, 'and nothing queued')

  await tracer.startActiveSpan('host', async (host) => {
    for (const telemetry of [metricsOnly, tracesOnly, idle, none]) {
      const run = telemetry.runner('store', 'memory')
      t.equal(await run('get', async () => 'value'), 'value')
      telemetry.observe('user.locked', { userId: 1, reason: 'a note' })
      telemetry.lockout('login:account:abc')
    }
    // a flow with metrics only: no span, the work in its flow all the same
    t.equal(await metricsOnly.flow(SPEC, '/r', async () => { metricsOnly.observe('login.succeeded', {}); return 'done' }, status(200)), 'done')
    // a flow with traces only: a span, nothing counted
    await tracesOnly.flow({ name: 'traced', counter: { kind: 'refresh' } }, '/r', async () => {}, status(200))
    host.end()
  })
  const host = only(t, 'host')
  t.same(childrenOf(host).map(span => span.name), ['store.get', 'jwt-login.traced'], 'only the traces-only telemetry made spans')
  t.same(host.events.map(event => event.name), ['user.locked'], 'one event, from the traces-only telemetry')
  t.same(named('jwt-login.unit'), [])
})
