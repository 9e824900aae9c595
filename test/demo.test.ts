import { Redis } from 'ioredis'
import t from 'tap'
import { banner, buildDemo, DEMO_USER, main, oauthFromEnv } from '../examples/demo.js'
import { errorCode } from './helpers/http.js'
import { REDIS_URL } from './helpers/redis-store.js'

const PREFIX = '/jwt-login/v1'

t.test('the demo host: login with the demo user, validate, /me, refresh, revoke', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
  t.equal(login.statusCode, 200, login.body)
  const { jwt, refresh_token: refreshToken } = login.json().data
  t.type(refreshToken, 'string', 'refresh tokens are on in the demo')

  const validate = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(validate.statusCode, 200)
  t.same(validate.json().data.user, { ID: 1, user_login: DEMO_USER.login, user_email: DEMO_USER.email, display_name: DEMO_USER.displayName, roles: DEMO_USER.roles })

  const me = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(me.statusCode, 200)
  t.same(me.json(), { user: validate.json().data.user })
  const anonymous = await app.inject({ method: 'GET', url: '/me' })
  t.equal(anonymous.statusCode, 401)

  const refreshed = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: refreshToken } })
  t.equal(refreshed.statusCode, 200)
  const revoke = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(revoke.statusCode, 200)
  const after = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(errorCode(after), 55)
})

t.test('the banner names the credentials and a curl command per route', async (t) => {
  const text = banner('http://127.0.0.1:3000')
  t.match(text, 'jwt-login demo listening on http://127.0.0.1:3000')
  t.ok(text.split('\n').includes(`  email: ${DEMO_USER.email}`))
  t.ok(text.split('\n').includes(`  password: ${DEMO_USER.password}`))
  for (const route of ['/jwt-login/v1/auth ', '/jwt-login/v1/auth/validate', '/jwt-login/v1/auth/refresh', '/jwt-login/v1/auth/revoke', '/?rest_route=/jwt-login/v1/auth/validate', '/me']) {
    t.match(text, new RegExp(`curl -s[^\\n]*http://127\\.0\\.0\\.1:3000${route.replace(/[?/.]/g, (c) => `\\${c}`)}`), `a curl command for ${route}`)
  }
})

t.test('main() listens on PORT and prints the banner; the printed curl login works', async (t) => {
  const printed: string[] = []
  const app = await main({ PORT: '0' }, (text) => printed.push(text))
  t.teardown(() => app.close())
  const address = app.server.address()
  t.ok(address !== null && typeof address === 'object')
  const port = (address as { port: number }).port
  t.ok(port > 0)
  const base = `http://127.0.0.1:${port}`
  t.equal(printed.length, 1)
  t.equal(printed[0], banner(base))

  const res = await fetch(`${base}${PREFIX}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password })
  })
  t.equal(res.status, 200)
  const { jwt } = (await res.json() as { data: { jwt: string } }).data
  const viaRest = await fetch(`${base}/?rest_route=/jwt-login/v1/auth/validate`, { headers: { authorization: `Bearer ${jwt}` } })
  t.equal(viaRest.status, 200)
})

t.test('main() prints to console.log by default', async (t) => {
  const logged: unknown[] = []
  const original = console.log
  console.log = (...args: unknown[]) => { logged.push(args) }
  try {
    const app = await main({ PORT: '0' })
    await app.close()
  } finally {
    console.log = original
  }
  t.equal(logged.length, 1, 'the banner went to console.log')
  t.match(String((logged[0] as unknown[])[0]), /email: demo@example\.com/)
})

t.test('buildDemo with redisUrl keeps its state in Redis', async (t) => {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  t.teardown(() => client.quit())
  const before = new Set(await client.keys('jwt-login-demo:*'))
  t.teardown(async () => {
    const created = (await client.keys('jwt-login-demo:*')).filter(k => !before.has(k))
    if (created.length > 0) await client.del(...created)
  })

  const app = await buildDemo({ redisUrl: REDIS_URL })
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
  t.equal(login.statusCode, 200)
  const { jwt, refresh_token: refreshToken } = login.json().data
  const created = (await client.keys('jwt-login-demo:*')).filter(k => !before.has(k))
  t.ok(created.some(k => k.startsWith('jwt-login-demo:session:')), 'the session record (refresh token hash) is in Redis')
  t.notOk(created.some(k => k.includes(refreshToken as string)), 'never the refresh token itself')

  const revoke = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, payload: { JWT: jwt } })
  t.equal(revoke.statusCode, 200)
  const sessionKey = `jwt-login-demo:session:${JSON.parse(Buffer.from((jwt as string).split('.')[1] as string, 'base64url').toString()).sid as string}`
  t.equal(await client.get(sessionKey), 'revoked', 'the revocation is in Redis')
  await app.close()
  t.equal(await client.ping(), 'PONG')
})

t.test('the demo reads a provider from the environment', async (t) => {
  t.equal(oauthFromEnv({}), undefined, 'no provider without OAUTH_ISSUER and OAUTH_CLIENT_ID')
  t.same(oauthFromEnv({ OAUTH_ISSUER: 'https://idp.example.com', OAUTH_CLIENT_ID: 'demo' }), {
    provider: 'idp1', issuer: 'https://idp.example.com', clientId: 'demo', clientSecret: undefined, redirectUri: undefined, autoRegister: false
  })
  const full = oauthFromEnv({
    OAUTH_ISSUER: 'https://idp.example.com',
    OAUTH_CLIENT_ID: 'demo',
    OAUTH_CLIENT_SECRET: 'secret',
    OAUTH_REDIRECT_URI: 'https://app.example.com/callback',
    OAUTH_PROVIDER: 'corp',
    OAUTH_AUTO_REGISTER: '1'
  })
  t.same(full, {
    provider: 'corp', issuer: 'https://idp.example.com', clientId: 'demo', clientSecret: 'secret', redirectUri: 'https://app.example.com/callback', autoRegister: true
  })
  for (const oauth of [full, oauthFromEnv({ OAUTH_ISSUER: 'https://idp.example.com', OAUTH_CLIENT_ID: 'demo' })]) {
    const app = await buildDemo({ oauth })
    const unknown = await app.inject({ method: 'POST', url: `${PREFIX}/oauth/token`, payload: { provider: 'nope', code: 'x' } })
    t.equal(errorCode(unknown), 69, 'the provider map is in place; an unknown provider is refused')
    await app.close()
  }
})
