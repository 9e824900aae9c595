// Issue 43: the telemetry layer's parts on their own, with an SDK registered: which event fields reach a span, the SDK detection, the instruments and their close, the route-to-flow table, and the counters' bookkeeping in Telemetry.
import * as otelApi from '@opentelemetry/api'
import t from 'tap'
import { eventAttributes } from '../../lib/telemetry/attributes.js'
import { FLOW_NAMES, flowOf } from '../../lib/telemetry/flows.js'
import { Instruments } from '../../lib/telemetry/metrics.js'
import { loadOtel, metricsRecorded, tracesRecorded, type OtelApi, type OtelMeter, type OtelObservableResult } from '../../lib/telemetry/otel.js'
import { SCOPE_NAME, Telemetry } from '../../lib/telemetry/telemetry.js'
import { registerOtel } from '../helpers/otel.js'

const otel = registerOtel()
const api = loadOtel() as OtelApi
const QUIET = { hashingQueue: () => ({ signIns: 0, newPasswords: 0 }) }

t.test('eventAttributes: only the safe fields, renamed; host notes dropped; IDs only with userIds; non-primitive values dropped', async (t) => {
  const payload = {
    userId: 7,
    actorId: 3,
    ip: '203.0.113.7',
    sessionId: 'sid-1',
    email: 'alice@example.com',
    method: 'password',
    reason: 'wrong_credentials',
    errorCode: 11,
    secondFactor: null,
    attempts: 3,
    register: true,
    provider: { name: 'idp1' },
    via: ['sign_in'],
    stored: 4,
    presented: 5
  }
  const safe = {
    'jwt_login.method': 'password',
    'jwt_login.reason': 'wrong_credentials',
    'jwt_login.error_code': 11,
    'jwt_login.attempts': 3,
    'jwt_login.register': true,
    'jwt_login.counter_stored': 4,
    'jwt_login.counter_presented': 5
  }
  t.same(eventAttributes('login.failed', payload, false), safe, 'no ip, session, email; null, an object and an array are left out')
  t.same(eventAttributes('login.failed', payload, true), {
    ...safe,
    'user.id': '7',
    'jwt_login.actor_id': '3'
  }, 'with userIds: the user\'s and the actor\'s IDs, as strings')
  for (const event of ['user.locked', 'user.unlocked', 'impersonation.started']) {
    t.same(eventAttributes(event, { userId: 7, reason: 'ticket 42 from alice@example.com' }, false), {}, `${event}: the host's note is left out`)
    t.same(eventAttributes(event, { userId: 7, reason: 'ticket 42' }, true), { 'user.id': '7' }, `${event}: the ID only with userIds`)
  }
  t.same(eventAttributes('session.ended', { userId: 7, reason: 'sign_out' }, false), { 'jwt_login.reason': 'sign_out' }, 'a reason the plugin names is kept')
  t.same(eventAttributes('session.started', { userId: '7', actorId: null, provider: 'idp1', flow: 'code', step: 'request', mail: 'sent', reset: false, othersEnded: 2, passkeys: 1, attempt: 2 }, true), {
    'jwt_login.provider': 'idp1',
    'jwt_login.oauth_flow': 'code',
    'jwt_login.step': 'request',
    'jwt_login.mail': 'sent',
    'jwt_login.reset': false,
    'jwt_login.others_ended': 2,
    'jwt_login.passkeys': 1,
    'jwt_login.attempt': 2
  }, 'IDs that are not numbers are never copied, even with userIds')
})

t.test('loadOtel and the SDK detection', async (t) => {
  t.equal(loadOtel('no-such-package'), null, 'a package that is not installed: null')
  t.equal(loadOtel(), loadOtel(), 'one copy of the API')
  t.equal(tracesRecorded(api), true, 'the registered tracer provider')
  t.equal(metricsRecorded(api, api.metrics.getMeter(SCOPE_NAME)), true, 'the registered meter provider')
  t.equal(metricsRecorded(api, api.createNoopMeter()), false, 'the no-op meter')
  const noop = new api.ProxyTracerProvider().getDelegate()
  const faked = (provider: unknown): OtelApi => ({ ...api, trace: { ...api.trace, getTracerProvider: () => provider } })
  t.equal(tracesRecorded(faked({})), true, 'a global provider without getDelegate (an SDK set it directly): recorded')
  t.equal(tracesRecorded(faked({ getDelegate: () => noop })), false, 'a proxy still on the no-op provider: not recorded')
  t.equal(tracesRecorded(faked({ getDelegate: () => ({}) })), true, 'a proxy with a delegate of its own: recorded')
})

/** A meter that keeps its gauges' callbacks, to run them by hand. */
function recordingMeter (): { meter: OtelMeter, gauges: Map<string, Set<(result: OtelObservableResult) => void>> } {
  const gauges = new Map<string, Set<(result: OtelObservableResult) => void>>()
  const noop = api.createNoopMeter()
  const meter: OtelMeter = {
    createCounter: (name, options) => noop.createCounter(name, options),
    createHistogram: (name, options) => noop.createHistogram(name, options),
    createObservableGauge: (name) => {
      const callbacks = new Set<(result: OtelObservableResult) => void>()
      gauges.set(name, callbacks)
      return { addCallback: (callback) => { callbacks.add(callback) }, removeCallback: (callback) => { callbacks.delete(callback) } }
    }
  }
  return { meter, gauges }
}

/** What a gauge's callbacks observe now. */
function observed (callbacks: Set<(result: OtelObservableResult) => void> | undefined): Array<[number, Record<string, unknown> | undefined]> {
  const seen: Array<[number, Record<string, unknown> | undefined]> = []
  for (const callback of callbacks ?? []) callback({ observe: (value, attributes) => { seen.push([value, attributes]) } })
  return seen
}

t.test('Instruments: the gauges read their sources at each collection; close removes their callbacks, once', async (t) => {
  const { meter, gauges } = recordingMeter()
  let waiting = 2
  const instruments = new Instruments(meter, { hashingQueue: () => ({ signIns: waiting, newPasswords: 1 }), memoryStore: () => ({ state: 0.25, counters: 0.5 }) })
  t.same(observed(gauges.get('jwt_login.hashing.queue')), [[2, { 'jwt_login.queue': 'sign_ins' }], [1, { 'jwt_login.queue': 'new_passwords' }]])
  waiting = 5
  t.same(observed(gauges.get('jwt_login.hashing.queue'))[0], [5, { 'jwt_login.queue': 'sign_ins' }], 'read again at the next collection')
  t.same(observed(gauges.get('jwt_login.memory_store.usage')), [[0.25, { 'jwt_login.entries': 'state' }], [0.5, { 'jwt_login.entries': 'counters' }]])
  instruments.close()
  t.same(observed(gauges.get('jwt_login.hashing.queue')), [], 'closed: the hashing gauge reads nothing')
  t.same(observed(gauges.get('jwt_login.memory_store.usage')), [], 'nor the store gauge')
  instruments.close()
  t.equal(gauges.get('jwt_login.hashing.queue')?.size, 0, 'a second close changes nothing')

  const other = recordingMeter()
  new Instruments(other.meter, QUIET).close()
  t.notOk(other.gauges.has('jwt_login.memory_store.usage'), 'no memory store gauge without a memory store')
})

t.test('Instruments on a real meter: a closed instance\'s gauge is no longer collected', async (t) => {
  const meter = api.metrics.getMeter('parts-test')
  const instruments = new Instruments(meter, { hashingQueue: () => ({ signIns: 3, newPasswords: 0 }) })
  const points = async (): Promise<number[]> => (await otel.collect()).scopeMetrics.filter(s => s.scope.name === 'parts-test')
    .flatMap(s => s.metrics).filter(m => m.descriptor.name === 'jwt_login.hashing.queue')
    .flatMap(m => m.dataPoints.filter(p => p.attributes['jwt_login.queue'] === 'sign_ins').map(p => p.value as number))
  t.same(await points(), [3])
  instruments.close()
  const second = new Instruments(meter, { hashingQueue: () => ({ signIns: 8, newPasswords: 0 }) })
  t.same(await points(), [8], 'the new instance\'s value only')
  second.close()
})

t.test('flowOf and FLOW_NAMES', async (t) => {
  t.same(flowOf('POST', '/auth'), { name: 'sign_in', counter: { kind: 'sign_in', method: 'password' } })
  t.same(flowOf('GET', '/auth/validate'), flowOf('POST', '/auth/validate'), 'both methods of a route share its flow')
  t.same(flowOf('POST', '/auth/2fa/passkey/options'), { name: 'second_factor' }, 'the options of a second factor count nothing')
  t.equal(flowOf(['GET', 'HEAD'], '/auth/validate'), undefined, 'a route declared for several methods at once: no flow')
  t.equal(flowOf(undefined, '/auth'), undefined)
  t.equal(flowOf('GET', '/jwks'), undefined, 'a route that is no flow')
  t.equal(flowOf('GET', '/auth'), undefined, 'nor another method of a flow\'s path')
  t.same(FLOW_NAMES, [
    'account', 'account.api_keys', 'account.delete', 'account.email_change', 'account.email_verification', 'account.identities',
    'account.passkeys', 'account.password', 'account.second_factor', 'email_sign_in.request', 'email_sign_in.verify', 'oauth',
    'oauth.logout', 'oauth.nonce', 'passkey', 'refresh', 'register', 'reset.complete', 'reset.request', 'revoke', 'second_factor',
    'sessions', 'sign_in', 'step_up', 'validate'
  ], 'the documented flows, sorted, each once')
})

/** A live Telemetry on the registered SDK. */
function live (overrides: Partial<OtelApi> = {}): Telemetry {
  return new Telemetry({ api: { ...api, ...overrides }, userIds: () => false, gauges: QUIET })
}

type Labels = Record<string, string>

async function grew (name: string, labels: Labels, work: () => unknown): Promise<number> {
  const before = await otel.value(name, labels)
  await work()
  return await otel.value(name, labels) - before
}

t.test('a flow\'s counters: the method of the accepted code, the provider of its events, `unknown` without them', async (t) => {
  const telemetry = live()
  t.teardown(() => { telemetry.close() })
  const twoFactor = { name: 'second_factor', counter: { kind: 'second_factor' as const } }
  const accepted = await grew('jwt_login.second_factors', { 'jwt_login.method': 'backup_codes', 'jwt_login.outcome': 'success' }, () =>
    telemetry.flow(twoFactor, '/auth/2fa', () => { telemetry.observe('two_factor.code_accepted', { userId: 1, method: 'backup_codes' }) }, () => 200))
  t.equal(accepted, 1, 'the accepted code\'s method')
  const odd = await grew('jwt_login.second_factors', { 'jwt_login.method': 'unknown', 'jwt_login.outcome': 'success' }, () =>
    telemetry.flow(twoFactor, '/auth/2fa', () => { telemetry.observe('two_factor.code_accepted', { userId: 1, method: 7 }) }, () => 200))
  t.equal(odd, 1, 'a method that is no string: unknown')

  const oauth = { name: 'oauth', counter: { kind: 'sign_in' as const, method: 'provider' as const } }
  const unnamed = await grew('jwt_login.provider_sign_ins', { 'jwt_login.provider': 'unknown', 'jwt_login.outcome': 'refused' }, () =>
    telemetry.flow(oauth, '/oauth/token', () => { telemetry.observe('oauth.failed', { provider: null, errorCode: 72 }) }, () => 400))
  t.equal(unnamed, 1, 'a provider of `null`: unknown')
  const challenged = await grew('jwt_login.provider_sign_ins', { 'jwt_login.provider': 'idp2', 'jwt_login.outcome': 'second_factor' }, async () =>
    await telemetry.flow(oauth, '/oauth/token', async () => { telemetry.observe('two_factor.challenge_issued', { userId: 1, provider: 'idp2' }) }, () => 200))
  t.equal(challenged, 1, 'a challenge after the provider: second_factor, by provider')

  const refresh = { name: 'refresh', counter: { kind: 'refresh' as const } }
  const failed = await grew('jwt_login.refreshes', { 'jwt_login.outcome': 'error' }, async () => {
    await t.rejects(telemetry.flow(refresh, '/auth/refresh', async () => { throw new Error('down') }, () => 200))
  })
  t.equal(failed, 1, 'a refresh that threw: error, not rotated')
  const limited = await grew('jwt_login.refreshes', { 'jwt_login.outcome': 'rate_limited' }, () => telemetry.flow(refresh, '/auth/refresh', () => undefined, () => 429))
  t.equal(limited, 1, 'a refresh answered 429: rate_limited')
})

t.test('retried, lockout and observe outside a flow, and without metrics', async (t) => {
  const telemetry = live()
  t.teardown(() => { telemetry.close() })
  telemetry.retried()
  telemetry.observe('two_factor.code_accepted', { userId: 1, method: 'totp' })
  // a retry or an event outside a flow is no one's: the next flows do not inherit them
  const refresh = { name: 'refresh', counter: { kind: 'refresh' as const } }
  t.equal(await grew('jwt_login.refreshes', { 'jwt_login.outcome': 'rotated' }, () => telemetry.flow(refresh, '/auth/refresh', () => undefined, () => 200)), 1, 'the next refresh rotated, not retried')
  const twoFactor = { name: 'second_factor', counter: { kind: 'second_factor' as const } }
  t.equal(await grew('jwt_login.second_factors', { 'jwt_login.method': 'unknown', 'jwt_login.outcome': 'refused' }, () => telemetry.flow(twoFactor, '/auth/2fa', () => undefined, () => 401)), 1, 'the next second factor names no method it was not told')
  t.equal(await grew('jwt_login.lockouts', { 'jwt_login.subject': '2fa:account' }, () => { telemetry.lockout('2fa:account:aGFzaA') }), 1, 'the subject kind, without its hash')
  t.equal(await grew('jwt_login.lockouts', { 'jwt_login.subject': 'user' }, () => { telemetry.observe('user.locked', { userId: 1, reason: 'note' }) }), 1, 'a host\'s lock')

  const tracesOnly = live({ metrics: { getMeter: () => api.createNoopMeter() } })
  t.equal(tracesOnly.live, true, 'live on traces alone')
  const lockouts = await otel.value('jwt_login.lockouts')
  tracesOnly.lockout('login:ip:aGFzaA')
  tracesOnly.observe('user.locked', { userId: 1, reason: 'note' })
  tracesOnly.flow({ name: 'refresh', counter: { kind: 'refresh' } }, '/auth/refresh', () => undefined, () => 200)
  t.equal(await otel.value('jwt_login.lockouts'), lockouts, 'without a meter provider nothing is counted')
  tracesOnly.close()

  const metricsOnly = live({ trace: { ...api.trace, getTracerProvider: () => ({ getDelegate: () => new api.ProxyTracerProvider().getDelegate() }) } })
  t.equal(metricsOnly.live, true, 'live on metrics alone')
  t.equal(await grew('jwt_login.refreshes', { 'jwt_login.outcome': 'retried' }, () =>
    metricsOnly.flow({ name: 'refresh', counter: { kind: 'refresh' } }, '/auth/refresh', () => { metricsOnly.retried() }, () => 200)), 1, 'counted without a span')
  t.equal(await grew('jwt_login.lockouts', { 'jwt_login.subject': 'user' }, () => { metricsOnly.observe('user.locked', { userId: 1, reason: 'note' }) }), 1, 'a host\'s lock, with no span to add it to')
  t.equal(otelApi.trace.getActiveSpan(), undefined)
  metricsOnly.close()
})

t.test('failures however they come: a handler that throws at once or rejects with undefined, a port that throws at once or rejects with undefined', async (t) => {
  const telemetry = live()
  t.teardown(() => { telemetry.close() })
  const reset = { name: 'reset.complete', counter: { kind: 'reset' as const, step: 'complete' as const } }
  const labels = { 'jwt_login.step': 'complete', 'jwt_login.outcome': 'error' }
  t.equal(await grew('jwt_login.resets', labels, () => {
    t.throws(() => telemetry.flow(reset, '/user/reset_password', () => { throw new TypeError('at once') }, () => 200), TypeError)
  }), 1, 'a handler that throws before it answers a promise: error')
  t.equal(await grew('jwt_login.resets', labels, async () => {
    // eslint-disable-next-line prefer-promise-reject-errors
    await t.rejects(telemetry.flow(reset, '/user/reset_password', async () => await Promise.reject(undefined), () => 200))
  }), 1, 'a rejection without a value: error')

  const store = telemetry.runner('store', 'memory')
  const storeErrors = { 'jwt_login.operation': 'get', 'jwt_login.outcome': 'error' }
  t.equal(await grew('jwt_login.store.duration', storeErrors, async () => {
    await t.rejects(store('get', () => { throw new Error('at once') }), { message: 'at once' })
  }), 1, 'a store that throws before it answers a promise: error')
  const users = telemetry.runner('users')
  const portErrors = { 'jwt_login.port': 'users', 'jwt_login.operation': 'findById', 'jwt_login.outcome': 'error' }
  t.equal(await grew('jwt_login.port.duration', portErrors, async () => {
    // eslint-disable-next-line prefer-promise-reject-errors
    await t.rejects(users('findById', async () => await Promise.reject(undefined)))
  }), 1, 'a port that rejects without a value: error')
  t.equal(await grew('jwt_login.port.duration', { ...portErrors, 'jwt_login.outcome': 'ok' }, async () => { await users('findById', async () => null) }), 1, 'and ok')
})
