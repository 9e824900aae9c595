// Sign-in with the github preset against a local GitHub Enterprise Server: the primary verified email, the link kept beside the account, and each way GitHub refuses or fails.
import t, { type Test } from 'tap'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE } from '../helpers/app.js'
import { closedPort } from '../helpers/net.js'
import { buildOAuthApp, collect, errorOf, postToken } from '../helpers/oauth.js'
import { OTHER_REDIRECT_URI, startOAuth2Provider, type GitHubAccount } from '../helpers/oauth2-providers.js'

const gh = await startOAuth2Provider('github')
t.teardown(() => gh.close())

/** Alice's GitHub account: her address is the primary one, verified; an old one is listed unverified. */
const ALICE_GH: GitHubAccount = {
  id: 1001,
  login: 'alice-gh',
  name: 'Alice on GitHub',
  email: null,
  emails: [
    { email: 'alice@old.example', primary: false, verified: false, visibility: null },
    { email: ALICE.email, primary: true, verified: true, visibility: 'private' }
  ]
}

const account = (id: number, login: string, emails: GitHubAccount['emails']): GitHubAccount => ({ id, login, name: null, email: null, emails })
const primary = (email: string, verified = true): GitHubAccount['emails'][number] => ({ email, primary: true, verified, visibility: 'private' })

type Providers = Parameters<typeof buildOAuthApp>[0]

/** The app with provider `gh`: the github preset at the local server, with `extra` over its settings; on its own memory users (alice seeded) unless given `users`. */
async function build (t: Test, extra: Record<string, unknown> = {}, users?: MemoryUserAdapter): Promise<Awaited<ReturnType<typeof buildOAuthApp>>> {
  const providers = { gh: { enabled: true, preset: 'github', clientId: gh.clientId, clientSecret: gh.clientSecret, redirectUris: gh.redirectUris, ...gh.settings, ...extra } }
  const built = await buildOAuthApp(providers as unknown as Providers, {}, users === undefined ? {} : { users })
  t.teardown(() => built.app.close())
  return built
}

const seen = (endpoint: 'token' | 'user' | 'emails'): number => gh.requests.filter((r) => r.endpoint === endpoint).length

t.test('the primary verified email signs its user in, and links the GitHub account', async (t) => {
  const { app, users } = await build(t)
  const succeeded = collect(app, 'oauth.succeeded')
  const linked = collect(app, 'identity.linked')
  const before = gh.requests.length
  const res = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.equal(res.statusCode, 200)
  const alice = await users.findByEmail(ALICE.email)
  const data = res.json().data
  t.same(data.user, { ID: alice?.ID, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName })
  t.equal((await app.jwtLogin.verify(data.jwt)).sub, String(alice?.ID))
  t.same(succeeded, [{ userId: alice?.ID, ip: '127.0.0.1', provider: 'gh', flow: 'code' }])
  t.same(linked, [{ userId: alice?.ID, ip: '127.0.0.1', provider: 'gh', via: 'sign_in' }])
  const links = await users.listIdentities(alice as NonNullable<typeof alice>)
  t.match(links, [{ provider: 'gh', display: 'alice-gh', linkedAt: Number }])
  t.same(links.map((link) => link.subject), [`${gh.origin}/ 1001`], 'the numeric id, qualified by the origin of the user API')

  const calls = gh.requests.slice(before)
  t.same(calls.map((r) => r.path).sort(), ['/api/v3/user', '/api/v3/user/emails', '/login/oauth/access_token'], 'one redemption, then /user and /user/emails')
  const token = calls.find((r) => r.endpoint === 'token')
  t.match(token, { method: 'POST', path: '/login/oauth/access_token', body: { grant_type: 'authorization_code', client_id: gh.clientId, client_secret: gh.clientSecret } }, 'client_secret_post, GitHub\'s default')
  t.equal(token?.headers.authorization, undefined)
  t.match(token?.headers.accept, /application\/json/, 'JSON asked for: GitHub answers form-encoded otherwise')
  for (const call of calls.filter((r) => r.endpoint !== 'token')) t.match(call.headers.authorization, /^Bearer gho_/, `${call.path} with the access token`)
})

t.test('HTTP Basic when the host chooses it', async (t) => {
  const { app } = await build(t, { clientAuthMethod: 'client_secret_basic' })
  const before = seen('token')
  t.equal((await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })).statusCode, 200)
  const token = gh.requests.filter((r) => r.endpoint === 'token')[before]
  t.match(token?.headers.authorization, /^Basic /)
  t.notOk('client_secret' in (token?.body as Record<string, string>), 'no secret in the body')
})

t.test('an address GitHub does not vouch for signs nobody in', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  const failed = collect(app, 'oauth.failed')

  const unverified = account(2001, 'unverified', [primary(ALICE.email, false)])
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(unverified).code })), [403, 111], 'GitHub refuses the code of a user whose primary email is unverified')

  // GitHub issues tokens only to users with a verified primary address; the list can still say otherwise (unverified since)
  gh.failNext('emails', { status: 200, body: [primary(ALICE.email, false)] })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [403, 111], 'the primary entry of /user/emails unverified')

  const secondary = account(2002, 'two-addresses', [primary('alice.work@elsewhere.example', true), { email: ALICE.email, primary: false, verified: true, visibility: null }])
  const res = await postToken(app, { provider: 'gh', code: gh.code(secondary).code })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.user.user_email, 'alice.work@elsewhere.example', 'a verified address that is not the primary one finds nobody: the primary one is registered')
  t.not(res.json().data.user.ID, alice.ID)

  gh.failNext('emails', { status: 200, body: [] })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [403, 111], 'no primary entry')
  gh.failNext('emails', { status: 200, body: { message: 'not a list' } })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [403, 111], 'an answer that is no list')
  gh.failNext('emails', { status: 200, body: [null, { email: ALICE.email, primary: 'yes', verified: true }] })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [403, 111], 'only `primary: true` is the primary entry')

  t.same(await users.listIdentities(alice), [], 'alice was linked to none of them')
  t.same(failed.map((f) => f.errorCode), [111, 111, 111, 111, 111])
})

t.test('allowUnverifiedEmail signs in by an unverified primary address, but links nothing', async (t) => {
  const { app, users } = await build(t, { allowUnverifiedEmail: true })
  const linked = collect(app, 'identity.linked')
  gh.failNext('emails', { status: 200, body: [primary(ALICE.email, false)] })
  const res = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.user.user_login, 'alice')
  t.same(linked, [])
  t.same(await users.listIdentities(await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>), [])
})

t.test('PKCE: the verifier is passed to GitHub', async (t) => {
  const { app } = await build(t)
  const good = gh.code(ALICE_GH, { pkce: true })
  const before = seen('token')
  t.equal((await postToken(app, { provider: 'gh', code: good.code, code_verifier: good.codeVerifier as string })).statusCode, 200)
  t.match(gh.requests.filter((r) => r.endpoint === 'token')[before]?.body, { code_verifier: good.codeVerifier })
  const missing = gh.code(ALICE_GH, { pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: missing.code })), [401, 72], 'without its verifier')
  const wrong = gh.code(ALICE_GH, { pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: wrong.code, code_verifier: good.codeVerifier as string })), [401, 72], 'with another verifier')
})

t.test('a wrong or used code is 401 / 72; a code is tried at GitHub once', async (t) => {
  const { app } = await build(t)
  const failed = collect(app, 'oauth.failed')
  t.same(errorOf(await postToken(app, { provider: 'gh', code: 'not-a-code-github-issued' })), [401, 72], 'GitHub\'s bad_verification_code, answered with HTTP 200')
  const tried = seen('token')
  t.same(errorOf(await postToken(app, { provider: 'gh', code: 'not-a-code-github-issued' })), [401, 72])
  t.equal(seen('token'), tried, 'the wrong code was not sent again')

  const { code } = gh.code(ALICE_GH)
  t.equal((await postToken(app, { provider: 'gh', code })).statusCode, 200)
  const redeemed = seen('token')
  t.same(errorOf(await postToken(app, { provider: 'gh', code })), [401, 72])
  t.equal(seen('token'), redeemed, 'the used code never reached GitHub')
  t.same(failed.map((f) => [f.provider, f.reason]), Array(3).fill(['gh', 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID']))
})

t.test('GitHub refusing our client, or failing, is 502 / 202', async (t) => {
  const { app: wrongSecret } = await build(t, { clientSecret: 'not-the-secret' })
  const res = await postToken(wrongSecret, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.same(errorOf(res), [502, 202], 'incorrect_client_credentials')
  t.equal(res.json().data.message, 'The identity provider answered with an error.')

  const { app } = await build(t)
  gh.failNext('emails', { status: 401, body: { message: 'Bad credentials', status: '401' } })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], '/user/emails refusing the token')
  gh.failNext('token', { status: 503, body: '<html>unicorn</html>', contentType: 'text/html' })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], 'a token endpoint answering an HTML page')
  gh.failNext('user', { status: 500, body: { message: 'Server Error' } })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], '/user failing')
  gh.failNext('user', { status: 200, body: { login: 'no-id' } })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], 'a user without an id')
  gh.failNext('user', { status: 200, body: { id: 1.5, login: 'fraction' } })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], 'an id that is no integer')
  gh.failNext('emails', { destroy: true })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })), [502, 202], 'the connection dropped')
})

t.test('an answer slower than the provider\'s timeout is 504 / 202', async (t) => {
  const { app, users } = await build(t, { timeout: '300ms', autoRegister: true })
  gh.failNext('token', { delayMs: 5000 })
  const res = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.same(errorOf(res), [504, 202])
  t.equal(res.json().data.message, 'The identity provider timed out.')
  const late = account(3001, 'late', [primary('late@example.com')])
  gh.failNext('emails', { delayMs: 5000 })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(late).code })), [504, 202], 'the user API too')
  t.equal(await users.findByEmail('late@example.com'), null, 'nobody registered')
})

t.test('autoRegister creates the user, its email verified, and links the account', async (t) => {
  const { app, users } = await build(t, { autoRegister: true, defaultRole: 'author' })
  const registered = collect(app, 'oauth.user_registered')
  const linked = collect(app, 'identity.linked')
  const newcomer = account(4001, 'newcomer', [primary('newcomer@example.com')])
  const res = await postToken(app, { provider: 'gh', code: gh.code(newcomer).code })
  t.equal(res.statusCode, 200)
  const user = await users.findByEmail('newcomer@example.com')
  t.ok(user !== null, 'created')
  const created = user as NonNullable<typeof user>
  t.match(users.toPublicUser(created), { user_email: 'newcomer@example.com', email_verified: true, display_name: 'newcomer', roles: ['author'] }, 'without a name, the login')
  t.equal(await users.hasPassword(created), false)
  t.same(res.json().data.user.ID, created.ID)
  t.same(registered, [{ userId: created.ID, ip: '127.0.0.1', provider: 'gh' }])
  t.same(linked, [{ userId: created.ID, ip: '127.0.0.1', provider: 'gh', via: 'sign_in' }])
  t.match(await users.listIdentities(created), [{ provider: 'gh', display: 'newcomer' }])
  t.same((await users.listIdentities(created)).map((link) => link.subject), [gh.linkSubject(4001)])
})

t.test('the link finds the user again after either address changed', async (t) => {
  const { app, users } = await build(t)
  const linked = collect(app, 'identity.linked')
  const first = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.equal(first.statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  await users.setEmail(alice, 'alice@new.example')
  const moved: GitHubAccount = { ...ALICE_GH, emails: [primary('alice.gh@elsewhere.example')] }
  const again = await postToken(app, { provider: 'gh', code: gh.code(moved).code })
  t.equal(again.statusCode, 200)
  t.same(again.json().data.user, { ID: alice.ID, user_login: 'alice', user_email: 'alice@new.example', display_name: ALICE.displayName })
  t.equal(linked.length, 1, 'linked once')
  t.equal(await users.findByEmail('alice.gh@elsewhere.example'), null)
})

t.test('another GitHub account with the address of a user who has one linked is 409 / 248', async (t) => {
  const { app, users } = await build(t)
  t.equal((await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })).statusCode, 200)
  const other = account(5001, 'alice-second', [primary(ALICE.email)])
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(other).code })), [409, 248])
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  t.same((await users.listIdentities(alice)).map((i) => i.subject), [gh.linkSubject(1001)], 'the first link kept')
})

t.test('a GitHub Enterprise Server behind https that cannot be reached is 502 / 202', async (t) => {
  const { app } = await build(t, { enterpriseUrl: `https://127.0.0.1:${await closedPort()}` })
  t.same(errorOf(await postToken(app, { provider: 'gh', code: 'any-code' })), [502, 202])
})

t.test('redirect_uri_mismatch from the token endpoint is a refused code: 401 / 72', async (t) => {
  const { app } = await build(t)
  const failed = collect(app, 'oauth.failed')
  // issued for one registered callback, redeemed with the other: GitHub answers HTTP 200 with redirect_uri_mismatch
  const { code } = gh.code(ALICE_GH)
  const before = seen('token')
  t.same(errorOf(await postToken(app, { provider: 'gh', code, redirect_uri: OTHER_REDIRECT_URI })), [401, 72])
  t.equal(seen('token'), before + 1, 'GitHub was asked once')
  t.match(gh.requests.filter((r) => r.endpoint === 'token').at(-1)?.body, { code, redirect_uri: OTHER_REDIRECT_URI })
  t.same(failed.map((f) => [f.provider, f.reason]), [['gh', 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID']])
})

/** GitHub's answer to a GitHub App without the "Email addresses" permission. */
const NOT_ACCESSIBLE = { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/users/emails#list-email-addresses-for-the-authenticated-user', status: '403' } }

t.test('an email list GitHub does not grant (404 without user:email, 403 without the permission) is no email: the link still signs in', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  t.equal((await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })).statusCode, 200, 'alice signs in and links her account')
  const asked = seen('emails')

  const without = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH, { scope: 'read:user' }).code })
  t.equal(without.statusCode, 200, 'a token without user:email (the list is 404)')
  t.equal(without.json().data.user.ID, alice.ID, 'alice, by her link')
  gh.failNext('emails', NOT_ACCESSIBLE)
  const forbidden = await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.equal(forbidden.statusCode, 200, 'the list is 403')
  t.equal(forbidden.json().data.user.ID, alice.ID, 'alice, by her link')
  t.equal(seen('emails'), asked + 2, 'the list was asked for each time')
  t.same((await users.listIdentities(alice)).map((link) => link.subject), [gh.linkSubject(1001)], 'still the one link')
})

t.test('an email list GitHub does not grant, for an account linked to nobody, is 403 / 111', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  const failed = collect(app, 'oauth.failed')
  const registered = collect(app, 'oauth.user_registered')
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(ALICE_GH, { scope: 'read:user' }).code })), [403, 111], 'the list is 404: alice\'s address is not read, so it does not find her')
  const newcomer = account(6001, 'no-list', [primary('no-list@example.com')])
  gh.failNext('emails', NOT_ACCESSIBLE)
  t.same(errorOf(await postToken(app, { provider: 'gh', code: gh.code(newcomer).code })), [403, 111], 'the list is 403: nobody registered without an email')
  t.equal(await users.findByEmail('no-list@example.com'), null)
  t.same(await users.listIdentities(alice), [], 'alice was not linked')
  t.same(registered, [])
  t.same(failed.map((f) => f.errorCode), [111, 111])
})

t.test('gh pointed at another GitHub Enterprise Server: its account with the same id is not the one linked', async (t) => {
  const second = await startOAuth2Provider('github')
  t.teardown(() => second.close())
  const users = new MemoryUserAdapter()
  const alice = await users.addUser(ALICE)
  const linksOf = async (user: typeof alice): Promise<string[][]> => (await users.listIdentities(user)).map((link) => [link.provider, link.subject])

  const { app: first } = await build(t, {}, users)
  t.equal((await postToken(first, { provider: 'gh', code: gh.code(ALICE_GH).code })).statusCode, 200)
  t.same(await linksOf(alice), [['gh', gh.linkSubject(1001)]], 'alice is linked to 1001 of the first server')

  // GitHub numbers the users of each server: 1001 of the second one is somebody else, with another address
  const moved = { enterpriseUrl: second.origin, clientId: second.clientId, clientSecret: second.clientSecret, redirectUris: second.redirectUris }
  const stranger = account(1001, 'stranger', [primary('stranger@elsewhere.example')])
  const { app: pointed } = await build(t, moved, users)
  t.same(errorOf(await postToken(pointed, { provider: 'gh', code: second.code(stranger).code })), [404, 74], 'no link and no user of the address: not found')
  const unverified = account(1001, 'stranger', [primary('stranger@elsewhere.example', false)])
  t.same(errorOf(await postToken(pointed, { provider: 'gh', code: second.code(unverified).code })), [403, 111], 'an unverified address: refused')
  const withoutList = await postToken(pointed, { provider: 'gh', code: second.code(stranger, { scope: 'read:user' }).code })
  t.same(errorOf(withoutList), [403, 111], 'no email at all: refused')

  const { app: registering } = await build(t, { ...moved, autoRegister: true }, users)
  const res = await postToken(registering, { provider: 'gh', code: second.code(stranger).code })
  t.equal(res.statusCode, 200, 'with registration on, the stranger signs in')
  const created = await users.findByEmail('stranger@elsewhere.example')
  t.ok(created !== null && res.json().data.user.ID === created.ID, 'as the user registered for the address')
  t.not(res.json().data.user.ID, alice.ID, 'never as alice')
  t.same(await linksOf(created as NonNullable<typeof created>), [['gh', second.linkSubject(1001)]], 'linked to 1001 of the second server')
  t.same(await linksOf(alice), [['gh', gh.linkSubject(1001)]], 'alice keeps her link')

  const back = await postToken(first, { provider: 'gh', code: gh.code(ALICE_GH).code })
  t.equal(back.json().data.user?.ID, alice.ID, 'pointed back at the first server, 1001 signs alice in again')
})
