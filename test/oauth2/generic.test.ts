// Sign-in with the oauth2 preset against a local RFC 6749 server: the user read by the profile's paths, the client authentication as configured, the refusals.
import t, { type Test } from 'tap'
import { valueAt } from '../../lib/oauth/user-api.js'
import { ALICE } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken } from '../helpers/oauth.js'
import { startOAuth2Provider, type SeenRequest, type TestOAuth2Provider } from '../helpers/oauth2-providers.js'

// an id and a secret that need form-encoding in HTTP Basic (RFC 6749 §2.3.1)
const op = await startOAuth2Provider('oauth2', { clientId: 'my client', clientSecret: 's3cret:with/odd+chars' })
t.teardown(() => op.close())

const PROFILE = { subject: 'data.id', email: 'data.mail', emailVerified: 'data.mail_verified', name: 'data.profile.name', display: 'data.handle' }
const nested = (id: string, mail: string | undefined, verified: unknown = true, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ data: { id, mail, mail_verified: verified, handle: `handle-${id}`, profile: { name: `Name ${id}` }, ...extra } })

type Providers = Parameters<typeof buildOAuthApp>[0]
type Built = Awaited<ReturnType<typeof buildOAuthApp>>
type User = NonNullable<Awaited<ReturnType<Built['users']['findByEmail']>>>

/** The user's links as the account page shows them. */
const linksOf = async (users: Built['users'], user: User): Promise<Array<{ provider: string, subject: string, display: string | null }>> =>
  (await users.listIdentities(user)).map(({ provider, subject, display }) => ({ provider, subject, display }))

/** The app with provider `op`: the oauth2 preset at `server`, with the nested profile unless `extra` says otherwise. */
async function build (t: Test, extra: Record<string, unknown> = {}, server: TestOAuth2Provider<'oauth2'> = op): Promise<Built> {
  const providers = { op: { enabled: true, preset: 'oauth2', clientId: server.clientId, clientSecret: server.clientSecret, redirectUris: server.redirectUris, ...server.settings, profile: PROFILE, ...extra } }
  const built = await buildOAuthApp(providers as unknown as Providers)
  t.teardown(() => built.app.close())
  return built
}

const calls = (server: { requests: SeenRequest[] }, from: number, endpoint: SeenRequest['endpoint']): SeenRequest[] => server.requests.slice(from).filter((r) => r.endpoint === endpoint)
const code = (account: Record<string, unknown>, options?: Parameters<typeof op.code>[1]): string => op.code(account, options).code

t.test('the profile\'s nested paths sign the user in and link the account; HTTP Basic by default', async (t) => {
  const { app, users } = await build(t)
  const succeeded = collect(app, 'oauth.succeeded')
  const linked = collect(app, 'identity.linked')
  const before = op.requests.length
  const res = await postToken(app, { provider: 'op', code: code(nested('u-1', ALICE.email)) })
  t.equal(res.statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as User
  t.same(res.json().data.user, { ID: alice.ID, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName })
  t.same(succeeded, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'op', flow: 'code' }])
  t.same(linked, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'op', via: 'sign_in' }])
  t.same(await linksOf(users, alice), [{ provider: 'op', subject: op.linkSubject('u-1'), display: 'handle-u-1' }])
  const [token] = calls(op, before, 'token')
  t.match(token, { path: '/oauth/token', headers: { authorization: /^Basic / }, body: { grant_type: 'authorization_code' } })
  t.notOk('client_secret' in (token?.body as Record<string, string>), 'the secret in the header only (the server refuses both)')
  t.match(calls(op, before, 'user'), [{ method: 'GET', path: '/api/me', headers: { authorization: /^Bearer / } }])
})

t.test('client_secret_post when the host chooses it', async (t) => {
  const { app } = await build(t, { clientAuthMethod: 'client_secret_post' })
  const before = op.requests.length
  t.equal((await postToken(app, { provider: 'op', code: code(nested('u-1', ALICE.email)) })).statusCode, 200)
  const [token] = calls(op, before, 'token')
  t.equal(token?.headers.authorization, undefined)
  t.match(token?.body, { client_id: 'my client', client_secret: 's3cret:with/odd+chars' })
})

t.test('emailVerified by a path: only a field that is true (or "true") vouches', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-2', ALICE.email, false)) })), [403, 111], 'false')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code({ data: { id: 'u-3', mail: ALICE.email } }) })), [403, 111], 'absent')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-4', ALICE.email, 1)) })), [403, 111], '1')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-11', ALICE.email, null)) })), [403, 111], 'null')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-5', undefined)) })), [403, 111], 'no email at all')
  t.same(await users.listIdentities(await users.findByEmail(ALICE.email) as User), [])
  const res = await postToken(app, { provider: 'op', code: code(nested('u-6', ALICE.email, 'true')) })
  t.equal(res.statusCode, 200, 'the string "true", as some providers write it')
  t.equal(res.json().data.user.user_login, 'alice')
})

t.test('emailVerified: true: every email the user API returns is verified', async (t) => {
  const { app, users } = await build(t, { profile: { ...PROFILE, emailVerified: true } })
  const res = await postToken(app, { provider: 'op', code: code({ data: { id: 'u-7', mail: ALICE.email } }) })
  t.equal(res.statusCode, 200)
  t.same(await linksOf(users, await users.findByEmail(ALICE.email) as User), [{ provider: 'op', subject: op.linkSubject('u-7'), display: ALICE.email }], 'without a handle, the email is shown')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code({ data: { id: 'u-8' } }) })), [403, 111], 'but no email is still none')
  t.same(errorOf(await postToken(app, { provider: 'op', code: code({ data: { id: 'u-9', mail: '' } }) })), [403, 111], 'nor is an empty one')
})

t.test('the default profile: id, email, email_verified, name, login; a numeric id is the subject in digits', async (t) => {
  const { app, users } = await build(t, { profile: undefined, autoRegister: true })
  const res = await postToken(app, { provider: 'op', code: code({ id: 42, email: 'numeric@example.com', email_verified: true, name: 'Numeric Person', login: 'numeric' }) })
  t.equal(res.statusCode, 200)
  const user = await users.findByEmail('numeric@example.com') as User
  t.match(users.toPublicUser(user), { display_name: 'Numeric Person', email_verified: true })
  t.same(await linksOf(users, user), [{ provider: 'op', subject: op.linkSubject('42'), display: 'numeric' }])
  t.equal((await postToken(app, { provider: 'op', code: code({ id: 42, email: 'changed@example.com', email_verified: false }) })).json().data.user.ID, user.ID, 'the same number finds the link')

  t.equal((await postToken(app, { provider: 'op', code: code({ id: 43, email: 'nameless@example.com', email_verified: true, login: 'nameless' }) })).statusCode, 200)
  t.match(users.toPublicUser(await users.findByEmail('nameless@example.com') as User), { display_name: 'nameless' }, 'without a name, the display one')
  for (const [name, id] of [['a fraction', 4.5], ['a number beyond the safe integers', 2 ** 53], ['true', true], ['an object', { value: 1 }], ['null', null]] as const) {
    t.same(errorOf(await postToken(app, { provider: 'op', code: code({ id, email: 'bad-id@example.com', email_verified: true }) })), [502, 202], `an id that is ${name}`)
  }
  t.equal(await users.findByEmail('bad-id@example.com'), null)
})

t.test('paths read own properties only', async (t) => {
  const { app } = await build(t, { profile: { ...PROFILE, subject: 'data.constructor' } })
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-10', ALICE.email)) })), [502, 202], 'no subject from the prototype')
  t.equal(valueAt({ a: { b: { c: 'deep' } } }, 'a.b.c'), 'deep')
  t.equal(valueAt({ a: { b: 0 } }, 'a.b'), 0)
  t.equal(valueAt({}, 'toString'), undefined)
  t.equal(valueAt({ a: null }, 'a.b'), undefined)
  t.equal(valueAt({ a: 'text' }, 'a.length'), undefined)
  t.equal(valueAt([{ id: 'first' }], '0.id'), 'first', 'an array\'s index is a property')
  t.equal(valueAt('answer', 'id'), undefined)
})

t.test('a refused code is 401 / 72; a code goes to the provider once', async (t) => {
  const { app } = await build(t)
  const failed = collect(app, 'oauth.failed')
  t.same(errorOf(await postToken(app, { provider: 'op', code: 'not-a-code' })), [401, 72])
  const pkce = op.code(nested('u-1', ALICE.email), { pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'op', code: pkce.code })), [401, 72], 'without its verifier')
  const good = op.code(nested('u-1', ALICE.email), { pkce: true })
  const before = op.requests.length
  t.equal((await postToken(app, { provider: 'op', code: good.code, code_verifier: good.codeVerifier as string })).statusCode, 200)
  t.match(calls(op, before, 'token')[0]?.body, { code_verifier: good.codeVerifier })
  const tried = op.requests.length
  t.same(errorOf(await postToken(app, { provider: 'op', code: good.code, code_verifier: good.codeVerifier as string })), [401, 72])
  t.equal(op.requests.length, tried, 'the used code never reached the provider')
  t.same(failed.map((f) => f.reason), Array(3).fill('ERR_JWT_LOGIN_PROVIDER_CODE_INVALID'))
})

t.test('the provider refusing our client, or failing, is 502 / 202; slower than the timeout 504 / 202', async (t) => {
  const { app: wrongSecret } = await build(t, { clientSecret: 'wrong' })
  t.same(errorOf(await postToken(wrongSecret, { provider: 'op', code: code(nested('u-1', ALICE.email)) })), [502, 202], 'invalid_client')
  const { app } = await build(t, { timeout: '300ms' })
  const faults: Array<[string, 'token' | 'user', Parameters<typeof op.failNext>[1]]> = [
    ['a token endpoint unavailable', 'token', { status: 503, body: { error: 'temporarily_unavailable' } }],
    ['a token answer without an access token', 'token', { status: 200, body: { token_type: 'Bearer' } }],
    ['the user API refusing the token', 'user', { status: 401, body: { error: 'invalid_token' } }],
    ['the user API answering no JSON', 'user', { status: 200, body: '<!doctype html><p>Sign in</p>', contentType: 'text/html' }],
    ['the user API answering a list', 'user', { status: 200, body: [] }],
    ['the user API dropping the connection', 'user', { destroy: true }]
  ]
  for (const [name, endpoint, fault] of faults) {
    op.failNext(endpoint, fault)
    t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-1', ALICE.email)) })), [502, 202], name)
  }
  op.failNext('token', { delayMs: 5000 })
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-1', ALICE.email)) })), [504, 202], 'a slow token endpoint')
})

t.test('a public client: no secret, its code bound to PKCE', async (t) => {
  const open = await startOAuth2Provider('oauth2', { clientId: 'public-app', clientSecret: '' })
  t.teardown(() => open.close())
  const { app } = await build(t, { clientSecret: undefined, clientAuthMethod: 'none' }, open)
  const pkce = open.code(nested('u-1', ALICE.email), { pkce: true })
  t.equal((await postToken(app, { provider: 'op', code: pkce.code, code_verifier: pkce.codeVerifier as string })).statusCode, 200)
  const [token] = calls(open, 0, 'token')
  t.equal(token?.headers.authorization, undefined)
  t.match(token?.body, { client_id: 'public-app', code_verifier: pkce.codeVerifier })
  t.notOk('client_secret' in (token?.body as Record<string, string>))
})

t.test('the link finds the user after the address changed; another account of the provider with it is 409 / 248', async (t) => {
  const { app, users } = await build(t)
  t.equal((await postToken(app, { provider: 'op', code: code(nested('u-1', ALICE.email)) })).statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as User
  await users.setEmail(alice, 'alice@new.example')
  const res = await postToken(app, { provider: 'op', code: code(nested('u-1', 'someone@else.example')) })
  t.equal(res.json().data.user.ID, alice.ID)
  t.same(errorOf(await postToken(app, { provider: 'op', code: code(nested('u-2', 'alice@new.example')) })), [409, 248])
})
