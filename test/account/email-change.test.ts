// POST /account/email, /confirm and /revert: nothing changes before the new address proves it receives mail; the old one gets a notice and can put itself back, ending every session.
import t from 'tap'
import { errorOf } from '../helpers/http.js'
import { ALICE, buildAccountApp, mailCode } from '../helpers/account.js'

const NEW_EMAIL = 'alice@new.example.org'

t.test('change, confirm, notice, revert', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  const other = await kit.token()
  t.same(errorOf(await kit.call('POST', '/account/email', jwt, { new_email: ALICE.email.toUpperCase() })), [400, 236], 'the account\'s own')
  t.same(errorOf(await kit.call('POST', '/account/email', jwt, { new_email: 'аlice@example.org' })), [400, 236], 'not plain ASCII')
  const asked = await kit.call('POST', '/account/email', jwt, { new_email: NEW_EMAIL })
  t.equal(asked.statusCode, 200, asked.body)
  const toNew = await kit.mail.next()
  t.equal(toNew.to, NEW_EMAIL)
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200, 'nothing changed yet')
  t.same(errorOf(await kit.call('POST', '/account/email/confirm', jwt, { code: 'WRONGCODE' })), [400, 234])
  const confirmed = await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(toNew) })
  t.equal(confirmed.statusCode, 200, confirmed.body)
  t.equal((await kit.signIn(NEW_EMAIL, ALICE.password)).statusCode, 200, 'the new address signs in')
  t.same(errorOf(await kit.signIn(ALICE.email, ALICE.password)), [401, 48], 'the old one does not')
  const notice = await kit.mail.next()
  t.equal(notice.to, ALICE.email, 'the old address gets a notice')
  t.match(notice.text, 'revert code')
  t.same(errorOf(await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: 'WRONGCODE' })), [400, 234])
  const reverted = await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: mailCode(notice) })
  t.equal(reverted.statusCode, 200, reverted.body)
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200, 'the old address is back')
  t.same(errorOf(await kit.call('GET', '/account', jwt)), [401, 55], 'every session ended')
  t.same(errorOf(await kit.call('GET', '/account', other)), [401, 55])
  t.same(errorOf(await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: mailCode(notice) })), [400, 234], 'once')
})

t.test('an address another account has: 409 / 235 at the confirmation, naming no account; nothing changed', async (t) => {
  const kit = await buildAccountApp(t)
  await kit.users.addUser({ login: 'bob', email: 'bob@example.com', password: 'bob has a long password' })
  const jwt = await kit.token()
  await kit.call('POST', '/account/email', jwt, { new_email: 'BOB@example.com' })
  const res = await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(await kit.mail.next()) })
  t.same(errorOf(res), [409, 235])
  t.notMatch(res.body, 'bob')
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200)
})

t.test('20 parallel confirms of one code change the email once', async (t) => {
  const kit = await buildAccountApp(t)
  const changed: unknown[] = []
  kit.app.jwtLogin.events.on('email.changed', (event) => changed.push(event))
  const jwt = await kit.token()
  await kit.call('POST', '/account/email', jwt, { new_email: NEW_EMAIL })
  const code = mailCode(await kit.mail.next())
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await kit.call('POST', '/account/email/confirm', jwt, { code })))
  t.equal(answers.filter(res => res.statusCode === 200).length, 1)
  t.equal(answers.filter(res => errorOf(res)[1] === 234).length, 19)
  t.equal(changed.length, 1)
})

t.test('a sign-in older than account.recentAuth: 401 / 220 with WWW-Authenticate', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  kit.clock.advance(6 * 60 * 1000)
  const res = await kit.call('POST', '/account/email', jwt, { new_email: NEW_EMAIL })
  t.same(errorOf(res), [401, 220])
  t.match(res.headers['www-authenticate'], 'insufficient_user_authentication')
})
