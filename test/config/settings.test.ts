import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { SettingsHolder } from '../../lib/config/holder.js'
import { ALICE, HS_SECRET, buildApp, testClock } from '../helpers/app.js'
import { settingsError } from '../helpers/settings.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

/** Registers the plugin on `app` and waits for it: a promise that rejects with a registration error. */
async function register (app: FastifyInstance, options: JwtLoginOptions): Promise<void> {
  await app.register(jwtLogin, options)
  await app.ready()
}

t.test('defaults: every group resolved, durations in ms', async (t) => {
  const s = resolveSettings({ tokens: TOKENS })
  t.same(s.authentication, { enabled: true, requireVerifiedEmail: false })
  t.same(s.authCodes, {
    codes: [],
    parameter: 'AUTH_KEY',
    oauthParameter: 'AUTH_CODE',
    requireFor: { auth: false, validate: false, refresh: false, revoke: false, oauth: false }
  })
  t.same(s.login, { allowPasswordHash: false })
  t.same(s.bearer, { enabled: true, allowBareToken: false })
  t.same(s.refresh, { enabled: false, lifetimeMs: 14 * 24 * 3600_000, reuseIntervalMs: 30_000, cookie: { enabled: false, sameSite: 'strict' } })
  t.same(s.cors, { enabled: false, origins: [], credentials: false, maxAgeMs: 600_000 })
  t.same(s.validate, { enabled: true, jwtAsObject: false })
  t.same(s.revoke, { enabled: true })
  t.same(s.tokens, {
    algorithm: 'HS256',
    keys: [{ kid: 'k1', secret: HS_SECRET }],
    issuer: 'jwt-login',
    audience: 'jwt-login',
    lifetimeMs: 15 * 60_000,
    leewayMs: 5_000,
    claims: { email: true, login: true, displayName: false, roles: true }
  })
  t.same(s.limits, {
    loginPerAccount: { max: 10, windowMs: 15 * 60_000 },
    loginPerIp: { max: 50, windowMs: 15 * 60_000 },
    requestsPerIp: { max: 300, windowMs: 60_000 },
    signInsPerAccount: { max: 100, windowMs: 3_600_000 }
  })
  t.same(s.sessions, { enabled: false, maxPerUser: 50, clockSkewMs: 0, checkPasswordOnValidate: false })
  t.equal(s.bodyLimit, 16384)
})

t.test('the input is not changed by resolving', async (t) => {
  const input = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
  resolveSettings(input)
  t.same(input, { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } })
})

t.test('durations as seconds or ms-style strings', async (t) => {
  const s = resolveSettings({
    tokens: { ...TOKENS, lifetime: 60, leeway: 1.5 },
    refresh: { lifetime: '2h' },
    limits: { loginPerAccount: { window: ' 15m ' }, loginPerIp: { window: '500ms' }, requestsPerIp: { window: '1 day' } }
  })
  t.equal(s.tokens.lifetimeMs, 60_000)
  t.equal(s.tokens.leewayMs, 1_500)
  t.equal(s.refresh.lifetimeMs, 7_200_000)
  t.equal(s.limits.loginPerAccount.windowMs, 900_000)
  t.equal(s.limits.loginPerIp.windowMs, 500)
  t.equal(s.limits.requestsPerIp.windowMs, 86_400_000)
})

t.test('auth codes: expiresAt becomes ms, absent is null', async (t) => {
  const s = resolveSettings({ tokens: TOKENS, authCodes: { codes: [{ code: 'a', expiresAt: '2026-12-01T00:00:00Z' }, { code: 'b' }] } })
  t.same(s.authCodes.codes, [{ code: 'a', expiresAt: Date.UTC(2026, 11, 1), role: null }, { code: 'b', expiresAt: null, role: null }])
})

t.test('invalid settings are refused with the path of the field', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['unknown top-level field', { tokens: TOKENS, extra: true }, 'extra'],
    ['unknown field in a group', { tokens: TOKENS, validate: { enable: true } }, 'validate/enable'],
    ['unknown field in tokens', { tokens: { ...TOKENS, secret: 'x' } }, 'tokens/secret'],
    ['unknown field in a key', { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET, alg: 'HS256' }] } }, 'tokens/keys/0/alg'],
    ['wrong type', { tokens: TOKENS, validate: { enabled: 'yes' } }, 'validate/enabled'],
    ['a group that is not an object', { tokens: TOKENS, refresh: true }, 'refresh'],
    ['unknown algorithm', { tokens: { ...TOKENS, algorithm: 'none' } }, 'tokens/algorithm'],
    ['bad duration string', { tokens: TOKENS, refresh: { lifetime: 'soon' } }, 'refresh/lifetime'],
    ['zero duration string', { tokens: TOKENS, refresh: { lifetime: '0s' } }, 'refresh/lifetime'],
    ['reuse interval over 5 minutes', { tokens: TOKENS, refresh: { reuseInterval: '6m' } }, 'refresh/reuseInterval'],
    ['reuse interval as a zero string', { tokens: TOKENS, refresh: { reuseInterval: '0s' } }, 'refresh/reuseInterval'],
    ['zero duration number', { tokens: { ...TOKENS, lifetime: 0 } }, 'tokens/lifetime'],
    ['negative duration', { tokens: { ...TOKENS, leeway: -1 } }, 'tokens/leeway'],
    ['zero leeway string', { tokens: { ...TOKENS, leeway: '0ms' } }, 'tokens/leeway'],
    ['zero limit window', { tokens: TOKENS, limits: { loginPerIp: { window: '0m' } } }, 'limits/loginPerIp/window'],
    ['zero limit max', { tokens: TOKENS, limits: { requestsPerIp: { max: 0 } } }, 'limits/requestsPerIp/max'],
    ['zero sessions per user', { tokens: TOKENS, sessions: { maxPerUser: 0 } }, 'sessions/maxPerUser'],
    ['a clock skew that is no duration', { tokens: TOKENS, sessions: { clockSkew: 'soon' } }, 'sessions/clockSkew'],
    ['a zero clock skew written as a duration', { tokens: TOKENS, sessions: { clockSkew: '0s' } }, 'sessions/clockSkew'],
    ['fractional limit max', { tokens: TOKENS, limits: { loginPerAccount: { max: 1.5 } } }, 'limits/loginPerAccount/max'],
    ['bad date-time', { tokens: TOKENS, authCodes: { codes: [{ code: 'a', expiresAt: 'tomorrow' }] } }, 'authCodes/codes/0/expiresAt'],
    ['impossible date-time', { tokens: TOKENS, authCodes: { codes: [{ code: 'a' }, { code: 'b', expiresAt: '2026-13-45T99:00:00Z' }] } }, 'authCodes/codes/1/expiresAt'],
    ['date without time', { tokens: TOKENS, authCodes: { codes: [{ code: 'a', expiresAt: '2026-12-01' }] } }, 'authCodes/codes/0/expiresAt'],
    ['empty auth code', { tokens: TOKENS, authCodes: { codes: [{ code: '' }] } }, 'authCodes/codes/0/code'],
    ['empty keys', { tokens: { keys: [] } }, 'tokens/keys'],
    ['no tokens group', {}, 'tokens'],
    ['empty kid', { tokens: { keys: [{ kid: '', secret: HS_SECRET }] } }, 'tokens/keys/0/kid'],
    ['duplicate kid', { tokens: { keys: [{ kid: 'a', secret: HS_SECRET }, { kid: 'a', secret: HS_SECRET }] } }, 'tokens/keys/1/kid'],
    ['bodyLimit too large', { tokens: TOKENS, bodyLimit: 2 ** 30 }, 'bodyLimit'],
    ['bodyLimit too small', { tokens: TOKENS, bodyLimit: 10 }, 'bodyLimit']
  ]
  for (const [name, input, path] of cases) {
    const error = settingsError(input)
    t.equal(error.path, path, name)
    t.equal(error.code, 'ERR_JWT_LOGIN_INVALID_SETTINGS', name)
    t.equal(error.name, 'JwtLoginSettingsError', name)
    t.match(error.message, `jwt-login: invalid setting ${path}: `, name)
  }
})

t.test('settings that are not an object are refused with the root path', async (t) => {
  for (const input of [null, undefined, 'settings', 42, [], [{ tokens: TOKENS }]]) {
    const error = settingsError(input)
    t.equal(error.path, '', JSON.stringify(input))
    t.match(error.message, 'invalid setting (root): settings must be an object')
  }
})

t.test('registration refuses invalid settings with the path', async (t) => {
  await t.rejects(buildApp({ validate: { enabled: 'no' } as never }), { name: 'JwtLoginSettingsError', path: 'validate/enabled' })
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(
    register(app, { users: new MemoryUserAdapter(), settings: null as never }),
    { name: 'JwtLoginSettingsError', path: '' }
  )
})

t.test('a user adapter missing a method is refused: users/<method>', async (t) => {
  const full = new MemoryUserAdapter()
  const methods = ['findByEmail', 'findByLogin', 'findById', 'verifyPassword', 'toPublicUser'] as const
  for (const method of methods) {
    const adapter: Record<string, unknown> = {}
    for (const m of methods) adapter[m] = (full[m] as (...args: never[]) => unknown).bind(full)
    delete adapter[method]
    const app = Fastify()
    await t.rejects(register(app, { users: adapter as never, settings: { tokens: TOKENS } }), { name: 'JwtLoginSettingsError', path: `users/${method}` }, method)
    await app.close()
  }
  for (const users of [null, undefined, 'users']) {
    const app = Fastify()
    await t.rejects(register(app, { users: users as never, settings: { tokens: TOKENS } }), { name: 'JwtLoginSettingsError', path: 'users/findByEmail' }, String(users))
    await app.close()
  }
  const app = Fastify()
  t.teardown(() => app.close())
  await t.resolves(register(app, { users: { ...Object.fromEntries(methods.map(m => [m, (full[m] as (...args: never[]) => unknown).bind(full)])) } as never, settings: { tokens: TOKENS } }), 'getPasswordHash is optional')
})

t.test('the settings getter answers the settings in force', async (t) => {
  const { app } = await buildApp({ validate: { enabled: false }, tokens: { ...TOKENS, lifetime: '1h' } })
  t.teardown(() => app.close())
  t.equal(app.jwtLogin.settings.validate.enabled, false)
  t.equal(app.jwtLogin.settings.tokens.lifetimeMs, 3_600_000)
  await t.resolves(app.jwtLogin.reloadSettings(), 'reloading static settings is a no-op')
  t.equal(app.jwtLogin.settings.validate.enabled, false)
  const res = await app.inject({ method: 'GET', url: '/jwt-login/v1/auth/validate?JWT=x' })
  t.equal(res.statusCode, 403)
  t.equal(res.json().data.errorCode, 82)
})

interface SourceApp {
  app: FastifyInstance
  clock: ReturnType<typeof testClock>
  logs: Array<{ level: number, msg: string, err?: { message: string } }>
  source: { next: unknown, calls: number, fail: Error | null }
}

/** A host with a logger on a captured stream and an async settings source the test changes. */
async function sourceApp (t: Test, initial: unknown, options: Partial<JwtLoginOptions> = {}): Promise<SourceApp> {
  const logs: SourceApp['logs'] = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line))
      done()
    }
  })
  const clock = testClock()
  const source = { next: initial, calls: 0, fail: null as Error | null }
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'warn', stream } })
  await app.register(jwtLogin, {
    users,
    clock,
    settingsTtl: '10s',
    settings: async () => {
      source.calls++
      if (source.fail !== null) throw source.fail
      return structuredClone(source.next) as SettingsInput
    },
    ...options
  })
  await app.ready()
  t.teardown(() => app.close())
  return { app, clock, logs, source }
}

async function validateStatus (app: FastifyInstance): Promise<{ statusCode: number, errorCode: number | undefined }> {
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  const jwt = login.json().data.jwt as string
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: jwt } })
  return { statusCode: res.statusCode, errorCode: res.json().data.errorCode }
}

/** Resolves once `check` holds, polling every 10 ms (a timer-driven reload runs on real time). */
async function until (check: () => boolean, ms = 3000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(10)) if (check()) return true
  return check()
}

t.test('async source: read at start; requests and reads never start a reload; a re-read applies without a restart', async (t) => {
  // an hour-long ttl, so nothing but a request or a read could re-read the source during the test, however slow the machine
  const { app, clock, source } = await sourceApp(t, { tokens: TOKENS }, { settingsTtl: '1h' })
  t.equal(source.calls, 1, 'read once at start')
  t.equal((await validateStatus(app)).statusCode, 200)

  source.next = { tokens: TOKENS, validate: { enabled: false } }
  // the plugin's clock has nothing to do with it: reads and requests never reload
  clock.advance(3_600_000)
  await Promise.all([validateStatus(app), validateStatus(app), validateStatus(app)])
  t.ok(app.jwtLogin.settings)
  t.equal(source.calls, 1, 'requests and reads did not re-read the source')

  await app.jwtLogin.reloadSettings()
  t.equal(source.calls, 2, 'once')
  t.same(await validateStatus(app), { statusCode: 403, errorCode: 82 }, 'the admin switched validate off without a restart')
})

t.test('a reload that reads the same settings keeps the settings object (and what is cached per settings)', async (t) => {
  const { app, source } = await sourceApp(t, { tokens: TOKENS })
  const before = app.jwtLogin.settings
  source.next = { tokens: { ...TOKENS } }
  await app.jwtLogin.reloadSettings()
  t.equal(source.calls, 2, 'the source was read')
  t.equal(app.jwtLogin.settings, before, 'the same settings stay in force')
  source.next = { tokens: TOKENS, validate: { enabled: false } }
  await app.jwtLogin.reloadSettings()
  t.not(app.jwtLogin.settings, before, 'a changed answer makes new settings')
  t.equal(app.jwtLogin.settings.validate.enabled, false)
})

t.test('the timer re-reads the source every settingsTtl and applies what it read', async (t) => {
  const { app, source } = await sourceApp(t, { tokens: TOKENS }, { settingsTtl: 0.2 })
  source.next = { tokens: TOKENS, validate: { enabled: false } }
  t.ok(await until(() => !app.jwtLogin.settings.validate.enabled, 6000), 'the timer re-read the source')
  t.same(await validateStatus(app), { statusCode: 403, errorCode: 82 })
})

t.test('settingsTtl as a number of seconds; the timer stops on close', async (t) => {
  const { app, source } = await sourceApp(t, { tokens: TOKENS }, { settingsTtl: 0.1 })
  t.ok(await until(() => source.calls >= 2), 're-read after 0.1 s')
  await app.close()
  const calls = source.calls
  await sleep(300)
  t.equal(source.calls, calls, 'no read after close')
})

/** The delays of the timers armed while `run` runs; every timer still runs as usual. */
async function timerDelaysDuring (run: () => Promise<void>): Promise<number[]> {
  const delays: number[] = []
  const original = globalThis.setTimeout
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0)
    return original(fn, ms)
  }) as typeof setTimeout
  try {
    await run()
  } finally {
    globalThis.setTimeout = original
  }
  return delays
}

t.test('a reload still running when the timer stops does not arm it again', async (t) => {
  let calls = 0
  let release = (): void => {}
  const holder = await SettingsHolder.create(async () => {
    calls++
    if (calls === 2) await new Promise<void>(resolve => { release = resolve })
    return { tokens: TOKENS }
  }, { ttlMs: 5, onInvalid: () => {} })
  holder.start()
  t.ok(await until(() => calls === 2), 'the timer started a reload, which waits on the source')
  holder.stop()
  const armed = await timerDelaysDuring(async () => {
    release()
    // the reload settles in promise jobs: a macrotask later it is done
    await new Promise(resolve => setImmediate(resolve))
  })
  t.notOk(armed.includes(5), 'no reload timer after stop()')
  t.equal(calls, 2)
})

t.test('without settingsTtl an async source is re-read every 30 s', async (t) => {
  let calls = 0
  const app = Fastify()
  t.teardown(() => app.close())
  const delays = await timerDelaysDuring(async () => {
    await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: async () => { calls++; return { tokens: TOKENS } } })
    await app.ready()
  })
  t.ok(delays.includes(30_000), 'a 30 s reload timer')
  t.ok(app.jwtLogin.settings)
  t.equal(calls, 1)
})

t.test('an explicit reload that is refused rejects with the error; the last good settings stay', async (t) => {
  const { app, logs, source } = await sourceApp(t, { tokens: TOKENS })
  source.next = { tokens: TOKENS, validate: { enabled: 'off' } }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'validate/enabled', message: /invalid setting validate\/enabled: / })
  t.equal((await validateStatus(app)).statusCode, 200, 'the last good settings stay')

  source.fail = new Error('admin database down')
  await t.rejects(app.jwtLogin.reloadSettings(), { message: 'admin database down' })
  t.equal((await validateStatus(app)).statusCode, 200, 'a failing source keeps them too')
  t.notOk(logs.some(l => l.msg.includes('settings reload refused')), 'the caller has the error: nothing is logged')

  source.fail = null
  source.next = { tokens: TOKENS, validate: { enabled: false } }
  await app.jwtLogin.reloadSettings()
  t.same(await validateStatus(app), { statusCode: 403, errorCode: 82 }, 'a valid reload then takes effect')
})

t.test('a timed reload that is refused logs a warning and keeps the last good settings', async (t) => {
  const { app, logs, source } = await sourceApp(t, { tokens: TOKENS }, { settingsTtl: 0.05 })
  source.next = { tokens: TOKENS, validate: { enabled: 'off' } }
  t.ok(await until(() => logs.some(l => l.msg.includes('settings reload refused'))), 'the timer met the invalid settings')
  const warning = logs.find(l => l.msg.includes('settings reload refused'))
  t.equal(warning?.level, 40)
  t.match(warning?.err?.message, 'invalid setting validate/enabled')
  t.equal(app.jwtLogin.settings.validate.enabled, true, 'the last good settings stay')

  const calls = source.calls
  source.fail = new Error('admin database down')
  t.ok(await until(() => logs.some(l => l.err?.message === 'admin database down')), 'a failing source is logged too')
  t.ok(await until(() => source.calls > calls + 1), 'and the timer keeps running')
  t.equal((await validateStatus(app)).statusCode, 200)
})

t.test('a reload that changes tokens.keys, the algorithm or bodyLimit is refused', async (t) => {
  const { app, source } = await sourceApp(t, { tokens: TOKENS })
  const refusals: Array<[string, unknown, string]> = [
    ['keys', { tokens: { keys: [{ kid: 'k2', secret: HS_SECRET }] } }, 'tokens/keys'],
    ['a second key', { tokens: { keys: [...TOKENS.keys, { kid: 'k2', secret: HS_SECRET }] } }, 'tokens/keys'],
    ['algorithm', { tokens: { ...TOKENS, algorithm: 'HS384', keys: [{ kid: 'k1', secret: 'x'.repeat(48) }] } }, 'tokens/keys'],
    ['bodyLimit', { tokens: TOKENS, bodyLimit: 2048 }, 'bodyLimit']
  ]
  for (const [name, next, path] of refusals) {
    source.next = { ...(next as object), validate: { enabled: false } }
    await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path, message: new RegExp(`invalid setting ${path}: `) }, name)
    t.equal(app.jwtLogin.settings.validate.enabled, true, `${name}: the whole reload is refused`)
  }
  t.equal(app.jwtLogin.settings.bodyLimit, 16384)
  t.equal((await validateStatus(app)).statusCode, 200, 'tokens of the first key still validate')
})

t.test('a reload whose keys differ only in the order of their fields is taken; a changed secret is still refused', async (t) => {
  const second = 'y'.repeat(32)
  const { app, source } = await sourceApp(t, { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }, { kid: 'k2', secret: second }] } })
  source.next = { tokens: { keys: [{ secret: HS_SECRET, kid: 'k1' }, { secret: second, kid: 'k2' }] }, validate: { enabled: false } }
  await app.jwtLogin.reloadSettings()
  t.equal(app.jwtLogin.settings.validate.enabled, false, 'the reload is taken')
  source.next = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }, { kid: 'k2', secret: second }] }, validate: { enabled: true } }
  await app.jwtLogin.reloadSettings()
  t.equal(app.jwtLogin.settings.validate.enabled, true, 'and so is the next one, in the first order again')
  source.next = { tokens: { keys: [{ secret: HS_SECRET, kid: 'k1' }, { secret: 'z'.repeat(32), kid: 'k2' }] }, validate: { enabled: false } }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'tokens/keys', message: /invalid setting tokens\/keys: keys and algorithm change only with a restart/ }, 'a changed secret')
  t.equal(app.jwtLogin.settings.validate.enabled, true, 'the whole reload is refused')
})

t.test('an async source that is invalid at start refuses registration', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(
    register(app, { users: new MemoryUserAdapter(), settings: async () => ({ tokens: { keys: [] } }) }),
    { name: 'JwtLoginSettingsError', path: 'tokens/keys' }
  )
  const failing = Fastify()
  t.teardown(() => failing.close())
  await t.rejects(
    register(failing, { users: new MemoryUserAdapter(), settings: async () => { throw new Error('no admin screen') } }),
    { message: 'no admin screen' }
  )
})
