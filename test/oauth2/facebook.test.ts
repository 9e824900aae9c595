// Sign-in with the facebook preset against a local Graph API: the email Facebook returns, the app secret proof, and Graph API errors as our errors.
import { createHmac } from 'node:crypto'
import t, { type Test } from 'tap'
import { ALICE } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken } from '../helpers/oauth.js'
import { OTHER_REDIRECT_URI, startOAuth2Provider, type FacebookAccount, type SeenRequest, type TestOAuth2Provider } from '../helpers/oauth2-providers.js'

const fb = await startOAuth2Provider('facebook')
t.teardown(() => fb.close())

const ALICE_FB: FacebookAccount = { id: '10150000000000001', name: 'Alice Book', email: ALICE.email }

type Providers = Parameters<typeof buildOAuthApp>[0]
type Built = Awaited<ReturnType<typeof buildOAuthApp>>
type User = NonNullable<Awaited<ReturnType<Built['users']['findByEmail']>>>

/** The user's links as the account page shows them. */
const linksOf = async (users: Built['users'], user: User): Promise<Array<{ provider: string, subject: string, display: string | null }>> =>
  (await users.listIdentities(user)).map(({ provider, subject, display }) => ({ provider, subject, display }))

/** The app with provider `fb`: the facebook preset at `server` (the shared one by default), with `extra` over its settings. */
async function build (t: Test, extra: Record<string, unknown> = {}, server: TestOAuth2Provider<'facebook'> = fb): Promise<Built> {
  const providers = { fb: { enabled: true, preset: 'facebook', clientId: server.clientId, clientSecret: server.clientSecret, redirectUris: server.redirectUris, ...server.settings, ...extra } }
  const built = await buildOAuthApp(providers as unknown as Providers)
  t.teardown(() => built.app.close())
  return built
}

/** The calls of one sign-in, from the index of the first. */
const since = (server: { requests: SeenRequest[] }, from: number, endpoint: SeenRequest['endpoint']): SeenRequest[] => server.requests.slice(from).filter((r) => r.endpoint === endpoint)
const bearerOf = (request: SeenRequest | undefined): string => /^Bearer (\S+)$/.exec(String(request?.headers.authorization))?.[1] ?? ''

t.test('the email Facebook returns signs its user in and links the account; /me carries the app secret proof', async (t) => {
  const { app, users } = await build(t)
  const succeeded = collect(app, 'oauth.succeeded')
  const linked = collect(app, 'identity.linked')
  const before = fb.requests.length
  const res = await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })
  t.equal(res.statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  t.same(res.json().data.user, { ID: alice.ID, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName })
  t.same(succeeded, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'fb', flow: 'code' }])
  t.same(linked, [{ userId: alice.ID, ip: '127.0.0.1', provider: 'fb', via: 'sign_in' }])
  t.same(await linksOf(users, alice), [{ provider: 'fb', subject: fb.linkSubject(ALICE_FB.id), display: ALICE.email }])

  const [token] = since(fb, before, 'token')
  t.match(token, { method: 'POST', path: '/v21.0/oauth/access_token', body: { client_id: fb.clientId, client_secret: fb.clientSecret } }, 'client_secret_post, Facebook\'s default')
  t.equal(token?.headers.authorization, undefined)
  const [me] = since(fb, before, 'user')
  const accessToken = bearerOf(me)
  t.not(accessToken, '')
  const url = new URL(me?.path as string, fb.origin)
  t.equal(url.pathname, '/v21.0/me')
  t.equal(url.searchParams.get('fields'), 'id,name,email', 'the fields of the api URL kept')
  t.equal(url.searchParams.get('appsecret_proof'), createHmac('sha256', fb.clientSecret).update(accessToken).digest('hex'), 'HMAC-SHA256 of the access token under the app secret, in hex')
})

t.test('HTTP Basic when the host chooses it', async (t) => {
  const { app } = await build(t, { clientAuthMethod: 'client_secret_basic' })
  const before = fb.requests.length
  t.equal((await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })).statusCode, 200)
  const [token] = since(fb, before, 'token')
  t.match(token?.headers.authorization, /^Basic /)
  t.notOk('client_secret' in (token?.body as Record<string, string>))
})

t.test('no email from Facebook is 403 / 111', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const count = async (): Promise<number> => (await users.findByEmail(ALICE.email) === null ? 0 : 1)
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code({ id: '10150000000000002', name: 'No Mail' }).code })), [403, 111], 'an account without an email')
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB, { scope: 'public_profile' }).code })), [403, 111], 'the email permission not granted')
  fb.failNext('user', { status: 200, body: { id: ALICE_FB.id, name: 'Alice Book', email: '' } })
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })), [403, 111], 'an empty email')
  t.equal(await count(), 1)
  t.same(await users.listIdentities(await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>), [])
})

t.test('autoRegister: the user gets Facebook\'s name, its email verified', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const res = await postToken(app, { provider: 'fb', code: fb.code({ id: '10150000000000003', name: 'Fay Newcomer', email: 'fay@example.com' }).code })
  t.equal(res.statusCode, 200)
  const fay = await users.findByEmail('fay@example.com') as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  t.match(users.toPublicUser(fay), { display_name: 'Fay Newcomer', email_verified: true })
  t.same(await linksOf(users, fay), [{ provider: 'fb', subject: fb.linkSubject('10150000000000003'), display: 'fay@example.com' }])
})

t.test('Graph API errors of the code exchange: code 100 is the code\'s fault (401 / 72), any other the provider\'s (502 / 202)', async (t) => {
  const { app } = await build(t)
  const failed = collect(app, 'oauth.failed')
  t.same(errorOf(await postToken(app, { provider: 'fb', code: 'not-a-facebook-code' })), [401, 72], 'an unknown code')
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB, { redirectUri: OTHER_REDIRECT_URI }).code })), [401, 72], 'a code issued for another redirect URI (36008)')
  const late = fb.code(ALICE_FB).code
  fb.expireCodes()
  t.same(errorOf(await postToken(app, { provider: 'fb', code: late })), [401, 72], 'an expired code (36007)')
  const pkce = fb.code(ALICE_FB, { pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'fb', code: pkce.code })), [401, 72], 'a PKCE code without its verifier')
  t.same(failed.map((f) => f.errorCode), [72, 72, 72, 72])

  const { app: wrongSecret } = await build(t, { clientSecret: 'not-the-secret' })
  t.same(errorOf(await postToken(wrongSecret, { provider: 'fb', code: fb.code(ALICE_FB).code })), [502, 202], 'code 1: the client secret refused')
  const { app: unknownApp } = await build(t, { clientId: '999' })
  t.same(errorOf(await postToken(unknownApp, { provider: 'fb', code: fb.code(ALICE_FB).code })), [502, 202], 'code 101: the application refused')
  fb.failNext('token', { status: 400, body: { error: { message: 'Please reduce the amount of data', type: 'OAuthException', code: 4 } } })
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })), [502, 202], 'code 4: rate limited')
  fb.failNext('token', { status: 500, body: 'Sorry, something went wrong.', contentType: 'text/html' })
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })), [502, 202], 'an answer that is no JSON')
  fb.failNext('token', { status: 400, body: { error: 'invalid_grant' } })
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })), [401, 72], 'an RFC 6749 refusal is taken as it is')
})

t.test('a code is redeemed once, and never sent to Facebook twice', async (t) => {
  const { app } = await build(t)
  const pkce = fb.code(ALICE_FB, { pkce: true })
  const before = fb.requests.length
  t.equal((await postToken(app, { provider: 'fb', code: pkce.code, code_verifier: pkce.codeVerifier as string })).statusCode, 200)
  t.match(since(fb, before, 'token')[0]?.body, { code: pkce.code, code_verifier: pkce.codeVerifier })
  const tried = fb.requests.length
  t.same(errorOf(await postToken(app, { provider: 'fb', code: pkce.code, code_verifier: pkce.codeVerifier as string })), [401, 72])
  t.equal(fb.requests.length, tried)
})

t.test('/me failing is 502 / 202', async (t) => {
  const { app, users } = await build(t, { autoRegister: true })
  const faults: Array<[string, Parameters<typeof fb.failNext>[1]]> = [
    ['a Graph API error (an expired token)', { status: 400, body: { error: { message: 'Error validating access token: Session has expired.', type: 'OAuthException', code: 190, error_subcode: 463 } } }],
    ['401', { status: 401, body: { error: { message: 'Unauthorized', type: 'OAuthException', code: 190 } } }],
    ['an answer that is no JSON', { status: 200, body: '<html><body>Facebook</body></html>', contentType: 'text/html' }],
    ['a user without an id', { status: 200, body: { name: 'Nobody', email: 'nobody@example.com' } }],
    ['a numeric id beyond the safe integers', { status: 200, body: { id: 2 ** 60, email: 'nobody@example.com' } }]
  ]
  for (const [name, fault] of faults) {
    fb.failNext('user', fault)
    t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })), [502, 202], name)
  }
  t.equal(await users.findByEmail('nobody@example.com'), null, 'nobody registered')
})

t.test('the link finds the user after the address changed on both sides', async (t) => {
  const { app, users } = await build(t)
  t.equal((await postToken(app, { provider: 'fb', code: fb.code(ALICE_FB).code })).statusCode, 200)
  const alice = await users.findByEmail(ALICE.email) as NonNullable<Awaited<ReturnType<typeof users.findByEmail>>>
  await users.setEmail(alice, 'alice@new.example')
  const res = await postToken(app, { provider: 'fb', code: fb.code({ ...ALICE_FB, email: 'alice@facebook-only.example' }).code })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.user.ID, alice.ID)
  t.same(errorOf(await postToken(app, { provider: 'fb', code: fb.code({ id: '10150000000000009', name: 'Another', email: 'alice@new.example' }).code })), [409, 248], 'another Facebook account with her address')
})

t.test('a public client (no secret) sends no proof: there is nothing to prove it with', async (t) => {
  const open = await startOAuth2Provider('facebook', { clientSecret: '' })
  t.teardown(() => open.close())
  const { app } = await build(t, { clientSecret: undefined, clientAuthMethod: 'none' }, open)
  const pkce = open.code(ALICE_FB, { pkce: true })
  const res = await postToken(app, { provider: 'fb', code: pkce.code, code_verifier: pkce.codeVerifier as string })
  t.equal(res.statusCode, 200)
  const [token] = since(open, 0, 'token')
  t.match(token?.body, { client_id: open.clientId })
  t.notOk('client_secret' in (token?.body as Record<string, string>))
  t.equal(token?.headers.authorization, undefined)
  const [me] = since(open, 0, 'user')
  t.equal(new URL(me?.path as string, open.origin).searchParams.get('appsecret_proof'), null)
})
