// How many codes are mailed: per client and per address over the limit, 429 for any address alike; per account over the limit, the same answer as ever and no mail.
import t from 'tap'
import { errorOf } from '../helpers/http.js'
import { afterAnswers, ALICE, buildEmailSignInApp } from '../helpers/email-sign-in.js'

t.test('limits.perIp: the client\'s next request answers 429 with Retry-After, for a known and an unknown address alike', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { limits: { perIp: { max: 3, window: '1h' } } } })
  for (const email of ['one@example.com', 'two@example.com', ALICE.email]) t.equal((await kit.request(email, { ip: '10.0.0.1' })).statusCode, 200)
  const known = await kit.request(ALICE.email, { ip: '10.0.0.1' })
  const unknown = await kit.request('three@example.com', { ip: '10.0.0.1' })
  for (const res of [known, unknown]) {
    t.same(errorOf(res), [429, 200])
    t.equal(res.headers['retry-after'], '3600')
    t.equal(res.body, known.body)
  }
  await afterAnswers()
  t.equal(kit.mail.sent.length, 1, 'the refused requests mailed nothing')
  t.equal((await kit.request(ALICE.email, { ip: '10.0.0.2' })).statusCode, 200, 'another client is not limited')
  kit.clock.advance(30 * 60_000)
  t.equal((await kit.request('four@example.com', { ip: '10.0.0.1' })).headers['retry-after'], '1800', 'Retry-After counts down')
  kit.clock.advance(30 * 60_000)
  t.equal((await kit.request('four@example.com', { ip: '10.0.0.1' })).statusCode, 200, 'a new window')
})

t.test('limits.perAddress: an address\'s next request answers 429, whether it has an account or not, however it is spelt', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { limits: { perAddress: { max: 2, window: '30m' } } } })
  const refusals = []
  for (const [email, other] of [[ALICE.email, 'ALICE@example.com'], ['nobody@example.com', 'Nobody@Example.com']] as const) {
    t.equal((await kit.request(email)).statusCode, 200)
    t.equal((await kit.request(other)).statusCode, 200)
    const over = await kit.request(email)
    t.same(errorOf(over), [429, 200], email)
    t.equal(over.headers['retry-after'], '1800')
    refusals.push(over.body)
  }
  t.equal(refusals[0], refusals[1], 'the same refusal')
  t.equal((await kit.request('someone-else@example.com')).statusCode, 200, 'another address is not limited')
})

t.test('limits.perAccount: over it, the same answer, no mail, and the code mailed before still works', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { limits: { perAccount: { max: 2, window: '1h' } } } })
  await kit.codeFor(ALICE.email)
  const second = await kit.codeFor(ALICE.email)
  const answered = await kit.request(ALICE.email)
  const unknown = await kit.request('nobody@example.com')
  t.equal(answered.statusCode, 200)
  t.equal(answered.body, unknown.body, 'as any other address is answered')
  await afterAnswers()
  t.equal(kit.mail.sent.length, 2, 'no third mail')
  t.same(kit.events.of('email_sign_in.requested').slice(-2), [{ userId: null, ip: '127.0.0.1', register: false }, { userId: null, ip: '127.0.0.1', register: false }], 'reported as an address that got no code')
  t.equal((await kit.verify(ALICE.email, second)).statusCode, 200, 'the last code mailed was not replaced')
  kit.clock.advance(60 * 60_000)
  t.equal((await kit.signIn(ALICE.email)).statusCode, 200, 'the next window mails again')
})

t.test('limits.perAccount counts the account, not the spelling: a host that finds one account under two addresses', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { limits: { perAccount: { max: 2, window: '1h' } } } })
  // the host matches an alias to alice's account (its own rule, say plus-addressing)
  const findByEmail = kit.users.findByEmail.bind(kit.users)
  kit.users.findByEmail = async (email) => await findByEmail(email.replace('+news', ''))
  await kit.codeFor(ALICE.email)
  await kit.codeFor('alice+news@example.com')
  t.equal((await kit.request('alice+news@example.com')).statusCode, 200)
  t.equal((await kit.request(ALICE.email)).statusCode, 200)
  await afterAnswers()
  t.equal(kit.mail.sent.length, 2, 'two codes for the account, whichever address asked')
  t.same(kit.mail.sent.map(message => message.to), [ALICE.email, ALICE.email], 'each mailed to the account\'s own address')
})
