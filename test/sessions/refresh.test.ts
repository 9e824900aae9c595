import t from 'tap'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { claimsOf, errorCode, loginTokens, post } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

const ON = { refresh: { enabled: true } }

t.test('refresh rotates: a new jwt in the same session and a new refresh token; the old one is spent', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const events: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('token.refreshed', (e) => events.push(e))
  const first = await loginTokens(app)
  clock.advance(2000)

  const res = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(res.statusCode, 200, res.body)
  const next = res.json().data
  t.same(Object.keys(next).sort(), ['jwt', 'refresh_token'])
  t.not(next.jwt, first.jwt)
  t.not(next.refresh_token, first.refresh_token)
  const before = claimsOf(first.jwt)
  const after = claimsOf(next.jwt)
  t.equal(after.sid, before.sid, 'same session')
  t.not(after.jti, before.jti)
  t.equal(after.iat, (before.iat as number) + 2)
  t.equal(after.email, ALICE.email)

  const validated = await post(app, '/auth/validate', { JWT: next.jwt })
  t.equal(validated.statusCode, 200)

  // a client whose answer was lost retries within refresh.reuseInterval (30 s): the same successor
  clock.advance(30_000)
  const retried = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(retried.statusCode, 200, 'a retry within the reuse interval is answered')
  t.equal(retried.json().data.refresh_token, next.refresh_token, 'with the same successor')
  t.equal(claimsOf(retried.json().data.jwt).sid, before.sid)

  clock.advance(1)
  const again = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(again.statusCode, 401, 'after the interval the spent token is a reuse')
  t.equal(errorCode(again), 51)
  const successor = await post(app, '/auth/refresh', { refresh_token: next.refresh_token })
  t.equal(successor.statusCode, 401, 'and the reuse ended the session')

  t.same(events, [{ userId: 1, sessionId: before.sid, ip: '127.0.0.1' }, { userId: 1, sessionId: before.sid, ip: '127.0.0.1' }])
  t.notOk(JSON.stringify(events).includes(first.refresh_token as string))
})

t.test('refresh.reuseInterval 0: an immediate second use is already a reuse', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true, reuseInterval: 0 } })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const next = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(next.statusCode, 200)
  const again = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(again.statusCode, 401)
  t.equal(errorCode(again), 51)
  const successor = await post(app, '/auth/refresh', { refresh_token: next.json().data.refresh_token })
  t.equal(successor.statusCode, 401, 'the session ended')
})

t.test('a refresh token that is not one of ours, or names no session, is refused without ending anything', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const [sessionId] = (first.refresh_token as string).split('.')
  const forged = [
    'not-a-token',
    `${sessionId as string}`,
    `${sessionId as string}.short`,
    `x${sessionId as string}.${'A'.repeat(43)}`,
    `lq2x3k4-00000000-0000-4000-8000-000000000000.${'A'.repeat(43)}`
  ]
  for (const token of forged) {
    const res = await post(app, '/auth/refresh', { refresh_token: token })
    t.same([res.statusCode, errorCode(res)], [401, 51], token)
  }
  const still = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(still.statusCode, 200, 'the session lives on')
})

t.test('form-encoded refresh', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const res = await app.inject({
    method: 'POST',
    url: '/jwt-login/v1/auth/refresh',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `refresh_token=${first.refresh_token as string}`
  })
  t.equal(res.statusCode, 200)
})

t.test('missing 400 / 51, unknown 401 / 51, disabled 403 / 81, authentication off 403 / 45', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  for (const body of [{}, { refresh_token: '' }, undefined]) {
    const res = await post(app, '/auth/refresh', body)
    t.equal(res.statusCode, 400)
    t.equal(errorCode(res), 51)
  }
  const unknown = await post(app, '/auth/refresh', { refresh_token: 'x'.repeat(43) })
  t.equal(unknown.statusCode, 401)
  t.equal(errorCode(unknown), 51)

  const off = await buildApp()
  t.teardown(() => off.app.close())
  const res = await post(off.app, '/auth/refresh', { refresh_token: 'whatever' })
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 81)

  const noAuth = await buildApp({ ...ON, authentication: { enabled: false } })
  t.teardown(() => noAuth.app.close())
  const res2 = await post(noAuth.app, '/auth/refresh', { refresh_token: 'whatever' })
  t.equal(res2.statusCode, 403)
  t.equal(errorCode(res2), 45)
})

t.test('auth code gate for refresh', async (t) => {
  const { app } = await buildApp({ ...ON, authCodes: { codes: [{ code: 'gate' }], requireFor: { refresh: true } } })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const missing = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(errorCode(missing), 94)
  const wrong = await post(app, '/auth/refresh', { refresh_token: first.refresh_token, AUTH_KEY: 'nope' })
  t.equal(errorCode(wrong), 27)
  const right = await post(app, '/auth/refresh', { refresh_token: first.refresh_token, AUTH_KEY: 'gate' })
  t.equal(right.statusCode, 200, 'a refused code did not spend the refresh token')
})

t.test('a removed user: 401 / 24, and the session ends', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  await users.removeUser(1)
  const res = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(res.statusCode, 401)
  t.equal(errorCode(res), 24)
})

t.test('a refresh token expires with refresh.lifetime', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ refresh: { enabled: true, lifetime: '1h' } }, { clock })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  clock.advance(59 * 60_000)
  const rotated = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(rotated.statusCode, 200, 'still valid just before the end')
  const second = rotated.json().data.refresh_token
  clock.advance(60 * 60_000 + 1)
  const late = await post(app, '/auth/refresh', { refresh_token: second })
  t.equal(late.statusCode, 401)
  t.equal(errorCode(late), 51)
})

async function concurrentUse (t: TapTest, options: Parameters<typeof buildApp>[1]): Promise<void> {
  const { app } = await buildApp(ON, options)
  t.teardown(() => app.close())
  for (let round = 0; round < 5; round++) {
    const first = await loginTokens(app)
    const answers = await Promise.all([
      post(app, '/auth/refresh', { refresh_token: first.refresh_token }),
      post(app, '/auth/refresh', { refresh_token: first.refresh_token })
    ])
    t.same(answers.map(a => a.statusCode), [200, 200], `round ${round}: both uses are answered`)
    // one rotates; the other sees the previous token within the reuse interval and gets the same successor
    const [a, b] = answers.map(answer => answer.json().data.refresh_token as string)
    t.equal(a, b, `round ${round}: one successor, not two`)
    const successor = await post(app, '/auth/refresh', { refresh_token: a })
    t.equal(successor.statusCode, 200, `round ${round}: the session lives on`)
  }
}

t.test('two concurrent uses of one refresh token: one rotation, one successor (memory store)', async (t) => {
  await concurrentUse(t, {})
})

t.test('two concurrent uses of one refresh token: one rotation, one successor (Redis store)', async (t) => {
  const { store } = redisStore(t, 'refresh-concurrent')
  await concurrentUse(t, { store })
})
