import t from 'tap'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { createTotpSecret, matchTotpStep } from '../../lib/two-factor/methods/totp.js'
import { ALICE, BOB, buildTwoFactorApp, PREFIX, totpAt, wrongCode } from '../helpers/two-factor.js'

t.test('a user without two-factor signs in with the password alone', async (t) => {
  const { app, login, port, bobId } = await buildTwoFactorApp({ settings: { refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const res = await login(ALICE)
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json().data).sort(), ['jwt', 'refresh_token'])

  port.disable(bobId)
  const bob = await login()
  t.same(Object.keys(bob.json().data).sort(), ['jwt', 'refresh_token'], 'two-factor turned off')
})

t.test('a TOTP user gets an interim token, then the final token for a right code', async (t) => {
  const { app, login, submit, secret, clock, bobId } = await buildTwoFactorApp({ settings: { refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const events: unknown[] = []
  app.jwtLogin.events.on('two_factor.challenge_issued', (e) => events.push(['issued', e]))
  app.jwtLogin.events.on('two_factor.code_accepted', (e) => events.push(['accepted', e]))
  app.jwtLogin.events.on('login.succeeded', (e) => events.push(['login', e]))

  const first = await login()
  t.equal(first.statusCode, 200)
  const body = first.json()
  t.same(body, { success: true, data: { two_factor_required: true, jwt: body.data.jwt } }, 'no refresh token with the interim token')

  const code = await totpAt(secret, clock.now)
  const res = await submit({ JWT: body.data.jwt, code })
  t.equal(res.statusCode, 200)
  const done = res.json()
  t.equal(done.success, true)
  t.same(Object.keys(done.data).sort(), ['jwt', 'refresh_token'])

  const validated = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: { authorization: `Bearer ${done.data.jwt as string}` } })
  t.equal(validated.statusCode, 200)
  t.equal(validated.json().data.user.user_email, BOB.email)
  t.equal(validated.json().data.jwt[0].payload.typ, 'access')

  const refreshed = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: done.data.refresh_token } })
  t.equal(refreshed.statusCode, 200, 'the refresh token of a two-factor sign-in works')

  t.same(events, [
    ['issued', { userId: bobId, method: 'totp', ip: '127.0.0.1' }],
    ['accepted', { userId: bobId, method: 'totp', ip: '127.0.0.1' }]
  ], 'no login.succeeded for the password step alone; no code or token in the events')
  t.notOk(JSON.stringify(events).includes(code))
})

t.test('without refresh tokens the answer has the final token only', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const res = await submit({ JWT: await interim(), code: await totpAt(secret, clock.now) })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json().data), ['jwt'])
})

t.test('a TOTP code works once, even within its window', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const code = await totpAt(secret, clock.now)
  t.equal((await submit({ JWT: await interim(), code })).statusCode, 200)
  clock.advance(5_000)
  const replay = await submit({ JWT: await interim(), code })
  t.equal(replay.statusCode, 401)
  t.equal(replay.json().data.errorCode, 109)
})

t.test('the current and the previous step are accepted; older ones are not', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const start = clock.now
  clock.advance(60_000)
  const tooOld = await submit({ JWT: await interim(), code: await totpAt(secret, start) })
  t.equal(tooOld.statusCode, 401, 'two steps back')
  t.equal(tooOld.json().data.errorCode, 109)
  const previous = await submit({ JWT: await interim(), code: await totpAt(secret, start + 30_000) })
  t.equal(previous.statusCode, 200, 'one step back')
})

t.test('after a newer code, an older one of the window is refused', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  clock.advance(30_000)
  t.equal((await submit({ JWT: await interim(), code: await totpAt(secret, clock.now) })).statusCode, 200)
  const older = await submit({ JWT: await interim(), code: await totpAt(secret, clock.now - 30_000) })
  t.equal(older.statusCode, 401)
  t.equal(older.json().data.errorCode, 109)
})

t.test('wrong, malformed and secretless codes are wrong codes', async (t) => {
  const { app, interim, login, submit, port, bobId, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  for (const code of [await wrongCode(secret, clock.now), '12345', '1234567', 'abcdef']) {
    const res = await submit({ JWT: await interim(), code })
    t.equal(res.statusCode, 401, code)
    t.equal(res.json().data.errorCode, 109)
  }

  port.enable(1, 'totp')
  const noSecret = await submit({ JWT: (await login(ALICE)).json().data.jwt, code: '123456' })
  t.equal(noSecret.statusCode, 401, 'TOTP on without a stored secret matches nothing')
  t.equal(noSecret.json().data.errorCode, 109)

  await port.setTotpSecret(bobId, 'not base32!')
  const broken = await submit({ JWT: await interim(), code: '123456' })
  t.equal(broken.json().data.errorCode, 109, 'a secret the host broke matches nothing')
})

t.test('a code field that is not a string is a malformed request', async (t) => {
  const { app, interim, submit } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const res = await submit({ JWT: await interim(), code: 123456 })
  t.equal(res.statusCode, 400)
  t.equal(res.json().data.errorCode, 203)
})

t.test('enrollment: a new secret, confirmed by its first code, which is then spent', async (t) => {
  const { app, port, login, submit, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const enrollment = app.jwtLogin.twoFactor
  if (enrollment === null) throw new Error('two-factor is configured')
  const { secret, uri } = enrollment.createTotpSecret(ALICE.email)
  t.match(secret, /^[A-Z2-7]{32}$/)
  t.ok(uri.startsWith('otpauth://totp/jwt-login:alice%40example.com?'), uri)
  t.ok(uri.includes(`secret=${secret}`))
  t.ok(uri.includes('issuer=jwt-login'))

  t.equal(await enrollment.confirmTotp(1, secret, await wrongCode(secret, clock.now)), false)
  t.equal(await enrollment.confirmTotp(1, secret, 'abc'), false)
  t.equal(await port.getTotpSecret(1), null, 'nothing stored before a right code')
  const first = await totpAt(secret, clock.now)
  t.equal(await enrollment.confirmTotp(1, secret, first), true)
  t.equal(await port.getTotpSecret(1), secret)
  port.enable(1, 'totp')

  const interim = (await login(ALICE)).json().data.jwt as string
  t.equal((await submit({ JWT: interim, code: first })).json().data.errorCode, 109, 'the enrollment code does not sign in')
  clock.advance(30_000)
  t.equal((await submit({ JWT: interim, code: await totpAt(secret, clock.now) })).statusCode, 200)
})

t.test('matchTotpStep answers the matched step', async (t) => {
  const { secret } = createTotpSecret('jwt-login', BOB.email)
  const now = Date.UTC(2026, 0, 1)
  t.equal(await matchTotpStep(secret, await totpAt(secret, now), now), Math.floor(now / 30_000))
  t.equal(await matchTotpStep(secret, await totpAt(secret, now), now, Math.floor(now / 30_000)), null)
})

t.test('the otpauth issuer is the option', async (t) => {
  const { app } = await buildTwoFactorApp({ plugin: { twoFactor: { port: new MemoryTwoFactorStore(), issuer: 'Example Host' } } })
  t.teardown(() => app.close())
  t.ok(app.jwtLogin.twoFactor?.createTotpSecret(BOB.email).uri.startsWith('otpauth://totp/Example%20Host:bob%40example.com?'))
})
