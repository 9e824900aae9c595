// Passwordless sign-in with a passkey through the routes: its tokens and sessions, user verification as a second factor, every refusal, the signature counter, the auth code and cookie mode.
import { generateKeyPairSync } from 'node:crypto'
import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { REFRESH_COOKIE } from '../../lib/http/browser.js'
import type { JwtLoginEventMap, JwtLoginEventName, SettingsInput, StoredPasskey } from '../../lib/index.js'
import { userHandleOf } from '../../lib/webauthn/ceremonies.js'
import { ALICE } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp, claimsOf, PREFIX, type PasskeyApp } from '../helpers/passkeys.js'
import { BOB, totpAt } from '../helpers/two-factor.js'
import type { SoftAuthenticator } from '../helpers/authenticator.js'

const MINUTE = 60_000
/** One TOTP step: a second code of bob's needs the clock moved on by this much. */
const TOTP_STEP = 30_000
const AUTH_CODE = 'gate-code-1'
const FULL = { refresh: { enabled: true }, sessions: { enabled: true } } satisfies Partial<SettingsInput>
const SIGN_IN_OPTIONS = '/auth/passkey/options'

t.test('a passkey verified with UV signs alice and bob (TOTP on) in on two factors, no challenge', async (t) => {
  const kit = await buildPasskeyApp({ settings: FULL })
  t.teardown(() => kit.app.close())
  const started = collect(kit.app, 'session.started')
  const succeeded = collect(kit.app, 'login.succeeded')
  for (const who of [{ name: 'alice', id: kit.aliceId, token: await kit.token() }, { name: 'bob', id: kit.bobId, token: await bobToken(kit) }]) {
    const device = authenticator()
    await enrolled(kit, who.token, device)
    kit.clock.advance(MINUTE)
    const res = await kit.signIn(device)
    t.equal(res.statusCode, 200, `${who.name}: ${res.body}`)
    const data = res.json().data
    t.strictSame(Object.keys(data).sort(), ['jwt', 'refresh_token'], `${who.name}: a final token and a refresh token, no challenge`)
    const claims = claimsOf(data.jwt)
    t.match(claims, { sub: String(who.id), typ: 'access', amr: ['hwk', 'user', 'mfa'], auth_time: seconds(kit.clock.now) }, `${who.name}: hwk, user, mfa; auth_time now`)
    t.strictSame(claims.amr, ['hwk', 'user', 'mfa'])
    t.strictSame(started.filter(event => event.sessionId === claims.sid),
      [{ userId: who.id, sessionId: claims.sid, method: 'passkey', provider: null, secondFactor: 'user_verification', ip: '127.0.0.1' }], `${who.name}: session.started`)
    t.strictSame(succeeded.filter(event => event.method === 'passkey' && event.userId === who.id), [{ userId: who.id, ip: '127.0.0.1', method: 'passkey' }], `${who.name}: login.succeeded`)

    const sessions = await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${data.jwt as string}` } })
    t.equal(sessions.statusCode, 200, sessions.body)
    t.match(sessions.json().data.sessions.find((session: { current: boolean }) => session.current), { id: claims.sid, method: 'passkey', second_factor: 'user_verification' },
      `${who.name}: the session list names the passkey and user verification`)

    kit.clock.advance(MINUTE)
    const refreshed = await kit.post('/auth/refresh', { refresh_token: data.refresh_token })
    t.equal(refreshed.statusCode, 200, refreshed.body)
    t.match(claimsOf(refreshed.json().data.jwt), { sid: claims.sid, auth_time: claims.auth_time, amr: ['hwk', 'user', 'mfa'] }, `${who.name}: a refresh keeps the sign-in's auth_time and amr`)
  }
})

t.test('a passkey without UV: one factor for alice; bob gets the interim token and completes with TOTP', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const started = collect(kit.app, 'session.started')
  const succeeded = collect(kit.app, 'login.succeeded')
  const alices = authenticator()
  const bobs = authenticator()
  await enrolled(kit, await kit.token(), alices)
  await enrolled(kit, await bobToken(kit), bobs)
  started.length = 0
  succeeded.length = 0

  const alice = await kit.signIn(alices, { userVerified: false })
  t.equal(alice.statusCode, 200, alice.body)
  t.notOk('two_factor_required' in alice.json().data, 'alice has no second factor: final')
  const aliceClaims = claimsOf(alice.json().data.jwt)
  t.strictSame(aliceClaims.amr, ['hwk'], 'alice: one factor')
  t.equal(aliceClaims.auth_time, seconds(kit.clock.now))
  t.match(started, [{ userId: kit.aliceId, sessionId: aliceClaims.sid, method: 'passkey', secondFactor: null }])
  t.equal(started.length, 1)

  const bob = await kit.signIn(bobs, { userVerified: false })
  t.equal(bob.statusCode, 200, bob.body)
  t.equal(bob.json().data.two_factor_required, true, 'bob: the challenge, never a final token on one factor')
  const interim = bob.json().data.jwt as string
  t.equal(claimsOf(interim).typ, 'interim')
  t.equal(started.length, 1, 'no session of bob\'s yet')
  t.strictSame(succeeded, [{ userId: kit.aliceId, ip: '127.0.0.1', method: 'passkey' }], 'login.succeeded for alice only')

  kit.clock.advance(TOTP_STEP)
  const completed = await kit.post('/auth/2fa', { JWT: interim, code: await totpAt(kit.bobSecret, kit.clock.now) })
  t.equal(completed.statusCode, 200, completed.body)
  const bobClaims = claimsOf(completed.json().data.jwt)
  t.strictSame(bobClaims.amr, ['hwk', 'otp', 'mfa'], 'bob: the passkey, then the code')
  t.equal(started.length, 2)
  t.match(started[1], { userId: kit.bobId, sessionId: bobClaims.sid, method: 'passkey', secondFactor: 'totp' }, 'bob\'s session: the passkey, completed by TOTP')
})

t.test('userVerification required: an assertion without UV is 401 / 216', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { userVerification: 'required' } } })
  t.teardown(() => kit.app.close())
  const failed = collect(kit.app, 'login.failed')
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  t.equal((await kit.options(SIGN_IN_OPTIONS)).userVerification, 'required', 'the options ask for it')
  t.same(errorOf(await kit.signIn(device, { userVerified: false })), [401, 216])
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'passkey', errorCode: 216 }])
  t.equal((await kit.signIn(device)).statusCode, 200, 'with UV')
})

t.test('twoFactor.enabled false: bob\'s passkey without UV is 403 / 206; with UV it is two factors and signs him in', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await bobToken(kit), device)
  const off = await buildPasskeyApp({ settings: { twoFactor: { enabled: false } } })
  t.teardown(() => off.app.close())
  // the same user store is not shared: enrol bob's passkey into the second host's port directly
  await off.passkeys.create({ ...(await kit.passkeys.findById(device.credentials[0] as string)) as StoredPasskey, userId: off.bobId })
  t.same(errorOf(await off.signIn(device, { userVerified: false })), [403, 206], 'one factor: refused as a password would be')
  const res = await off.signIn(device)
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(claimsOf(res.json().data.jwt).amr, ['hwk', 'user', 'mfa'])
})

t.test('refused assertions are 401 / 216 with login.failed, and sign nobody in', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const aliceToken = await kit.token()
  const alices = authenticator()
  await enrolled(kit, aliceToken, alices)
  const bobInterim = (await kit.login(BOB)).json().data.jwt as string
  await enrolled(kit, await bobToken(kit), authenticator())
  const stranger = authenticator()
  // a credential made for alice's options, never sent: the server does not know it
  stranger.register((await kit.post('/passkeys/register/options', {}, aliceToken)).json().data)
  const failed = collect(kit.app, 'login.failed')
  const started = collect(kit.app, 'session.started')

  const replayed = await kit.assert(SIGN_IN_OPTIONS, undefined, alices)
  t.equal((await credentialSignIn(kit, replayed)).statusCode, 200, 'the assertion signs in once')
  started.length = 0
  kit.clock.advance(1000)
  const used = await kit.passkeys.findById(alices.credentials[0] as string)

  const cases: Array<{ name: string, answer: () => Promise<AuthenticationResponseJSON> }> = [
    { name: 'a credential the server never enrolled', answer: async () => await kit.assert(SIGN_IN_OPTIONS, undefined, stranger) },
    { name: 'a signature of another key', answer: async () => await kit.assert(SIGN_IN_OPTIONS, undefined, alices, { signWith: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }) },
    { name: 'the same assertion again', answer: async () => replayed },
    { name: 'a step-up\'s challenge', answer: async () => await kit.assert('/auth/step-up/options', aliceToken, alices) },
    { name: 'a two-factor challenge\'s', answer: async () => alices.authenticate(await kit.options('/auth/2fa/passkey/options', bobInterim), { credentialId: alices.credentials[0] as string }) },
    { name: 'a challenge the server never issued', answer: async () => alices.authenticate({ challenge: 'bWFkZSB1cA', rpId: 'example.com' }) },
    {
      name: 'the user handle of another user',
      answer: async () => {
        const response = await kit.assert(SIGN_IN_OPTIONS, undefined, alices)
        return { ...response, response: { ...response.response, userHandle: userHandleOf(kit.bobId) } }
      }
    },
    {
      name: 'a challenge past passkeys.challengeLifetime',
      answer: async () => {
        const response = await kit.assert(SIGN_IN_OPTIONS, undefined, alices)
        kit.clock.advance(5 * MINUTE)
        return response
      }
    },
    {
      name: 'clientDataJSON that is not JSON',
      answer: async () => {
        const response = await kit.assert(SIGN_IN_OPTIONS, undefined, alices)
        return { ...response, response: { ...response.response, clientDataJSON: Buffer.from('{"challenge":').toString('base64url') } }
      }
    }
  ]
  for (const { name, answer } of cases) {
    failed.length = 0
    const res = await credentialSignIn(kit, await answer())
    t.same(errorOf(res), [401, 216], `${name}: 401 / 216`)
    t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'passkey', errorCode: 216 }], `${name}: login.failed`)
  }
  t.strictSame(started, [], 'no session started')
  t.strictSame(await kit.passkeys.findById(alices.credentials[0] as string), used, 'no use recorded')

  const anonymous = await credentialSignIn(kit, await kit.assert(SIGN_IN_OPTIONS, undefined, alices, { omitUserHandle: true }))
  t.equal(anonymous.statusCode, 200, 'an assertion without a user handle is found by its credential')

  await kit.users.removeUser(kit.aliceId)
  failed.length = 0
  t.same(errorOf(await kit.signIn(alices)), [401, 216], 'a user gone from the adapter since the enrolment')
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'passkey', errorCode: 216 }])
})

t.test('two sign-ins with one assertion at once: exactly one gets in', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  const response = await kit.assert(SIGN_IN_OPTIONS, undefined, device)
  const answers = await Promise.all([credentialSignIn(kit, response), credentialSignIn(kit, response)])
  t.same(answers.map(res => res.statusCode).sort(), [200, 401])
})

t.test('a wrong origin is 400 / 217, a wrong rpId 400 / 218, each with login.failed', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  const failed = collect(kit.app, 'login.failed')
  t.same(errorOf(await kit.signIn(device, { origin: 'https://evil.example.net' })), [400, 217], 'origin')
  t.same(errorOf(await kit.signIn(device, { rpId: 'evil.example.net' })), [400, 218], 'rpId')
  t.strictSame(failed.map(event => [event.reason, event.errorCode]), [['passkey', 217], ['passkey', 218]])
  t.equal((await kit.passkeys.findById(device.credentials[0] as string))?.lastUsedAt, null, 'no use recorded')
})

t.test('the signature counter: stored as it goes up; a regression is told, not refused, and never lowers it', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const regressed = collect(kit.app, 'passkey.counter_regressed')
  const key = authenticator()
  await enrolled(kit, await kit.token(), key, { counter: 'increasing' })
  const id = key.credentials[0] as string
  t.equal((await kit.passkeys.findById(id))?.counter, 0, 'enrolled at 0')

  kit.clock.advance(MINUTE)
  t.equal((await kit.signIn(key, { backedUp: false })).statusCode, 200)
  t.match(await kit.passkeys.findById(id), { counter: 1, backedUp: false, lastUsedAt: new Date(kit.clock.now) }, 'counter 1, backup state refreshed, last use now')
  const list = await kit.app.inject({ method: 'GET', url: `${PREFIX}/passkeys`, headers: { authorization: `Bearer ${await kit.token()}` } })
  t.match(list.json().data.passkeys, [{ id, last_used_at: new Date(kit.clock.now).toISOString(), backed_up: false }], 'the list shows the last use')
  t.equal((await kit.signIn(key)).statusCode, 200)
  t.match(await kit.passkeys.findById(id), { counter: 2, backedUp: true }, 'counter 2, backed up again')
  t.strictSame(regressed, [], 'no regression so far')

  for (const presented of [1, 2, 0]) {
    regressed.length = 0
    const res = await kit.signIn(key, { counter: presented })
    t.equal(res.statusCode, 200, `presented ${presented}: still signed in`)
    t.strictSame(regressed, [{ userId: kit.aliceId, passkeyId: id, stored: 2, presented }], `presented ${presented}: passkey.counter_regressed`)
    t.equal((await kit.passkeys.findById(id))?.counter, 2, `presented ${presented}: the stored counter is not lowered`)
  }
})

t.test('passkeys.refuseCounterRegression: a regressed counter is 401 / 216', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { refuseCounterRegression: true } } })
  t.teardown(() => kit.app.close())
  const regressed = collect(kit.app, 'passkey.counter_regressed')
  const failed = collect(kit.app, 'login.failed')
  const key = authenticator()
  await enrolled(kit, await kit.token(), key, { counter: 'increasing' })
  const id = key.credentials[0] as string
  t.equal((await kit.signIn(key)).statusCode, 200)
  const before = await kit.passkeys.findById(id)
  kit.clock.advance(MINUTE)
  t.same(errorOf(await kit.signIn(key, { counter: 1 })), [401, 216])
  t.strictSame(regressed, [{ userId: kit.aliceId, passkeyId: id, stored: 1, presented: 1 }], 'told as well')
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'passkey', errorCode: 216 }])
  t.strictSame(await kit.passkeys.findById(id), before, 'no use recorded')
  t.equal((await kit.signIn(key)).statusCode, 200, 'the next count up signs in')
})

t.test('counters that stay 0 are never a regression; one that starts counting is stored', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { refuseCounterRegression: true } } })
  t.teardown(() => kit.app.close())
  const regressed = collect(kit.app, 'passkey.counter_regressed')
  const synced = authenticator()
  await enrolled(kit, await kit.token(), synced)
  const id = synced.credentials[0] as string
  for (const round of [1, 2, 3]) t.equal((await kit.signIn(synced)).statusCode, 200, `sign-in ${round} at counter 0`)
  t.equal((await kit.passkeys.findById(id))?.counter, 0)
  t.strictSame(regressed, [], 'never told')
  t.equal((await kit.signIn(synced, { counter: 5 })).statusCode, 200, 'a counter that starts')
  t.equal((await kit.passkeys.findById(id))?.counter, 5, 'is kept from then on')
})

t.test('authCodes.requireFor.auth: the passkey sign-in needs the auth code too', async (t) => {
  const kit = await buildPasskeyApp({ settings: { authCodes: { codes: [{ code: AUTH_CODE }], requireFor: { auth: true } } } })
  t.teardown(() => kit.app.close())
  const token = (await kit.post('/auth', { email: ALICE.email, password: ALICE.password, AUTH_KEY: AUTH_CODE })).json().data.jwt as string
  const device = authenticator()
  await enrolled(kit, token, device)
  const options = await kit.post(SIGN_IN_OPTIONS)
  t.equal(options.statusCode, 200, 'the options need no code')
  const response = device.authenticate(options.json().data)

  t.same(errorOf(await kit.post('/auth/passkey', { credential: response })), [400, 94], 'no code')
  t.same(errorOf(await kit.post('/auth/passkey', { credential: response, AUTH_KEY: 'wrong-code' })), [401, 27], 'a wrong code')
  const res = await kit.post('/auth/passkey', { credential: response, AUTH_KEY: AUTH_CODE })
  t.equal(res.statusCode, 200, `the right code; the refusals did not spend the challenge: ${res.body}`)
  t.strictSame(claimsOf(res.json().data.jwt).amr, ['hwk', 'user', 'mfa'])
})

t.test('a refused auth code on /auth/passkey is told as login.failed (auth_code), as on /auth', async (t) => {
  const kit = await buildPasskeyApp({ settings: { authCodes: { codes: [{ code: AUTH_CODE }], requireFor: { auth: true } } } })
  t.teardown(() => kit.app.close())
  const failed = collect(kit.app, 'login.failed')
  t.same(errorOf(await kit.post('/auth', { email: ALICE.email, password: ALICE.password, AUTH_KEY: 'wrong-code' })), [401, 27])
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'auth_code', errorCode: 27 }], '/auth tells it')
  const device = authenticator()
  await enrolled(kit, (await kit.post('/auth', { email: ALICE.email, password: ALICE.password, AUTH_KEY: AUTH_CODE })).json().data.jwt, device)
  failed.length = 0
  const credential = await kit.assert(SIGN_IN_OPTIONS, undefined, device)
  t.same(errorOf(await kit.post('/auth/passkey', { credential, AUTH_KEY: 'wrong-code' })), [401, 27])
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'auth_code', errorCode: 27 }], '/auth/passkey tells it too')
})

t.test('cookie mode: a passkey sign-in sets the refresh cookie', async (t) => {
  const kit = await buildPasskeyApp({ settings: { refresh: { enabled: true, cookie: { enabled: true } } } })
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  const res = await kit.signIn(device)
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.strictSame(Object.keys(data).sort(), ['csrf_token', 'jwt'], 'no refresh_token in the body')
  const cookie = refreshCookieOf(res)
  t.ok(cookie !== undefined, 'the refresh cookie is set')
  t.equal(cookie?.slice(0, cookie.indexOf('.')), claimsOf(data.jwt).sid, 'for the session of the jwt')

  const refreshed = await kit.app.inject({
    method: 'POST',
    url: `${PREFIX}/auth/refresh`,
    headers: { cookie: `${REFRESH_COOKIE}=${cookie as string}`, 'x-csrf-token': data.csrf_token },
    payload: {}
  })
  t.equal(refreshed.statusCode, 200, refreshed.body)
  t.strictSame(claimsOf(refreshed.json().data.jwt).amr, ['hwk', 'user', 'mfa'], 'the refreshed token keeps the passkey\'s amr')

  const foreign = await kit.app.inject({
    method: 'POST',
    url: `${PREFIX}/auth/passkey`,
    headers: { origin: 'https://evil.example.net' },
    payload: { credential: await kit.assert(SIGN_IN_OPTIONS, undefined, device) }
  })
  t.same(errorOf(foreign), [403, 208], 'a foreign page cannot have the cookie set')
})

/** Enrols a passkey on `device` and checks that it worked. */
async function enrolled (kit: PasskeyApp, token: string, device: SoftAuthenticator, opts?: Parameters<PasskeyApp['enrol']>[2]): Promise<void> {
  const res = await kit.enrol(token, device, opts)
  if (res.statusCode !== 200) throw new Error(`enrolment: ${res.statusCode} ${res.body}`)
}

/** A final token of bob's: his password, then his TOTP code of the clock's time. */
async function bobToken (kit: PasskeyApp): Promise<string> {
  const interim = (await kit.login(BOB)).json().data.jwt as string
  const res = await kit.post('/auth/2fa', { JWT: interim, code: await totpAt(kit.bobSecret, kit.clock.now) })
  if (res.statusCode !== 200) throw new Error(`bob's sign-in: ${res.statusCode} ${res.body}`)
  return res.json().data.jwt
}

/** `POST /auth/passkey` with this assertion. */
async function credentialSignIn (kit: PasskeyApp, credential: AuthenticationResponseJSON): Promise<LightMyRequestResponse> {
  return await kit.post('/auth/passkey', { credential })
}

/** A time in ms as a JWT's seconds. */
function seconds (ms: number): number {
  return Math.floor(ms / 1000)
}

/** The events of one name, as they come. */
function collect<E extends JwtLoginEventName> (app: FastifyInstance, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  app.jwtLogin.events.on(event, (payload) => { seen.push(payload) })
  return seen
}

/** The value the answer put into the refresh cookie, or `undefined`. */
function refreshCookieOf (res: LightMyRequestResponse): string | undefined {
  const header = res.headers['set-cookie']
  const line = (header === undefined ? [] : Array.isArray(header) ? header : [header]).find(value => value.startsWith(`${REFRESH_COOKIE}=`))
  return line?.slice(REFRESH_COOKIE.length + 1, line.indexOf(';'))
}

t.test('the use is recorded once the sign-in went through: a refused sign-in records none, a failing port does not fail it', async (t) => {
  const kit = await buildPasskeyApp({ settings: { limits: { signInsPerAccount: { max: 1, window: '1h' } } } })
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  const [stored] = await kit.passkeys.listByUser(kit.aliceId) as [StoredPasskey]
  kit.clock.advance(1000)
  t.same(errorOf(await kit.signIn(device)), [429, 200], 'over signInsPerAccount (the enrolment\'s sign-in counted)')
  t.equal((await kit.passkeys.findById(stored.id))?.lastUsedAt, null, 'no use recorded')
})

t.test('a passkey port that fails to record a use: the sign-in stands, a warning says so', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const device = authenticator()
  await enrolled(kit, await kit.token(), device)
  const warnings: unknown[] = []
  const original = kit.app.log.warn.bind(kit.app.log)
  kit.app.log.warn = ((...args: unknown[]) => { warnings.push(args); original(...(args as [string])) }) as typeof kit.app.log.warn
  kit.passkeys.recordUse = async () => { throw new Error('the passkey table is read-only') }
  const res = await kit.signIn(device)
  t.equal(res.statusCode, 200)
  t.match(JSON.stringify(warnings), /a passkey's use \(counter, backup state\) could not be recorded/)
})
