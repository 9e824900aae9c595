// emailSignIn.register: a new address gets a code that creates its user, verified, when it signs in; off, or for an address registration would refuse, the same answer and no mail.
import t from 'tap'
import { UserExistsError, type NewUser } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { claimsOf, errorOf } from '../helpers/http.js'
import { afterAnswers, buildEmailSignInApp, codeOf, type EmailSignInKit } from '../helpers/email-sign-in.js'

const NEWCOMER = 'newcomer@example.org'

/** Records every `createUser` call of the kit's adapter, then makes it (or what `instead` does). */
function watchCreate (kit: EmailSignInKit, instead?: (input: NewUser, create: (input: NewUser) => Promise<unknown>) => Promise<unknown>): NewUser[] {
  const calls: NewUser[] = []
  // the adapter's own method, whatever an earlier watch put in its place
  const create = MemoryUserAdapter.prototype.createUser.bind(kit.users)
  kit.users.createUser = async (input) => {
    calls.push(input)
    return await (instead === undefined ? create(input) : instead(input, create)) as MemoryUser
  }
  return calls
}

t.test('register off: an unknown address gets the same answer, no mail and no user', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const known = await kit.request('alice@example.com')
  const res = await kit.request(NEWCOMER)
  t.equal(res.statusCode, 200)
  t.equal(res.body, known.body)
  await afterAnswers()
  t.same(kit.mail.sent.map(message => message.to), ['alice@example.com'], 'no mail to the new address')
  t.same(kit.events.of('email_sign_in.requested').at(-1), { userId: null, ip: '127.0.0.1', register: false })
  t.same(errorOf(await kit.verify(NEWCOMER, '123456')), [401, 246])
  t.equal(await kit.users.findByEmail(NEWCOMER), null, 'no user')
})

t.test('register on: the new address gets a code, which creates its user (email verified) and signs it in', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true }, settings: { users: { register: { defaultRole: 'author' } } } })
  const calls = watchCreate(kit)
  const res = await kit.request(NEWCOMER)
  t.equal(res.statusCode, 200)
  const message = await kit.mailed()
  t.equal(message.to, NEWCOMER)
  t.match(message.text, `sign in to jwt-login as ${NEWCOMER}`)
  await afterAnswers()
  t.same(kit.events.of('email_sign_in.requested'), [{ userId: null, ip: '127.0.0.1', register: true }])
  t.same(kit.events.of('account.mail_sent'), [{ userId: null, mail: 'emailSignIn', attempts: 1 }], 'a mail to no account yet')
  t.equal(await kit.users.findByEmail(NEWCOMER), null, 'nobody is created before the code comes back')

  const signedIn = await kit.verify(NEWCOMER, codeOf(message))
  t.equal(signedIn.statusCode, 200, signedIn.body)
  t.same(calls, [{ email: NEWCOMER, login: 'newcomer', displayName: 'newcomer', role: 'author', emailVerified: true }], 'createUser, with the address verified')
  const user = await kit.users.findByEmail(NEWCOMER)
  t.equal(user?.emailVerified, true)
  const claims = claimsOf(signedIn.json().data.jwt)
  t.equal(claims.sub, String(user?.ID))
  t.equal(claims.email_verified, true)
  t.same(claims.roles, ['author'])
  t.same(kit.events.of('email_sign_in.user_registered'), [{ userId: user?.ID, ip: '127.0.0.1' }])
  t.same(kit.events.of('login.succeeded').at(-1), { userId: user?.ID, ip: '127.0.0.1', method: 'email' })
  t.same(errorOf(await kit.verify(NEWCOMER, codeOf(message))), [401, 246], 'once')
  t.equal(calls.length, 1)

  const again = await kit.signIn(NEWCOMER)
  t.equal(again.statusCode, 200, 'the address now finds its account')
  t.equal(calls.length, 1, 'nobody created twice')
  t.same(kit.events.of('email_sign_in.requested').at(-1), { userId: user?.ID, ip: '127.0.0.1', register: false })
})

t.test('register on: a login taken by someone else gets a number', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const calls = watchCreate(kit)
  t.equal((await kit.signIn('alice@example.net')).statusCode, 200)
  t.equal(calls[0]?.login, 'alice2', 'alice is taken')
})

t.test('register on: an address in look-alike characters, or of a domain registration refuses, gets the same answer and no mail', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true }, settings: { users: { register: { allowedDomains: ['example.org'] } } } })
  const first = await kit.request(NEWCOMER)
  t.equal(codeOf(await kit.mailed()).length, 8, 'an allowed domain gets its code')
  for (const address of ['\uff56ictim@example.org', 'jos\u00e9@example.org', 'someone@example.com', 'someone@EXAMPLE.net']) {
    const res = await kit.request(address)
    t.equal(res.statusCode, 200, address)
    t.equal(res.body, first.body, address)
  }
  await afterAnswers()
  t.equal(kit.mail.sent.length, 1, 'no other mail')
  t.same(kit.events.of('email_sign_in.requested').slice(1).map(event => event.register), [false, false, false, false])
  t.equal((await kit.signIn('someone@EXAMPLE.org')).statusCode, 200, 'the domain is compared in any case')
})

t.test('register on: each new address gets its code, however many new addresses asked before; one address\'s own count still holds', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true, limits: { perAccount: { max: 2, window: '1h' }, perAddress: { max: 3, window: '1h' } } } })
  for (let i = 1; i <= 5; i++) {
    t.equal((await kit.request(`new-${i}@example.org`)).statusCode, 200)
    t.equal((await kit.mailed()).to, `new-${i}@example.org`, `new address ${i}: the accounts' count is not one count of every new address`)
  }
  t.equal((await kit.request('new-1@example.org')).statusCode, 200)
  t.equal((await kit.request('NEW-1@example.org')).statusCode, 200)
  await afterAnswers()
  t.equal(kit.mail.sent.length, 7)
  const over = await kit.request('New-1@example.org')
  t.same(errorOf(over), [429, 200], 'the address\'s fourth request')
  t.equal(over.headers['retry-after'], '3600')
})

t.test('register turned off between the request and the code: 401 / 246, nobody created', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const calls = watchCreate(kit)
  const code = await kit.codeFor(NEWCOMER)
  await kit.reload({ emailSignIn: { enabled: true, register: false } })
  kit.events.clear()
  t.same(errorOf(await kit.verify(NEWCOMER, code)), [401, 246])
  t.same(calls, [])
  t.equal(await kit.users.findByEmail(NEWCOMER), null)
  t.same(kit.events.of('login.failed'), [{ ip: '127.0.0.1', reason: 'email_code', errorCode: 246 }], 'reported as a refused code')
})

t.test('a code mailed to a new address does not create a user under a look-alike spelling of it', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const calls = watchCreate(kit)
  const code = await kit.codeFor('victim@example.org')
  // NFKC folds the full-width letter into the plain one: the same code key, a different address
  t.same(errorOf(await kit.verify('\uff56ictim@example.org', code)), [401, 246])
  t.same(calls, [], 'nobody created under the look-alike')
  t.equal((await kit.verify('victim@example.org', code)).statusCode, 200, 'the address the code went to signs in')
  t.same(calls.map(call => call.email), ['victim@example.org'])
})

t.test('an account created meanwhile under the new address: createUser says taken, and the account found signs in under the usual rules', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const code = await kit.codeFor(NEWCOMER)
  const calls = watchCreate(kit, async (input, create) => {
    // a concurrent registration wins, with a password its registrant chose and the address unproven
    await kit.users.addUser({ login: 'squatter', email: input.email, password: 'the squatter chose this', emailVerified: false })
    return await create(input)
  })
  const res = await kit.verify(NEWCOMER, code)
  t.equal(res.statusCode, 200, res.body)
  t.equal(calls.length, 1)
  const user = await kit.users.findByEmail(NEWCOMER)
  t.equal(claimsOf(res.json().data.jwt).sub, String(user?.ID), 'the account found signed in')
  t.equal(user?.emailVerified, true, 'its address proven now')
  t.same(errorOf(await kit.password(NEWCOMER, 'the squatter chose this')), [401, 48], 'and the registrant\'s password retired')
  t.same(kit.events.of('email_sign_in.user_registered'), [])
})

t.test('createUser that keeps saying taken while nobody has the address: it gives up after three tries with 409 / 38, and the code is given back', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const code = await kit.codeFor(NEWCOMER)
  const calls = watchCreate(kit, async () => { throw new UserExistsError() })
  t.same(errorOf(await kit.verify(NEWCOMER, code)), [409, 38])
  t.equal(calls.length, 3)
  watchCreate(kit)
  t.equal((await kit.verify(NEWCOMER, code)).statusCode, 200, 'the code still works once the host recovers')
})

t.test('createUser failing: 503 / 201, and the code is given back', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true } })
  const code = await kit.codeFor(NEWCOMER)
  watchCreate(kit, async () => { throw new Error('database down') })
  t.same(errorOf(await kit.verify(NEWCOMER, code)), [503, 201])
  watchCreate(kit)
  t.equal((await kit.verify(NEWCOMER, code)).statusCode, 200)
})
