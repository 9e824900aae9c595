// GET /account and email verification: a registered user starts unverified, the mailed code flips it; with a session it keeps everything, without one the account's earlier credentials end.
import t from 'tap'
import { claimsOf, errorOf } from '../helpers/http.js'
import { ALICE, buildAccountApp, mailCode } from '../helpers/account.js'

const NEWBIE = { email: 'newbie@example.org', password: 'a long enough new password' }

t.test('GET /account: the user with email_verified, the second factor, passkeys and sessions; no-store', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  const res = await kit.call('GET', '/account', jwt)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers['cache-control'], 'no-store')
  const { data } = res.json()
  t.equal(data.user.user_email, ALICE.email)
  t.equal(data.user.email_verified, true)
  t.strictSame(data.two_factor, { enabled: false, methods: [], backup_codes_left: 0 })
  t.equal(data.sessions, 1)
  t.notOk('passkeys' in data, 'passkeys are off')
  t.same(errorOf(await kit.call('GET', '/account')), [400, 53], 'a token is needed')
})

t.test('off by default: 403 / 233 on every account route', async (t) => {
  const kit = await buildAccountApp(t, { account: { enabled: false } })
  const jwt = await kit.token()
  for (const [method, path] of [['GET', '/account'], ['PUT', '/account/password'], ['POST', '/account/email'], ['POST', '/account/2fa/totp'], ['POST', '/account/email/verification']] as const) {
    t.same(errorOf(await kit.call(method, path, jwt, method === 'GET' ? undefined : {})), [403, 233], `${method} ${path}`)
  }
})

t.test('POST /users makes an unverified user: its token says so; the mailed code verifies it, with the session kept', async (t) => {
  const kit = await buildAccountApp(t, { users: { register: { enabled: true, verifyEmail: true } } })
  const registered = await kit.call('POST', '/users', undefined, NEWBIE)
  t.equal(registered.statusCode, 200, registered.body)
  t.equal(registered.json().data.user.email_verified, false)
  const mail = await kit.mail.next()
  t.equal(mail.to, NEWBIE.email)
  const jwt = await kit.token(NEWBIE.email, NEWBIE.password)
  t.equal(claimsOf(jwt).email_verified, false, 'the token says the email is unverified')
  t.same(errorOf(await kit.call('POST', '/account/email/verify', jwt, { code: 'WRONGCODE' })), [400, 234])
  const verified = await kit.call('POST', '/account/email/verify', jwt, { code: mailCode(mail) })
  t.equal(verified.statusCode, 200, verified.body)
  t.equal(verified.json().data.message, 'The email address is verified.')
  const account = await kit.call('GET', '/account', jwt)
  t.equal(account.statusCode, 200, 'the session stays')
  t.equal(account.json().data.user.email_verified, true)
  t.equal(claimsOf(await kit.token(NEWBIE.email, NEWBIE.password)).email_verified, true, 'a new token says verified')
  t.same(errorOf(await kit.call('POST', '/account/email/verify', jwt, { code: mailCode(mail) })), [400, 234], 'the code works once')
  t.same(errorOf(await kit.call('POST', '/account/email/verification', jwt, {})), [409, 237], 'verified already')
})

t.test('without a session: the same answer for an unknown, a verified and an unverified address; the code then ends what the account held', async (t) => {
  const kit = await buildAccountApp(t, { twoFactor: { rememberDevice: { enabled: false } } })
  await kit.call('POST', '/users', undefined, NEWBIE)
  const user = await kit.users.findByEmail(NEWBIE.email)
  const userId = (user as { ID: number }).ID
  const jwt = await kit.token(NEWBIE.email, NEWBIE.password)
  await kit.twoFactor.replaceBackupCodes(userId, ['h1'])
  const answers = await Promise.all(['nobody@example.org', ALICE.email, NEWBIE.email].map(async email => await kit.call('POST', '/account/email/verification', undefined, { email })))
  for (const res of answers) t.equal(res.statusCode, 200, res.body)
  t.equal(new Set(answers.map(res => res.body)).size, 1, 'one answer for all three')
  const mail = await kit.mail.next()
  t.equal(mail.to, NEWBIE.email, 'only the unverified address gets a code')
  t.same(errorOf(await kit.call('POST', '/account/email/verify', undefined, { email: 'nobody@example.org', code: mailCode(mail) })), [400, 234])
  const res = await kit.call('POST', '/account/email/verify', undefined, { email: NEWBIE.email, code: mailCode(mail) })
  t.equal(res.statusCode, 200, res.body)
  t.same(errorOf(await kit.call('GET', '/account', jwt)), [401, 55], 'the session from before the proof ended')
  t.equal(kit.twoFactor.backupCodesLeft(userId), 0, 'the backup codes went')
  t.equal((await kit.users.findByEmail(NEWBIE.email))?.emailVerified, true)
  t.same(errorOf(await kit.call('POST', '/account/email/verification', undefined, { email: 'not an address' })), [400, 236])
})

t.test('the ?rest_route= form and the request\'s language', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  const res = await kit.app.inject({ method: 'GET', url: '/?rest_route=/jwt-login/v1/account', headers: { authorization: `Bearer ${jwt}` } })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.user.ID, 1)
  const german = await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/account/email/verification', headers: { 'accept-language': 'de' }, payload: { email: 'nobody@example.org' } })
  t.equal(german.statusCode, 200)
  t.not(german.json().data.message, 'If the address belongs to an account that is not verified yet, a code has been sent to it.', 'in German')
  t.same(errorOf(await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/account/email/verify', headers: { 'accept-language': 'de' }, payload: {} })), [400, 203], 'a missing code is named')
})

t.test('authentication.requireVerifiedEmail: an unverified user\'s sign-in is refused with 403 / 231 after the password; registration does not sign in', async (t) => {
  const kit = await buildAccountApp(t, { authentication: { requireVerifiedEmail: true }, users: { register: { enabled: true, signIn: true, verifyEmail: true } } })
  const registered = await kit.call('POST', '/users', undefined, NEWBIE)
  t.equal(registered.statusCode, 200, registered.body)
  t.notOk('jwt' in registered.json().data, 'not signed in before verifying')
  t.same(errorOf(await kit.signIn(NEWBIE.email, NEWBIE.password)), [403, 231])
  t.same(errorOf(await kit.signIn(NEWBIE.email, 'a wrong password here')), [401, 48], 'a wrong password learns nothing')
  const code = mailCode(await kit.mail.next())
  t.equal((await kit.call('POST', '/account/email/verify', undefined, { email: NEWBIE.email, code })).statusCode, 200)
  t.equal((await kit.signIn(NEWBIE.email, NEWBIE.password)).statusCode, 200, 'verified, it signs in')
})

t.test('verify: no token and no address 400 / 236; a code for an address the account no longer has 234; a failing adapter with a session 503 / 201, the code kept; one address\'s own limit', async (t) => {
  const kit = await buildAccountApp(t, { account: { enabled: true, limits: { perAccount: { max: 1 } } } })
  t.same(errorOf(await kit.call('POST', '/account/email/verify', undefined, { code: 'ABCDEFGH' })), [400, 236])
  await kit.call('POST', '/users', undefined, NEWBIE)
  const jwt = await kit.token(NEWBIE.email, NEWBIE.password)
  await kit.call('POST', '/account/email/verification', jwt, {})
  const code = mailCode(await kit.mail.next())
  const user = await kit.users.findByEmail(NEWBIE.email)
  const setEmailVerified = kit.users.setEmailVerified.bind(kit.users)
  kit.users.setEmailVerified = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.call('POST', '/account/email/verify', jwt, { code })), [503, 201])
  kit.users.setEmailVerified = setEmailVerified
  if (user !== null) user.user_email = 'moved@example.org'
  t.same(errorOf(await kit.call('POST', '/account/email/verify', jwt, { code })), [400, 234], 'the code was for the address the account had')
  t.equal((await kit.call('POST', '/account/email/verification', undefined, { email: 'nobody@example.org' })).statusCode, 200)
  t.same(errorOf(await kit.call('POST', '/account/email/verification', undefined, { email: 'NOBODY@example.org' })), [429, 200], 'an address\'s own count, however it is spelt')
})
