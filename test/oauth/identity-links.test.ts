// Issue 40: a provider sign-in finds its user by the link first (whatever either side's email became, never a link another issuer made), links what a verified email found or what it registered, never lands in an unproven account, and a proven address takes every link the account held and ends the sessions they started.
import t, { type Test } from 'tap'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, mailCode } from '../helpers/account.js'
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

t.test('20 first sign-ins of one provider account, all past the link lookup before any links: each links, one made it (one identity.linked), every answer the same user', async (t) => {
  const SIGN_INS = 20
  const waiting: Array<() => void> = []
  const made: boolean[] = []
  const kit = await buildIdentityApp(t, idp, {
    adapter: (users) => adapterOf(users, [], {
      // the first lookups wait for one another, so that every sign-in finds no link and goes on to make it
      findByIdentity: async (provider, subject) => {
        const found = await users.findByIdentity(provider, subject)
        if (waiting.length < SIGN_INS) {
          await new Promise<void>((resolve) => {
            waiting.push(resolve)
            if (waiting.length === SIGN_INS) for (const go of waiting) go()
          })
        }
        return found
      },
      linkIdentity: async (user, provider, subject, details) => {
        const linked = await users.linkIdentity(user, provider, subject, details)
        made.push(linked)
        return linked
      }
    })
  })
  const linked = collect(kit.app, 'identity.linked')
  const tokens = await Promise.all(Array.from({ length: SIGN_INS }, async () => await idTokenOf(idp, kit.clock, 'acct-herd', { email: 'herd@example.com', email_verified: true })))
  const answers = await Promise.all(tokens.map(async (token) => await kit.providerSignIn({ provider: 'idp1', id_token: token })))
  t.same(answers.map(res => res.statusCode), Array(SIGN_INS).fill(200), JSON.stringify(answers.map(errorOf)))
  t.equal(new Set(answers.map(res => res.json().data.user.ID)).size, 1, 'one user in every answer')
  t.strictSame(made.sort(), [...Array(SIGN_INS - 1).fill(false), true], 'every sign-in asked for the link; the adapter made it once')
  t.equal(linked.length, 1, 'and only the one that made it reports it')
  t.strictSame(await kit.linksOf('herd@example.com'), [{ provider: 'idp1', subject: qualified('acct-herd') }])
})

t.test('allowUnverifiedEmail with autoRegister: the user a provider account registers is linked to it, and its next sign-in finds that user by the link', async (t) => {
  const kit = await buildIdentityApp(t, idp, { idp1: { allowUnverifiedEmail: true } })
  const linked = collect(kit.app, 'identity.linked')
  const first = await kit.providerSignIn(await codeOf(ACCOUNTS.eve))
  t.equal(first.statusCode, 200, first.body)
  const { user } = first.json().data
  const eve = await kit.users.findByEmail(ACCOUNTS.eve.email)
  t.equal(eve === null ? null : kit.users.toPublicUser(eve).email_verified, false, 'registered with the email unverified')
  t.strictSame(await kit.linksOf(ACCOUNTS.eve.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.eve.id) }])
  t.same(linked, [{ userId: user.ID, ip: '127.0.0.1', provider: 'idp1', via: 'sign_in' }])

  const second = await kit.providerSignIn(await codeOf(ACCOUNTS.eve))
  t.equal(second.statusCode, 200, second.body)
  t.equal(second.json().data.user.ID, user.ID, 'the same user, not 403 / 232 for an unverified account found by its email')
  const moved = await kit.providerSignIn({ provider: 'idp1', id_token: await idTokenOf(idp, kit.clock, ACCOUNTS.eve.id, { email: 'eve@elsewhere.example', email_verified: false }) })
  t.equal(moved.json().data?.user?.ID, user.ID, 'whatever email the provider reports next')
  t.equal(await kit.users.findByEmail('eve@elsewhere.example'), null)
  t.equal(linked.length, 1)
})

t.test('allowUnverifiedEmail with autoRegister: an existing account with the address, never verified, is still refused (403 / 232) and not linked', async (t) => {
  const kit = await buildIdentityApp(t, idp, { idp1: { allowUnverifiedEmail: true } })
  const linked = collect(kit.app, 'identity.linked')
  const registered = collect(kit.app, 'oauth.user_registered')
  const squatter = await kit.call('POST', '/users', undefined, { email: ACCOUNTS.eve.email, password: 'the squatter chose this one', user_login: 'squatter' })
  t.equal(squatter.statusCode, 200, squatter.body)
  for (let round = 0; round < 2; round++) {
    t.same(errorOf(await kit.providerSignIn(await codeOf(ACCOUNTS.eve))), [403, 232], `round ${round}`)
  }
  t.equal(await kit.users.findByIdentity('idp1', qualified(ACCOUNTS.eve.id)), null)
  t.strictSame(await kit.linksOf(ACCOUNTS.eve.email), [])
  t.equal(linked.length, 0)
  t.equal(registered.length, 0)
})

t.test('a provider name pointed at another issuer: a link made with the old one signs nobody in through the new one, whose account of the same sub is matched by its email (404 / 74 without a user)', async (t) => {
  const other = await startIdp()
  t.teardown(() => other.close())
  t.not(other.issuer, idp.issuer)
  const before = await buildIdentityApp(t, idp)
  t.equal((await before.link(await before.token(), await codeOf(ACCOUNTS.bob))).statusCode, 200, 'alice links bob\'s account at the first provider')
  t.strictSame(await before.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.bob.id) }])

  // the same database, idp1 now at the second provider, whose account acct-bob is someone else's
  const after = await buildIdentityApp(t, other, { users: before.users, idp1: { autoRegister: false } })
  const signIn = async (): Promise<ReturnType<IdentityKit['providerSignIn']>> => await after.providerSignIn(await codeFields(other, ACCOUNTS.bob))
  t.same(errorOf(await signIn()), [404, 74], 'no user has the email, and the old link is not followed')
  const bob = await before.users.addUser({ login: 'bob', email: ACCOUNTS.bob.email, password: 'bob has a long password', emailVerified: true })
  const byEmail = await signIn()
  t.equal(byEmail.statusCode, 200, byEmail.body)
  t.equal(byEmail.json().data.user.ID, bob.ID, 'the user its verified email names, not alice')
  t.strictSame(await after.linksOf(ACCOUNTS.bob.email), [{ provider: 'idp1', subject: subjectAt(other.issuer, ACCOUNTS.bob.id) }], 'linked under the new issuer')
  t.strictSame(await after.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.bob.id) }], 'alice\'s link is left as it was')
  const again = await before.providerSignIn(await codeOf(ACCOUNTS.bob))
  t.equal(again.json().data?.user?.ID, 1, 'and still signs alice in where idp1 is the first provider')
})

t.test('a session a link signs in while the owner\'s proof of the address is under way ends with the proof (the cutoff follows the unlinking)', async (t) => {
  let pause: { entered: () => void, released: Promise<void> } | null = null
  const kit = await buildIdentityApp(t, idp, {
    adapter: (users) => adapterOf(users, [], {
      unlinkIdentity: async (user, provider, subject) => {
        if (pause !== null) {
          pause.entered()
          await pause.released
        }
        return await users.unlinkIdentity(user, provider, subject)
      }
    })
  })
  const victim = ACCOUNTS.carol.email
  const registered = await kit.call('POST', '/users', undefined, { email: victim, password: 'the squatter chose this one', user_login: 'squatter' })
  t.equal(registered.statusCode, 200, registered.body)
  const squatted = registered.json().data.user.ID
  const attacker = await kit.token(victim, 'the squatter chose this one')
  t.equal((await kit.link(attacker, await codeOf(ACCOUNTS.eve))).statusCode, 200, 'the squatter links their own provider account')
  t.equal((await kit.call('POST', '/account/email/verification', undefined, { email: victim })).statusCode, 200)
  const code = mailCode(await kit.mail.next())

  let entered!: () => void
  let release!: () => void
  const unlinking = new Promise<void>((resolve) => { entered = resolve })
  pause = { entered, released: new Promise<void>((resolve) => { release = resolve }) }
  const proof = kit.call('POST', '/account/email/verify', undefined, { email: victim, code })
  await unlinking
  kit.clock.advance(1000)
  const raced = await kit.providerSignIn(await codeOf(ACCOUNTS.eve))
  t.equal(raced.statusCode, 200, raced.body)
  const { jwt, refresh_token: refreshToken, user } = raced.json().data
  t.equal(user.ID, squatted, 'the link, not yet removed, signs the squatter in')
  t.equal((await kit.call('GET', '/account/identities', jwt)).statusCode, 200, 'into a live session')
  kit.clock.advance(1000)
  release()
  const proved = await proof
  t.equal(proved.statusCode, 200, proved.body)

  t.same(errorOf(await kit.call('GET', '/account/identities', jwt)), [401, 55], 'the session ended with the proof')
  t.equal((await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth/refresh', payload: { refresh_token: refreshToken } })).statusCode, 401, 'and its refresh token')
  t.strictSame(await kit.linksOf(victim), [])
})
