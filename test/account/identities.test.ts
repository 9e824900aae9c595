// GET and POST /account/identities: the links listed oldest first; a provider account linked by its code or ID token after a recent sign-in, whatever its email, never one another user holds, never a second one of a provider.
import t from 'tap'
import { IdentityTakenError } from '../../lib/index.js'
import { collect } from '../helpers/oauth.js'
import { errorOf } from '../helpers/http.js'
import { ALICE } from '../helpers/account.js'
import { adapterOf, buildIdentityApp, codeFields, gitHubAccount, idTokenFields, subjectAt } from '../helpers/identities.js'
import { startOAuth2Provider } from '../helpers/oauth2-providers.js'
import { ACCOUNTS, CLIENTS, startIdp } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())
const github = await startOAuth2Provider('github')
t.teardown(() => github.close())

const OCTO = gitHubAccount(4242, 'octo-alice', 'alice.at.github@example.net')
/** A subject of the test OpenID provider as a link holds it. */
const qualified = (subject: string): string => subjectAt(idp.issuer, subject)

t.test('links by an ID token, an OpenID code and a GitHub code, whatever their emails; listed oldest first, linked_at in seconds, display left out when unknown', async (t) => {
  const kit = await buildIdentityApp(t, idp, { github })
  const linked = collect(kit.app, 'identity.linked')
  const jwt = await kit.token()
  const empty = await kit.call('GET', '/account/identities', jwt)
  t.equal(empty.statusCode, 200, empty.body)
  t.strictSame(empty.json().data, { identities: [] })

  const first = kit.clock()
  const byIdToken = await kit.link(jwt, await idTokenFields(idp, kit.clock, 'acct-nameless'))
  t.equal(byIdToken.statusCode, 200, byIdToken.body)
  t.equal(byIdToken.json().data.message, 'The provider account is linked.')
  kit.clock.advance(1500)
  const second = kit.clock()
  const byCode = await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob, 'idp2'))
  t.equal(byCode.statusCode, 200, byCode.body)
  kit.clock.advance(1500)
  const third = kit.clock()
  const octo = github.code(OCTO, { pkce: true })
  const byGitHub = await kit.link(jwt, { provider: 'gh', code: octo.code, code_verifier: octo.codeVerifier as string })
  t.equal(byGitHub.statusCode, 200, byGitHub.body)

  const listed = await kit.call('GET', '/account/identities', jwt)
  t.equal(listed.statusCode, 200, listed.body)
  t.strictSame(listed.json().data.identities, [
    { provider: 'idp1', linked_at: Math.floor(first / 1000) },
    { provider: 'idp2', display: ACCOUNTS.bob.email, linked_at: Math.floor(second / 1000) },
    { provider: 'gh', display: OCTO.login, linked_at: Math.floor(third / 1000) }
  ], 'the provider\'s id of the account is not shown')
  t.strictSame(linked.map(event => [event.userId, event.provider, event.via]), [[1, 'idp1', 'account'], [1, 'idp2', 'account'], [1, 'gh', 'account']])
  t.strictSame(await kit.linksOf(ALICE.email), [
    { provider: 'idp1', subject: qualified('acct-nameless') },
    { provider: 'idp2', subject: qualified(ACCOUNTS.bob.id) },
    { provider: 'gh', subject: subjectAt(github.origin, String(OCTO.id)) }
  ], 'each subject held with its issuer: the OpenID provider\'s, GitHub\'s API origin')

  const bobAtIdp2 = await idp.code({ client: CLIENTS.idp2, account: ACCOUNTS.bob })
  const signedIn = await kit.providerSignIn({ provider: 'idp2', code: bobAtIdp2.code })
  t.equal(signedIn.statusCode, 200, signedIn.body)
  t.equal(signedIn.json().data.user.user_email, ALICE.email, 'the provider account whose email is bob\'s signs alice in')
  t.equal(await kit.users.findByEmail(ACCOUNTS.bob.email), null, 'and registers nobody')
  t.same(errorOf(await kit.call('GET', '/account/identities')), [400, 53], 'a token is needed')
})

t.test('a sign-in older than account.recentAuth: 401 / 220, the code left unspent', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const stale = await kit.token()
  kit.clock.advance(6 * 60 * 1000)
  const bob = await codeFields(idp, ACCOUNTS.bob)
  const res = await kit.link(stale, bob)
  t.same(errorOf(res), [401, 220])
  t.match(res.headers['www-authenticate'], 'insufficient_user_authentication')
  t.strictSame(await kit.linksOf(ALICE.email), [])
  const fresh = await kit.token()
  t.equal((await kit.link(fresh, bob)).statusCode, 200, 'the same code links after a new sign-in')
  t.strictSame(await kit.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.bob.id) }])
})

t.test('an unknown provider: 400 / 69; a disabled one: 403 / 70', async (t) => {
  const kit = await buildIdentityApp(t, idp, { idp2: { enabled: false } })
  const jwt = await kit.token()
  t.same(errorOf(await kit.link(jwt, { provider: 'nope', code: 'x', code_verifier: 'y' })), [400, 69])
  t.same(errorOf(await kit.link(jwt, { code: 'x', code_verifier: 'y' })), [400, 69], 'no provider named')
  t.same(errorOf(await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob, 'idp2'))), [403, 70])
  t.same(errorOf(await kit.link(jwt, { provider: 'idp1' })), [400, 71], 'neither a code nor an ID token')
  t.strictSame(await kit.linksOf(ALICE.email), [])
})

t.test('a code without PKCE\'s code_verifier, an ID token without its nonce: 400 / 203 naming the field; the provider is not asked, nothing is spent or linked', async (t) => {
  const kit = await buildIdentityApp(t, idp, { github })
  const linked = collect(kit.app, 'identity.linked')
  const jwt = await kit.token()
  const { code_verifier: verifier, ...code } = await codeFields(idp, ACCOUNTS.bob, 'idp2')
  const { nonce, ...token } = await idTokenFields(idp, kit.clock, 'acct-planted')
  const octo = github.code(OCTO, { pkce: true })
  const asked = { idp: idp.requests.length, github: github.requests.length }

  const refusals: Array<[string, Record<string, string>, string]> = [
    ['an OpenID code alone', code, 'code_verifier'],
    ['an OpenID code with an empty verifier', { ...code, code_verifier: '' }, 'code_verifier'],
    ['a GitHub code alone', { provider: 'gh', code: octo.code }, 'code_verifier'],
    ['an ID token alone', token, 'nonce'],
    ['an ID token with an empty nonce', { ...token, nonce: '' }, 'nonce']
  ]
  for (const [name, fields, field] of refusals) {
    const res = await kit.link(jwt, fields)
    t.same(errorOf(res), [400, 203], name)
    t.match(res.json().data.message, `\`${field}\``, `${name}: the field is named`)
  }
  t.strictSame({ idp: idp.requests.length, github: github.requests.length }, asked, 'neither provider was asked')
  t.strictSame(await kit.linksOf(ALICE.email), [])
  t.equal(linked.length, 0)

  t.equal((await kit.link(jwt, { ...code, code_verifier: verifier as string })).statusCode, 200, 'the OpenID code, unspent, links with its verifier')
  t.equal((await kit.link(jwt, { provider: 'gh', code: octo.code, code_verifier: octo.codeVerifier as string })).statusCode, 200, 'the GitHub code too')
  t.equal((await kit.link(jwt, { ...token, nonce: nonce as string })).statusCode, 200, 'the ID token, unspent, links with its nonce')
  t.strictSame(await kit.linksOf(ALICE.email), [
    { provider: 'idp2', subject: qualified(ACCOUNTS.bob.id) },
    { provider: 'gh', subject: subjectAt(github.origin, String(OCTO.id)) },
    { provider: 'idp1', subject: qualified('acct-planted') }
  ])
})

t.test('a provider account linked to another user: 409 / 247; a second account of a provider already linked: 409 / 248; nothing changes', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const bobSignIn = await kit.providerSignIn({ provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  t.equal(bobSignIn.statusCode, 200, bobSignIn.body)
  const jwt = await kit.token()
  const taken = await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob))
  t.same(errorOf(taken), [409, 247])
  t.notMatch(taken.body, 'bob', 'the other user is not named')
  t.strictSame(await kit.linksOf(ACCOUNTS.bob.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.bob.id) }])
  t.strictSame(await kit.linksOf(ALICE.email), [])

  t.equal((await kit.link(jwt, await codeFields(idp, ACCOUNTS.carol))).statusCode, 200)
  const linked = collect(kit.app, 'identity.linked')
  t.same(errorOf(await kit.link(jwt, await idTokenFields(idp, kit.clock, 'acct-second'))), [409, 248])
  t.strictSame(await kit.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified(ACCOUNTS.carol.id) }])
  t.equal(linked.length, 0, 'no event for a refused link')
})

t.test('the caller\'s own linked account again: 200, one link, the first one kept, no second event', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const linked = collect(kit.app, 'identity.linked')
  const jwt = await kit.token()
  t.equal((await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob))).statusCode, 200)
  const { linked_at: linkedAt } = (await kit.call('GET', '/account/identities', jwt)).json().data.identities[0]
  kit.clock.advance(5000)
  const again = await kit.link(jwt, await codeFields(idp, ACCOUNTS.bob))
  t.equal(again.statusCode, 200, again.body)
  t.strictSame((await kit.call('GET', '/account/identities', jwt)).json().data.identities, [{ provider: 'idp1', display: ACCOUNTS.bob.email, linked_at: linkedAt }])
  t.equal(linked.length, 1)
})

t.test('ten parallel links of one account by its user, on an adapter that refuses the same link again (a plain unique index): all 200, one link, one event', async (t) => {
  const kit = await buildIdentityApp(t, idp, {
    adapter: (users) => adapterOf(users, [], {
      linkIdentity: async (user, provider, subject, details) => {
        if (await users.findByIdentity(provider, subject) !== null) throw new IdentityTakenError()
        return await users.linkIdentity(user, provider, subject, details)
      }
    })
  })
  const linked = collect(kit.app, 'identity.linked')
  const jwt = await kit.token()
  const tokens = await Promise.all(Array.from({ length: 10 }, async () => await idTokenFields(idp, kit.clock, 'acct-unique')))
  const answers = await Promise.all(tokens.map(async (fields) => await kit.link(jwt, fields)))
  t.same(answers.map(res => res.statusCode), Array(10).fill(200), JSON.stringify(answers.map(errorOf)))
  t.strictSame(await kit.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified('acct-unique') }])
  t.equal(linked.length, 1)
})

t.test('an adapter that reports the link taken because the user\'s own concurrent request made it first: 200, one link, no second event', async (t) => {
  const kit = await buildIdentityApp(t, idp, {
    adapter: (users) => adapterOf(users, [], {
      // the concurrent request's insert lands between this request's lookup and its own insert
      linkIdentity: async (user, provider, subject, details) => {
        await users.linkIdentity(user, provider, subject, details)
        throw new IdentityTakenError()
      }
    })
  })
  const linked = collect(kit.app, 'identity.linked')
  const jwt = await kit.token()
  const res = await kit.link(jwt, await idTokenFields(idp, kit.clock, 'acct-raced'))
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(await kit.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified('acct-raced') }])
  t.equal(linked.length, 0, 'the request that made it reports it')
})

t.test('an ID token links once (401 / 210 on reuse); one whose link failed is given back', async (t) => {
  const kit = await buildIdentityApp(t, idp)
  const jwt = await kit.token()
  const mine = await idTokenFields(idp, kit.clock, 'acct-alice-token', { email: 'someone@example.org', email_verified: true })
  t.equal((await kit.link(jwt, mine)).statusCode, 200)
  t.same(errorOf(await kit.link(jwt, mine)), [401, 210], 'spent')
  t.same(errorOf(await kit.providerSignIn(mine)), [401, 210], 'at /oauth/token too')

  const bobToken = await idTokenFields(idp, kit.clock, ACCOUNTS.bob.id, { email: ACCOUNTS.bob.email, email_verified: true })
  t.equal((await kit.providerSignIn(await idTokenFields(idp, kit.clock, ACCOUNTS.bob.id, { email: ACCOUNTS.bob.email, email_verified: true }))).statusCode, 200, 'bob signs up through idp1')
  t.same(errorOf(await kit.link(jwt, bobToken)), [409, 247])
  t.same(errorOf(await kit.link(jwt, bobToken)), [409, 247], 'not 210: the failed link gave it back')
  const bob = await kit.providerSignIn(bobToken)
  t.equal(bob.statusCode, 200, bob.body)
  t.equal(bob.json().data.user.user_email, ACCOUNTS.bob.email, 'the token still signs its own user in')
})

t.test('an adapter that fails to link: 503 / 201, nothing linked, the ID token given back', async (t) => {
  let failing = true
  const kit = await buildIdentityApp(t, idp, {
    adapter: (users) => adapterOf(users, [], {
      linkIdentity: async (user, provider, subject, details) => {
        if (failing) throw new Error('connection reset')
        return await users.linkIdentity(user, provider, subject, details)
      }
    })
  })
  const jwt = await kit.token()
  const token = await idTokenFields(idp, kit.clock, 'acct-flaky')
  t.same(errorOf(await kit.link(jwt, token)), [503, 201])
  t.strictSame(await kit.linksOf(ALICE.email), [])
  failing = false
  t.equal((await kit.link(jwt, token)).statusCode, 200, 'the retry with the same token links')
  t.strictSame(await kit.linksOf(ALICE.email), [{ provider: 'idp1', subject: qualified('acct-flaky') }])
})
