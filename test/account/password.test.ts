// PUT /account/password: the current password (counted like a sign-in's), or a recent sign-in that was not by password alone; other sessions end, the caller's stays, a notice is mailed.
import t from 'tap'
import { errorOf } from '../helpers/http.js'
import { ALICE, buildAccountApp } from '../helpers/account.js'

const NEW = 'a much newer passphrase'

t.test('wrong current password 401 / 238; right: 200, the old password no longer signs in, another session ends at once, the caller stays, a notice goes', async (t) => {
  const kit = await buildAccountApp(t)
  const changed: unknown[] = []
  kit.app.jwtLogin.events.on('password.changed', (event) => changed.push(event))
  const jwt = await kit.token()
  const other = await kit.token()
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: 'not it', new_password: NEW })), [401, 238])
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password })), [400, 203], 'the new password is needed')
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: 'short' })), [400, 204], 'the reset\'s policy')
  const res = await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: NEW })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.message, 'The password was changed.')
  t.same(errorOf(await kit.signIn(ALICE.email, ALICE.password)), [401, 48], 'the old password no longer signs in')
  t.equal((await kit.signIn(ALICE.email, NEW)).statusCode, 200, 'the new one does')
  t.same(errorOf(await kit.call('GET', '/account', other)), [401, 55], 'another session is refused at once')
  t.equal((await kit.call('GET', '/account', jwt)).statusCode, 200, 'the caller\'s token still validates')
  const notice = await kit.mail.next()
  t.equal(notice.to, ALICE.email)
  t.match(notice.text, 'was just changed')
  t.notMatch(notice.text, NEW)
  t.strictSame(changed, [{ userId: 1, ip: '127.0.0.1', othersEnded: true }])
  t.notOk(kit.lines.join('').includes(NEW), 'the new password is in no log line')
})

t.test('wrong current passwords count on the account lockout: past limits.loginPerAccount, 429', async (t) => {
  const kit = await buildAccountApp(t, { limits: { loginPerAccount: { max: 2, window: '15m' } } })
  const jwt = await kit.token()
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: 'wrong 1', new_password: NEW })), [401, 238])
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: 'wrong 2', new_password: NEW })), [401, 238])
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: NEW })), [429, 200], 'locked, the right one too')
})

t.test('without current_password: a recent sign-in that was more than a password (here a provider-like amr), else 401 / 220', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { new_password: NEW })), [401, 220], 'a password sign-in must give the password')
  const stepped = kit.app.jwtLogin.sign({ ID: 1, user_login: 'alice', user_email: ALICE.email, display_name: 'Alice', roles: [] })
  t.same(errorOf(await kit.call('PUT', '/account/password', stepped, { new_password: NEW })), [401, 220], 'a token from sign() says no sign-in time')
})

t.test('the host\'s password policy refuses a new password: 400 / 204, nothing changes', async (t) => {
  const kit = await buildAccountApp(t, {}, { passwordPolicy: (password) => !password.includes('forbidden') })
  const jwt = await kit.token()
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: 'a forbidden passphrase' })), [400, 204])
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200)
  t.equal((await kit.call('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: 'an allowed passphrase' })).statusCode, 200)
})
