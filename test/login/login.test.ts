import t from 'tap'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { claimsOf, errorCode, login, multipart, post, PREFIX } from '../helpers/http.js'

t.test('login by email, by username and by the login alias', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  for (const body of [
    { email: ALICE.email, password: ALICE.password },
    { email: ALICE.email.toUpperCase(), password: ALICE.password },
    { username: ALICE.login, password: ALICE.password },
    { login: ALICE.login, password: ALICE.password }
  ]) {
    const res = await login(app, body)
    t.equal(res.statusCode, 200, JSON.stringify(Object.keys(body)))
    const data = res.json().data
    t.equal(res.json().success, true)
    t.type(data.jwt, 'string')
    t.equal(claimsOf(data.jwt).sub, '1')
    t.notOk('refresh_token' in data, 'no refresh token while refresh is off')
  }
})

t.test('form-encoded and multipart bodies', async (t) => {
  const { app } = await buildApp({}, { multipart: true })
  t.teardown(() => app.close())
  const form = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email: ALICE.email, password: ALICE.password }).toString()
  })
  t.equal(form.statusCode, 200, form.body)
  t.type(form.json().data.jwt, 'string')

  const wrongForm = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username: ALICE.login, password: 'nope' }).toString()
  })
  t.equal(wrongForm.statusCode, 401)
  t.equal(errorCode(wrongForm), 48)

  const body = multipart({ login: ALICE.login, password: ALICE.password })
  const multi = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, ...body })
  t.equal(multi.statusCode, 200, multi.body)
  t.type(multi.json().data.jwt, 'string')
})

t.test('multipart is opt-in: without the option a multipart body is 400 / 203 and its reader never runs', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, ...multipart({ login: ALICE.login, password: ALICE.password }) })
  t.equal(res.statusCode, 400)
  t.equal(errorCode(res), 203)
  t.notOk(app.hasContentTypeParser('multipart/form-data'), 'no multipart reader on the host')
})

t.test('refresh_token only when refresh is enabled', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  const res = await login(app)
  t.equal(res.statusCode, 200)
  t.type(res.json().data.refresh_token, 'string')
  t.ok(res.json().data.refresh_token.length >= 43, '256 bits in base64url')
})

t.test('authentication disabled: 403 / 45', async (t) => {
  const { app } = await buildApp({ authentication: { enabled: false } })
  t.teardown(() => app.close())
  const res = await login(app)
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 45)
})

t.test('identifiers: none or more than one is 400 / 46', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  for (const body of [
    { password: ALICE.password },
    { email: '', password: ALICE.password },
    { email: ALICE.email, username: ALICE.login, password: ALICE.password },
    { username: ALICE.login, login: ALICE.login, password: ALICE.password },
    { email: ALICE.email, login: ALICE.login, password: ALICE.password }
  ]) {
    const res = await login(app, body)
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.equal(errorCode(res), 46)
  }
})

t.test('password: none or both password and password_hash is 400 / 47', async (t) => {
  const { app } = await buildApp({ login: { allowPasswordHash: true } })
  t.teardown(() => app.close())
  for (const body of [
    { email: ALICE.email },
    { email: ALICE.email, password: '' },
    { email: ALICE.email, password: ALICE.password, password_hash: 'x' }
  ]) {
    const res = await login(app, body)
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.equal(errorCode(res), 47)
  }
})

t.test('password_hash login', async (t) => {
  t.test('off by default: 403 / 113', async (t) => {
    const { app, users } = await buildApp()
    t.teardown(() => app.close())
    const alice = await users.findByEmail(ALICE.email)
    const res = await login(app, { email: ALICE.email, password_hash: alice?.passwordHash })
    t.equal(res.statusCode, 403)
    t.equal(errorCode(res), 113)
  })

  t.test('when allowed: the stored hash logs in, another does not', async (t) => {
    const { app, users } = await buildApp({ login: { allowPasswordHash: true } })
    t.teardown(() => app.close())
    const events: Array<Record<string, unknown>> = []
    app.jwtLogin.events.on('login.succeeded', (e) => events.push(e))
    const alice = await users.findByEmail(ALICE.email)
    const hash = alice?.passwordHash as string
    const right = await login(app, { email: ALICE.email, password_hash: hash })
    t.equal(right.statusCode, 200, right.body)
    t.type(right.json().data.jwt, 'string')
    t.same(events, [{ userId: 1, ip: '127.0.0.1', method: 'password_hash' }])

    const wrong = await login(app, { email: ALICE.email, password_hash: hash.slice(0, -2) + 'AA' })
    t.equal(wrong.statusCode, 401)
    t.equal(errorCode(wrong), 48)

    const unknown = await login(app, { email: 'nobody@example.com', password_hash: hash })
    t.equal(unknown.statusCode, 401)
    t.same(unknown.json(), wrong.json())
  })

  t.test('an adapter without getPasswordHash refuses every hash', async (t) => {
    const { app, users } = await buildApp({ login: { allowPasswordHash: true } })
    t.teardown(() => app.close())
    const alice = await users.findByEmail(ALICE.email)
    ;(users as unknown as Record<string, unknown>).getPasswordHash = undefined
    const res = await login(app, { email: ALICE.email, password_hash: alice?.passwordHash })
    t.equal(res.statusCode, 401)
    t.equal(errorCode(res), 48)
  })
})

t.test('auth code gate on /auth', async (t) => {
  const clock = testClock()
  const settings = {
    authCodes: {
      codes: [{ code: 'right-code' }, { code: 'old-code', expiresAt: '2026-01-01T00:00:00Z' }],
      requireFor: { auth: true }
    }
  }
  const { app, users } = await buildApp(settings, { clock })
  t.teardown(() => app.close())
  const lookups: string[] = []
  for (const method of ['findByEmail', 'findByLogin', 'findById'] as const) {
    const original = users[method].bind(users) as (v: never) => Promise<unknown>
    ;(users as unknown as Record<string, unknown>)[method] = async (v: never) => {
      lookups.push(method)
      return await original(v)
    }
  }
  const failures: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('login.failed', (e) => failures.push(e))

  const missing = await login(app, { email: ALICE.email, password: ALICE.password })
  t.equal(missing.statusCode, 400)
  t.equal(errorCode(missing), 94)

  const wrong = await login(app, { email: ALICE.email, password: ALICE.password, AUTH_KEY: 'wrong-code' })
  t.equal(wrong.statusCode, 401)
  t.equal(errorCode(wrong), 27)

  const expired = await login(app, { email: ALICE.email, password: ALICE.password, AUTH_KEY: 'old-code' })
  t.equal(expired.statusCode, 401)
  t.equal(errorCode(expired), 27)

  const wrongType = await login(app, { email: ALICE.email, password: ALICE.password, AUTH_KEY: 12345 })
  t.equal(wrongType.statusCode, 400)
  t.equal(errorCode(wrongType), 203)

  t.same(lookups, [], 'no user lookup before the auth code passes')
  t.same(failures.map(f => f.reason), ['auth_code', 'auth_code', 'auth_code', 'auth_code'])
  t.same(failures.map(f => f.errorCode), [94, 27, 27, 203])

  const right = await login(app, { email: ALICE.email, password: ALICE.password, AUTH_KEY: 'right-code' })
  t.equal(right.statusCode, 200, right.body)
  t.same(lookups, ['findByEmail'])
  t.notOk('AUTH_KEY' in claimsOf(right.json().data.jwt), 'the code does not become a claim')
})

t.test('auth code parameter name is configurable; codes expire by the clock', async (t) => {
  const clock = testClock(Date.UTC(2025, 0, 1))
  const { app } = await buildApp({
    authCodes: { codes: [{ code: 'soon-old', expiresAt: '2025-01-02T00:00:00Z' }], parameter: 'CODE', requireFor: { auth: true } }
  }, { clock })
  t.teardown(() => app.close())
  const ok = await login(app, { email: ALICE.email, password: ALICE.password, CODE: 'soon-old' })
  t.equal(ok.statusCode, 200)
  const wrongName = await login(app, { email: ALICE.email, password: ALICE.password, AUTH_KEY: 'soon-old' })
  t.equal(errorCode(wrongName), 94)
  clock.advance(24 * 3600 * 1000)
  const late = await login(app, { email: ALICE.email, password: ALICE.password, CODE: 'soon-old' })
  t.equal(late.statusCode, 401)
  t.equal(errorCode(late), 27)
})

t.test('login events carry no password', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const seen: Array<[string, Record<string, unknown>]> = []
  app.jwtLogin.events.on('login.succeeded', (e) => seen.push(['login.succeeded', e]))
  app.jwtLogin.events.on('login.failed', (e) => seen.push(['login.failed', e]))
  // a throwing listener must not change the answer
  app.jwtLogin.events.on('login.succeeded', () => { throw new Error('listener bug') })

  const ok = await login(app)
  t.equal(ok.statusCode, 200)
  const bad = await login(app, { email: ALICE.email, password: 'the wrong password' })
  t.equal(bad.statusCode, 401)
  const unknown = await post(app, '/auth', { username: 'ghost', password: 'ghost password' })
  t.equal(unknown.statusCode, 401)

  t.same(seen, [
    ['login.succeeded', { userId: 1, ip: '127.0.0.1', method: 'password' }],
    ['login.failed', { ip: '127.0.0.1', reason: 'wrong_credentials', errorCode: 48 }],
    ['login.failed', { ip: '127.0.0.1', reason: 'wrong_credentials', errorCode: 48 }]
  ])
  const text = JSON.stringify(seen)
  for (const secret of [ALICE.password, 'the wrong password', 'ghost password', ok.json().data.jwt]) {
    t.notOk(text.includes(secret), 'no secret in events')
  }
})

t.test('once and off on the login events', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const once: unknown[] = []
  const kept: unknown[] = []
  const dropped: unknown[] = []
  const drop = (e: unknown): void => { dropped.push(e) }
  app.jwtLogin.events.once('login.succeeded', (e) => once.push(e))
  app.jwtLogin.events.on('login.succeeded', (e) => kept.push(e))
  app.jwtLogin.events.on('login.succeeded', drop)
  app.jwtLogin.events.off('login.succeeded', drop)
  await login(app)
  await login(app)
  t.equal(once.length, 1)
  t.equal(kept.length, 2)
  t.equal(dropped.length, 0)
})

t.test('a failing user adapter: 503 / 201, never a 500, nothing counted', async (t) => {
  const { app, users } = await buildApp({ limits: { loginPerAccount: { max: 1, window: '15m' } } })
  t.teardown(() => app.close())
  const original = users.findByEmail.bind(users)
  users.findByEmail = async () => { throw new Error('database down') }
  const res = await login(app)
  t.equal(res.statusCode, 503)
  t.equal(errorCode(res), 201)
  t.notMatch(res.body, /database down/, 'the cause is not sent to the client')
  users.findByEmail = original
  const ok = await login(app)
  t.equal(ok.statusCode, 200, 'the outage counted no failure')

  users.findById = async () => { throw new Error('database down') }
  const validate = await post(app, '/auth/validate', { JWT: ok.json().data.jwt })
  t.equal(validate.statusCode, 503)
  t.equal(errorCode(validate), 201)
})
