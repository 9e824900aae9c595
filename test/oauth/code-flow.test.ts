import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken, providers, TOKEN_URL } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, closedUrl, OTHER_REDIRECT_URI, startIdp } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

t.test('the code flow signs in the user with the verified email', async (t) => {
  const { app, users } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const succeeded = collect(app, 'oauth.succeeded')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.success, true)
  const alice = await users.findByEmail(ALICE.email)
  t.same(body.data.user, { ID: alice?.ID, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName }, 'exactly the four user fields')
  t.notOk('refresh_token' in body.data, 'no refresh token while refresh is off')
  const claims = await app.jwtLogin.verify(body.data.jwt)
  t.equal(claims.sub, String(alice?.ID))
  t.same(succeeded, [{ userId: alice?.ID, ip: '127.0.0.1', provider: 'idp1', flow: 'code' }])
  t.ok(idp.requests.includes('/me'), 'the email came from userinfo (the code-flow ID token has none)')
})

t.test('an ID token that carries the email needs no userinfo call', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.alice, emailInIdToken: true })
  const before = idp.requests.filter(p => p === '/me').length
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200)
  t.equal(idp.requests.filter(p => p === '/me').length, before)
})

t.test('PKCE: the verifier is passed to the provider', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const good = await idp.code({ account: ACCOUNTS.alice, pkce: true })
  t.equal((await postToken(app, { provider: 'idp1', code: good.code, code_verifier: good.codeVerifier as string })).statusCode, 200)

  const missing = await idp.code({ account: ACCOUNTS.alice, pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: missing.code })), [401, 72], 'a PKCE code without its verifier is refused')

  const wrong = await idp.code({ account: ACCOUNTS.alice, pkce: true })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: wrong.code, code_verifier: good.codeVerifier as string })), [401, 72], 'another verifier is refused')
})

t.test('a code is single use, even before the provider is asked', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.equal((await postToken(app, { provider: 'idp1', code })).statusCode, 200)
  const tokenCalls = idp.requests.filter(p => p === '/token').length
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [401, 72])
  t.equal(idp.requests.filter(p => p === '/token').length, tokenCalls, 'the reused code never reached the provider')
  t.same(failed, [{ ip: '127.0.0.1', provider: 'idp1', reason: 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID', errorCode: 72 }])
  t.notOk(JSON.stringify(failed).includes(code), 'no code in the event')

  const fresh = await idp.code({ account: ACCOUNTS.alice })
  const both = await Promise.all([postToken(app, { provider: 'idp1', code: fresh.code }), postToken(app, { provider: 'idp1', code: fresh.code })])
  t.same(both.map(r => r.statusCode).sort(), [200, 401], 'of two concurrent uses exactly one succeeds')
})

t.test('a code the provider does not know is refused', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: 'not-a-code-the-provider-issued' })), [401, 72])
})

t.test('idp2 takes a code only, with client_secret_post', async (t) => {
  const { app } = await buildOAuthApp(providers(idp), { refresh: { enabled: true } })
  t.teardown(() => app.close())
  const { code } = await idp.code({ client: CLIENTS.idp2, account: ACCOUNTS.alice })
  const res = await postToken(app, { provider: 'idp2', code })
  t.equal(res.statusCode, 200)
  t.type(res.json().data.refresh_token, 'string', 'a refresh token when refresh is on')
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n' })
  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: idToken })), [400, 71], 'an ID token is not a code for idp2')
})

t.test('a nonce given is checked against the code-flow ID token', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const right = await idp.code({ account: ACCOUNTS.alice, nonce: 'nonce-1' })
  t.equal((await postToken(app, { provider: 'idp1', code: right.code, nonce: 'nonce-1' })).statusCode, 200)
  const wrong = await idp.code({ account: ACCOUNTS.alice, nonce: 'nonce-2' })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: wrong.code, nonce: 'nonce-3' })), [401, 73])
})

t.test('redirect_uri picks one of the configured redirect URIs', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.alice, redirectUri: OTHER_REDIRECT_URI })
  t.equal((await postToken(app, { provider: 'idp1', code, redirect_uri: OTHER_REDIRECT_URI })).statusCode, 200)
  const other = await idp.code({ account: ACCOUNTS.alice })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: other.code, redirect_uri: 'https://evil.example/cb' })), [400, 203])
})

t.test('GET with a query, POST with a form, and the rest_route form', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const a = await idp.code({ account: ACCOUNTS.alice })
  const get = await app.inject({ method: 'GET', url: TOKEN_URL, query: { provider: 'idp1', code: a.code } })
  t.equal(get.statusCode, 200)
  t.equal(get.json().data.user.user_email, ALICE.email)

  const b = await idp.code({ account: ACCOUNTS.alice })
  const form = await app.inject({
    method: 'POST',
    url: TOKEN_URL,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ provider: 'idp1', code: b.code }).toString()
  })
  t.equal(form.statusCode, 200)

  const c = await idp.code({ account: ACCOUNTS.alice })
  const rest = await app.inject({ method: 'GET', url: `/?rest_route=/jwt-login/v1/oauth/token&provider=idp1&code=${encodeURIComponent(c.code)}` })
  t.equal(rest.statusCode, 200)
  t.equal(rest.json().data.user.user_login, 'alice')

  const d = await idp.code({ account: ACCOUNTS.alice })
  const restPost = await app.inject({ method: 'POST', url: '/?rest_route=/jwt-login/v1/oauth/token', payload: { provider: 'idp1', code: d.code } })
  t.equal(restPost.statusCode, 200)

  t.same(errorOf(await app.inject({ method: 'POST', url: TOKEN_URL, payload: { provider: 'idp1', code: ['a', 'b'] } })), [400, 203], 'a non-string parameter is a bad request')
})

t.test('a user with two-factor on gets the challenge, not a token', async (t) => {
  const seen: unknown[] = []
  const { app, users } = await buildOAuthApp(providers(idp), {}, {
    secondFactor: async (_user, publicUser) => {
      seen.push(publicUser.ID)
      return publicUser.user_login === 'alice' ? { two_factor_required: true, jwt: 'interim-token-from-the-gate' } : null
    }
  })
  t.teardown(() => app.close())
  const succeeded = collect(app, 'oauth.succeeded')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { success: true, data: { two_factor_required: true, jwt: 'interim-token-from-the-gate' } })
  t.same(seen, [(await users.findByEmail(ALICE.email))?.ID])
  t.same(succeeded, [], 'no success until the second factor is done')
})

t.test('the AUTH_CODE gate guards /oauth/token when required', async (t) => {
  const { app } = await buildOAuthApp(providers(idp), {
    authCodes: { codes: [{ code: 'gate-code-1' }], requireFor: { oauth: true } }
  })
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [400, 94])
  t.same(errorOf(await postToken(app, { provider: 'idp1', code, AUTH_CODE: 'wrong' })), [401, 27])
  t.same(failed.map(f => [f.provider, f.errorCode]), [[null, 94], [null, 27]])
  t.equal((await postToken(app, { provider: 'idp1', code, AUTH_CODE: 'gate-code-1' })).statusCode, 200, 'the code was not spent by the refused requests')
})

t.test('no code or token reaches the logs', async (t) => {
  let logs = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logs += String(chunk); done() } })
  const app = Fastify({ logger: { level: 'trace', stream } })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const down = await closedUrl()
  await app.register(jwtLogin, {
    users,
    settings: {
      tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
      oauth: { providers: { ...providers(idp), down: { ...providers(idp).idp1, issuer: down } } }
    }
  })
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  const res = await app.inject({ method: 'GET', url: TOKEN_URL, query: { provider: 'idp1', code } })
  t.equal(res.statusCode, 200)
  const failing = await app.inject({ method: 'GET', url: TOKEN_URL, query: { provider: 'down', code: 'secret-code-that-must-not-be-logged' } })
  t.same(errorOf(failing), [502, 202])
  t.match(logs, /jwt-login: dependency failed/, 'the provider failure is logged')
  t.notOk(logs.includes(code), 'the code is not in the logs')
  t.notOk(logs.includes('secret-code-that-must-not-be-logged'))
  t.notOk(logs.includes(res.json().data.jwt), 'the JWT is not in the logs')
})
