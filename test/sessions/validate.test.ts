import t from 'tap'
import { ALICE, buildApp, HS_SECRET, testClock } from '../helpers/app.js'
import { claimsOf, errorCode, login, loginTokens, post, PREFIX } from '../helpers/http.js'
import { buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

t.test('GET with ?JWT=, POST with body JWT, POST with Bearer', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({}, { clock })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)

  const viaQuery = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}` })
  const viaBody = await post(app, '/auth/validate', { JWT: jwt })
  const viaBearer = await post(app, '/auth/validate', undefined, { authorization: `Bearer ${jwt}` })
  const viaGetBearer = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: { authorization: `bearer ${jwt}` } })
  const viaPostQuery = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate?JWT=${jwt}` })
  for (const res of [viaQuery, viaBody, viaBearer, viaGetBearer, viaPostQuery]) {
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.body, viaQuery.body)
  }

  const body = viaQuery.json()
  t.same(Object.keys(body), ['success', 'data'])
  t.equal(body.success, true)
  t.same(Object.keys(body.data), ['user', 'roles', 'jwt'])
  t.same(body.data.roles, ['subscriber'], 'the roles beside the user, as Simple JWT Login 4.x answers')
  t.same(body.data.user, { ID: 1, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName, roles: ['subscriber'] })
  t.equal(body.data.jwt.length, 1)
  const entry = body.data.jwt[0]
  t.same(Object.keys(entry).sort(), ['expire_in', 'header', 'payload', 'token'])
  t.equal(entry.token, jwt)
  t.same(entry.header, { alg: 'HS256', typ: 'JWT', kid: 'k1' })
  t.same(entry.payload, claimsOf(jwt))
  t.equal(entry.expire_in, 900)
  t.notMatch(viaQuery.body, /argon2|passwordHash|password/i, 'no hash anywhere in the answer')

  clock.advance(100_000)
  const later = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(later.json().data.jwt[0].expire_in, 800, 'expire_in counts down with the clock')
})

t.test('Bearer header: disabled is ignored, malformed is 400, field and header must agree', async (t) => {
  t.test('bearer.enabled false ignores the header', async (t) => {
    const { app } = await buildApp({ bearer: { enabled: false } })
    t.teardown(() => app.close())
    const { jwt } = await loginTokens(app)
    const res = await post(app, '/auth/validate', undefined, { authorization: `Bearer ${jwt}` })
    t.equal(res.statusCode, 400)
    t.equal(errorCode(res), 53)
    const different = await post(app, '/auth/validate', { JWT: jwt }, { authorization: 'Bearer something-else' })
    t.equal(different.statusCode, 200, 'a disabled header is not compared either')
  })

  t.test('enabled', async (t) => {
    const { app } = await buildApp()
    t.teardown(() => app.close())
    const { jwt } = await loginTokens(app)
    const other = (await loginTokens(app)).jwt
    const different = await post(app, '/auth/validate', { JWT: jwt }, { authorization: `Bearer ${other}` })
    t.equal(different.statusCode, 400)
    t.equal(errorCode(different), 203)
    const same = await post(app, '/auth/validate', { JWT: jwt }, { authorization: `Bearer ${jwt}` })
    t.equal(same.statusCode, 200)
    const malformed = await post(app, '/auth/validate', undefined, { authorization: `Basic ${jwt}` })
    t.equal(malformed.statusCode, 400)
    t.equal(errorCode(malformed), 203)
    const missing = await post(app, '/auth/validate')
    t.equal(missing.statusCode, 400)
    t.equal(errorCode(missing), 53)
    const empty = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=` })
    t.equal(errorCode(empty), 53)
  })
})

t.test('issue 24: the same token in the field and the Bearer header is one token, on every route that takes one; two different ones stay 400 / 203', async (t) => {
  const { app, clock, secret, interim } = await buildTwoFactorApp({ settings: { revoke: { enabled: true }, sessions: { enabled: true } } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const other = (await loginTokens(app)).jwt
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
  const get = async (path: string, token: string, header: string): Promise<[number, number | undefined]> => {
    const res = await app.inject({ method: 'GET', url: `${PREFIX}${path}?JWT=${token}`, headers: bearer(header) })
    return [res.statusCode, errorCode(res)]
  }
  const send = async (path: string, body: Record<string, unknown>, header: string): Promise<[number, number | undefined]> => {
    const res = await post(app, path, body, bearer(header))
    return [res.statusCode, errorCode(res)]
  }
  const refused: [number, number] = [400, 203]

  // what Swagger UI sent before its example lost the field: a placeholder beside the header
  t.same(await send('/auth/validate', { JWT: 'string' }, jwt), refused, 'a placeholder is another token')
  t.same(await send('/auth/validate', { JWT: other }, jwt), refused)
  t.same(await send('/auth/validate', { JWT: jwt }, jwt), [200, undefined], 'POST /auth/validate')
  t.same(await get('/auth/validate', other, jwt), refused)
  t.same(await get('/auth/validate', jwt, jwt), [200, undefined], 'GET /auth/validate, ?JWT= and the header')
  t.same(await get('/sessions', other, jwt), refused)
  t.same(await get('/sessions', jwt, jwt), [200, undefined], 'GET /sessions')
  t.same(await send('/auth/step-up', { JWT: other, password: ALICE.password }, jwt), refused)
  t.same(await send('/auth/step-up', { JWT: jwt, password: ALICE.password }, jwt), [200, undefined], 'POST /auth/step-up')

  const first = await interim()
  const second = await interim()
  const code = await totpAt(secret, clock.now)
  t.same(await send('/auth/2fa', { JWT: second, code }, first), refused, 'two interim tokens')
  t.same(await send('/auth/2fa', { JWT: first, code }, first), [200, undefined], 'POST /auth/2fa, the interim token twice')

  t.same(await send('/auth/revoke', { JWT: other }, jwt), refused)
  t.same(await send('/auth/revoke', { JWT: jwt }, jwt), [200, undefined], 'POST /auth/revoke')
  t.same(await send('/auth/validate', { JWT: jwt }, jwt), [401, 55], 'and it was that token that was revoked')
})

t.test('validate disabled: 403 / 82; authentication disabled: 403 / 45', async (t) => {
  const off = await buildApp({ validate: { enabled: false } })
  t.teardown(() => off.app.close())
  const { jwt } = await loginTokens(off.app)
  const res = await post(off.app, '/auth/validate', { JWT: jwt })
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 82)
  const get = await off.app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}` })
  t.equal(errorCode(get), 82)

  const noAuth = await buildApp({ authentication: { enabled: false } })
  t.teardown(() => noAuth.app.close())
  const res2 = await post(noAuth.app, '/auth/validate', { JWT: jwt })
  t.equal(res2.statusCode, 403)
  t.equal(errorCode(res2), 45)
})

t.test('auth code gate for validate', async (t) => {
  const { app } = await buildApp({ authCodes: { codes: [{ code: 'gate-code' }], requireFor: { validate: true } } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const missing = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(missing.statusCode, 400)
  t.equal(errorCode(missing), 94)
  const wrong = await post(app, '/auth/validate', { JWT: jwt, AUTH_KEY: 'nope' })
  t.equal(wrong.statusCode, 401)
  t.equal(errorCode(wrong), 27)
  const body = await post(app, '/auth/validate', { JWT: jwt, AUTH_KEY: 'gate-code' })
  t.equal(body.statusCode, 200)
  const query = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}&AUTH_KEY=gate-code` })
  t.equal(query.statusCode, 200)
  const bearer = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?AUTH_KEY=gate-code`, headers: { authorization: `Bearer ${jwt}` } })
  t.equal(bearer.statusCode, 200)
  const noJwt = await post(app, '/auth/validate', { AUTH_KEY: 'gate-code' })
  t.equal(errorCode(noJwt), 53, 'the code is checked first, then the JWT')
})

t.test('validation.failed event on 401s, without the token', async (t) => {
  const { app, users } = await buildApp()
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const events: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('validation.failed', (e) => events.push(e))

  const tampered = jwt.slice(0, -4) + (jwt.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  const bad = await post(app, '/auth/validate', { JWT: tampered })
  t.equal(bad.statusCode, 401)
  t.equal(errorCode(bad), 11)
  const garbage = await post(app, '/auth/validate', { JWT: 'not-a-jwt' })
  t.equal(errorCode(garbage), 2)
  const missing = await post(app, '/auth/validate', {})
  t.equal(errorCode(missing), 53)
  await users.removeUser(1)
  const gone = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(gone.statusCode, 401)
  t.equal(errorCode(gone), 24)

  t.same(events, [
    { ip: '127.0.0.1', errorCode: 11 },
    { ip: '127.0.0.1', errorCode: 2 },
    { ip: '127.0.0.1', errorCode: 24 }
  ], 'only the 401s are reported')
  t.notOk(JSON.stringify(events).includes(jwt.split('.')[2] as string))
})

t.test('claims: only the user claims the settings name (and when and how the user signed in)', async (t) => {
  const names = { email: 'email', login: 'username', displayName: 'display_name', roles: 'roles' } as const
  const base = ['sub', 'iat', 'exp', 'jti', 'iss', 'aud', 'typ', 'sid', 'auth_time', 'amr']
  for (const [setting, claim] of Object.entries(names)) {
    for (const on of [true, false]) {
      const claims = { email: false, login: false, displayName: false, roles: false, [setting]: on }
      const { app } = await buildApp({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], claims } })
      const { jwt } = await loginTokens(app)
      const payload = claimsOf(jwt)
      t.same(Object.keys(payload).sort(), (on ? [...base, claim] : base).sort(), `${setting} ${on ? 'on' : 'off'}`)
      const validated = await post(app, '/auth/validate', { JWT: jwt })
      t.equal(validated.statusCode, 200)
      t.same(validated.json().data.jwt[0].payload, payload)
      await app.close()
    }
  }

  const { app } = await buildApp({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], claims: { displayName: true } } })
  t.teardown(() => app.close())
  const payload = claimsOf((await loginTokens(app)).jwt)
  t.equal(payload.email, ALICE.email)
  t.equal(payload.username, ALICE.login)
  t.equal(payload.display_name, ALICE.displayName)
  t.same(payload.roles, ['subscriber'])
  t.equal(payload.typ, 'access')
  t.equal(payload.iss, 'jwt-login')
  t.equal(payload.aud, 'jwt-login')
})

t.test('client-supplied extras never become claims', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const res = await login(app, {
    email: ALICE.email,
    password: ALICE.password,
    role: 'administrator',
    roles: ['administrator'],
    sub: '999',
    exp: 9999999999,
    iss: 'evil',
    is_admin: true
  })
  t.equal(res.statusCode, 200, res.body)
  const payload = claimsOf(res.json().data.jwt)
  t.notOk('role' in payload)
  t.notOk('is_admin' in payload)
  t.same(payload.roles, ['subscriber'])
  t.equal(payload.sub, '1')
  t.equal(payload.iss, 'jwt-login')
  t.not(payload.exp, 9999999999)
  const validated = await post(app, '/auth/validate', { JWT: res.json().data.jwt })
  t.same(validated.json().data.user.roles, ['subscriber'])
})
