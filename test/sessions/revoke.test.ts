import t from 'tap'
import { JwtLoginError } from '../../lib/index.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { claimsOf, errorCode, loginTokens, post, PREFIX } from '../helpers/http.js'

const ON = { refresh: { enabled: true } }

t.test('revoke by body JWT: the token and its session refresh token stop working', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const events: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('token.revoked', (e) => events.push(e))
  const session = await loginTokens(app)
  const other = await loginTokens(app)

  const res = await post(app, '/auth/revoke', { JWT: session.jwt })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { success: true, message: 'Token was revoked.', data: { message: 'Token was revoked.', jwt: [session.jwt] } })

  const validate = await post(app, '/auth/validate', { JWT: session.jwt })
  t.equal(validate.statusCode, 401)
  t.equal(errorCode(validate), 55)
  const refresh = await post(app, '/auth/refresh', { refresh_token: session.refresh_token })
  t.equal(refresh.statusCode, 401)
  t.equal(errorCode(refresh), 51)
  const twice = await post(app, '/auth/revoke', { JWT: session.jwt })
  t.equal(twice.statusCode, 401)
  t.equal(errorCode(twice), 55)

  t.equal((await post(app, '/auth/validate', { JWT: other.jwt })).statusCode, 200, 'other sessions live on')

  const claims = claimsOf(session.jwt)
  t.same(events, [{ userId: 1, sessionId: claims.sid, jti: claims.jti, ip: '127.0.0.1' }])
  t.notOk(JSON.stringify(events).includes(session.jwt))
})

t.test('revoke by Bearer and by query', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const byBearer = await loginTokens(app)
  const res = await post(app, '/auth/revoke', undefined, { authorization: `Bearer ${byBearer.jwt}` })
  t.equal(res.statusCode, 200)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: byBearer.jwt })), 55)

  const byQuery = await loginTokens(app)
  const res2 = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke?JWT=${byQuery.jwt}` })
  t.equal(res2.statusCode, 200)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: byQuery.jwt })), 55)
})

t.test('a refreshed access token of a revoked session is refused too', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const second = (await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).json().data
  t.equal((await post(app, '/auth/revoke', { JWT: first.jwt })).statusCode, 200)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: second.jwt })), 55)
  t.equal(errorCode(await post(app, '/auth/refresh', { refresh_token: second.refresh_token })), 51)
})

t.test('revoke errors', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const failed: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('validation.failed', (e) => failed.push(e))
  const missing = await post(app, '/auth/revoke', {})
  t.equal(missing.statusCode, 400)
  t.equal(errorCode(missing), 53)
  const noBody = await post(app, '/auth/revoke')
  t.equal(errorCode(noBody), 53)
  const bad = await post(app, '/auth/revoke', { JWT: 'a.b.c' })
  t.equal(bad.statusCode, 401)
  t.equal(errorCode(bad), 22)
  const { jwt } = await loginTokens(app)
  await users.removeUser(1)
  const gone = await post(app, '/auth/revoke', { JWT: jwt })
  t.equal(gone.statusCode, 401)
  t.equal(errorCode(gone), 24)
  t.same(failed, [{ ip: '127.0.0.1', errorCode: 22 }, { ip: '127.0.0.1', errorCode: 24 }])

  const off = await buildApp({ revoke: { enabled: false } })
  t.teardown(() => off.app.close())
  const token = (await loginTokens(off.app)).jwt
  const disabled = await post(off.app, '/auth/revoke', { JWT: token })
  t.equal(disabled.statusCode, 403)
  t.equal(errorCode(disabled), 83)
  t.equal((await post(off.app, '/auth/validate', { JWT: token })).statusCode, 200, 'nothing was revoked')

  const noAuth = await buildApp({ authentication: { enabled: false } })
  t.teardown(() => noAuth.app.close())
  t.equal(errorCode(await post(noAuth.app, '/auth/revoke', { JWT: token })), 45)
})

t.test('auth code gate for revoke', async (t) => {
  const { app } = await buildApp({ authCodes: { codes: [{ code: 'gate' }], requireFor: { revoke: true } } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  t.equal(errorCode(await post(app, '/auth/revoke', { JWT: jwt })), 94)
  t.equal(errorCode(await post(app, '/auth/revoke', { JWT: jwt, AUTH_KEY: 'bad' })), 27)
  t.equal((await post(app, '/auth/validate', { JWT: jwt })).statusCode, 200, 'not revoked by refused requests')
  t.equal((await post(app, '/auth/revoke', { JWT: jwt, AUTH_KEY: 'gate' })).statusCode, 200)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: jwt })), 55)
})

t.test('the revocation lasts until the token expires', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({}, { clock })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  t.equal((await post(app, '/auth/revoke', { JWT: jwt })).statusCode, 200)
  clock.advance(14 * 60_000)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: jwt })), 55)
  clock.advance(2 * 60_000)
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: jwt })), 14, 'expired afterwards, never valid again')
})

t.test('fastify.jwtLogin sign / verify / revoke', async (t) => {
  const { app, users } = await buildApp()
  t.teardown(() => app.close())
  const alice = await users.findByEmail(ALICE.email)
  const publicUser = users.toPublicUser(alice as NonNullable<typeof alice>)
  const token = app.jwtLogin.sign(publicUser)
  const claims = await app.jwtLogin.verify(token)
  t.equal(claims.sub, '1')
  t.equal(claims.typ, 'access')
  t.equal(claims.email, ALICE.email)
  t.equal((await post(app, '/auth/validate', { JWT: token })).statusCode, 200, 'a signed token works on the routes')

  const routeToken = (await loginTokens(app)).jwt
  t.equal((await app.jwtLogin.verify(routeToken)).sid, claimsOf(routeToken).sid)

  await app.jwtLogin.revoke(token)
  await t.rejects(app.jwtLogin.verify(token), JwtLoginError)
  await t.rejects(app.jwtLogin.verify(token), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55, statusCode: 401 })
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: token })), 55)
  await t.rejects(app.jwtLogin.revoke('nope'), { name: 'JwtLoginError', errorCode: 2 })
  await t.rejects(app.jwtLogin.verify(token.slice(0, -3) + 'abc'), { name: 'JwtLoginError', statusCode: 401 })
  t.equal((await post(app, '/auth/validate', { JWT: routeToken })).statusCode, 200, 'revoking one token leaves other sessions')
})
