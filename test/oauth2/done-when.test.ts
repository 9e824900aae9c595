// Issue 40's "done when", to the letter: `gh`, preset github with enterpriseUrl at a local GitHub Enterprise server, signs in by the primary verified email, refuses it listed unverified, finds its user by the link after the user changed their email through the account routes, and `/account/identities` lists the link and removes it unless it is the last way in.
import t from 'tap'
import { ALICE, mailCode } from '../helpers/account.js'
import { errorOf } from '../helpers/http.js'
import { buildIdentityApp, gitHubAccount } from '../helpers/identities.js'
import { startIdp } from '../helpers/oidc-provider.js'
import { startOAuth2Provider } from '../helpers/oauth2-providers.js'

const idp = await startIdp()
t.teardown(() => idp.close())
const github = await startOAuth2Provider('github')
t.teardown(() => github.close())

t.test('gh at GitHub Enterprise: sign-in by the primary verified email, the link after an email change, listed, unlinked', async (t) => {
  const kit = await buildIdentityApp(t, idp, { github })
  const octo = gitHubAccount(9001, 'alice-octo', ALICE.email)
  const signIn = async (): Promise<ReturnType<typeof kit.providerSignIn>> => {
    const { code, codeVerifier } = github.code(octo, { pkce: true })
    return await kit.providerSignIn({ provider: 'gh', code, code_verifier: codeVerifier as string })
  }

  const unverified = gitHubAccount(9002, 'mallory-octo', ALICE.email)
  unverified.emails = [{ email: ALICE.email, primary: true, verified: false, visibility: 'private' }, { email: 'mallory@elsewhere.example', primary: false, verified: true, visibility: null }]
  const refused = await kit.providerSignIn({ provider: 'gh', code: github.code(unverified).code })
  t.equal(refused.statusCode >= 400 && refused.statusCode < 500, true, `the address listed unverified: a 4xx (${refused.statusCode})`)
  t.same(errorOf(refused), [403, 111])

  const first = await signIn()
  t.equal(first.statusCode, 200, first.body)
  const { jwt, user } = first.json().data
  t.type(jwt, 'string')
  t.equal(user.user_email, ALICE.email, 'alice, by the primary verified email')

  t.equal((await kit.call('POST', '/account/email', jwt, { new_email: 'alice@moved.example.org' })).statusCode, 200)
  t.equal((await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(await kit.mail.next()) })).statusCode, 200)
  const second = await signIn()
  t.equal(second.statusCode, 200, second.body)
  t.equal(second.json().data.user.ID, user.ID, 'found by the link, though GitHub still reports the old address')
  t.equal(second.json().data.user.user_email, 'alice@moved.example.org')

  const listed = await kit.call('GET', '/account/identities', jwt)
  t.equal(listed.statusCode, 200)
  t.match(listed.json().data.identities, [{ provider: 'gh', display: 'alice-octo' }])
  t.equal(listed.json().data.identities.length, 1)
  const removed = await kit.call('DELETE', '/account/identities/gh', jwt)
  t.equal(removed.statusCode, 200, 'alice has a password: another way in')
  t.same((await kit.call('GET', '/account/identities', jwt)).json().data.identities, [])
})

t.test('a user gh registered has no other way in: its link stays', async (t) => {
  const kit = await buildIdentityApp(t, idp, { github, gh: { autoRegister: true } })
  const newcomer = gitHubAccount(9003, 'newcomer-octo', 'newcomer@example.com')
  const { code, codeVerifier } = github.code(newcomer, { pkce: true })
  const signedIn = await kit.providerSignIn({ provider: 'gh', code, code_verifier: codeVerifier as string })
  t.equal(signedIn.statusCode, 200, signedIn.body)
  const { jwt } = signedIn.json().data
  t.same(errorOf(await kit.call('DELETE', '/account/identities/gh', jwt)), [409, 250], 'no password, no passkey, no other link, sign-in by email off')
  t.equal((await kit.call('GET', '/account/identities', jwt)).json().data.identities.length, 1, 'the link stays')
})
