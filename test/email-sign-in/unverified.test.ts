// An account whose address was never proven (perhaps registered by someone else: account pre-hijacking): the first sign-in by email ends everything it held, retires its password and marks it verified.
import t from 'tap'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { errorOf } from '../helpers/http.js'
import { totpAt } from '../helpers/fixtures.js'
import { authenticator, buildPasskeyApp, claimsOf } from '../helpers/passkeys.js'
import { MailBox } from '../helpers/mail-box.js'
import { recordEvents, buildEmailSignInApp, CAROL, codeOf } from '../helpers/email-sign-in.js'

const PREFIX = '/jwt-login/v1'

t.test('the registrant\'s sessions, trusted device, passkey, second factor and password end; the owner is signed in, verified', async (t) => {
  const mail = new MailBox()
  const kit = await buildPasskeyApp({
    settings: { emailSignIn: { enabled: true }, refresh: { enabled: true }, sessions: { enabled: true }, twoFactor: { rememberDevice: { enabled: true } } },
    plugin: { mailer: mail }
  })
  t.teardown(() => kit.app.close())
  const carol = await kit.users.addUser({ ...CAROL, emailVerified: false })
  // the registrant: a session with a refresh token, a passkey, TOTP with backup codes, a trusted device
  const held = (await kit.login(CAROL)).json().data as { jwt: string, refresh_token: string }
  const device = authenticator()
  t.equal((await kit.enrol(held.jwt, device)).statusCode, 200, 'a passkey enrolled')
  const { secret } = createTotpSecret('jwt-login test', CAROL.email)
  await kit.twoFactor.setTotpSecret(carol.ID, secret)
  kit.twoFactor.enable(carol.ID, 'totp')
  await kit.app.jwtLogin.twoFactor?.regenerateBackupCodes(carol.ID)
  const challenged = await kit.login(CAROL)
  kit.clock.advance(30_000)
  const trusted = await kit.post('/auth/2fa', { JWT: challenged.json().data.jwt, code: await totpAt(secret, kit.clock.now), remember_device: true })
  const deviceToken = trusted.json().data.device_token as string
  t.type(deviceToken, 'string', trusted.body)

  const events = recordEvents(kit.app)
  kit.clock.advance(1000)
  t.equal((await kit.post('/auth/email', { email: CAROL.email })).statusCode, 200)
  const res = await kit.post('/auth/email/verify', { email: CAROL.email, code: codeOf(await mail.next()) })
  t.equal(res.statusCode, 200, res.body)
  t.same(Object.keys(res.json().data).sort(), ['jwt', 'refresh_token'], 'a final token: the second factor ended with the rest')
  const jwt = res.json().data.jwt as string
  t.same(claimsOf(jwt).amr, ['otp'])
  t.equal(claimsOf(jwt).email_verified, true)

  t.equal((await kit.users.findById(carol.ID))?.emailVerified, true, 'marked verified')
  t.same(errorOf(await kit.login(CAROL)), [401, 48], 'the old password no longer signs in')
  t.same(errorOf(await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: CAROL.email, password: CAROL.password, device_token: deviceToken } })), [401, 48], 'nor with the trusted device')
  t.same(errorOf(await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${held.jwt}` } })), [401, 55], 'the registrant\'s session ended')
  t.same(errorOf(await kit.post('/auth/refresh', { refresh_token: held.refresh_token })), [401, 51], 'its refresh token too')
  t.same(errorOf(await kit.signIn(device)), [401, 216], 'the passkey no longer signs in')
  t.equal((await kit.passkeys.listByUser(carol.ID)).length, 0)
  t.equal(await kit.twoFactor.methodOf(carol.ID), null, 'the second factor is off')
  t.equal(kit.twoFactor.backupCodesLeft(carol.ID), 0, 'the backup codes are gone')

  const sessions = (await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${jwt}` } })).json().data
  t.same(sessions.sessions.map((session: Record<string, unknown>) => [session.method, session.current]), [['email', true]], 'only the new session is left')
  t.same(sessions.devices, [], 'and no trusted device')

  t.same(events.of('account.credentials_reset'), [{ userId: carol.ID, passkeys: 1, secondFactor: true, reason: 'email_verified' }])
  t.same(events.of('email.verified'), [{ userId: carol.ID, ip: '127.0.0.1', reset: true }])
  t.same(events.of('passkey.deleted').map(event => event.userId), [carol.ID])
  t.same(events.of('session.ended'), [{ userId: carol.ID, sessionId: null, reason: 'email_verified' }], 'the registrant\'s sessions reported ended')
  t.same(events.of('device.forgotten'), [{ userId: carol.ID, deviceId: null, reason: 'email_verified' }])
  t.same(events.of('login.succeeded'), [{ userId: carol.ID, ip: '127.0.0.1', method: 'email' }])
  t.same(events.of('session.started').map(event => [event.method, event.sessionId]), [['email', claimsOf(jwt).sid]])
  const order = events.all.map(event => event.name)
  t.ok(order.indexOf('account.credentials_reset') < order.indexOf('session.started'), 'what it held ended before the new session started')

  events.clear()
  t.equal((await kit.post('/auth/email', { email: CAROL.email })).statusCode, 200)
  const again = await kit.post('/auth/email/verify', { email: CAROL.email, code: codeOf(await mail.next()) })
  t.equal(again.statusCode, 200)
  t.same(events.of('account.credentials_reset'), [], 'verified now: a second sign-in by email ends nothing')
  t.equal((await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${jwt}` } })).statusCode, 200, 'the first email session lives on')
})

t.test('with authentication.requireVerifiedEmail: the unverified account signs in by email (the code proves the address)', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { authentication: { requireVerifiedEmail: true } } })
  t.same(errorOf(await kit.password(CAROL.email, CAROL.password)), [403, 231], 'by password it is refused')
  const res = await kit.signIn(CAROL.email)
  t.equal(res.statusCode, 200, res.body)
  t.equal((await kit.users.findByEmail(CAROL.email))?.emailVerified, true)
})

t.test('a failure while the account is reset: 503 / 242 (sessions may have ended), the code given back, and the retry finishes the work', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const held = (await kit.password(CAROL.email, CAROL.password)).json().data.jwt as string
  const code = await kit.codeFor(CAROL.email)
  const setEmailVerified = kit.users.setEmailVerified.bind(kit.users)
  kit.users.setEmailVerified = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.verify(CAROL.email, code)), [503, 242])
  t.same(errorOf(await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${held}` } })), [401, 55], 'what ran before the failure stays done')
  kit.users.setEmailVerified = setEmailVerified
  const res = await kit.verify(CAROL.email, code)
  t.equal(res.statusCode, 200, res.body)
  t.equal((await kit.users.findByEmail(CAROL.email))?.emailVerified, true)
})

t.test('the account gone while it is reset: 401 / 246', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(CAROL.email)
  const carol = await kit.users.findByEmail(CAROL.email)
  const setEmailVerified = kit.users.setEmailVerified.bind(kit.users)
  kit.users.setEmailVerified = async (user, verified) => {
    await setEmailVerified(user, verified)
    await kit.users.removeUser(carol?.ID as number)
  }
  kit.events.clear()
  t.same(errorOf(await kit.verify(CAROL.email, code)), [401, 246])
  t.same(kit.events.of('login.failed'), [{ ip: '127.0.0.1', reason: 'email_code', errorCode: 246 }])
  t.same(kit.events.of('session.started'), [])
})

t.test('an adapter that reports an unproven address but cannot retire its password: 503 / 201 before anything of the account ends', async (t) => {
  const kit = await buildEmailSignInApp(t, { usersWithout: ['setPassword', 'setEmailVerified'] })
  const held = (await kit.password(CAROL.email, CAROL.password)).json().data.jwt as string
  const code = await kit.codeFor(CAROL.email)
  kit.events.clear()
  t.same(errorOf(await kit.verify(CAROL.email, code)), [503, 201])
  t.equal((await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${held}` } })).statusCode, 200, 'the account\'s sessions were not ended')
  t.same(kit.events.of('account.credentials_reset'), [])
  t.equal((await kit.password(CAROL.email, CAROL.password)).statusCode, 200, 'nor its password')
  t.same(kit.events.of('session.started').map(event => event.method), ['password'], 'and no session by email')
})
