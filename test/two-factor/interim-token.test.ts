import t from 'tap'
import type { JwtLoginError } from '../../lib/index.js'
import { buildTwoFactorApp, ALICE, PREFIX, totpAt } from '../helpers/two-factor.js'

function claimsOf (token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
}

t.test('the interim token is its own kind: typ, aud, 5 minutes, no user claims', async (t) => {
  const { app, interim } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const claims = claimsOf(await interim())
  t.equal(claims.typ, 'interim')
  t.equal(claims.aud, 'jwt-login:2fa')
  t.equal((claims.exp as number) - (claims.iat as number), 300)
  t.notOk('email' in claims)
  t.notOk('roles' in claims)

  const { app: short, interim: shortInterim } = await buildTwoFactorApp({ settings: { twoFactor: { interimLifetime: '2m' } } })
  t.teardown(() => short.close())
  const shortClaims = claimsOf(await shortInterim())
  t.equal((shortClaims.exp as number) - (shortClaims.iat as number), 120)
})

t.test('an interim token is refused with 401 / 110 wherever a final token belongs', async (t) => {
  const { app, interim } = await buildTwoFactorApp({
    settings: { refresh: { enabled: true } },
    beforeReady: (host) => { host.get('/host/me', { preHandler: host.jwtLogin.authenticate }, async () => ({ ok: true })) }
  })
  t.teardown(() => app.close())
  const token = await interim()
  const bearer = { authorization: `Bearer ${token}` }

  const attempts = [
    { name: 'GET /auth/validate', method: 'GET' as const, url: `${PREFIX}/auth/validate?JWT=${token}` },
    { name: 'GET /auth/validate (Bearer)', method: 'GET' as const, url: `${PREFIX}/auth/validate`, headers: bearer },
    { name: 'POST /auth/validate', method: 'POST' as const, url: `${PREFIX}/auth/validate`, payload: { JWT: token } },
    { name: 'rest_route validate', method: 'GET' as const, url: '/?rest_route=/jwt-login/v1/auth/validate', headers: bearer },
    { name: 'POST /auth/revoke', method: 'POST' as const, url: `${PREFIX}/auth/revoke`, payload: { JWT: token } },
    { name: 'POST /auth/revoke (Bearer)', method: 'POST' as const, url: `${PREFIX}/auth/revoke`, headers: bearer },
    { name: 'POST /auth/refresh as refresh_token', method: 'POST' as const, url: `${PREFIX}/auth/refresh`, payload: { refresh_token: token } },
    { name: 'POST /auth/refresh as JWT', method: 'POST' as const, url: `${PREFIX}/auth/refresh`, payload: { JWT: token } },
    { name: 'host route with authenticate', method: 'GET' as const, url: '/host/me', headers: bearer }
  ]
  for (const { name, ...request } of attempts) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), { success: false, data: { message: 'An interim token cannot be used here; complete the two-factor step first.', errorCode: 110, error_code: 110 } }, name)
  }
  t.equal((await app.jwtLogin.verify(token).catch((error: JwtLoginError) => error) as JwtLoginError).errorCode, 110, 'fastify.jwtLogin.verify')
  t.equal((await app.jwtLogin.revoke(token).catch((error: JwtLoginError) => error) as JwtLoginError).errorCode, 110, 'fastify.jwtLogin.revoke')
})

t.test('/auth/refresh still answers 51 for what is not an interim token', async (t) => {
  const { app, login } = await buildTwoFactorApp({ settings: { refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const final = (await login(ALICE)).json().data.jwt as string
  const finalAsRefresh = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: final } })
  t.equal(finalAsRefresh.statusCode, 401)
  t.equal(finalAsRefresh.json().data.errorCode, 51)
  const missing = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { JWT: final } })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().data.errorCode, 51)
})

t.test('/auth/2fa takes only an interim token: 106 for a final or broken one', async (t) => {
  const { app, login, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const final = (await login(ALICE)).json().data.jwt as string
  const code = await totpAt(secret, clock.now)
  for (const [name, token] of [['final token', final], ['not a JWT', 'abc'], ['bad signature', `${final.slice(0, -4)}AAAA`]] as const) {
    const res = await submit({ JWT: token, code })
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().data.errorCode, 106, name)
  }
})

t.test('an interim token works once', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const token = await interim()
  t.equal((await submit({ JWT: token, code: await totpAt(secret, clock.now) })).statusCode, 200)
  clock.advance(30_000)
  const again = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(again.statusCode, 401)
  t.equal(again.json().data.errorCode, 107)
})

t.test('expiry: the challenge ends with the interim lifetime, the token with it (plus leeway)', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const token = await interim()
  clock.advance(5 * 60_000 + 1000)
  const inLeeway = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(inLeeway.statusCode, 401)
  t.equal(inLeeway.json().data.errorCode, 107, 'the token is within its leeway; the challenge is gone')
  clock.advance(10_000)
  const expired = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().data.errorCode, 106, 'an expired interim token')

  const fresh = await interim()
  clock.advance(4 * 60_000)
  t.equal((await submit({ JWT: fresh, code: await totpAt(secret, clock.now) })).statusCode, 200, 'within the lifetime')
})

t.test('Bearer on: the interim token may travel in the header', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ settings: { bearer: { enabled: true } } })
  t.teardown(() => app.close())
  const token = await interim()
  const res = await submit({ code: await totpAt(secret, clock.now) }, { authorization: `Bearer ${token}` })
  t.equal(res.statusCode, 200)

  clock.advance(30_000)
  const viaRestRoute = await app.inject({
    method: 'POST',
    url: '/?rest_route=/jwt-login/v1/auth/2fa',
    headers: { authorization: `Bearer ${await interim()}` },
    payload: { code: await totpAt(secret, clock.now) }
  })
  t.equal(viaRestRoute.statusCode, 200, 'the rest_route form')

  clock.advance(30_000)
  const other = await interim()
  const clash = await submit({ JWT: other, code: await totpAt(secret, clock.now) }, { authorization: `Bearer ${token}` })
  t.equal(clash.statusCode, 400, 'two different tokens')
  t.equal(clash.json().data.errorCode, 203)
})

t.test('Bearer off: the header is ignored, the body field works', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ settings: { bearer: { enabled: false } } })
  t.teardown(() => app.close())
  const token = await interim()
  const header = await submit({ code: await totpAt(secret, clock.now) }, { authorization: `Bearer ${token}` })
  t.equal(header.statusCode, 400)
  t.equal(header.json().data.errorCode, 23)
  const form = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth/2fa`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ JWT: token, code: await totpAt(secret, clock.now) }).toString()
  })
  t.equal(form.statusCode, 200, 'form-encoded body')
})
