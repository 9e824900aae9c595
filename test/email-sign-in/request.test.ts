// POST /auth/email: one answer for every well-formed address, a code mailed to an account's address only, a newer code replacing the older, an expiry, the link mail and the request's language.
import t from 'tap'
import { SHIPPED_CATALOGUES } from '../../lib/i18n/messages.js'
import { renderTemplate } from '../../lib/mail/templates.js'
import { errorOf } from '../helpers/http.js'
import { afterAnswers, ALICE, buildEmailSignInApp, codeOf, linkOf, otherCode } from '../helpers/email-sign-in.js'

const SENT = { success: true, data: { message: 'If the address may sign in, a code has been sent to it.' } }
const LINK_URL = 'https://app.example.com/sign-in/email'

t.test('a known and an unknown address get the same answer; only the known one gets a code, in the English mail', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const known = await kit.request(ALICE.email)
  const unknown = await kit.request('nobody@example.com')
  for (const res of [known, unknown]) {
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), SENT)
    t.equal(res.body, known.body)
    t.equal(res.headers['content-type'], known.headers['content-type'])
    t.equal(res.headers['content-length'], known.headers['content-length'])
  }
  await afterAnswers()
  t.equal(kit.mail.sent.length, 1, 'one mail, to the account')
  const message = kit.mail.sent[0]
  t.equal(message?.to, ALICE.email)
  t.equal(message?.subject, 'Your jwt-login sign-in code')
  const code = codeOf(await kit.mailed())
  t.match(code, /^\d{8}$/, 'eight digits, the default')
  t.equal(message?.text, `Your sign-in code is ${code}. Enter it to sign in to jwt-login as ${ALICE.email}. It works once and expires in 10 minutes.\n\n` +
    'If you did not ask for it, ignore this mail: nobody can sign in without the code.')
  t.match(message?.html, `<strong style="font-family:monospace;font-size:1.4em">${code}</strong>`)
  t.same(kit.events.of('email_sign_in.requested'), [{ userId: 1, ip: '127.0.0.1', register: false }, { userId: null, ip: '127.0.0.1', register: false }])
  t.same(kit.events.of('account.mail_sent'), [{ userId: 1, mail: 'emailSignIn', attempts: 1 }])
})

t.test('a code of another length, its lifetime in the mail; the address found in any case, the mail to the account\'s own spelling', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { code: { length: 8, lifetime: '30m' } } })
  t.equal((await kit.request('ALICE@Example.COM')).statusCode, 200)
  const message = await kit.mailed()
  t.equal(message.to, ALICE.email)
  t.match(codeOf(message), /^\d{8}$/)
  t.match(message.text, 'expires in 30 minutes')
  t.equal((await kit.verify('Alice@example.com', codeOf(message))).statusCode, 200, 'the code is the address\'s, however it is spelt')
})

t.test('a new code replaces the older one (which answers 401 / 246), and its tries start again', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { code: { maxTries: 3 } } })
  const first = await kit.codeFor(ALICE.email)
  for (let i = 1; i <= 2; i++) t.same(errorOf(await kit.verify(ALICE.email, otherCode(first, i))), [401, 246], `wrong try ${i} of the first code`)
  const second = await kit.codeFor(ALICE.email)
  t.not(second, first)
  t.same(errorOf(await kit.verify(ALICE.email, first)), [401, 246], 'the older code stopped working (a try at the new one)')
  t.same(errorOf(await kit.verify(ALICE.email, otherCode(second))), [401, 246], 'a wrong try at the new one')
  // the third try of the new code: within maxTries only because its count started again
  const res = await kit.verify(ALICE.email, second)
  t.equal(res.statusCode, 200, res.body)
  t.type(res.json().data.jwt, 'string')
})

t.test('a code works until its lifetime ends, not after', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const early = await kit.codeFor(ALICE.email)
  kit.clock.advance(10 * 60_000 - 1000)
  t.equal((await kit.verify(ALICE.email, early)).statusCode, 200, 'a second before its end')
  const late = await kit.codeFor(ALICE.email)
  kit.clock.advance(10 * 60_000)
  t.same(errorOf(await kit.verify(ALICE.email, late)), [401, 246], 'at its end')
  kit.clock.advance(60_000)
  t.same(errorOf(await kit.verify(ALICE.email, late)), [401, 246], 'and after')
})

t.test('with linkUrl: the link mail carries the same code, in the link\'s fragment with the address as asked', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { linkUrl: LINK_URL } })
  t.equal((await kit.request('Alice@Example.com')).statusCode, 200)
  const message = await kit.mailed()
  const code = codeOf(message)
  const link = linkOf(message)
  t.equal(link, `${LINK_URL}#code=${code}&email=Alice%40Example.com`, 'linkUrl + #code=…&email=…')
  const fragment = new URLSearchParams(new URL(link as string).hash.slice(1))
  t.equal(fragment.get('code'), code, 'the fragment\'s code is the mailed code')
  t.equal(fragment.get('email'), 'Alice@Example.com')
  t.equal(new URL(link as string).search, '', 'nothing in the query, which a server would see')
  t.match(message.html, `<a href="${LINK_URL}#code=${code}&amp;email=Alice%40Example.com">`)
  await afterAnswers()
  t.same(kit.events.of('account.mail_sent'), [{ userId: 1, mail: 'emailSignInLink', attempts: 1 }])
  t.equal((await kit.verify(fragment.get('email'), fragment.get('code'))).statusCode, 200, 'the page posts what the fragment holds')
})

t.test('an address that needs escaping in the link', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { linkUrl: 'http://localhost:3000/in?from=mail' } })
  await kit.users.addUser({ login: 'plus', email: 'a+b&c=d@example.com', password: 'plus has a long password', emailVerified: true })
  await kit.request('a+b&c=d@example.com')
  const message = await kit.mailed()
  const link = linkOf(message) as string
  t.ok(link.startsWith('http://localhost:3000/in?from=mail#code='), link)
  const fragment = new URLSearchParams(new URL(link).hash.slice(1))
  t.equal(fragment.get('email'), 'a+b&c=d@example.com', 'the address comes back whole')
  t.equal(fragment.get('code'), codeOf(message))
  t.same([...fragment.keys()], ['code', 'email'])
})

t.test('Accept-Language de: the answer and the mail in German', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { linkUrl: LINK_URL } })
  const de = SHIPPED_CATALOGUES.de
  const res = await kit.request(ALICE.email, { headers: { 'accept-language': 'de-DE,de;q=0.9' } })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.message, de?.messages.emailSignInSent)
  if (res.statusCode !== 200) return
  const message = await kit.mailed()
  const code = /\b(\d{8})\b/.exec(message.text)?.[1] as string
  const values = { code, email: ALICE.email, site_name: 'jwt-login', expires_in_minutes: '10', link: `${LINK_URL}#code=${code}&email=alice%40example.com` }
  t.equal(message.subject, renderTemplate(de?.mails.emailSignInLink.subject as string, values))
  t.equal(message.text, renderTemplate(de?.mails.emailSignInLink.text as string, values))
  t.not(message.subject, renderTemplate(SHIPPED_CATALOGUES.en?.mails.emailSignInLink.subject as string, values), 'not the English one')
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'the code of the German mail signs in')
})
