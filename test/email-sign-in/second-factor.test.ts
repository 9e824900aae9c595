// Sign-in by email is one factor: a user with a second factor gets the challenge and an interim token, never a final one; the mailbox is never asked twice, and a trusted device does not stand in.
import t from 'tap'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { claimsOf, errorOf } from '../helpers/http.js'
import { totpAt } from '../helpers/fixtures.js'
import { afterAnswers, ALICE, buildEmailSignInApp, PREFIX, type EmailSignInKit } from '../helpers/email-sign-in.js'

/** Alice's TOTP on; answers her secret. */
async function withTotp (kit: EmailSignInKit): Promise<string> {
  const { secret } = createTotpSecret('jwt-login test', ALICE.email)
  await kit.twoFactor.setTotpSecret(1, secret)
  kit.twoFactor.enable(1, 'totp')
  return secret
}

async function secondStep (kit: EmailSignInKit, payload: Record<string, unknown>): Promise<ReturnType<EmailSignInKit['verify']>> {
  return await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload })
}

t.test('a TOTP user: the code answers a challenge and an interim token; /auth/2fa completes it, amr otp and mfa', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const secret = await withTotp(kit)
  kit.events.clear()
  const first = await kit.signIn()
  t.equal(first.statusCode, 200, first.body)
  t.same(Object.keys(first.json().data).sort(), ['jwt', 'two_factor_required'], 'no refresh token, no final token')
  const interim = first.json().data.jwt as string
  t.equal(claimsOf(interim).typ, 'interim')
  t.same(errorOf(await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${interim}` } })), [401, 110], 'the interim token opens nothing')
  t.same(kit.events.of('two_factor.challenge_issued'), [{ userId: 1, method: 'totp', ip: '127.0.0.1' }])
  t.same(kit.events.of('login.succeeded'), [], 'not a sign-in yet')
  t.same(kit.events.of('session.started'), [])

  kit.clock.advance(30_000)
  const done = await secondStep(kit, { JWT: interim, code: await totpAt(secret, kit.clock.now) })
  t.equal(done.statusCode, 200, done.body)
  t.same(Object.keys(done.json().data).sort(), ['jwt', 'refresh_token'])
  const claims = claimsOf(done.json().data.jwt)
  t.same(claims.amr, ['otp', 'mfa'], 'a mailed code and a TOTP code: otp once, and mfa')
  const [session] = await kit.sessions(done.json().data.jwt)
  t.equal(session?.method, 'email')
  t.equal(session?.second_factor, 'totp')
  t.same(kit.events.of('session.started'), [{ userId: 1, sessionId: claims.sid, method: 'email', provider: null, secondFactor: 'totp', ip: '127.0.0.1' }])
})

t.test('a user whose second factor is email: the challenge mails no second code; a backup code completes it, six digits are wrong', async (t) => {
  const kit = await buildEmailSignInApp(t, { twoFactorMailer: true })
  kit.twoFactor.enable(1, 'email')
  const codes = await kit.app.jwtLogin.twoFactor?.regenerateBackupCodes(1) as string[]
  const code = await kit.codeFor(ALICE.email)
  kit.events.clear()
  const first = await kit.verify(ALICE.email, code)
  t.equal(first.json().data.two_factor_required, true, first.body)
  await afterAnswers()
  t.equal(kit.mail.sent.length, 1, 'only the sign-in code was mailed')
  t.same(kit.events.of('two_factor.challenge_issued'), [{ userId: 1, method: 'email', ip: '127.0.0.1' }])
  t.same(kit.events.of('two_factor.code_sent'), [])
  const interim = first.json().data.jwt as string
  t.same(errorOf(await secondStep(kit, { JWT: interim, code })), [401, 109], 'the sign-in code again is not a second factor')
  t.same(errorOf(await secondStep(kit, { JWT: interim, code: '123456' })), [401, 109], 'nor any six digits')
  const done = await secondStep(kit, { JWT: interim, code: codes[0] })
  t.equal(done.statusCode, 200, done.body)
  t.same(claimsOf(done.json().data.jwt).amr, ['otp', 'mfa'])
  const [session] = await kit.sessions(done.json().data.jwt)
  t.same([session?.method, session?.second_factor], ['email', 'backup_codes'])
})

t.test('the same without a two-factor mailer: no 503, the challenge still takes a backup code', async (t) => {
  const kit = await buildEmailSignInApp(t)
  kit.twoFactor.enable(1, 'email')
  const codes = await kit.app.jwtLogin.twoFactor?.regenerateBackupCodes(1) as string[]
  const first = await kit.signIn()
  t.equal(first.json().data.two_factor_required, true, first.body)
  const interim = first.json().data.jwt as string
  t.same(errorOf(await secondStep(kit, { JWT: interim, code: '123456' })), [401, 109], 'no code was mailed, so six digits are wrong')
  t.equal((await secondStep(kit, { JWT: interim, code: codes[1] })).statusCode, 200)
  t.same(errorOf(await kit.password(ALICE.email, ALICE.password)), [503, 201], 'a password sign-in still needs the mailer it cannot reach')
})

t.test('a trusted device does not stand in for the second factor of a sign-in by email, and is not spent', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { twoFactor: { rememberDevice: { enabled: true } } } })
  const secret = await withTotp(kit)
  const challenged = await kit.password(ALICE.email, ALICE.password)
  kit.clock.advance(30_000)
  const trusted = await secondStep(kit, { JWT: challenged.json().data.jwt, code: await totpAt(secret, kit.clock.now), remember_device: true })
  const deviceToken = trusted.json().data.device_token as string
  t.type(deviceToken, 'string', trusted.body)

  const byEmail = await kit.verify(ALICE.email, await kit.codeFor(ALICE.email), { body: { device_token: deviceToken } })
  t.same(Object.keys(byEmail.json().data).sort(), ['jwt', 'two_factor_required'], 'challenged all the same')
  const withCookie = await kit.verify(ALICE.email, await kit.codeFor(ALICE.email), { headers: { cookie: `__Host-jwt-login-device=${deviceToken}` } })
  t.equal(withCookie.json().data.two_factor_required, true, 'with the device cookie too')

  const byPassword = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password, device_token: deviceToken } })
  t.equal(byPassword.statusCode, 200, byPassword.body)
  t.type(byPassword.json().data.device_token, 'string', 'the device still stands in for a password sign-in: its token was not spent')
  t.notOk('two_factor_required' in byPassword.json().data)
})
