// Issue 43: the plugin's metrics through its routes, with an OpenTelemetry SDK registered the way a host registers it: each counter by its bounded labels, the duration histograms, the gauges, and labels that never carry a user.
import type { LightMyRequestResponse } from 'fastify'
import { DataPointType } from '@opentelemetry/sdk-metrics'
import { randomNonce } from 'openid-client'
import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { processPasswordWork } from '../../lib/services/password-work.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { buildEmailSignInApp } from '../helpers/email-sign-in.js'
import { errorOf, login, loginTokens, post } from '../helpers/http.js'
import { MailBox } from '../helpers/mail-box.js'
import { buildOAuthApp, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { registerOtel } from '../helpers/otel.js'
import { authenticator, buildPasskeyApp } from '../helpers/passkeys.js'
import { codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { buildTwoFactorApp, totpAt, wrongCode } from '../helpers/two-factor.js'

const otel = registerOtel()
const idp = await startIdp()
t.teardown(() => idp.close())

type Labels = Record<string, string>

/** How much `name` {labels} grew while `work` ran (counters are cumulative). */
async function grew (name: string, labels: Labels, work: () => Promise<unknown>): Promise<number> {
  const before = await otel.value(name, labels)
  await work()
  return await otel.value(name, labels) - before
}

/** Every counted change `work` made, by metric and labels, as `name{k=v,...}: n`. */
async function changes (work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await counts()
  await work()
  const after = await counts()
  const changed: Record<string, number> = {}
  for (const [key, value] of Object.entries(after)) {
    if (value !== (before[key] ?? 0)) changed[key] = value - (before[key] ?? 0)
  }
  return changed
}

/** The counters' points (not the histograms, not the gauges), keyed by metric and sorted labels. */
async function counts (): Promise<Record<string, number>> {
  const collected = await otel.collect()
  const out: Record<string, number> = {}
  for (const scope of collected.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.dataPointType !== DataPointType.SUM) continue
      for (const point of metric.dataPoints) {
        const labels = Object.entries(point.attributes).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k.replace('jwt_login.', '')}=${String(v)}`).join(',')
        out[`${metric.descriptor.name.replace('jwt_login.', '')}{${labels}}`] = point.value as number
      }
    }
  }
  return out
}

const ok = (res: LightMyRequestResponse, status = 200): LightMyRequestResponse => {
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`)
  return res
}

/** Waits (a few event-loop turns at most) until `condition` holds. */
async function until (condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 5000; turn++) {
    if (condition()) return
    await new Promise(resolve => setImmediate(resolve))
  }
  throw new Error(`never happened: ${what}`)
}

t.test('password sign-ins: success, refused, locked by the host (and the lockout), rate limited (and the limiter\'s lockout, once)', async (t) => {
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 2 }, loginPerIp: { max: 100 } } })
  t.teardown(() => app.close())
  const wrong = { email: ALICE.email, password: 'not the password' }

  t.same(await changes(async () => ok(await login(app))), { 'sign_ins{method=password,outcome=success}': 1 }, 'a success')
  t.same(await changes(async () => ok(await login(app, wrong), 401)), { 'sign_ins{method=password,outcome=refused}': 1 }, 'a wrong password: refused')
  t.same(await changes(async () => ok(await login(app, wrong), 401)), { 'sign_ins{method=password,outcome=refused}': 1 }, 'the second one')
  t.same(await changes(async () => ok(await login(app, wrong), 429)), { 'sign_ins{method=password,outcome=rate_limited}': 1, 'lockouts{subject=login:account}': 1, 'lockouts{subject=login:user}': 1 },
    'past loginPerAccount: rate limited, and both account subjects (the identifier\'s, the user\'s) locked out')
  t.same(await changes(async () => ok(await login(app, wrong), 429)), { 'sign_ins{method=password,outcome=rate_limited}': 1 }, 'refused by the lock in force: no second lockout')

  const other = await buildApp()
  t.teardown(() => other.app.close())
  t.same(await changes(async () => { await other.app.jwtLogin.lockUser(1, { reason: 'support ticket of alice@example.com 12345678' }) }), { 'lockouts{subject=user}': 1 }, 'lockUser: the user subject')
  const locked = await changes(async () => t.same(errorOf(await login(other.app)), [403, 251]))
  t.same(locked, { 'sign_ins{method=password,outcome=locked}': 1 }, 'a locked user\'s sign-in: locked')
})

t.test('a second factor: the password sign-in ends in second_factor; TOTP accepted, a wrong code refused with the method it tried (totp)', async (t) => {
  const kit = await buildTwoFactorApp()
  t.teardown(() => kit.app.close())
  let interim = ''
  t.same(await changes(async () => { interim = ok(await kit.login()).json().data.jwt }), { 'sign_ins{method=password,outcome=second_factor}': 1 })
  const wrong = await wrongCode(kit.secret, kit.clock.now)
  t.same(await changes(async () => ok(await kit.submit({ JWT: interim, code: wrong }), 401)), { 'second_factors{method=totp,outcome=refused}': 1 }, 'a wrong code')
  const code = await totpAt(kit.secret, kit.clock.now)
  t.same(await changes(async () => ok(await kit.submit({ JWT: interim, code }))), { 'second_factors{method=totp,outcome=success}': 1 }, 'the TOTP code')
})

t.test('sign-in by email and by passkey count with their methods', async (t) => {
  const kit = await buildEmailSignInApp(t)
  t.same(await changes(async () => ok(await kit.signIn())), { 'sign_ins{method=email,outcome=success}': 1 }, 'a code from the mail')
  t.same(await changes(async () => ok(await kit.verify(ALICE.email, '000000'), 401)), { 'sign_ins{method=email,outcome=refused}': 1 }, 'a wrong code')

  const passkeys = await buildPasskeyApp()
  t.teardown(() => passkeys.app.close())
  const device = authenticator()
  ok(await passkeys.enrol(await passkeys.token(), device))
  passkeys.clock.advance(60_000)
  t.same(await changes(async () => ok(await passkeys.signIn(device))), { 'sign_ins{method=passkey,outcome=success}': 1 }, 'a passkey')
})

t.test('refreshes: rotated, retried within refresh.reuseInterval, a reuse that ends the session, refused', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ refresh: { enabled: true } }, { clock })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const refresh = async (token: unknown, status = 200): Promise<Record<string, any>> => ok(await post(app, '/auth/refresh', { refresh_token: token }), status).json().data
  let second: Record<string, any> = {}
  t.same(await changes(async () => { second = await refresh(first.refresh_token) }), { 'refreshes{outcome=rotated}': 1 })
  let again: Record<string, any> = {}
  t.same(await changes(async () => { again = await refresh(first.refresh_token) }), { 'refreshes{outcome=retried}': 1 }, 'the same token again at once: retried')
  t.equal(again.refresh_token, second.refresh_token, 'the same successor')
  clock.advance(31_000)
  await refresh(second.refresh_token)
  t.same(await changes(async () => { await refresh(first.refresh_token, 401) }), { 'refreshes{outcome=reuse}': 1 }, 'an older token: reuse')
  t.same(await changes(async () => { await refresh('no-such-token', 401) }), { 'refreshes{outcome=refused}': 1 }, 'no such token: refused')
})

t.test('password reset: request and complete, a wrong code refused', async (t) => {
  const mail = new MailBox()
  const { app } = await buildApp({ resetPassword: { enabled: true, mail: { retryDelay: '10ms' } } }, { mailer: mail })
  t.teardown(() => app.close())
  t.same(await changes(async () => ok(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } }))),
    { 'resets{outcome=success,step=request}': 1 })
  const code = codeIn((await mail.next()).text)
  const put = async (sent: string, status: number): Promise<void> => {
    ok(await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code: sent, new_password: NEW_PASSWORD } }), status)
  }
  t.same(await changes(async () => { await put(`${code}x`, 400) }), { 'resets{outcome=refused,step=complete}': 1 }, 'a wrong code')
  t.same(await changes(async () => { await put(code, 200) }), { 'resets{outcome=success,step=complete}': 1 })
})

t.test('provider sign-ins at a real OpenID provider: labelled with the configured name; a replay refused; an unknown name is `unknown`', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const nonce = randomNonce()
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce })
  t.same(await changes(async () => ok(await postToken(app, { provider: 'idp1', id_token: idToken, nonce }))),
    { 'sign_ins{method=provider,outcome=success}': 1, 'provider_sign_ins{outcome=success,provider=idp1}': 1 }, 'an ID token')
  t.same(await changes(async () => ok(await postToken(app, { provider: 'idp1', id_token: idToken, nonce }), 401)),
    { 'sign_ins{method=provider,outcome=refused}': 1, 'provider_sign_ins{outcome=refused,provider=idp1}': 1 }, 'its replay')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.same(await changes(async () => ok(await postToken(app, { provider: 'idp2', code }), 401)),
    { 'sign_ins{method=provider,outcome=refused}': 1, 'provider_sign_ins{outcome=refused,provider=idp2}': 1 }, 'idp1\'s code at idp2')
  const unknown = await changes(async () => { await postToken(app, { provider: 'mallory@example.com', id_token: idToken }) })
  t.same(unknown, { 'sign_ins{method=provider,outcome=refused}': 1, 'provider_sign_ins{outcome=refused,provider=unknown}': 1 }, 'a name no provider has: never the value sent')
})

/** A memory store whose calls of the operations named by `fail` reject (`fail()`: none). */
function failingStore (): { store: StateStore, fail: (...operations: string[]) => void } {
  const target = new MemoryStore()
  let failing = new Set<PropertyKey>()
  const store = new Proxy(target, {
    get (inner, property) {
      const value: unknown = inner[property as keyof MemoryStore]
      if (typeof value !== 'function') return value
      const method = (value as (...a: unknown[]) => unknown).bind(inner)
      return (...args: unknown[]) => failing.has(property) ? Promise.reject(new Error('the store is down')) : method(...args)
    }
  })
  return { store, fail: (...operations) => { failing = new Set(operations) } }
}

t.test('the duration histograms: flows, store calls and port calls with their labels; a failing store\'s calls as error', async (t) => {
  const { store, fail } = failingStore()
  const { app } = await buildApp({}, { store })
  t.teardown(() => app.close())
  const flow = await grew('jwt_login.flow.duration', { 'jwt_login.flow': 'sign_in', 'jwt_login.outcome': 'success' }, async () => ok(await login(app)))
  t.equal(flow, 1, 'one sign_in flow, success')
  t.ok(await otel.value('jwt_login.store.duration', { 'jwt_login.outcome': 'ok' }) > 0, 'store calls, ok')
  t.ok(await otel.value('jwt_login.port.duration', { 'jwt_login.port': 'users', 'jwt_login.operation': 'verifyPassword', 'jwt_login.outcome': 'ok' }) > 0, 'the users port\'s verifyPassword')
  t.ok(await otel.value('jwt_login.port.duration', { 'jwt_login.port': 'users', 'jwt_login.operation': 'findByEmail', 'jwt_login.outcome': 'ok' }) > 0, 'and findByEmail')

  // the sign-in's attempt count (the request rate limit's increment still works, so the flow runs)
  fail('readAndIncrement')
  const errors = await grew('jwt_login.store.duration', { 'jwt_login.operation': 'readAndIncrement', 'jwt_login.outcome': 'error' }, async () => t.same(errorOf(await login(app)), [503, 201]))
  fail()
  t.equal(errors, 1, 'the failed store call: outcome error')
  t.ok(await otel.value('jwt_login.flow.duration', { 'jwt_login.flow': 'sign_in', 'jwt_login.outcome': 'error' }) >= 1, 'and the flow: error')

  const ports = (await otel.collect()).scopeMetrics.flatMap(s => s.metrics).find(m => m.descriptor.name === 'jwt_login.port.duration')
  t.ok(ports !== undefined && ports.dataPoints.every(p => typeof p.attributes['jwt_login.port'] === 'string' && typeof p.attributes['jwt_login.operation'] === 'string'), 'every port point names its port and operation')
})

/** Memory users whose password checks wait for the test while held. */
class HeldUsers extends MemoryUserAdapter {
  checks = 0
  #hold: Promise<void> | null = null
  #release = (): void => {}

  hold (): void {
    this.#hold = new Promise(resolve => { this.#release = resolve })
  }

  release (): void {
    this.#hold = null
    this.#release()
  }

  override async verifyPassword (user: MemoryUser, password: string): Promise<boolean> {
    this.checks++
    if (this.#hold !== null) await this.#hold
    return await super.verifyPassword(user, password)
  }
}

t.test('the hashing queue gauge: 10 concurrent sign-ins on one slot, 9 waiting while one hashes', async (t) => {
  const users = new HeldUsers()
  await users.addUser(ALICE)
  const { app } = await buildApp({ passwordHashing: { concurrency: 1 }, limits: { loginPerIp: { max: 1000 }, loginPerAccount: { max: 1000 }, signInsPerAccount: { max: 1000 } } }, { users })
  t.teardown(() => app.close())
  users.hold()
  const signIns = Array.from({ length: 10 }, async () => await login(app))
  await until(() => users.checks === 1 && processPasswordWork.waitingSignIns === 9, 'one sign-in hashes, nine wait')
  t.equal(await otel.value('jwt_login.hashing.queue', { 'jwt_login.queue': 'sign_ins' }), 9, 'nine sign-ins waiting')
  t.equal(await otel.value('jwt_login.hashing.queue', { 'jwt_login.queue': 'new_passwords' }), 0)
  users.release()
  t.same((await Promise.all(signIns)).map(res => res.statusCode), signIns.map(() => 200))
  t.equal(await otel.value('jwt_login.hashing.queue', { 'jwt_login.queue': 'sign_ins' }), 0, 'none waiting once they are through')
})

/** The one point of a gauge with these labels: fails when there are several. */
async function gauge (name: string, labels: Labels): Promise<number[]> {
  const collected = await otel.collect()
  return collected.scopeMetrics.flatMap(s => s.metrics).filter(m => m.descriptor.name === name)
    .flatMap(m => m.dataPoints.filter(p => Object.entries(labels).every(([k, v]) => p.attributes[k] === v)).map(p => p.value as number))
}

t.test('the memory store gauge reads the store; after close() only the new app\'s gauges are reported', async (t) => {
  const first = new MemoryStore({ maxEntries: 10, maxCounters: 100 })
  const one = await buildApp({ refresh: { enabled: true } }, { store: first })
  for (let i = 0; i < 5; i++) await first.set(`filler:${i}`, 'x', 60_000)
  t.same(await gauge('jwt_login.memory_store.usage', { 'jwt_login.entries': 'state' }), [first.usage.state], 'the state entries\' share')
  t.ok(first.usage.state >= 0.5)
  t.same(await gauge('jwt_login.memory_store.usage', { 'jwt_login.entries': 'counters' }), [first.usage.counters], 'the counters\' share')
  await one.app.close()

  const second = new MemoryStore({ maxEntries: 1000, maxCounters: 1000 })
  const two = await buildApp({}, { store: second })
  t.teardown(() => two.app.close())
  ok(await login(two.app))
  const reported = await gauge('jwt_login.memory_store.usage', { 'jwt_login.entries': 'state' })
  t.same(reported, [second.usage.state], 'the new app\'s store only: the closed one\'s callback was removed')
  t.not(reported[0], first.usage.state)
  const counters = await gauge('jwt_login.memory_store.usage', { 'jwt_login.entries': 'counters' })
  t.same(counters, [second.usage.counters])
})

/** The labels each metric may carry, and nothing else. */
const LABELS: Record<string, string[]> = {
  'jwt_login.sign_ins': ['jwt_login.method', 'jwt_login.outcome'],
  'jwt_login.second_factors': ['jwt_login.method', 'jwt_login.outcome'],
  'jwt_login.refreshes': ['jwt_login.outcome'],
  'jwt_login.lockouts': ['jwt_login.subject'],
  'jwt_login.resets': ['jwt_login.outcome', 'jwt_login.step'],
  'jwt_login.provider_sign_ins': ['jwt_login.outcome', 'jwt_login.provider'],
  'jwt_login.flow.duration': ['jwt_login.flow', 'jwt_login.outcome'],
  'jwt_login.store.duration': ['jwt_login.operation', 'jwt_login.outcome'],
  'jwt_login.port.duration': ['jwt_login.operation', 'jwt_login.outcome', 'jwt_login.port'],
  'jwt_login.hashing.queue': ['jwt_login.queue'],
  'jwt_login.memory_store.usage': ['jwt_login.entries']
}

t.test('after the run: every metric is documented, its points carry exactly its labels, and no value names a user', async (t) => {
  const collected = await otel.collect()
  const metrics = collected.scopeMetrics.flatMap(s => s.metrics)
  t.same(metrics.map(m => m.descriptor.name).sort(), Object.keys(LABELS).sort(), 'every metric appeared, none other')
  for (const metric of metrics) {
    const wanted = LABELS[metric.descriptor.name]
    t.ok(metric.dataPoints.length > 0, `${metric.descriptor.name}: points`)
    for (const point of metric.dataPoints) {
      t.same(Object.keys(point.attributes).sort(), wanted, `${metric.descriptor.name}: ${JSON.stringify(point.attributes)}`)
      for (const value of Object.values(point.attributes)) {
        const text = String(value)
        t.notOk(text.includes('@') || /\d{7,}/.test(text) || text.includes(ALICE.login), `${metric.descriptor.name}: ${text} names no one`)
      }
    }
  }
  t.same(collected.scopeMetrics.map(s => s.scope.name), ['fastify-jwt-login'], 'one instrumentation scope')
})
