// Step-up (`/auth/step-up`), the `auth_time` and `amr` of every kind of sign-in and refresh, and `authenticateWith({ maxAge })` on a host route.
import type { FastifyInstance, FastifyRequest, LightMyRequestResponse } from 'fastify'
import { randomNonce } from 'openid-client'
import t, { type Test } from 'tap'
import { MemoryStore, type JwtLoginEventMap, type JwtLoginEventName, type JwtLoginOptions, type SettingsInput, type StateStore } from '../../lib/index.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { ALICE, buildHost, testClock } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { MailBox } from '../helpers/mail-box.js'
import { buildOAuthApp, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { authenticator, buildPasskeyApp, claimsOf, PREFIX, type PasskeyApp } from '../helpers/passkeys.js'
import { BOB, buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

const MINUTE = 60_000
const SESSIONS_ON = { sessions: { enabled: true } } satisfies Partial<SettingsInput>

/** The passkey test host (session routes on), closed when the test ends. */
async function build (t: Test, options: { settings?: Partial<SettingsInput>, plugin?: Partial<JwtLoginOptions>, store?: StateStore } = {}): Promise<PasskeyApp> {
  const kit = await buildPasskeyApp({ settings: { ...SESSIONS_ON, ...options.settings }, plugin: options.plugin, store: options.store })
  t.teardown(async () => { await kit.app.close() })
  return kit
}

/** Collects the payloads of one audit event. */
function collect<E extends JwtLoginEventName> (app: FastifyInstance, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  app.jwtLogin.events.on(event, (payload) => { seen.push(payload) })
  return seen
}

/** `POST /auth/step-up` with `token` as Bearer. */
async function stepUp (kit: PasskeyApp, token: string, payload: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return await kit.post('/auth/step-up', payload, token)
}

/** The stepped-up token of a step-up that must pass. */
async function steppedUp (kit: PasskeyApp, token: string, payload: Record<string, unknown>): Promise<string> {
  const res = await stepUp(kit, token, payload)
  if (res.statusCode !== 200) throw new Error(`step-up: ${res.body}`)
  return res.json().data.jwt
}

/** A right TOTP code of bob's, of a new step (the clock moves 30 s first, so no step is used twice). */
async function freshTotp (kit: PasskeyApp): Promise<string> {
  kit.clock.advance(30_000)
  return await totpAt(kit.bobSecret, kit.clock.now)
}

/** Bob's interim token of a new challenge. */
async function interimOf (kit: PasskeyApp): Promise<string> {
  const res = await kit.login(BOB)
  if (res.json().data?.two_factor_required !== true) throw new Error(`no challenge: ${res.body}`)
  return res.json().data.jwt
}

/** Bob's final token by password and TOTP. */
async function bobToken (kit: PasskeyApp): Promise<string> {
  const res = await kit.post('/auth/2fa', { code: await freshTotp(kit) }, await interimOf(kit))
  if (res.statusCode !== 200) throw new Error(`bob's second step: ${res.body}`)
  return res.json().data.jwt
}

/** The time in a token's `auth_time`: seconds. */
const seconds = (ms: number): number => Math.floor(ms / 1000)

/** The ids `GET /sessions` lists for the token's user. */
async function sessionIds (kit: PasskeyApp, token: string): Promise<string[]> {
  const res = await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${token}` } })
  if (res.statusCode !== 200) throw new Error(`GET /sessions: ${res.body}`)
  return res.json().data.sessions.map((session: { id: string }) => session.id)
}

t.test('step-up with the password: the same session, auth_time now, amr pwd, an event, and no new session', async (t) => {
  const kit = await build(t)
  const stepped = collect(kit.app, 'session.stepped_up')
  const token = await kit.token()
  await kit.token()
  const listed = await sessionIds(kit, token)
  kit.clock.advance(7 * MINUTE)

  const res = await stepUp(kit, token, { password: ALICE.password })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json().data), ['jwt'], 'an access token only: no refresh token')
  const before = claimsOf(token)
  const after = claimsOf(res.json().data.jwt)
  t.equal(after.sid, before.sid, 'the same session')
  t.equal(after.auth_time, seconds(kit.clock.now), 'auth_time: now')
  t.equal(before.auth_time, seconds(kit.clock.now - 7 * MINUTE), 'the first token said the sign-in')
  t.same(after.amr, ['pwd'])
  t.same(stepped, [{ userId: kit.aliceId, sessionId: before.sid, method: 'password', ip: '127.0.0.1' }])
  t.same(await sessionIds(kit, res.json().data.jwt), listed, 'GET /sessions lists the same sessions')

  const byField = await kit.post('/auth/step-up', { JWT: token, password: ALICE.password })
  t.equal(byField.statusCode, 200, 'the token may travel in the JWT field')

  t.equal((await kit.post('/auth/revoke', { JWT: res.json().data.jwt })).statusCode, 200, 'signing the stepped-up token out')
  t.same(errorOf(await kit.post('/auth/validate', { JWT: token })), [401, 55], 'ends the session of the first token too')
  t.same(errorOf(await stepUp(kit, token, { password: ALICE.password })), [401, 55], 'which no step-up revives')
})

t.test('a wrong password is 401 / 48, counted with the sign-ins on limits.loginPerAccount', async (t) => {
  const kit = await build(t, { settings: { limits: { loginPerAccount: { max: 3, window: '15m' } } } })
  const token = await kit.token()
  for (let i = 1; i <= 3; i++) t.same(errorOf(await stepUp(kit, token, { password: 'not the password' })), [401, 48], `wrong password ${i}`)
  const locked = await stepUp(kit, token, { password: ALICE.password })
  t.same(errorOf(locked), [429, 200], 'then even the right one waits')
  t.ok(Number(locked.headers['retry-after']) > 0, 'with Retry-After')
  t.same(errorOf(await kit.login()), [429, 200], 'the same count as the password sign-in')
})

t.test('a right password clears the count', async (t) => {
  const kit = await build(t, { settings: { limits: { loginPerAccount: { max: 2, window: '15m' } } } })
  const token = await kit.token()
  t.same(errorOf(await stepUp(kit, token, { password: 'not the password' })), [401, 48])
  t.equal((await stepUp(kit, token, { password: ALICE.password })).statusCode, 200)
  t.same(errorOf(await stepUp(kit, token, { password: 'not the password' })), [401, 48], 'a wrong one counts from zero again')
  t.equal((await stepUp(kit, token, { password: ALICE.password })).statusCode, 200)
})

t.test('step-up with a TOTP code: amr otp; the same code twice, or a wrong one, is 401 / 109', async (t) => {
  const kit = await build(t)
  const stepped = collect(kit.app, 'session.stepped_up')
  const token = await bobToken(kit)
  const code = await freshTotp(kit)
  const after = claimsOf(await steppedUp(kit, token, { code }))
  t.same(after.amr, ['otp'])
  t.equal(after.auth_time, seconds(kit.clock.now))
  t.same(stepped.map(event => event.method), ['totp'])
  t.same(errorOf(await stepUp(kit, token, { code })), [401, 109], 'a replayed code')
  const wrong = code === '000000' ? '111111' : '000000'
  t.same(errorOf(await stepUp(kit, token, { code: wrong })), [401, 109], 'a wrong code')
})

t.test('step-up with a backup code: amr otp, spent once', async (t) => {
  const kit = await build(t)
  const stepped = collect(kit.app, 'session.stepped_up')
  const token = await bobToken(kit)
  const [code] = await (kit.app.jwtLogin.twoFactor?.regenerateBackupCodes(kit.bobId) ?? [])
  t.same(claimsOf(await steppedUp(kit, token, { code })).amr, ['otp'])
  t.same(stepped.map(event => event.method), ['backup_codes'])
  t.same(errorOf(await stepUp(kit, token, { code })), [401, 109], 'spent')
  t.same(errorOf(await stepUp(kit, token, { code: 'no such code' })), [401, 109], 'a string that is no backup code')
})

t.test('step-up with a passkey: hwk, user and mfa when verified, hwk alone when not', async (t) => {
  const kit = await build(t)
  const stepped = collect(kit.app, 'session.stepped_up')
  const token = await kit.token()
  const device = authenticator()
  t.equal((await kit.enrol(token, device)).statusCode, 200)
  kit.clock.advance(MINUTE)

  const options = await kit.options('/auth/step-up/options', token)
  t.same(options.allowCredentials?.map(credential => credential.id), device.credentials, 'the options name alice\'s passkeys')
  const verified = device.authenticate(options)
  const after = claimsOf(await steppedUp(kit, token, { passkey: verified }))
  t.same(after.amr, ['hwk', 'user', 'mfa'], 'a verified user: two factors')
  t.equal(after.auth_time, seconds(kit.clock.now))
  t.equal(after.sid, claimsOf(token).sid)
  t.same(stepped.map(event => event.method), ['passkey'])
  t.equal((await kit.passkeys.findById(device.credentials[0] as string))?.lastUsedAt?.getTime(), kit.clock.now, 'the use is recorded')
  t.same(errorOf(await stepUp(kit, token, { passkey: verified })), [401, 216], 'the same assertion again: its challenge was spent')

  const unverified = await kit.assert('/auth/step-up/options', token, device, { userVerified: false })
  t.same(claimsOf(await steppedUp(kit, token, { passkey: unverified })).amr, ['hwk'], 'without user verification: one factor')
})

t.test('a step-up passkey challenge is good for its own session only', async (t) => {
  const kit = await build(t)
  const tokenA = await kit.token()
  const device = authenticator()
  t.equal((await kit.enrol(tokenA, device)).statusCode, 200)
  const tokenB = await kit.token()
  const forA = await kit.assert('/auth/step-up/options', tokenA, device)
  t.same(errorOf(await stepUp(kit, tokenB, { passkey: forA })), [401, 216], 'A\'s options answered in session B')
  const forSignIn = await kit.assert('/auth/passkey/options', undefined, device)
  t.same(errorOf(await stepUp(kit, tokenA, { passkey: forSignIn })), [401, 216], 'a sign-in challenge is no step-up challenge')
})

t.test('step-up needs one factor (or the password and a code), a final token, and the module of its factor', async (t) => {
  t.test('none, a passkey with anything else, or all three', async (t) => {
    const kit = await build(t)
    const token = await kit.token()
    const passkey = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' }, clientExtensionResults: {} }
    t.same(errorOf(await stepUp(kit, token, {})), [400, 225], 'none')
    t.same(errorOf(await stepUp(kit, token, { password: ALICE.password, passkey })), [400, 225], 'a passkey and a password')
    t.same(errorOf(await stepUp(kit, token, { code: '123456', passkey })), [400, 225], 'a passkey and a code')
    t.same(errorOf(await stepUp(kit, token, { password: ALICE.password, code: '123456', passkey })), [400, 225], 'all three')
    t.same(errorOf(await stepUp(kit, token, { password: '' })), [400, 225], 'an empty password is none')
  })
  t.test('the password and a code: two factors, each checked on its own limit', async (t) => {
    const kit = await build(t)
    const token = await bobToken(kit)
    kit.clock.advance(MINUTE)
    t.same(errorOf(await stepUp(kit, token, { password: 'wrong password', code: await freshTotp(kit) })), [401, 48], 'a wrong password: the code is not looked at')
    const code = await freshTotp(kit)
    t.same(errorOf(await stepUp(kit, token, { password: BOB.password, code: code === '000000' ? '111111' : '000000' })), [401, 109], 'a wrong code')
    const stepped = await steppedUp(kit, token, { password: BOB.password, code })
    t.same(claimsOf(stepped).amr, ['pwd', 'otp', 'mfa'])
    t.equal(claimsOf(stepped).sid, claimsOf(token).sid)
  })
  t.test('an interim token is refused', async (t) => {
    const kit = await build(t)
    t.same(errorOf(await stepUp(kit, await interimOf(kit), { password: BOB.password })), [401, 110])
  })
  t.test('no token', async (t) => {
    const kit = await build(t)
    t.same(errorOf(await kit.post('/auth/step-up', { password: ALICE.password })), [400, 53])
  })
  t.test('a code without the twoFactor option', async (t) => {
    const kit = await build(t, { plugin: { twoFactor: undefined } })
    t.same(errorOf(await stepUp(kit, await kit.token(), { code: '123456' })), [403, 105])
  })
  t.test('a code with twoFactor.enabled false', async (t) => {
    const kit = await build(t, { settings: { twoFactor: { enabled: false } } })
    t.same(errorOf(await stepUp(kit, await kit.token(), { code: '123456' })), [403, 105])
  })
  t.test('a passkey with passkeys off', async (t) => {
    const kit = await build(t)
    const token = await kit.token()
    const device = authenticator()
    t.equal((await kit.enrol(token, device)).statusCode, 200)
    const assertion = await kit.assert('/auth/step-up/options', token, device)
    const off = await build(t, { settings: { passkeys: { enabled: false } } })
    const offToken = await off.token()
    t.same(errorOf(await stepUp(off, offToken, { passkey: assertion })), [403, 215], 'step-up')
    t.same(errorOf(await off.post('/auth/step-up/options', {}, offToken)), [403, 215], 'its options')
    t.equal((await stepUp(off, offToken, { password: ALICE.password })).statusCode, 200, 'the password still steps up')
  })
  t.test('/auth/step-up/options without a passkey enrolled', async (t) => {
    const kit = await build(t)
    t.same(errorOf(await kit.post('/auth/step-up/options', {}, await kit.token())), [404, 219])
  })
})

t.test('a failing port: 503 / 201, and a step-up that was not checked is not counted', async (t) => {
  t.test('the TOTP secret cannot be read', async (t) => {
    const kit = await build(t, { settings: { twoFactor: { perAccount: { max: 1, window: '15m' } } } })
    const token = await bobToken(kit)
    const read = kit.twoFactor.getTotpSecret.bind(kit.twoFactor)
    kit.twoFactor.getTotpSecret = async () => { throw new Error('injected: the two-factor table is down') }
    t.same(errorOf(await stepUp(kit, token, { code: await freshTotp(kit) })), [503, 201])
    kit.twoFactor.getTotpSecret = read
    t.equal((await stepUp(kit, token, { code: await freshTotp(kit) })).statusCode, 200, 'the one attempt allowed was given back')
  })
  t.test('the passkey\'s use cannot be recorded', async (t) => {
    const kit = await build(t)
    const token = await kit.token()
    const device = authenticator()
    t.equal((await kit.enrol(token, device)).statusCode, 200)
    const recordUse = kit.passkeys.recordUse.bind(kit.passkeys)
    kit.passkeys.recordUse = async () => { throw new Error('injected: the passkey table is down') }
    const passkey = await kit.assert('/auth/step-up/options', token, device)
    t.same(errorOf(await stepUp(kit, token, { passkey })), [503, 201])
    kit.passkeys.recordUse = recordUse
    t.equal((await stepUp(kit, token, { passkey })).statusCode, 200, 'nothing was spent: the same answer steps up once the port is back')
    t.same(errorOf(await stepUp(kit, token, { passkey })), [401, 216], 'and only once')
  })
})

t.test('auth_time and amr of each kind of sign-in', async (t) => {
  t.test('a password: pwd, at the sign-in', async (t) => {
    const kit = await build(t)
    const claims = claimsOf(await kit.token())
    t.same(claims.amr, ['pwd'])
    t.equal(claims.auth_time, seconds(kit.clock.now))
  })
  t.test('a password and TOTP: pwd, otp, mfa, at the password step', async (t) => {
    const kit = await build(t)
    const interim = await interimOf(kit)
    const passwordAt = kit.clock.now
    const res = await kit.post('/auth/2fa', { code: await freshTotp(kit) }, interim)
    const claims = claimsOf(res.json().data.jwt)
    t.same(claims.amr, ['pwd', 'otp', 'mfa'])
    t.equal(claims.auth_time, seconds(passwordAt), 'the sign-in started with the password')
  })
  t.test('a password and an emailed code: pwd, otp, mfa', async (t) => {
    const mailer = new MailBox()
    const { app, login, submit } = await buildTwoFactorApp({ method: 'email', mailer })
    t.teardown(async () => { await app.close() })
    const interim = (await login()).json().data.jwt
    const code = /\b(\d{6})\b/.exec((await mailer.next()).text)?.[1]
    const res = await submit({ JWT: interim, code })
    t.equal(res.statusCode, 200)
    t.same(claimsOf(res.json().data.jwt).amr, ['pwd', 'otp', 'mfa'])
  })
  t.test('a trusted device stands in for the second factor but is none: pwd alone', async (t) => {
    const kit = await build(t, { settings: { twoFactor: { rememberDevice: { enabled: true } } } })
    const trusted = await kit.post('/auth/2fa', { code: await freshTotp(kit), remember_device: true }, await interimOf(kit))
    const deviceToken = trusted.json().data.device_token
    t.type(deviceToken, 'string', 'the device is trusted')
    const res = await kit.post('/auth', { email: BOB.email, password: BOB.password, device_token: deviceToken })
    t.equal(res.json().data.two_factor_required, undefined, 'no challenge')
    t.same(claimsOf(res.json().data.jwt).amr, ['pwd'])
  })
  t.test('a provider: fed', async (t) => {
    const idp = await startIdp()
    t.teardown(async () => { await idp.close() })
    const { app } = await buildOAuthApp(providers(idp))
    t.teardown(async () => { await app.close() })
    const nonce = randomNonce()
    const started = Date.now()
    const res = await postToken(app, { provider: 'idp1', id_token: await idp.idToken({ account: ACCOUNTS.alice, nonce }), nonce })
    t.equal(res.statusCode, 200)
    const claims = claimsOf(res.json().data.jwt)
    t.same(claims.amr, ['fed'])
    t.ok(Number(claims.auth_time) >= seconds(started) && Number(claims.auth_time) <= seconds(Date.now()), 'auth_time: the sign-in')
  })
})

t.test('a refresh keeps the sign-in\'s amr and auth_time, even after a step-up and when the clock moved', async (t) => {
  const kit = await build(t, { settings: { refresh: { enabled: true } } })
  const signedInAt = kit.clock.now
  const first = (await kit.login()).json().data
  kit.clock.advance(5 * MINUTE)
  t.same(claimsOf(await steppedUp(kit, first.jwt, { password: ALICE.password })).amr, ['pwd'])
  kit.clock.advance(20 * MINUTE)
  const refreshed = await kit.post('/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(refreshed.statusCode, 200)
  const claims = claimsOf(refreshed.json().data.jwt)
  t.same(claims.amr, ['pwd'])
  t.equal(claims.auth_time, seconds(signedInAt), 'the sign-in\'s start, not the step-up\'s')
  t.equal(claims.sid, claimsOf(first.jwt).sid)

  const bobFirst = (await kit.post('/auth/2fa', { code: await freshTotp(kit) }, await interimOf(kit))).json().data
  kit.clock.advance(20 * MINUTE)
  const bobRefreshed = claimsOf((await kit.post('/auth/refresh', { refresh_token: bobFirst.refresh_token })).json().data.jwt)
  t.same(bobRefreshed.amr, ['pwd', 'otp', 'mfa'], 'two factors stay two factors')
})

t.test('a refresh family stored before amr was kept: its tokens say neither auth_time nor amr, and are never recent', async (t) => {
  // the store on a clock of its own that starts where the host's does (neither moves here)
  const store = new MemoryStore({ clock: testClock() })
  const kit = await build(t, { settings: { refresh: { enabled: true } }, store })
  const first = (await kit.login()).json().data
  const key = stateKeys.session(String(claimsOf(first.jwt).sid))
  const record = JSON.parse(await store.get(key) as string)
  t.ok(Array.isArray(record.m), 'a family of now keeps m')
  delete record.m
  await store.set(key, JSON.stringify(record), 14 * 24 * 60 * MINUTE)

  const res = await kit.post('/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(res.statusCode, 200)
  const claims = claimsOf(res.json().data.jwt)
  t.equal(claims.amr, undefined)
  t.equal(claims.auth_time, undefined)
  t.same(errorOf(await kit.post('/passkeys/register/options', {}, res.json().data.jwt)), [401, 220], 'it cannot enrol a passkey without a step-up')
})

t.test('authenticateWith({ amr: [\'mfa\'] }): a password and TOTP sign-in passes, and so does a step-up with both', async (t) => {
  const { app, clock, secret } = await buildTwoFactorApp({
    beforeReady: (app) => { app.get('/two-factors', { preHandler: app.jwtLogin.authenticateWith({ maxAge: '5m', amr: ['mfa'] }) }, async () => ({ ok: true })) }
  })
  t.teardown(async () => { await app.close() })
  const interim = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: BOB.email, password: BOB.password } })).json().data.jwt as string
  const final = (await app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: interim, code: await totpAt(secret, clock()) } })).json().data.jwt as string
  const get = async (token: string): Promise<LightMyRequestResponse> => await app.inject({ method: 'GET', url: '/two-factors', headers: { authorization: `Bearer ${token}` } })
  t.equal((await get(final)).statusCode, 200, 'two factors, just now')
  clock.advance(6 * MINUTE)
  t.same(errorOf(await get(final)), [401, 220], 'too old')
  const stepUpWith = async (payload: Record<string, string>): Promise<string> =>
    (await app.inject({ method: 'POST', url: `${PREFIX}/auth/step-up`, payload, headers: { authorization: `Bearer ${final}` } })).json().data.jwt as string
  t.same(errorOf(await get(await stepUpWith({ password: BOB.password }))), [401, 220], 'a step-up with the password alone is recent, but one factor')
  t.equal((await get(await stepUpWith({ password: BOB.password, code: await totpAt(secret, clock()) }))).statusCode, 200, 'with the password and the code')
})

t.test('authenticateWith({ maxAge }) on a host route', async (t) => {
  const clock = testClock()
  const { app, users } = await buildHost((app) => {
    const reply = async (request: FastifyRequest): Promise<{ user: number | undefined }> => ({ user: request.jwtLogin?.user.ID })
    app.get('/recent', { preHandler: app.jwtLogin.authenticateWith({ maxAge: '5m' }) }, reply)
    app.get('/recent-seconds', { preHandler: app.jwtLogin.authenticateWith({ maxAge: 300 }) }, reply)
    app.get('/any', { preHandler: app.jwtLogin.authenticateWith({}) }, reply)
    app.get('/two-factors', { preHandler: app.jwtLogin.authenticateWith({ maxAge: '5m', amr: ['mfa'] }) }, reply)
    app.get('/plain', { preHandler: app.jwtLogin.authenticate }, reply)
  }, {}, { clock })
  t.teardown(async () => { await app.close() })
  const get = async (url: string, token?: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'GET', url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  const token = login.json().data.jwt as string

  t.test('a fresh token passes; one older than maxAge is 401 / 220 with insufficient_user_authentication', async (t) => {
    t.equal((await get('/recent', token)).statusCode, 200, 'fresh')
    t.same((await get('/recent', token)).json(), { user: 1 }, 'request.jwtLogin is set')
    clock.advance(5 * MINUTE)
    t.equal((await get('/recent', token)).statusCode, 200, 'exactly maxAge old')
    clock.advance(MINUTE)
    const old = await get('/recent', token)
    t.same(errorOf(old), [401, 220], 'six minutes old')
    t.equal(old.headers['www-authenticate'], 'Bearer error="insufficient_user_authentication"')
    t.same(errorOf(await get('/recent-seconds', token)), [401, 220], 'maxAge in seconds alike')
    t.equal((await get('/any', token)).statusCode, 200, 'no maxAge: any age')

    const stepped = await app.inject({ method: 'POST', url: `${PREFIX}/auth/step-up`, payload: { password: ALICE.password }, headers: { authorization: `Bearer ${token}` } })
    t.equal((await get('/recent', stepped.json().data.jwt)).statusCode, 200, 'after a step-up')
    t.equal((await get('/recent-seconds', stepped.json().data.jwt)).statusCode, 200)
  })

  t.test('amr: the token must carry each value listed, or it is 401 / 220 too', async (t) => {
    const fresh = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).json().data.jwt as string
    const refused = await get('/two-factors', fresh)
    t.same(errorOf(refused), [401, 220], 'a fresh password sign-in is one factor')
    t.equal(refused.headers['www-authenticate'], 'Bearer error="insufficient_user_authentication"')
    t.throws(() => app.jwtLogin.authenticateWith({ amr: 'mfa' as unknown as string[] }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/amr' }, 'a string is no list')
    t.throws(() => app.jwtLogin.authenticateWith({ amr: [''] }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/amr' }, 'nor an empty value')
  })

  t.test('a token from sign() says no auth_time: never recent', async (t) => {
    const alice = await users.findByEmail(ALICE.email)
    if (alice === null) throw new Error('alice is seeded')
    const signed = app.jwtLogin.sign(users.toPublicUser(alice))
    t.same(errorOf(await get('/recent', signed)), [401, 220])
    t.equal((await get('/any', signed)).statusCode, 200)
  })

  t.test('authenticateWith({}) answers as authenticate', async (t) => {
    for (const [what, token] of [['no token', undefined], ['not a JWT', 'nope'], ['a good one', login.json().data.jwt]] as const) {
      const [any, plain] = [await get('/any', token), await get('/plain', token)]
      t.same([any.statusCode, any.body, any.headers['www-authenticate']], [plain.statusCode, plain.body, plain.headers['www-authenticate']], what)
    }
  })

  t.test('a maxAge that is no duration is refused where authenticateWith is called', async (t) => {
    t.throws(() => app.jwtLogin.authenticateWith({ maxAge: 'soon' }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/maxAge' })
    t.throws(() => app.jwtLogin.authenticateWith({ maxAge: '0s' }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/maxAge' }, 'nor a zero string')
  })

  t.test('a maxAge that is no positive number is refused at the call too', async (t) => {
    t.throws(() => app.jwtLogin.authenticateWith({ maxAge: -5 }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/maxAge' }, 'a negative number')
    t.throws(() => app.jwtLogin.authenticateWith({ maxAge: NaN }), { name: 'JwtLoginSettingsError', path: 'authenticateWith/maxAge' }, 'NaN')
  })
})

/** A memory store whose passkey challenges can vanish between their read and their consume (they expired meanwhile). */
class ExpiringChallenges extends MemoryStore {
  expireOnConsume = false

  override async consume (key: string): Promise<string | null> {
    if (this.expireOnConsume && key.startsWith('passkey:challenge:')) {
      await this.delete(key)
      return null
    }
    return await super.consume(key)
  }
}

t.test('a step-up whose passkey challenge is gone when it is spent is refused (401 / 216), and copies in parallel step up once', async (t) => {
  const store = new ExpiringChallenges()
  const kit = await build(t, { store })
  const token = await kit.token()
  const device = authenticator()
  t.equal((await kit.enrol(token, device)).statusCode, 200)
  store.expireOnConsume = true
  t.same(errorOf(await stepUp(kit, token, { passkey: await kit.assert('/auth/step-up/options', token, device) })), [401, 216], 'the challenge expired between its check and its spend')
  store.expireOnConsume = false
  const passkey = await kit.assert('/auth/step-up/options', token, device)
  const answers = await Promise.all(Array.from({ length: 5 }, async () => await stepUp(kit, token, { passkey })))
  t.equal(answers.filter(res => res.statusCode === 200).length, 1, 'one copy steps up')
  t.same(answers.filter(res => res.statusCode !== 200).map(errorOf), Array.from({ length: 4 }, () => [401, 216]))
})
