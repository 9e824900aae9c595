// Every sign-in path of a locked user answers 403 / 251, right credentials or wrong: the second factor (a lock between the steps too), a trusted device, a passkey, a provider, an email code, a reset code, step-up.
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { MailBox } from '../helpers/mail-box.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { codeIn } from '../helpers/fixtures.js'
import { errorOf, login, post } from '../helpers/http.js'
import { buildOAuthApp, collect, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { authenticator, buildPasskeyApp } from '../helpers/passkeys.js'
import { BOB, buildTwoFactorApp, totpAt, wrongCode } from '../helpers/two-factor.js'
import { buildEmailSignInApp, otherCode } from '../helpers/email-sign-in.js'

t.test('second factor: a lock between the steps refuses a right and a wrong code alike; a trusted device stays ended after the unlock', async (t) => {
  const clock = testClock()
  const kit = await buildTwoFactorApp({ settings: { twoFactor: { rememberDevice: { enabled: true } } }, plugin: { clock } })
  t.teardown(() => kit.app.close())
  const first = await kit.login()
  const done = await kit.submit({ JWT: first.json().data.jwt, code: await totpAt(kit.secret, clock.now), remember_device: true })
  t.equal(done.statusCode, 200)
  const deviceToken = done.json().data.device_token as string
  t.type(deviceToken, 'string')

  clock.advance(30_000)
  const interim = await kit.interim()
  await kit.app.jwtLogin.lockUser(kit.bobId, { reason: 'between the steps' })
  const right = await kit.submit({ JWT: interim, code: await totpAt(kit.secret, clock.now) })
  const wrong = await kit.submit({ JWT: interim, code: await wrongCode(kit.secret, clock.now) })
  t.same(errorOf(right), [403, 251])
  t.same(wrong.json(), right.json(), 'the same answer for a wrong code')
  t.same(errorOf(await kit.login()), [403, 251], 'the password step of a second-factor user too')
  const withDevice = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: BOB.email, password: BOB.password, device_token: deviceToken } })
  t.same(errorOf(withDevice), [403, 251], 'a trusted device skips nothing')

  clock.advance(1000)
  await kit.app.jwtLogin.unlockUser(kit.bobId)
  const after = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: BOB.email, password: BOB.password, device_token: deviceToken } })
  t.equal(after.statusCode, 200)
  t.equal(after.json().data.two_factor_required, true, 'the device trusted before the lock asks for the code again')
  const interimAfter = after.json().data.jwt as string
  clock.advance(30_000)
  t.equal((await kit.submit({ JWT: interimAfter, code: await totpAt(kit.secret, clock.now) })).statusCode, 200, 'the second factor works again')
  t.same(errorOf(await kit.submit({ JWT: interim, code: await totpAt(kit.secret, clock.now) })), [401, 55], 'the interim token from before the lock stays ended')
})

t.test('passkey: a locked user\'s passkey sign-in answers 403 / 251 and records no use', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const failed = collect(kit.app, 'login.failed')
  const device = authenticator()
  t.equal((await kit.enrol(await kit.token(), device)).statusCode, 200)
  const uses = (await kit.passkeys.listByUser(kit.aliceId))[0]?.lastUsedAt
  await kit.app.jwtLogin.lockUser(kit.aliceId, { reason: 'stolen laptop' })
  t.same(errorOf(await kit.signIn(device)), [403, 251])
  t.same(failed.map(f => [f.reason, f.errorCode]), [['locked', 251]])
  t.equal((await kit.passkeys.listByUser(kit.aliceId))[0]?.lastUsedAt, uses, 'no use recorded')
  await kit.app.jwtLogin.unlockUser(kit.aliceId)
  t.equal((await kit.signIn(device)).statusCode, 200)
})

t.test('email code: a right and a wrong code answer alike; the code stays unspent and signs in after the unlock', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const aliceId = (await kit.users.findByEmail(ALICE.email))?.ID as number
  const code = await kit.codeFor(ALICE.email)
  await kit.app.jwtLogin.lockUser(aliceId, { reason: 'abuse' })
  const right = await kit.verify(ALICE.email, code)
  const wrong = await kit.verify(ALICE.email, otherCode(code))
  t.same(errorOf(right), [403, 251])
  t.same(wrong.json(), right.json())
  t.same(kit.events.of('login.failed').map(f => f.reason), ['locked', 'locked'])
  await kit.app.jwtLogin.unlockUser(aliceId)
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'the same code signs in')
})

t.test('password reset: the right code of a locked account answers 403 / 251 and stays unspent; a wrong one answers as always', async (t) => {
  const mail = new MailBox()
  const { app } = await buildApp({ resetPassword: { enabled: true } }, { mailer: mail })
  t.teardown(() => app.close())
  const failed = collect(app, 'reset.failed')
  await app.jwtLogin.lockUser(1, { reason: 'abuse' })
  t.equal((await post(app, '/user/reset_password', { email: ALICE.email })).statusCode, 200, 'the request answers as always, and mails a code')
  const fresh = codeIn((await mail.next()).text)
  const complete = async (value: string): ReturnType<typeof post> => await app.inject({ method: 'PUT', url: '/jwt-login/v1/user/reset_password', payload: { email: ALICE.email, code: value, new_password: 'a brand new passphrase' } })
  t.same(errorOf(await complete(`${fresh.slice(0, -1)}${fresh.endsWith('A') ? 'B' : 'A'}`)), [400, 62], 'a wrong code tells nothing of the lock')
  t.same(errorOf(await complete(fresh)), [403, 251])
  t.same(failed.map(f => f.reason), ['code_invalid', 'locked'])
  t.equal((await login(app)).statusCode, 403, 'the password did not change')
  await app.jwtLogin.unlockUser(1)
  t.equal((await login(app)).statusCode, 200, 'the old password still signs in')
  t.equal((await complete(fresh)).statusCode, 200, 'the code is still good')
})

t.test('step-up: the session\'s token is ended, so the answer is 401 / 55 whatever the factor', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const jwt = (await login(app)).json().data.jwt as string
  await app.jwtLogin.lockUser(1, { reason: 'abuse' })
  const right = await post(app, '/auth/step-up', { password: ALICE.password }, { authorization: `Bearer ${jwt}` })
  const wrong = await post(app, '/auth/step-up', { password: 'not the password at all' }, { authorization: `Bearer ${jwt}` })
  t.same(errorOf(right), [401, 55])
  t.same(wrong.json(), right.json())
})

t.test('provider: an ID token and a code of a locked user answer 403 / 251; the ID token is given back and signs in after the unlock', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  // linked first, so both ways find the user by the link
  t.equal((await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.alice })).code })).statusCode, 200)
  await app.jwtLogin.lockUser(1, { reason: 'abuse' })
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n-1' })
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken, nonce: 'n-1' })), [403, 251], 'an ID token')
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.alice })).code })), [403, 251], 'a code')
  t.same(failed.map(f => f.reason), ['ERR_JWT_LOGIN_USER_LOCKED', 'ERR_JWT_LOGIN_USER_LOCKED'])
  await app.jwtLogin.unlockUser(1)
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken, nonce: 'n-1' })), [401, 73], 'an ID token issued before the unlock is before the cutoff')
  t.equal((await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.alice })).code })).statusCode, 200, 'a new sign-in works')
})

t.test('provider: an ID token of a user found by email, locked, answers 403 / 251', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  await app.jwtLogin.lockUser(1, { reason: 'abuse' })
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n-2' }), nonce: 'n-2' })), [403, 251])
})

t.test('a sign-in that reads the lock on its own (passkey) fails closed when that read fails: 503, no session, no use recorded', async (t) => {
  const store = new MemoryStore()
  t.teardown(() => store.close())
  const kit = await buildPasskeyApp({ store })
  t.teardown(() => kit.app.close())
  const device = authenticator()
  t.equal((await kit.enrol(await kit.token(), device)).statusCode, 200)
  const before = (await kit.passkeys.listByUser(kit.aliceId))[0]?.lastUsedAt
  const started = collect(kit.app, 'session.started')
  const get = store.get.bind(store)
  store.get = async (key) => {
    if (key === stateKeys.userCutoff(kit.aliceId)) throw new Error('the store is down')
    return await get(key)
  }
  t.same(errorOf(await kit.signIn(device)), [503, 201])
  t.same(started, [])
  t.equal((await kit.passkeys.listByUser(kit.aliceId))[0]?.lastUsedAt, before)
  store.get = get
  t.equal((await kit.signIn(device)).statusCode, 200, 'with the store back, a new assertion signs in')
})
