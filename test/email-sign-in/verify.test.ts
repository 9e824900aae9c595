// POST /auth/email/verify: the mailed code signs in once (one session of twenty parallel uses), wrong tries count on the code and on the account's lockout, and the session says it began by email.
import t from 'tap'
import { REFRESH_COOKIE } from '../../lib/http/browser.js'
import { claimsOf, errorOf } from '../helpers/http.js'
import { afterAnswers, ALICE, buildEmailSignInApp, otherCode } from '../helpers/email-sign-in.js'

t.test('the mailed code signs in: a token whose amr is otp, a refresh token, a session listed as begun by email; the events', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  kit.events.clear()
  const res = await kit.verify(ALICE.email, code)
  t.equal(res.statusCode, 200, res.body)
  const data = res.json().data
  t.same(Object.keys(data).sort(), ['jwt', 'refresh_token'], 'answered as POST /auth answers')
  const claims = claimsOf(data.jwt)
  t.equal(claims.typ, 'access', 'a final token')
  t.same(claims.amr, ['otp'], 'the first factor: a one-time code')
  t.equal(claims.email, ALICE.email)
  const sessions = await kit.sessions(data.jwt)
  t.equal(sessions.length, 1)
  t.equal(sessions[0]?.method, 'email', 'GET /sessions says how it began')
  t.equal(sessions[0]?.current, true)
  t.notOk('second_factor' in (sessions[0] ?? {}))
  t.same(kit.events.of('session.started'), [{ userId: 1, sessionId: claims.sid, method: 'email', provider: null, secondFactor: null, ip: '127.0.0.1' }])
  t.same(kit.events.of('login.succeeded'), [{ userId: 1, ip: '127.0.0.1', method: 'email' }])
  t.same(kit.events.of('login.failed'), [])
  const refreshed = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth/refresh', payload: { refresh_token: data.refresh_token } })
  t.equal(refreshed.statusCode, 200, 'its refresh token rotates')
  t.same(claimsOf(refreshed.json().data.jwt).amr, ['otp'], 'and keeps how the session began')
})

t.test('a code works once: used again, 401 / 246, reported as a failed sign-in', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200)
  kit.events.clear()
  const again = await kit.verify(ALICE.email, code)
  t.same(errorOf(again), [401, 246])
  t.equal(again.json().data.message, 'The code is wrong, used or expired; ask for a new one if it keeps failing.')
  t.same(kit.events.all, [{ name: 'login.failed', payload: { ip: '127.0.0.1', reason: 'email_code', errorCode: 246 } }], 'no session, one failure')
})

t.test('a wrong code, a used code, an unknown address and an address never sent a code: one answer', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  const wrong = await kit.verify(ALICE.email, otherCode(code))
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200)
  const answers = [
    await kit.verify(ALICE.email, code),
    await kit.verify('nobody@example.com', code),
    await kit.verify('carol@example.com', code),
    await kit.verify(ALICE.email, 'not digits')
  ]
  for (const res of answers) {
    t.same(errorOf(res), [401, 246])
    t.equal(res.body, wrong.body)
  }
})

t.test('a code mailed to one account does not sign in another, nor through another address', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  t.same(errorOf(await kit.verify('carol@example.com', code)), [401, 246])
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'still alice\'s')
})

t.test('twenty parallel uses of one right code: one session', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { limits: { loginPerAccount: { max: 50, window: '15m' } } }, emailSignIn: { code: { maxTries: 10 } } })
  const code = await kit.codeFor(ALICE.email)
  kit.events.clear()
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await kit.verify(ALICE.email, code)))
  const won = answers.filter(res => res.statusCode === 200)
  t.equal(won.length, 1, 'one sign-in')
  for (const res of answers.filter(res => res.statusCode !== 200)) t.same(errorOf(res), [401, 246])
  t.equal(kit.events.of('session.started').length, 1, 'one session started')
  t.equal((await kit.sessions(won[0]?.json().data.jwt)).length, 1, 'one session listed')
  t.equal(kit.events.of('login.failed').length, 19)
})

t.test('twenty parallel uses within the default limits: at most one session, the others 401 or 429', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await kit.verify(ALICE.email, code)))
  t.equal(answers.filter(res => res.statusCode === 200).length, 1)
  t.ok(answers.every(res => res.statusCode === 200 || [[401, 246], [429, 200]].some(refusal => errorOf(res).join() === refusal.join())))
  t.equal(kit.events.of('session.started').length, 1)
})

t.test('five wrong codes: the code is dead, and each counted on the account\'s sign-in lockout', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { limits: { loginPerAccount: { max: 6, window: '5m' } } } })
  const code = await kit.codeFor(ALICE.email)
  for (let i = 1; i <= 5; i++) t.same(errorOf(await kit.verify(ALICE.email, otherCode(code, i))), [401, 246], `wrong code ${i}`)
  t.same(errorOf(await kit.verify(ALICE.email, code)), [401, 246], 'the right code, past its tries: refused, and no guess (given back)')
  t.same(errorOf(await kit.verify(ALICE.email, otherCode(code, 6))), [401, 246], 'a sixth wrong code')
  // six failures on alice's account (the right code was none): the next attempt, however it names her, is over the lockout
  const byLogin = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { username: ALICE.login, password: ALICE.password } })
  t.same(errorOf(byLogin), [429, 200], 'her password by login name is locked out')
  t.equal(byLogin.headers['retry-after'], '300')
  const fresh = await kit.codeFor(ALICE.email)
  t.same(errorOf(await kit.verify(ALICE.email, fresh)), [429, 200], 'and so is a new code')
  kit.clock.advance(5 * 60_000)
  t.equal((await kit.verify(ALICE.email, fresh)).statusCode, 200, 'until the window ends')
})

t.test('the code\'s own tries: the right code on the last try signs in', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const code = await kit.codeFor(ALICE.email)
  for (let i = 1; i <= 4; i++) t.same(errorOf(await kit.verify(ALICE.email, otherCode(code, i))), [401, 246])
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'the fifth try')
})

t.test('one wrong code then the right one signs in, and clears the account\'s failures', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { limits: { loginPerAccount: { max: 3, window: '15m' } } } })
  const code = await kit.codeFor(ALICE.email)
  t.same(errorOf(await kit.verify(ALICE.email, otherCode(code))), [401, 246])
  const failed = await kit.password(ALICE.email, 'not her password')
  t.same(errorOf(failed), [401, 48])
  t.equal((await kit.verify(ALICE.email, `  ${code} `)).statusCode, 200, 'the right one (spaces around it do not matter)')
  for (let i = 0; i < 3; i++) t.same(errorOf(await kit.password(ALICE.email, 'not her password')), [401, 48], `failure ${i + 1} after the sign-in`)
  t.same(errorOf(await kit.password(ALICE.email, ALICE.password)), [429, 200], 'three new failures lock it: the two before were cleared')
})

t.test('wrong codes count on the client\'s lockout too (limits.loginPerIp)', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { limits: { loginPerIp: { max: 3, window: '10m' } } } })
  for (let i = 0; i < 3; i++) t.same(errorOf(await kit.verify(`someone-${i}@example.com`, '123456', { ip: '10.0.0.9' })), [401, 246])
  const locked = await kit.verify(ALICE.email, '123456', { ip: '10.0.0.9' })
  t.same(errorOf(locked), [429, 200])
  t.equal(locked.headers['retry-after'], '600')
  t.same(kit.events.of('login.failed').at(-1), { ip: '10.0.0.9', reason: 'rate_limited', errorCode: 200 })
  t.equal((await kit.signIn(ALICE.email, { ip: '10.0.0.8' })).statusCode, 200, 'another client is not locked')
})

t.test('cookie mode: the refresh token goes into the cookie and the answer carries csrf_token', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { refresh: { enabled: true, cookie: { enabled: true } } } })
  const res = await kit.signIn()
  t.equal(res.statusCode, 200, res.body)
  t.same(Object.keys(res.json().data).sort(), ['csrf_token', 'jwt'], 'no refresh_token in the body')
  const cookies = [res.headers['set-cookie']].flat()
  const line = cookies.find(value => value?.startsWith(`${REFRESH_COOKIE}=`))
  t.ok(line, 'the refresh cookie is set')
  t.match(line, /HttpOnly/)
  t.match(line, /Secure/)
  const cookie = (line as string).slice(0, (line as string).indexOf(';'))
  const refreshed = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth/refresh', headers: { cookie, 'x-csrf-token': res.json().data.csrf_token } })
  t.equal(refreshed.statusCode, 200, refreshed.body)
})

t.test('after the answer, nothing of the code or the link was logged', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { linkUrl: 'https://app.example.com/in' } })
  const code = await kit.codeFor(ALICE.email)
  t.same(errorOf(await kit.verify(ALICE.email, otherCode(code))), [401, 246])
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200)
  await afterAnswers()
  const written = JSON.stringify(kit.logs)
  t.ok(kit.logs.length > 0, 'the host logs requests')
  t.notMatch(written, code)
  t.notMatch(written, 'app.example.com/in')
})
