import { generateKeyPairSync } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { ALICE, buildApp } from '../helpers/app.js'
import { loginTokens, post, PREFIX } from '../helpers/http.js'
import { buildOAuthApp, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

/** Token answers and errors alike: never stored (RFC 6749 §5.1). */
function assertNoStore (t: Test, res: LightMyRequestResponse, status: number, name: string): void {
  t.equal(res.statusCode, status, `${name}: status`)
  t.equal(res.headers['cache-control'], 'no-store', `${name}: Cache-Control`)
  t.equal(res.headers.pragma, 'no-cache', `${name}: Pragma`)
}

t.test('/auth, /auth/validate, /auth/refresh and /auth/revoke: no-store on success and on error', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  assertNoStore(t, await post(app, '/auth', { email: ALICE.email, password: ALICE.password }), 200, 'login')
  assertNoStore(t, await post(app, '/auth', { email: ALICE.email, password: 'wrong password' }), 401, 'wrong password')
  assertNoStore(t, await post(app, '/auth', {}), 400, 'missing fields')

  const { jwt, refresh_token: refreshToken } = await loginTokens(app)
  assertNoStore(t, await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}` }), 200, 'GET validate')
  assertNoStore(t, await post(app, '/auth/validate', { JWT: jwt }), 200, 'POST validate')
  assertNoStore(t, await post(app, '/auth/validate', { JWT: 'a.b.c' }), 401, 'validate a bad token')
  assertNoStore(t, await app.inject({ method: 'GET', url: `/?rest_route=/jwt-login/v1/auth/validate&JWT=${jwt}` }), 200, 'validate through ?rest_route=')

  assertNoStore(t, await post(app, '/auth/refresh', { refresh_token: refreshToken }), 200, 'refresh')
  assertNoStore(t, await post(app, '/auth/refresh', { refresh_token: 'no-such-token' }), 401, 'refresh a bad token')
  assertNoStore(t, await post(app, '/auth/revoke', { JWT: jwt }), 200, 'revoke')
  assertNoStore(t, await post(app, '/auth/revoke', {}), 400, 'revoke without a token')
  assertNoStore(t, await app.inject({ method: 'PUT', url: `${PREFIX}/user/reset_password`, payload: {} }), 403, 'reset password (off)')
  assertNoStore(t, await app.inject({ method: 'GET', url: `${PREFIX}/nope` }), 404, 'unknown route')
})

t.test('/auth/2fa: no-store on success and on error', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const token = await interim()
  assertNoStore(t, await submit({ JWT: token, code: 'wrong-backup-code' }), 401, 'wrong code')
  assertNoStore(t, await submit({ JWT: token, code: await totpAt(secret, clock.now) }), 200, 'right code')
})

t.test('/oauth/token: no-store on success and on error', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n' })
  assertNoStore(t, await postToken(app, { provider: 'idp1', id_token: idToken, nonce: 'n' }), 200, 'ID token sign-in')
  assertNoStore(t, await postToken(app, { provider: 'nobody', code: 'x' }), 400, 'unknown provider')
  assertNoStore(t, await app.inject({ method: 'GET', url: `${PREFIX}/oauth/token?provider=idp1` }), 400, 'GET without a code')
})

t.test('a 429 of the per-IP limit is not stored either', async (t) => {
  const { app } = await buildApp({ limits: { requestsPerIp: { max: 1, window: '1m' } } })
  t.teardown(() => app.close())
  await post(app, '/auth', {})
  assertNoStore(t, await post(app, '/auth', {}), 429, 'limited')
})

t.test('/jwks: publicly cacheable for five minutes, and outside the per-IP limit', async (t) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
  const { app } = await buildApp({
    tokens: { algorithm: 'RS256', keys: [{ kid: 'k1', privateKey }] },
    limits: { requestsPerIp: { max: 2, window: '1m' } }
  })
  t.teardown(() => app.close())
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ method: 'GET', url: `${PREFIX}/jwks` })
    t.equal(res.statusCode, 200, `fetch ${i + 1}`)
    t.equal(res.headers['cache-control'], 'public, max-age=300')
    t.equal(res.headers.pragma, undefined, 'no Pragma')
    t.notOk('x-ratelimit-limit' in res.headers, 'not rate-limited')
  }
  const viaRestRoute = await app.inject({ method: 'GET', url: '/?rest_route=/jwt-login/v1/jwks' })
  t.equal(viaRestRoute.headers['cache-control'], 'public, max-age=300', 'through ?rest_route= as well')
  // the key fetches took nothing from the budget of the other routes
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).statusCode, 200)
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).statusCode, 200)
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).statusCode, 429)
})
