import type { FastifyServerOptions, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { DEVICE_COOKIE, REFRESH_COOKIE } from '../../lib/http/browser.js'
import { MemoryStore, type JwtLoginEventName, type SettingsInput } from '../../lib/index.js'
import { deviceStandsIn } from '../../lib/sessions/devices.js'
import { devicesKey } from '../../lib/tokens/trusted-devices.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { HS_SECRET, testClock } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { MailBox } from '../helpers/mail-box.js'
import { codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { ALICE, BOB, buildTwoFactorApp, PREFIX, totpAt, type TwoFactorApp } from '../helpers/two-factor.js'

// Trusted devices (issue 21): after a second factor the client may ask to trust its device; a later
// password sign-in of the same user that presents the device token skips the second factor, and
// the token rotates. Everything here goes through the routes, on a memory store, with TOTP.

const KEYS = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
const ON = { twoFactor: { rememberDevice: { enabled: true } }, sessions: { enabled: true } } satisfies Partial<SettingsInput>
const DEVICE_TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/
const DAY = 24 * 60 * 60 * 1000
/** The host's own origin as `inject` reaches it (cookie mode refuses a foreign one). */
const OWN_ORIGIN = 'http://localhost:80'
const USER_AGENT = 'jwt-login-tests/1.0 (trusted devices)'

type Person = typeof ALICE

/** A memory store whose writes of trusted devices can be made to fail (the store is down for that key). */
class FlakyStore extends MemoryStore {
  failDevices = false

  override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    if (this.failDevices && key.startsWith('devices:')) throw new Error('injected: the store is down')
    return await super.compareAndSet(key, expected, value, ttlMs)
  }

  override async delete (key: string): Promise<void> {
    if (this.failDevices && key.startsWith('devices:')) throw new Error('injected: the store is down')
    await super.delete(key)
  }
}

interface Kit extends TwoFactorApp {
  clock: ReturnType<typeof testClock>
  store: FlakyStore
  aliceId: number
  /** `POST /auth` with the password and, when given, a device token in `device_token`. */
  signIn: (who?: Person, deviceToken?: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  /** `POST /auth/2fa` with a right TOTP code of a new step (the clock moves 30 s first). */
  secondStep: (who: Person, interim: string, extra?: Record<string, unknown>, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  /** A whole sign-in that asks to trust the device: its final JWT and the device token. */
  trust: (who?: Person) => Promise<{ jwt: string, deviceToken: string }>
  /** `GET /sessions` with a final JWT. */
  listed: (jwt: string) => Promise<{ sessions: Array<Record<string, unknown>>, devices: Array<Record<string, unknown>> }>
}

/**
 * Bob (id 2) and alice (id 1), both with TOTP on, on a memory store and a
 * settable clock this file holds.
 */
async function build (t: Test, settings: Partial<SettingsInput> = ON, plugin: Record<string, unknown> = {}, fastify?: FastifyServerOptions): Promise<Kit> {
  const clock = testClock()
  const store = new FlakyStore({ clock })
  const kit = await buildTwoFactorApp({ settings, plugin: { clock, store, ...plugin }, fastify })
  t.teardown(async () => { await kit.app.close() })
  const aliceId = (await kit.users.findByEmail(ALICE.email))?.ID as number
  const { secret: aliceSecret } = createTotpSecret('jwt-login test', ALICE.email)
  await kit.port.setTotpSecret(aliceId, aliceSecret)
  kit.port.enable(aliceId, 'totp')
  const secretOf = (who: Person): string => who.email === ALICE.email ? aliceSecret : kit.secret

  const signIn: Kit['signIn'] = async (who = BOB, deviceToken, headers = {}) => await kit.app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    payload: { email: who.email, password: who.password, ...(deviceToken === undefined ? {} : { device_token: deviceToken }) },
    headers: { 'user-agent': USER_AGENT, ...headers }
  })
  const secondStep: Kit['secondStep'] = async (who, interim, extra = {}, headers = {}) => {
    clock.advance(30_000)
    return await kit.submit({ JWT: interim, code: await totpAt(secretOf(who), clock.now), ...extra }, { 'user-agent': USER_AGENT, ...headers })
  }
  const trust: Kit['trust'] = async (who = BOB) => {
    const first = await signIn(who)
    if (first.json().data.two_factor_required !== true) throw new Error(`no challenge: ${first.body}`)
    const res = await secondStep(who, first.json().data.jwt, { remember_device: true })
    if (res.statusCode !== 200 || typeof res.json().data.device_token !== 'string') throw new Error(`no device token: ${res.body}`)
    return { jwt: res.json().data.jwt, deviceToken: res.json().data.device_token }
  }
  const listed: Kit['listed'] = async (jwt) => {
    const res = await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${jwt}` } })
    if (res.statusCode !== 200) throw new Error(`GET /sessions: ${res.body}`)
    return res.json().data
  }
  return { ...kit, clock, store, aliceId, signIn, secondStep, trust, listed }
}

/** The answer is a two-factor challenge as usual: an interim token, no final one, no device token. */
function challenged (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.statusCode, 200, `${what}: 200`)
  t.same(Object.keys(res.json().data).sort(), ['jwt', 'two_factor_required'], `${what}: a challenge, no device token`)
  t.equal(res.json().data.two_factor_required, true, what)
}

/** The answer skipped the second factor: a final JWT and the device's rotated token; answers that token. */
function skipped (t: Test, res: LightMyRequestResponse, previous: string, what: string): string {
  t.equal(res.statusCode, 200, `${what}: 200`)
  const data = res.json().data
  t.same(Object.keys(data).sort(), ['device_token', 'jwt'], `${what}: a final token and a device token, no challenge`)
  const next = String(data.device_token)
  t.match(next, DEVICE_TOKEN, `${what}: <device id>.<secret>`)
  t.not(next, previous, `${what}: rotated`)
  t.equal(next.slice(0, 22), previous.slice(0, 22), `${what}: the same device`)
  return next
}

const deviceIdOf = (token: string): string => token.slice(0, token.indexOf('.'))
const claimsOf = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8'))

/** Every event the plugin emits, in order, with its payload. */
function allEvents (kit: Kit): Array<[JwtLoginEventName, unknown]> {
  const seen: Array<[JwtLoginEventName, unknown]> = []
  const { events } = kit.app.jwtLogin
  const emit = events.emit.bind(events)
  events.emit = ((name: JwtLoginEventName, payload: never) => { seen.push([name, payload]); emit(name, payload) }) as typeof events.emit
  return seen
}

t.test('rememberDevice off (the default): remember_device gives no token, and a device token on /auth is ignored', async (t) => {
  let input: Partial<SettingsInput> = { ...KEYS, ...ON }
  const kit = await build(t, ON, { settings: async () => input })
  const { deviceToken } = await kit.trust()
  const before = await kit.store.get(devicesKey(kit.bobId))
  t.ok(before?.includes(deviceIdOf(deviceToken)), 'trusted while on')

  input = { ...KEYS, sessions: { enabled: true } }
  await kit.app.jwtLogin.reloadSettings()
  t.equal(kit.app.jwtLogin.settings.twoFactor.rememberDevice.enabled, false)
  const first = await kit.signIn(BOB, deviceToken)
  challenged(t, first, 'a trusted device token while off')
  const done = await kit.secondStep(BOB, first.json().data.jwt, { remember_device: true })
  t.equal(done.statusCode, 200)
  t.same(Object.keys(done.json().data), ['jwt'], 'remember_device: true gives no device token while off')
  t.equal(await kit.store.get(devicesKey(kit.bobId)), before, 'no device trusted, and the presented token was not spent')

  input = { ...KEYS, ...ON }
  await kit.app.jwtLogin.reloadSettings()
  skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'the same token once on again')

  // an app that never had it on writes nothing for remember_device
  const off = await build(t, { sessions: { enabled: true } })
  const res = await off.secondStep(BOB, (await off.signIn()).json().data.jwt, { remember_device: true })
  t.same(Object.keys(res.json().data), ['jwt'])
  t.equal(await off.store.get(devicesKey(off.bobId)), null, 'nothing stored')
})

t.test('a trusted device skips the second factor of its user\'s password sign-in; its token rotates on each use', async (t) => {
  const kit = await build(t)
  const events = allEvents(kit)
  const first = await kit.signIn()
  challenged(t, first, 'the first sign-in')
  // dated from the password step, as its session is (a cutoff between the two steps ends both); it expires a lifetime after the second step
  const trustedAt = kit.clock.now
  const secondAt = kit.clock.now + 30_000
  const done = await kit.secondStep(BOB, first.json().data.jwt, { remember_device: true })
  t.equal(done.statusCode, 200, done.body)
  t.same(Object.keys(done.json().data).sort(), ['device_token', 'jwt'], 'JSON true: the answer has device_token')
  const token = String(done.json().data.device_token)
  t.match(token, DEVICE_TOKEN)
  const deviceId = deviceIdOf(token)
  t.notOk((await kit.store.get(devicesKey(kit.bobId)))?.includes(token.slice(23)), 'the store holds no secret')

  const listedAfterTrust = await kit.listed(done.json().data.jwt)
  t.same(listedAfterTrust.devices, [{
    id: deviceId,
    trusted_at: new Date(trustedAt).toISOString(),
    expires_at: new Date(secondAt + 30 * DAY).toISOString(),
    ip: '127.0.0.1',
    user_agent: USER_AGENT
  }], 'listed in GET /sessions')
  t.same(listedAfterTrust.sessions.map(s => s.second_factor), ['totp'])

  kit.clock.advance(60_000)
  events.length = 0
  const used = await kit.signIn(BOB, token)
  const next = skipped(t, used, token, 'password and device token')
  t.equal(claimsOf(used.json().data.jwt).typ, 'access', 'a final token')
  const again = await kit.signIn(BOB, next)
  skipped(t, again, next, 'the rotated token')
  const jwt = again.json().data.jwt as string
  t.same(events.filter(([name]) => name.startsWith('two_factor.')), [], 'no challenge was issued')
  t.same(events.filter(([name]) => name === 'session.started').map(([, payload]) => payload), [used, again].map(res => ({
    userId: kit.bobId, sessionId: claimsOf(res.json().data.jwt).sid, method: 'password', provider: null, secondFactor: 'trusted_device', ip: '127.0.0.1'
  })), 'session.started says the device stood in')
  t.equal(events.filter(([name]) => name === 'login.succeeded').length, 2, 'each a sign-in')

  const { sessions, devices } = await kit.listed(jwt)
  t.same(sessions.map(s => [s.method, s.second_factor, s.current]), [
    ['password', 'totp', false],
    ['password', 'trusted_device', false],
    ['password', 'trusted_device', true]
  ], 'the sessions say the device stood in for the second factor')
  t.equal(devices.length, 1, 'still one device')
  t.equal(devices[0]?.id, deviceId)
  t.equal(devices[0]?.last_used_at, new Date(kit.clock.now).toISOString(), 'its last use')
  t.equal(devices[0]?.expires_at, new Date(secondAt + 30 * DAY).toISOString(), 'a use does not extend it')

  challenged(t, await kit.signIn(BOB, token), 'the first token, rotated away')
  challenged(t, await kit.signIn(BOB, next), 'the second token, rotated away')
})

t.test('remember_device form-encoded: "true" trusts the device, "false" does not', async (t) => {
  const kit = await build(t)
  const form = async (remember: string): Promise<LightMyRequestResponse> => {
    const interim = (await kit.signIn()).json().data.jwt as string
    kit.clock.advance(30_000)
    const code = await totpAt(kit.secret, kit.clock.now)
    return await kit.app.inject({
      method: 'POST',
      url: `${PREFIX}/auth/2fa`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ JWT: interim, code, remember_device: remember }).toString()
    })
  }
  const no = await form('false')
  t.equal(no.statusCode, 200, no.body)
  t.same(Object.keys(no.json().data), ['jwt'])
  const yes = await form('true')
  t.equal(yes.statusCode, 200, yes.body)
  const token = String(yes.json().data.device_token)
  t.match(token, DEVICE_TOKEN)
  skipped(t, await kit.signIn(BOB, token), token, 'the token of a form')
  t.equal((await kit.app.jwtLogin.devices(kit.bobId)).length, 1, 'one device')
})

t.test('refused, the second factor asked as usual: another user\'s token', async (t) => {
  const kit = await build(t)
  const bobs = await kit.trust(BOB)
  const stored = await kit.store.get(devicesKey(kit.bobId))
  challenged(t, await kit.signIn(ALICE, bobs.deviceToken), 'bob\'s token with alice\'s password')
  t.equal(await kit.store.get(devicesKey(kit.bobId)), stored, 'bob\'s device untouched')
  t.equal(await kit.store.get(devicesKey(kit.aliceId)), null, 'alice has none')
  skipped(t, await kit.signIn(BOB, bobs.deviceToken), bobs.deviceToken, 'still bob\'s')
})

t.test('refused after a password reset', async (t) => {
  const mailer = new MailBox()
  const kit = await build(t, { ...ON, resetPassword: { enabled: true, mail: { retryDelay: '10ms' } } }, { mailer })
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const { deviceToken } = await kit.trust()
  t.equal((await kit.app.inject({ method: 'POST', url: RESET_URL, payload: { email: BOB.email } })).statusCode, 200)
  const code = codeIn((await mailer.next()).text)
  const reset = await kit.app.inject({ method: 'PUT', url: RESET_URL, payload: { email: BOB.email, code, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200, reset.body)
  t.same(forgotten, [{ userId: kit.bobId, deviceId: null, reason: 'password_reset' }])
  t.equal(await kit.store.get(devicesKey(kit.bobId)), null, 'forgotten in the store')

  kit.clock.advance(1000)
  const bobNow = { ...BOB, password: NEW_PASSWORD }
  const first = await kit.signIn(bobNow, deviceToken)
  challenged(t, first, 'the new password with the old device token')
  const done = await kit.secondStep(bobNow, first.json().data.jwt)
  t.same((await kit.listed(done.json().data.jwt)).devices, [], 'none listed')
})

t.test('refused after a sign-out everywhere (DELETE /sessions)', async (t) => {
  const kit = await build(t)
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const { jwt, deviceToken } = await kit.trust()
  const res = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/sessions?keep_current=true`, headers: { authorization: `Bearer ${jwt}` } })
  t.equal(res.statusCode, 200, res.body)
  t.same(forgotten, [{ userId: kit.bobId, deviceId: null, reason: 'sign_out_everywhere' }], 'keep_current keeps the session, not the devices')
  t.same((await kit.listed(jwt)).devices, [])
  kit.clock.advance(1000)
  challenged(t, await kit.signIn(BOB, deviceToken), 'after DELETE /sessions?keep_current=true')

  // a device trusted again, then everything ended
  const again = await kit.trust()
  const all = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${again.jwt}` } })
  t.equal(all.statusCode, 200, all.body)
  kit.clock.advance(1000)
  challenged(t, await kit.signIn(BOB, again.deviceToken), 'after DELETE /sessions')
  t.same(await kit.app.jwtLogin.devices(kit.bobId), [])
})

t.test('refused after DELETE /devices/{id}; another user\'s device is 404 / 214 and stays', async (t) => {
  const kit = await build(t)
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const bobs = await kit.trust(BOB)
  const alices = await kit.trust(ALICE)
  const forget = async (jwt: string, id: string): Promise<LightMyRequestResponse> =>
    await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/devices/${id}`, headers: { authorization: `Bearer ${jwt}` } })

  const foreign = await forget(alices.jwt, deviceIdOf(bobs.deviceToken))
  t.same(errorOf(foreign), [404, 214], 'alice cannot forget bob\'s device')
  t.equal(foreign.json().data.message, 'No such trusted device.')
  t.equal((await kit.listed(bobs.jwt)).devices.length, 1, 'still listed')
  t.same(forgotten, [])
  const bobsNext = skipped(t, await kit.signIn(BOB, bobs.deviceToken), bobs.deviceToken, 'and still works')

  const own = await forget(bobs.jwt, deviceIdOf(bobs.deviceToken))
  t.equal(own.statusCode, 200, own.body)
  t.same(own.json(), { success: true, data: { message: 'The device is no longer trusted.' } })
  t.same(forgotten, [{ userId: kit.bobId, deviceId: deviceIdOf(bobs.deviceToken), reason: 'user' }])
  t.same((await kit.listed(bobs.jwt)).devices, [])
  challenged(t, await kit.signIn(BOB, bobsNext), 'the forgotten device')
  t.same(errorOf(await forget(bobs.jwt, deviceIdOf(bobs.deviceToken))), [404, 214], 'twice')
  t.equal((await kit.listed(alices.jwt)).devices.length, 1, 'alice\'s device stays')
  skipped(t, await kit.signIn(ALICE, alices.deviceToken), alices.deviceToken, 'and works')
})

t.test('refused after fastify.jwtLogin.forgetDevices(userId)', async (t) => {
  const kit = await build(t)
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const { deviceToken } = await kit.trust()
  const devices = await kit.app.jwtLogin.devices(kit.bobId)
  t.same(devices.map(d => [d.id, d.lastUsedAt, d.ip, d.userAgent]), [[deviceIdOf(deviceToken), null, '127.0.0.1', USER_AGENT]])
  await kit.app.jwtLogin.forgetDevices(kit.bobId)
  t.same(forgotten, [{ userId: kit.bobId, deviceId: null, reason: 'host' }])
  t.same(await kit.app.jwtLogin.devices(kit.bobId), [])
  challenged(t, await kit.signIn(BOB, deviceToken), 'after forgetDevices')
})

t.test('refused after a new TOTP secret is confirmed (jwtLogin.twoFactor.confirmTotp): the old secret\'s devices are forgotten first', async (t) => {
  const kit = await build(t)
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const { deviceToken } = await kit.trust()
  const enrollment = kit.app.jwtLogin.twoFactor
  if (enrollment === null) throw new Error('two-factor is on')
  const { secret } = enrollment.createTotpSecret(BOB.email)
  kit.clock.advance(30_000)
  t.equal(await enrollment.confirmTotp(kit.bobId, secret, await totpAt(secret, kit.clock.now) === '000000' ? '111111' : '000000'), false, 'a wrong first code')
  t.equal(forgotten.length, 0, 'forgets nothing')
  skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'the device still stands in')

  kit.store.failDevices = true
  kit.clock.advance(30_000)
  await t.rejects(enrollment.confirmTotp(kit.bobId, secret, await totpAt(secret, kit.clock.now)), 'the devices cannot be forgotten: the confirmation fails')
  t.equal(await kit.port.getTotpSecret(kit.bobId), kit.secret, 'and the new secret is not stored: nothing half changed')
  kit.store.failDevices = false

  kit.clock.advance(30_000)
  t.equal(await enrollment.confirmTotp(kit.bobId, secret, await totpAt(secret, kit.clock.now)), true, 'the next code confirms it')
  t.equal(await kit.port.getTotpSecret(kit.bobId), secret)
  t.same(forgotten, [{ userId: kit.bobId, deviceId: null, reason: 'second_factor_changed' }])
  t.same(await kit.app.jwtLogin.devices(kit.bobId), [])
})

t.test('refused once expired: a use does not extend the lifetime', async (t) => {
  const kit = await build(t, { ...ON, twoFactor: { rememberDevice: { enabled: true, lifetime: '2d' } } })
  const { jwt, deviceToken } = await kit.trust()
  const expiresAt = Date.parse(String((await kit.listed(jwt)).devices[0]?.expires_at))
  t.equal(expiresAt, kit.clock.now + 2 * DAY)
  kit.clock.now = expiresAt - 1
  const next = skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'a millisecond before it expires')
  kit.clock.now = expiresAt
  challenged(t, await kit.signIn(BOB, next), 'when it expires')
  t.same(await kit.app.jwtLogin.devices(kit.bobId), [], 'no longer listed')
})

t.test('refused: malformed and forged tokens; none of them spends the device', async (t) => {
  const kit = await build(t)
  const { deviceToken } = await kit.trust()
  const stored = await kit.store.get(devicesKey(kit.bobId))
  const [id, secret] = deviceToken.split('.') as [string, string]
  const flipped = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
  const forged = [
    'x', 'not a device token', id, `${id}.`, `.${secret}`, `${id}${secret}`, `${id}.${secret}x`, `${id}x.${secret}`,
    `${id}.${secret.slice(1)}`, ` ${deviceToken}`, `${id}..${secret}`, `${id}.${secret}.${secret}`, `${id}.${secret.replace(/./, '+')}`,
    `${id}.${flipped}`, `${'A'.repeat(22)}.${secret}`, deviceToken.toUpperCase() === deviceToken ? deviceToken.toLowerCase() : deviceToken.toUpperCase()
  ]
  for (const token of forged) challenged(t, await kit.signIn(BOB, token), JSON.stringify(token))
  t.equal(await kit.store.get(devicesKey(kit.bobId)), stored, 'the device untouched')
  const long = await kit.signIn(BOB, 'a'.repeat(4097))
  t.equal(long.statusCode, 400, 'a field over 4096 characters is a bad request')
  t.equal(long.json().success, false)
  skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'the real token still works')
})

t.test('a device never replaces the password: a wrong password with a valid device token is 401 / 48', async (t) => {
  const kit = await build(t)
  const failed: unknown[] = []
  kit.app.jwtLogin.events.on('login.failed', (e) => failed.push(e))
  const { deviceToken } = await kit.trust()
  const stored = await kit.store.get(devicesKey(kit.bobId))
  const wrong = await kit.signIn({ ...BOB, password: 'not bob\'s password' }, deviceToken)
  t.same(errorOf(wrong), [401, 48])
  t.equal(wrong.json().success, false)
  t.notOk(wrong.body.includes('device_token'))
  t.same(failed, [{ ip: '127.0.0.1', reason: 'wrong_credentials', errorCode: 48 }])
  t.equal(await kit.store.get(devicesKey(kit.bobId)), stored, 'the token is not spent')
  const missing = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: BOB.email, device_token: deviceToken } })
  t.equal(missing.statusCode, 400, 'no password at all')
  skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'then the right password')
})

t.test('maxPerUser: beyond it the oldest device is forgotten (device.forgotten, reason limit)', async (t) => {
  const kit = await build(t, { ...ON, twoFactor: { rememberDevice: { enabled: true, maxPerUser: 2 } } })
  const trusted: unknown[] = []
  const forgotten: unknown[] = []
  kit.app.jwtLogin.events.on('device.trusted', (e) => trusted.push(e))
  kit.app.jwtLogin.events.on('device.forgotten', (e) => forgotten.push(e))
  const first = await kit.trust()
  const second = await kit.trust()
  t.same(forgotten, [], 'two fit')
  const third = await kit.trust()
  const ids = [first, second, third].map(d => deviceIdOf(d.deviceToken))
  t.same(trusted, ids.map(deviceId => ({ userId: kit.bobId, deviceId, ip: '127.0.0.1' })))
  t.same(forgotten, [{ userId: kit.bobId, deviceId: ids[0], reason: 'limit' }])
  t.same((await kit.listed(third.jwt)).devices.map(d => d.id), [ids[1], ids[2]], 'the two newest listed')
  challenged(t, await kit.signIn(BOB, first.deviceToken), 'the oldest')
  skipped(t, await kit.signIn(BOB, second.deviceToken), second.deviceToken, 'the second')
  skipped(t, await kit.signIn(BOB, third.deviceToken), third.deviceToken, 'the third')
})

/** The Set-Cookie line of `name`, or `undefined`. */
function setCookie (res: LightMyRequestResponse, name: string): string | undefined {
  const header = res.headers['set-cookie']
  return (header === undefined ? [] : [header].flat()).find(line => line.startsWith(`${name}=`))
}
const cookieValue = (line: string | undefined): string | undefined => line?.slice(line.indexOf('=') + 1, line.indexOf(';'))

t.test('cookie mode: the device token goes into the __Host-jwt-login-device cookie, never the body', async (t) => {
  const kit = await build(t, { ...ON, refresh: { enabled: true, cookie: { enabled: true } }, twoFactor: { rememberDevice: { enabled: true, lifetime: '7d' } } })
  const browser = { origin: OWN_ORIGIN }
  const first = await kit.signIn(BOB, undefined, browser)
  challenged(t, first, 'the first sign-in')
  t.equal(first.headers['set-cookie'], undefined, 'a challenge sets no cookie')
  const done = await kit.secondStep(BOB, first.json().data.jwt, { remember_device: true }, browser)
  t.equal(done.statusCode, 200, done.body)
  t.same(Object.keys(done.json().data).sort(), ['csrf_token', 'jwt'], 'no device_token (nor refresh_token) in the body')
  const line = setCookie(done, DEVICE_COOKIE)
  const cookie = cookieValue(line) as string
  t.match(cookie, DEVICE_TOKEN, 'the device cookie holds the token')
  t.notOk(done.body.includes(cookie.slice(23)), 'its secret is not in the body')
  const attributes = (line as string).split('; ').slice(1)
  for (const attribute of ['HttpOnly', 'Secure', 'Path=/', 'SameSite=Strict', `Max-Age=${7 * 24 * 3600}`]) t.ok(attributes.includes(attribute), attribute)
  t.notOk(attributes.some(a => /^(domain|expires)=/i.test(a)), 'no Domain: __Host- forbids it')
  t.ok(setCookie(done, REFRESH_COOKIE), 'the refresh cookie too')

  const jar = (value: string): Record<string, string> => ({ ...browser, cookie: `theme=dark; ${DEVICE_COOKIE}=${value}` })
  const again = await kit.signIn(BOB, undefined, jar(cookie))
  t.equal(again.statusCode, 200, again.body)
  t.same(Object.keys(again.json().data).sort(), ['csrf_token', 'jwt'], 'the cookie skipped the second factor')
  const rotated = cookieValue(setCookie(again, DEVICE_COOKIE)) as string
  t.match(rotated, DEVICE_TOKEN, 'a rotated cookie')
  t.not(rotated, cookie)
  t.equal(deviceIdOf(rotated), deviceIdOf(cookie), 'the same device')
  t.equal(claimsOf(again.json().data.jwt).typ, 'access')
  t.same((await kit.listed(again.json().data.jwt)).sessions.map(s => s.second_factor), ['totp', 'trusted_device'])

  const stale = await kit.signIn(BOB, undefined, jar(cookie))
  challenged(t, stale, 'the cookie before rotation')
  t.equal(setCookie(stale, DEVICE_COOKIE), undefined, 'a challenge sets no device cookie')
  const foreign = await kit.signIn(BOB, undefined, { ...jar(rotated), origin: 'https://evil.example' })
  t.same(errorOf(foreign), [403, 208], 'a foreign page cannot use the cookie')
  t.ok(setCookie(await kit.signIn(BOB, undefined, jar(rotated)), DEVICE_COOKIE), 'which it did not spend')
})

t.test('outside cookie mode a device cookie is not read', async (t) => {
  const kit = await build(t)
  const { deviceToken } = await kit.trust()
  challenged(t, await kit.signIn(BOB, undefined, { cookie: `${DEVICE_COOKIE}=${deviceToken}` }), 'a cookie without cookie mode')
  skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'the field works')
})

t.test('the device token is in no log line and no event; a failure to trust is logged and the sign-in still answers', async (t) => {
  const lines: string[] = []
  const kit = await build(t, ON, {}, { logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  const events = allEvents(kit)
  const tokens: string[] = []
  const { jwt, deviceToken } = await kit.trust()
  tokens.push(deviceToken)
  tokens.push(skipped(t, await kit.signIn(BOB, deviceToken), deviceToken, 'used'))
  challenged(t, await kit.signIn(BOB, deviceToken), 'reused')
  t.same(errorOf(await kit.signIn({ ...BOB, password: 'wrong password' }, tokens[1])), [401, 48])
  const forget = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/devices/${deviceIdOf(deviceToken)}?JWT=${jwt}` })
  t.equal(forget.statusCode, 200, 'the JWT in the query')

  kit.store.failDevices = true
  const first = await kit.signIn()
  const done = await kit.secondStep(BOB, first.json().data.jwt, { remember_device: true })
  t.equal(done.statusCode, 200, 'the sign-in is not failed by the device')
  t.same(Object.keys(done.json().data), ['jwt'], 'answered without a device token')
  const warned = lines.map(line => JSON.parse(line)).filter(line => String(line.msg).includes('device could not be trusted'))
  t.equal(warned.length, 1, 'logged')
  t.equal(warned[0]?.level, 40, 'as a warning')
  t.equal(warned[0]?.userId, kit.bobId)
  t.equal(events.filter(([name]) => name === 'device.trusted').length, 1, 'no device.trusted for it')
  kit.store.failDevices = false

  t.ok(lines.length > 10, 'the requests were logged')
  const said = [...lines, JSON.stringify(events)].join('\n')
  t.ok(events.some(([name]) => name === 'device.forgotten'), 'the device events were seen')
  for (const token of tokens) {
    t.notOk(said.includes(token.slice(23)), 'no device secret in any line or event')
    t.notOk(said.includes(encodeURIComponent(token)), 'nor the token')
  }
})

t.test('lifetime over 90 days is refused at registration, naming the field', async (t) => {
  await t.rejects(buildTwoFactorApp({ settings: { twoFactor: { rememberDevice: { enabled: true, lifetime: '91d' } } } }), {
    name: 'JwtLoginSettingsError',
    path: 'twoFactor/rememberDevice/lifetime',
    message: /twoFactor\/rememberDevice\/lifetime: must be at most 90 days/
  })
  const longest = await build(t, { twoFactor: { rememberDevice: { enabled: true, lifetime: '90d' } } })
  t.equal(longest.app.jwtLogin.settings.twoFactor.rememberDevice.lifetimeMs, 90 * DAY, '90 days is allowed')

  let input: Partial<SettingsInput> = { ...KEYS, ...ON }
  const live = await build(t, ON, { settings: async () => input })
  input = { ...KEYS, twoFactor: { rememberDevice: { enabled: true, lifetime: '100d' } } }
  await t.rejects(live.app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'twoFactor/rememberDevice/lifetime' }, 'a reload too')
  t.equal(live.app.jwtLogin.settings.twoFactor.rememberDevice.lifetimeMs, 30 * DAY, 'the last good settings stay')
})

t.test('two concurrent sign-ins with one device token: exactly one skips the second factor', async (t) => {
  const kit = await build(t)
  let { deviceToken } = await kit.trust()
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all([kit.signIn(BOB, deviceToken), kit.signIn(BOB, deviceToken)])
    t.same(answers.map(res => res.statusCode), [200, 200])
    const winners = answers.filter(res => res.json().data.device_token !== undefined)
    const losers = answers.filter(res => res.json().data.two_factor_required === true)
    t.equal(winners.length, 1, `round ${round}: one skipped`)
    t.equal(losers.length, 1, `round ${round}: the other was challenged`)
    deviceToken = skipped(t, winners[0] as LightMyRequestResponse, deviceToken, `round ${round}`)
  }
  t.equal((await kit.app.jwtLogin.devices(kit.bobId)).length, 1)
})

t.test('the gate stands in only for a password sign-in that presented a token', async (t) => {
  const kit = await build(t)
  const { deviceToken } = await kit.trust()
  const stored = await kit.store.get(devicesKey(kit.bobId))
  const settings = kit.app.jwtLogin.settings as never
  const tokens = { devices: { use: async () => { throw new Error('not asked') } } } as never
  const call = { settings, ip: '127.0.0.1', startedAt: kit.clock.now, userAgent: undefined, deviceToken }
  t.equal(await deviceStandsIn({ tokens }, call, kit.bobId, 'provider'), null, 'a provider sign-in')
  t.equal(await deviceStandsIn({ tokens }, { ...call, deviceToken: undefined }, kit.bobId, 'password'), null, 'no token')
  t.equal(await kit.store.get(devicesKey(kit.bobId)), stored)
})
