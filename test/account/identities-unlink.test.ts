// DELETE /account/identities/{provider}: a link removed after a recent sign-in, unless it is the account's last way in (a password, a passkey, sign-in by email, another enabled provider's link), also against concurrent removals; the routes off without the setting or an adapter that keeps links.
import t from 'tap'
import type { MemoryUser } from '../../lib/testing.js'
import { collect } from '../helpers/oauth.js'
import { errorOf } from '../helpers/http.js'
import { ALICE } from '../helpers/account.js'
import { adapterOf, buildIdentityApp, codeFields, idTokenFields, subjectAt, type IdentityKit, type IdentityKitOptions } from '../helpers/identities.js'
import { PASSKEY_SETTINGS } from '../helpers/passkeys.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

/** A subject of the test OpenID provider as a link holds it. */
const qualified = (subject: string): string => subjectAt(idp.issuer, subject)

/** Bob's first sign-in through idp1: a user registered without a password, linked to bob's idp1 account. Answers the session's token and the user. */
async function providerUser (kit: IdentityKit): Promise<{ jwt: string, bob: MemoryUser }> {
  const jwt = await kit.providerToken({ provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  const bob = await kit.users.findByEmail(ACCOUNTS.bob.email)
  if (bob === null || await kit.users.hasPassword(bob)) throw new Error('bob was not registered without a password')
  return { jwt, bob }
}

const at = (kit: IdentityKit, jwt: string, provider: string): ReturnType<IdentityKit['call']> => kit.call('DELETE', `/account/identities/${provider}`, jwt)

t.test('unlinks after a recent sign-in: 200 and identity.unlinked; a provider with no link: 404 / 249', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const unlinked = collect(kit.app, 'identity.unlinked')
  const stale = await kit.token()
  t.equal((await kit.link(stale, await codeFields(idp, ACCOUNTS.bob))).statusCode, 200)
  t.same(errorOf(await at(kit, stale, 'idp2')), [404, 249], 'nothing of idp2 is linked')
  t.same(errorOf(await at(kit, stale, 'nope')), [404, 249], 'nor of a provider that is not configured')
  t.same(errorOf(await at(kit, stale, 'not%20a%20name')), [400, 203], 'a name no provider can have (the schema)')
  kit.clock.advance(6 * 60 * 1000)
  t.same(errorOf(await at(kit, stale, 'idp1')), [401, 220], 'the sign-in is too old')
  t.equal((await kit.linksOf(ALICE.email)).length, 1)
  const res = await at(kit, await kit.token(), 'idp1')
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.message, 'The provider account is unlinked.')
  t.strictSame(await kit.linksOf(ALICE.email), [])
  t.same(unlinked, [{ userId: 1, ip: '127.0.0.1', provider: 'idp1', reason: 'account' }])
  t.same(errorOf(await at(kit, await kit.token(), 'idp1')), [404, 249], 'once')
  const signIn = await kit.providerSignIn({ provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  t.equal(signIn.json().data.user.user_email, ACCOUNTS.bob.email, 'the provider account no longer signs alice in: bob\'s email registers bob')
})

t.test('the last way in of a user a provider registered (no password, no passkey, no other link, sign-in by email off): 409 / 250, the link kept', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const { jwt } = await providerUser(kit)
  t.same(errorOf(await at(kit, jwt, 'idp1')), [409, 250])
  t.strictSame(await kit.linksOf(ACCOUNTS.bob.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.bob.id) }])
  const again = await kit.providerSignIn({ provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  t.equal(again.json().data.user.user_email, ACCOUNTS.bob.email, 'bob still gets in')
})

t.test('sign-in by email on is a way in: 200', async (t) => {
  const kit = await buildIdentityApp(t, idp, { settings: { emailSignIn: { enabled: true } } })
  const { jwt } = await providerUser(kit)
  t.equal((await at(kit, jwt, 'idp1')).statusCode, 200)
  t.strictSame(await kit.linksOf(ACCOUNTS.bob.email), [])
})

t.test('a link to another provider is a way in while that provider is configured and enabled', async (t) => {
  t.test('enabled: 200', async (t) => {
    const kit = await buildIdentityApp(t, idp)
    const { jwt } = await providerUser(kit)
    t.equal((await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob, 'idp2'))).statusCode, 200)
    t.equal((await at(kit, jwt, 'idp1')).statusCode, 200)
    t.strictSame(await kit.linksOf(ACCOUNTS.bob.email), [{ provider: 'idp2', subject: qualified(ACCOUNTS.bob.id) }])
    t.same(errorOf(await at(kit, jwt, 'idp2')), [409, 250], 'then idp2 is the last')
  })
  t.test('disabled: 409 / 250', async (t) => {
    const kit = await buildIdentityApp(t, idp, { idp2: { enabled: false } })
    const { jwt, bob } = await providerUser(kit)
    await kit.users.linkIdentity(bob, 'idp2', qualified(ACCOUNTS.bob.id), { display: null, linkedAt: kit.clock() })
    t.same(errorOf(await at(kit, jwt, 'idp1')), [409, 250])
    t.equal((await kit.linksOf(ACCOUNTS.bob.email)).length, 2)
  })
  t.test('no longer configured: 409 / 250', async (t) => {
    const kit = await buildIdentityApp(t, idp)
    const { jwt, bob } = await providerUser(kit)
    await kit.users.linkIdentity(bob, 'retired', 'acct-bob-elsewhere', { display: null, linkedAt: kit.clock() })
    await kit.users.linkIdentity(bob, 'constructor', 'acct-bob-proto', { display: null, linkedAt: kit.clock() })
    t.same(errorOf(await at(kit, jwt, 'idp1')), [409, 250])
    t.equal((await kit.linksOf(ACCOUNTS.bob.email)).length, 3)
  })
})

t.test('a passkey is a way in while passkeys are on', async (t) => {
  for (const on of [false, true]) {
    const kit = await buildIdentityApp(t, idp, { settings: { passkeys: { ...PASSKEY_SETTINGS, enabled: on } } })
    const { jwt, bob } = await providerUser(kit)
    const passkey = { id: 'cred-bob', userId: bob.ID, publicKey: 'AQID', counter: 0, transports: ['internal'], deviceType: 'multiDevice' as const }
    await kit.passkeys.create({ ...passkey, backupEligible: true, backedUp: true, aaguid: '00000000-0000-0000-0000-000000000000', name: 'phone', createdAt: new Date(kit.clock()), lastUsedAt: null })
    const res = await at(kit, jwt, 'idp1')
    if (on) t.equal(res.statusCode, 200, 'passkeys on: the passkey signs bob in')
    else t.same(errorOf(res), [409, 250], 'passkeys off: the stored passkey signs no one in')
  }
})

t.test('a password is a way in: one set after the provider registered the user (hasPassword)', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const { jwt, bob } = await providerUser(kit)
  await kit.users.setPassword(bob, 'bob chose a password later')
  t.equal((await at(kit, jwt, 'idp1')).statusCode, 200)
})

t.test('without hasPassword: a passwordFingerprint of null is no password; without either, every user has one', async (t) => {
  t.test('passwordFingerprint null: 409 / 250', async (t) => {
    const kit = await buildIdentityApp(t, idp, {
      adapter: (users) => adapterOf(users, ['hasPassword'], { passwordFingerprint: (user) => user.passwordless === true ? null : users.passwordFingerprint(user) })
    })
    const { jwt } = await providerUser(kit)
    t.same(errorOf(await at(kit, jwt, 'idp1')), [409, 250])
  })
  t.test('neither: 200', async (t) => {
    const kit = await buildIdentityApp(t, idp, { adapter: (users) => adapterOf(users, ['hasPassword', 'passwordFingerprint']) })
    const { jwt } = await providerUser(kit)
    t.equal((await at(kit, jwt, 'idp1')).statusCode, 200)
  })
})

t.test('two concurrent removals of a user\'s two links, nothing else a way in: at least one link stays (10 rounds)', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const unlinked = collect(kit.app, 'identity.unlinked')
  const { jwt, bob } = await providerUser(kit)
  for (let round = 0; round < 10; round++) {
    for (const provider of ['idp1', 'idp2']) await kit.users.linkIdentity(bob, provider, qualified(ACCOUNTS.bob.id), { display: null, linkedAt: kit.clock() })
    t.equal((await kit.linksOf(ACCOUNTS.bob.email)).length, 2)
    unlinked.length = 0
    const answers = await Promise.all(['idp1', 'idp2'].map(async (provider) => await at(kit, jwt, provider)))
    const removed = answers.filter(res => res.statusCode === 200).length
    const kept = await kit.linksOf(ACCOUNTS.bob.email)
    t.ok(removed <= 1, `round ${round}: at most one removal stands`)
    t.equal(kept.length, 2 - removed, `round ${round}: what was answered 200 is gone, the rest kept`)
    t.ok(answers.filter(res => res.statusCode !== 200).every(res => errorOf(res).join() === '409,250'), `round ${round}: the other is 409 / 250`)
    t.equal(unlinked.length, removed, 'an event for each removal that stands')
  }
})

t.test('two concurrent removals of one link with another way in: one 200, the other 404 / 249', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const jwt = await kit.token()
  for (let round = 0; round < 5; round++) {
    t.equal((await kit.link(jwt, await idTokenFields(idp, kit.clock, 'acct-twice'))).statusCode, 200)
    const answers = await Promise.all([1, 2].map(async () => await at(kit, jwt, 'idp1')))
    t.same(answers.map(errorOf).map(String).sort(), ['200,', '404,249'].sort(), `round ${round}`)
    t.strictSame(await kit.linksOf(ALICE.email), [])
  }
})

t.test('off: 403 / 233 on the three routes without account.identities.enabled, without account.enabled, or with an adapter that keeps no links', async (t) => {
  const variants: Array<[string, IdentityKitOptions]> = [
    ['account.identities.enabled false', { settings: { account: { enabled: true, identities: { enabled: false } } } }],
    ['account.enabled false', { settings: { account: { enabled: false } } }],
    ['an adapter without the four identity methods', { adapter: (users) => adapterOf(users, ['findByIdentity', 'linkIdentity', 'listIdentities', 'unlinkIdentity']) }]
  ]
  for (const [name, options] of variants) {
    const kit = await buildIdentityApp(t, idp, options)
    const jwt = await kit.token()
    t.same(errorOf(await kit.call('GET', '/account/identities', jwt)), [403, 233], `${name}: GET`)
    t.same(errorOf(await kit.link(jwt, await idTokenFields(idp, kit.clock, 'acct-off'))), [403, 233], `${name}: POST`)
    t.same(errorOf(await at(kit, jwt, 'idp1')), [403, 233], `${name}: DELETE`)
  }
})
