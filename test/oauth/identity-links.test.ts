// Issue 40: a provider sign-in finds its user by the link first (whatever either side's email became), links only what a verified email found, never lands in an unproven account, and a proven address takes every link the account held.
import t, { type Test } from 'tap'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { mailCode } from '../helpers/account.js'
import { registrationRefusal } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { adapterOf, buildIdentityApp, codeFields, idTokenOf, subjectAt, type IdentityKit } from '../helpers/identities.js'
import { collect } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp, type TestAccount } from '../helpers/oidc-provider.js'
import { codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'

const idp = await startIdp()
t.teardown(() => idp.close())

/** A code of idp1 for the account, with PKCE's verifier (which linking from the account requires). */
const codeOf = async (account: TestAccount = ACCOUNTS.bob): Promise<Record<string, string>> => await codeFields(idp, account)
/** A subject of the test OpenID provider as a link holds it. */
const qualified = (subject: string): string => subjectAt(idp.issuer, subject)

t.test('done when: the second sign-in of a provider account finds its user by the link after the user changed their email through the account routes', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const linked = collect(kit.app, 'identity.linked')
  const first = await kit.providerSignIn(await codeOf())
  t.equal(first.statusCode, 200, first.body)
  const { jwt, user } = first.json().data
  t.same(linked, [{ userId: user.ID, ip: '127.0.0.1', provider: 'idp1', via: 'sign_in' }], 'the registration through the provider linked it')

  t.equal((await kit.call('POST', '/account/email', jwt, { new_email: 'bob@new.example.org' })).statusCode, 200)
  const confirmed = await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(await kit.mail.next()) })
  t.equal(confirmed.statusCode, 200, confirmed.body)
  t.equal(await kit.users.findByEmail(ACCOUNTS.bob.email), null, 'no user has the email the provider reports')

  const second = await kit.providerSignIn(await codeOf())
  t.equal(second.statusCode, 200, second.body)
  t.equal(second.json().data.user.ID, user.ID, 'the same user')
  t.equal(second.json().data.user.user_email, 'bob@new.example.org')
  t.equal(await kit.users.findByEmail(ACCOUNTS.bob.email), null, 'nobody registered for the old email')
  t.equal(linked.length, 1, 'nothing linked again')
})

t.test('the link survives the provider changing the email it reports, or leaving it out', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const signIn = async (claims: Record<string, unknown>): Promise<number> => {
    const res = await kit.providerSignIn({ provider: 'idp1', id_token: await idTokenOf(idp, kit.clock, 'acct-mover', claims) })
    t.equal(res.statusCode, 200, res.body)
    return res.json().data.user.ID
  }
  const id = await signIn({ email: 'mover@example.com', email_verified: true })
  t.equal(await signIn({ email: 'moved@example.org', email_verified: true }), id)
  t.equal(await signIn({}), id, 'no email at all')
  t.equal(await signIn({ email: 'alice@example.com', email_verified: false }), id, 'an email of another user: the link comes first')
  t.equal(await kit.users.findByEmail('moved@example.org'), null)
  t.equal((await kit.users.findById(id))?.user_email, 'mover@example.com', 'the user\'s own email is left as it is')
})

/**
 * The pre-hijack: the attacker registers the victim's address (unverified),
 * links their own provider account to it, and so could come back through
 * the provider after the victim takes the account over. `prove` is the
 * victim's proof of the address without a session.
 */
async function preHijack (t: Test, prove: (kit: IdentityKit, email: string) => Promise<void>): Promise<void> {
  const kit = await buildIdentityApp(t, idp)
  const unlinked = collect(kit.app, 'identity.unlinked')
  const victim = ACCOUNTS.carol.email
  const registered = await kit.call('POST', '/users', undefined, { email: victim, password: 'the squatter chose this one', user_login: 'squatter' })
  t.equal(registered.statusCode, 200, registered.body)
  const squatted = registered.json().data.user.ID
  const attacker = await kit.token(victim, 'the squatter chose this one')
  t.equal((await kit.link(attacker, await codeOf(ACCOUNTS.eve))).statusCode, 200, 'the attacker links their own provider account')
  const back = await kit.providerSignIn(await codeOf(ACCOUNTS.eve))
  t.equal(back.json().data.user.ID, squatted, 'while the address is unproven, the attacker\'s provider account signs in to it')

  t.same(errorOf(await kit.providerSignIn(await codeOf(ACCOUNTS.carol))), [403, 232], 'the owner\'s provider sign-in does not land in the unproven account')
  t.equal(await kit.users.findByIdentity('idp1', qualified(ACCOUNTS.carol.id)), null, 'nor links it')

  await prove(kit, victim)
  t.same(unlinked, [{ userId: squatted, ip: null, provider: 'idp1', reason: 'credentials_reset' }])
  t.strictSame(await kit.linksOf(victim), [])
  t.same(errorOf(await kit.providerSignIn(await codeOf(ACCOUNTS.eve))), [403, 111], 'the attacker\'s provider account no longer gets in (and its own email is unverified)')
  const owner = await kit.providerSignIn(await codeOf(ACCOUNTS.carol))
  t.equal(owner.statusCode, 200, owner.body)
  t.equal(owner.json().data.user.ID, squatted, 'the owner\'s provider account signs in to the proven account')
  t.strictSame(await kit.linksOf(victim), [{ provider: 'idp1', subject: qualified(ACCOUNTS.carol.id) }], 'and is linked')
}

t.test('pre-hijack: proven by the mailed code without a session (POST /account/email/verify), every link of the account goes', async (t) => {
  await preHijack(t, async (kit, email) => {
    t.equal((await kit.call('POST', '/account/email/verification', undefined, { email })).statusCode, 200)
    const proved = await kit.call('POST', '/account/email/verify', undefined, { email, code: mailCode(await kit.mail.next()) })
    t.equal(proved.statusCode, 200, proved.body)
  })
})

t.test('pre-hijack: proven by a password reset, every link of the account goes', async (t) => {
  await preHijack(t, async (kit, email) => {
    t.equal((await kit.call('POST', '/user/reset_password', undefined, { email })).statusCode, 200)
    const reset = await kit.app.inject({ method: 'PUT', url: RESET_URL, payload: { email, code: codeIn((await kit.mail.next()).text), new_password: NEW_PASSWORD } })
    t.equal(reset.statusCode, 200, reset.body)
  })
})

t.test('allowUnverifiedEmail: an unverified email finds its user, and is not linked', async (t) => {
  const kit = await buildIdentityApp(t, idp, { idp1: { allowUnverifiedEmail: true } })
  const linked = collect(kit.app, 'identity.linked')
  const eve = await kit.users.addUser({ login: 'eve', email: ACCOUNTS.eve.email, password: 'eve has a long password', emailVerified: true })
  for (let round = 0; round < 2; round++) {
    const res = await kit.providerSignIn(await codeOf(ACCOUNTS.eve))
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.json().data.user.ID, eve.ID)
  }
  t.equal(await kit.users.findByIdentity('idp1', qualified(ACCOUNTS.eve.id)), null)
  t.equal(linked.length, 0)
})

t.test('an adapter that keeps no links: a provider sign-in finds its user by email, each time', async (t) => {
  const kit = await buildIdentityApp(t, idp, { adapter: (users) => adapterOf(users, ['findByIdentity', 'linkIdentity', 'listIdentities', 'unlinkIdentity']) })
  const linked = collect(kit.app, 'identity.linked')
  const first = await kit.providerSignIn(await codeOf())
  t.equal(first.statusCode, 200, first.body)
  const second = await kit.providerSignIn(await codeOf())
  t.equal(second.json().data.user.ID, first.json().data.user.ID)
  t.equal(linked.length, 0)
})

t.test('an adapter with some of the four identity methods is refused at registration, naming the first one missing', async (t) => {
  const some = await registrationRefusal({ users: adapterOf(new MemoryUserAdapter(), ['linkIdentity', 'listIdentities']) })
  t.equal(some.path, 'users/linkIdentity')
  t.match(some.message, 'missing: linkIdentity, listIdentities')
  const one = await registrationRefusal({ users: adapterOf(new MemoryUserAdapter(), ['findByIdentity', 'linkIdentity', 'listIdentities']) })
  t.equal(one.path, 'users/findByIdentity')
  t.match(one.message, 'findByIdentity, linkIdentity, listIdentities, unlinkIdentity')
})

t.test('20 concurrent first sign-ins of one provider account: all 200, one user, exactly one link, one identity.linked', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const registered = collect(kit.app, 'oauth.user_registered')
  const linked = collect(kit.app, 'identity.linked')
  const tokens = await Promise.all(Array.from({ length: 20 }, async () => await idTokenOf(idp, kit.clock, 'acct-crowd', { email: 'crowd@example.com', email_verified: true })))
  const answers = await Promise.all(tokens.map(async (token) => await kit.providerSignIn({ provider: 'idp1', id_token: token })))
  t.same(answers.map(res => res.statusCode), Array(20).fill(200), JSON.stringify(answers.map(errorOf)))
  t.equal(new Set(answers.map(res => res.json().data.user.ID)).size, 1, 'one user in every answer')
  t.equal(registered.length, 1)
  t.strictSame(await kit.linksOf('crowd@example.com'), [{ provider: 'idp1', subject: qualified('acct-crowd') }])
  t.equal((await kit.users.findByIdentity('idp1', qualified('acct-crowd')))?.user_email, 'crowd@example.com')
  t.equal(linked.length, 1)
})
