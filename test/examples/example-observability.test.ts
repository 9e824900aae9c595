// examples/observability/: the demo host with OpenTelemetry, @fastify/otel and the Prometheus exporter, signed in to over HTTP.
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import t from 'tap'
import { buildDemo, DEMO_USER } from '../../examples/demo.js'
import { readiness, startObservedDemo } from '../../examples/observability/server.js'
import { SERVICE_NAME, setUpTelemetry } from '../../examples/observability/telemetry.js'

const SIGN_IN = '/jwt-login/v1/auth'

// set up first, as the example's main.ts does: the OpenTelemetry globals are registered once per process (this file's)
const spans = new InMemorySpanExporter()
const telemetry = setUpTelemetry({ spanProcessor: new SimpleSpanProcessor(spans) })
t.teardown(telemetry.shutdown)

const spanId = (span: ReadableSpan): string => span.spanContext().spanId
const childrenOf = (parent: ReadableSpan): ReadableSpan[] => spans.getFinishedSpans().filter((span) => span.parentSpanContext?.spanId === spanId(parent))
const named = (name: string): ReadableSpan[] => spans.getFinishedSpans().filter((span) => span.name === name)

/** The one span named `name` whose attributes include `attributes`. */
function theSpan (name: string, attributes: Record<string, unknown> = {}): ReadableSpan {
  const found = named(name).filter((span) => Object.entries(attributes).every(([key, value]) => span.attributes[key] === value))
  if (found.length !== 1) throw new Error(`${found.length} spans ${name} ${JSON.stringify(attributes)}; finished: ${spans.getFinishedSpans().map((span) => span.name).join(', ')}`)
  return found[0] as ReadableSpan
}

/** The value of the sample of `metric` whose labels include `labels`, in the Prometheus text format; undefined when absent or ambiguous. */
function sample (text: string, metric: string, labels: Record<string, string>): number | undefined {
  const values = text.split('\n')
    .filter((line) => line.startsWith(`${metric}{`) && Object.entries(labels).every(([name, value]) => line.includes(`${name}="${value}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)))
  return values.length === 1 ? values[0] : undefined
}

t.test('a sign-in over HTTP: the request span, the flow span in it, the store and user-adapter calls in that; /metrics counts it', async (t) => {
  const printed: string[] = []
  const { app, address } = await startObservedDemo({ telemetry, port: 0, print: (text) => { printed.push(text) } })
  t.teardown(() => app.close())
  t.match(printed.join('\n'), `Metrics (Prometheus text format): ${address}/metrics`, 'the banner names the metrics route')
  spans.reset()

  const answer = await fetch(`${address}${SIGN_IN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }) })
  t.equal(answer.status, 200)
  t.type(((await answer.json()) as { data: { jwt: unknown } }).data.jwt, 'string')

  // @fastify/otel's span of the whole request: `request`, a server span (no HTTP instrumentation runs under it)
  const request = theSpan('request', { 'url.path': SIGN_IN })
  t.equal(request.kind, SpanKind.SERVER)
  t.equal(request.parentSpanContext, undefined, 'the root of the trace')
  t.match(request.attributes, { 'http.request.method': 'POST', 'http.route': SIGN_IN, 'http.response.status_code': 200 })
  t.equal(request.resource.attributes['service.name'], SERVICE_NAME)

  // the flow's span is a child of the request span itself: not of a hook's span (@fastify/otel runs the handler in
  // the context of the last hook's span) and not of @fastify/otel's `handler - …` span (made inside jwt-login's
  // wrapper of the handler, where the plugin cannot reach), which is the flow span's sibling and stays empty
  const flow = theSpan('jwt-login.sign_in')
  t.equal(flow.parentSpanContext?.spanId, spanId(request))
  t.equal(flow.spanContext().traceId, request.spanContext().traceId)
  t.match(flow.attributes, { 'jwt_login.flow': 'sign_in', 'http.route': SIGN_IN, 'jwt_login.outcome': 'success' })
  t.notOk('user.id' in flow.attributes, 'no user id without telemetry.userIds')
  t.match(flow.events.map((event) => event.name), ['session.started', 'login.succeeded'], 'the audit events are the flow span\'s events')
  const handler = spans.getFinishedSpans().filter((span) => span.name.startsWith('handler - ') && span.attributes['http.route'] === SIGN_IN)
  t.equal(handler.length, 1)
  t.equal(handler[0]?.parentSpanContext?.spanId, spanId(request))
  t.same(childrenOf(handler[0] as ReadableSpan), [], 'the handler span of @fastify/otel has no children: the calls belong to the flow')

  // the round trips of the sign-in: the user adapter's and the store's, each a child of the flow span
  const calls = childrenOf(flow)
  const names = calls.map((span) => span.name)
  for (const name of ['users.findByEmail', 'users.verifyPassword', 'store.readAndIncrement', 'store.set']) t.ok(names.includes(name), `${name} is a child of jwt-login.sign_in`)
  t.ok(names.every((name) => /^(store|users|twoFactor)\./.test(name)), names.join(', '))
  for (const call of calls.filter((span) => span.name.startsWith('store.'))) {
    t.equal(call.kind, SpanKind.CLIENT, `${call.name} is a client span`)
    t.match(call.attributes, { 'jwt_login.port': 'store', 'db.system': 'memory', 'db.operation.name': call.name.slice('store.'.length) })
  }
  t.match(theSpan('users.findByEmail').attributes, { 'jwt_login.port': 'users', 'jwt_login.operation': 'findByEmail' })
  t.equal(theSpan('users.findByEmail').kind, SpanKind.INTERNAL)

  // what Prometheus scrapes: the exporter turns the dots into underscores and adds `_total` to counters, not the
  // unit to the histogram's name (the unit is its `# UNIT` line: seconds)
  const ready = await fetch(`${address}/ready`)
  t.equal(ready.status, 200, 'the readiness route answers from health()')
  t.same(await ready.json(), { healthy: true })
  const scraped = await fetch(`${address}/metrics`)
  t.equal(scraped.status, 200)
  t.match(scraped.headers.get('content-type'), /^text\/plain/)
  const metrics = await scraped.text()
  t.equal(sample(metrics, 'jwt_login_sign_ins_total', { jwt_login_method: 'password', jwt_login_outcome: 'success' }), 1, 'the sign-in counter by method and outcome')
  t.match(metrics, '# TYPE jwt_login_flow_duration histogram')
  t.match(metrics, '# UNIT jwt_login_flow_duration s')
  const flowLabels = { jwt_login_flow: 'sign_in', jwt_login_outcome: 'success' }
  t.equal(sample(metrics, 'jwt_login_flow_duration_count', flowLabels), 1, 'the flow duration histogram counts the sign-in')
  t.equal(sample(metrics, 'jwt_login_flow_duration_bucket', { ...flowLabels, le: '+Inf' }), 1)
  t.type(sample(metrics, 'jwt_login_flow_duration_bucket', { ...flowLabels, le: '0.25' }), 'number', 'the 250 ms bucket')
  t.ok((sample(metrics, 'jwt_login_store_duration_count', { jwt_login_operation: 'set', jwt_login_outcome: 'ok' }) ?? 0) >= 1, 'store call durations')
  t.ok((sample(metrics, 'jwt_login_port_duration_count', { jwt_login_port: 'users', jwt_login_operation: 'verifyPassword', jwt_login_outcome: 'ok' }) ?? 0) >= 1, 'user-adapter call durations')
  t.equal(sample(metrics, 'jwt_login_hashing_queue', { jwt_login_queue: 'sign_ins' }), 0, 'a gauge, read at the scrape')
  t.equal(named('request').filter((span) => span.attributes['url.path'] === '/metrics').length, 0, 'a scrape is no span')
})

t.test('without @fastify/otel, the flow span is the root of the sign-in\'s trace and its calls are its children', async (t) => {
  const app = await buildDemo({ print: () => {} })
  t.teardown(() => app.close())
  spans.reset()
  const answer = await app.inject({ method: 'POST', url: SIGN_IN, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
  t.equal(answer.statusCode, 200)
  t.same(named('request'), [])
  const flow = theSpan('jwt-login.sign_in')
  t.equal(flow.parentSpanContext, undefined)
  const names = childrenOf(flow).map((span) => span.name)
  for (const name of ['users.findByEmail', 'users.verifyPassword', 'store.set']) t.ok(names.includes(name), `${name} is a child of jwt-login.sign_in`)
})

t.test('the readiness answer: 503 while a check fails, the checks in the log only', async (t) => {
  const warned: unknown[] = []
  const log = { warn: (...args: unknown[]) => { warned.push(args) } }
  t.same(readiness({ healthy: true, checks: [{ name: 'store', healthy: true, durationMs: 1 }] }, log), { status: 200, body: { healthy: true } })
  t.same(warned, [], 'nothing logged while ready')
  const checks = [{ name: 'store' as const, healthy: true, durationMs: 1 }, { name: 'users' as const, healthy: false, durationMs: 1001, problem: 'did not answer within 1000 ms' }]
  t.same(readiness({ healthy: false, checks }, log), { status: 503, body: { healthy: false } }, 'the body names no check')
  t.same(warned, [[{ checks }, 'not ready']], 'the checks go to the log')
})
