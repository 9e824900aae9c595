// Sign-in with the discord preset against a local Discord API: `verified` decides the email, HTTP Basic by default, RFC 6749 refusals.
import t, { type Test } from 'tap'
import { ALICE } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken } from '../helpers/oauth.js'
import { startOAuth2Provider, type DiscordAccount, type SeenRequest } from '../helpers/oauth2-providers.js'

const dc = await startOAuth2Provider('discord')
t.teardown(() => dc.close())

const ALICE_DC: DiscordAccount = { id: '80351110224678912', username: 'alice_dc', global_name: 'Alice D.', email: ALICE.email, verified: true }

type Providers = Parameters<typeof buildOAuthApp>[0]
type Built = Awaited<ReturnType<typeof buildOAuthApp>>
type User = NonNullable<Awaited<ReturnType<Built['users']['findByEmail']>>>

/** The user's links as the account page shows them. */
const linksOf = async (users: Built['users'], user: User): Promise<Array<{ provider: string, subject: string, display: string | null }>> =>
  (await users.listIdentities(user)).map(({ provider, subject, display }) => ({ provider, subject, display }))

async function build (t: Test, extra: Record<string, unknown> = {}): Promise<Built> {
  const providers = { dc: { enabled: true, preset: 'discord', clientId: dc.clientId, clientSecret: dc.clientSecret, redirectUris: dc.redirectUris, ...dc.settings, ...extra } }
  const built = await buildOAuthApp(providers as unknown as Providers)
  t.teardown(() => built.app.close())
  return built
}

const calls = (from: number, endpoint: SeenRequest['endpoint']): SeenRequest[] => dc.requests.slice(from).filter((r) => r.endpoint === endpoint)

t.test('a verified email signs its user in and links the account; HTTP Basic by default', async (t) => {
  const { app, users } = await build(t)
  const succeeded = collect(app, 'oauth.succeeded')
  const linked = collect(app, 'identity.linked')
  const before = dc.requests.length
  const res = await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })
  t.equal(res.statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as User
  t.same(res.json().data.user, { ID: alice.ID, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName })
  t.same(succeeded, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'dc', flow: 'code' }])
  t.same(linked, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'dc', via: 'sign_in' }])
  t.same(await linksOf(users, alice), [{ provider: 'dc', subject: dc.linkSubject(ALICE_DC.id), display: 'alice_dc' }], 'shown by its username')
  const [token] = calls(before, 'token')
  t.match(token, { path: '/api/oauth2/token', headers: { authorization: /^Basic / }, body: { grant_type: 'authorization_code', code: String } })
  t.notOk('client_secret' in (token?.body as Record<string, string>), 'the secret only in the header')
  const [me] = calls(before, 'user')
  t.match(me, { method: 'GET', path: '/api/users/@me', headers: { authorization: /^Bearer / } })
})

t.test('client_secret_post when the host chooses it', async (t) => {
  const { app } = await build(t, { clientAuthMethod: 'client_secret_post' })
  const before = dc.requests.length
  t.equal((await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })).statusCode, 200)
  const [token] = calls(before, 'token')
  t.equal(token?.headers.authorization, undefined)
  t.match(token?.body, { client_id: dc.clientId, client_secret: dc.clientSecret })
})

t.test('an email Discord has not verified, or none, is 403 / 111', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code({ ...ALICE_DC, verified: false }).code })), [403, 111], 'verified: false')
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code({ ...ALICE_DC, id: '2', email: null }).code })), [403, 111], 'email: null')
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC, { scope: 'identify' }).code })), [403, 111], 'no email scope: neither email nor verified')
  dc.failNext('user', { status: 200, body: { id: '3', username: 'stringly', email: 'stringly@example.com', verified: 'yes' } })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })), [403, 111], 'only verified: true vouches')
  t.equal(await users.findByEmail('stringly@example.com'), null)
  t.same(await users.listIdentities(await users.findByEmail(ALICE.email) as User), [])
})

t.test('autoRegister: the display name is the global name, else the username', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  t.equal((await postToken(app, { provider: 'dc', code: dc.code({ id: '11', username: 'nelly', global_name: 'Nelly', email: 'nelly@example.com', verified: true }).code })).statusCode, 200)
  t.match(users.toPublicUser(await users.findByEmail('nelly@example.com') as User), { display_name: 'Nelly', email_verified: true })
  t.equal((await postToken(app, { provider: 'dc', code: dc.code({ id: '12', username: 'plain', global_name: null, email: 'plain@example.com', verified: true }).code })).statusCode, 200)
  const plain = await users.findByEmail('plain@example.com') as User
  t.match(users.toPublicUser(plain), { display_name: 'plain' })
  t.same(await linksOf(users, plain), [{ provider: 'dc', subject: dc.linkSubject('12'), display: 'plain' }])
})

t.test('refused codes are 401 / 72; a code goes to Discord once', async (t) => {
  const { app } = await build(t)
  t.same(errorOf(await postToken(app, { provider: 'dc', code: 'not-a-discord-code' })), [401, 72], 'invalid_grant')
  const pkce = dc.code(ALICE_DC, { pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: pkce.code, code_verifier: 'x'.repeat(43) })), [401, 72], 'another verifier')
  const good = dc.code(ALICE_DC, { pkce: true })
  t.equal((await postToken(app, { provider: 'dc', code: good.code, code_verifier: good.codeVerifier as string })).statusCode, 200)
  const tried = calls(0, 'token').length
  t.same(errorOf(await postToken(app, { provider: 'dc', code: good.code, code_verifier: good.codeVerifier as string })), [401, 72])
  t.equal(calls(0, 'token').length, tried, 'the used code never reached Discord')
})

t.test('Discord refusing our client, or failing, is 502 / 202', async (t) => {
  const { app: wrongSecret } = await build(t, { clientSecret: 'not-the-secret' })
  t.same(errorOf(await postToken(wrongSecret, { provider: 'dc', code: dc.code(ALICE_DC).code })), [502, 202], 'invalid_client')
  const { app, users } = await build(t, { autoRegister: true })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC, { scope: 'email' }).code })), [502, 202], '/users/@me is 401 without the identify scope')
  const faults: Array<[string, Parameters<typeof dc.failNext>[1]]> = [
    ['401', { status: 401, body: { message: '401: Unauthorized', code: 0 } }],
    ['an answer that is no JSON', { status: 200, body: 'upstream connect error', contentType: 'text/plain' }],
    ['an empty id', { status: 200, body: { id: '', username: 'x', email: 'empty-id@example.com', verified: true } }]
  ]
  for (const [name, fault] of faults) {
    dc.failNext('user', fault)
    t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })), [502, 202], name)
  }
  dc.failNext('token', { status: 429, body: { message: 'You are being rate limited.', retry_after: 1, global: false } })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })), [502, 202], 'rate limited at the token endpoint')
  t.equal(await users.findByEmail('empty-id@example.com'), null)
})

t.test('slower than the timeout is 504 / 202', async (t) => {
  const { app } = await build(t, { timeout: '300ms' })
  dc.failNext('user', { delayMs: 5000 })
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })), [504, 202])
})

t.test('the link finds the user after the address changed; another Discord account with it is 409 / 248', async (t) => {
  const { app, users } = await build(t)
  t.equal((await postToken(app, { provider: 'dc', code: dc.code(ALICE_DC).code })).statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as User
  await users.setEmail(alice, 'alice@new.example')
  const res = await postToken(app, { provider: 'dc', code: dc.code({ ...ALICE_DC, email: 'alice@discord-only.example', verified: false }).code })
  t.equal(res.statusCode, 200, 'the link, not the email, finds her')
  t.equal(res.json().data.user.ID, alice.ID)
  t.same(errorOf(await postToken(app, { provider: 'dc', code: dc.code({ ...ALICE_DC, id: '99', email: 'alice@new.example' }).code })), [409, 248])
})
