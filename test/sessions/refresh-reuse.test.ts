import t from 'tap'
import { buildApp, testClock } from '../helpers/app.js'
import { claimsOf, errorCode, loginTokens, post } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'
import { clusterStore, postgresStore } from '../helpers/shared-stores.js'

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

const ON = { refresh: { enabled: true } }

async function reuseRevokesTheFamily (t: TapTest, options: Parameters<typeof buildApp>[1]): Promise<void> {
  const { app } = await buildApp(ON, options)
  t.teardown(() => app.close())
  const reused: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('refresh.reused', (e) => reused.push(e))

  const first = await loginTokens(app)
  const other = await loginTokens(app)
  const second = (await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).json().data
  const third = (await post(app, '/auth/refresh', { refresh_token: second.refresh_token })).json().data
  t.type(third.refresh_token, 'string')

  // the thief presents the first (spent) refresh token again
  const reuse = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(reuse.statusCode, 401)
  t.equal(errorCode(reuse), 51)
  const sid = claimsOf(first.jwt).sid
  t.same(reused, [{ userId: 1, sessionId: sid, ip: '127.0.0.1' }])
  t.notOk(JSON.stringify(reused).includes(first.refresh_token as string))

  const newest = await post(app, '/auth/refresh', { refresh_token: third.refresh_token })
  t.equal(newest.statusCode, 401, 'the newest refresh token of the family fails too')
  t.equal(errorCode(newest), 51)

  for (const jwt of [first.jwt, second.jwt, third.jwt]) {
    const res = await post(app, '/auth/validate', { JWT: jwt })
    t.equal(res.statusCode, 401, 'the session access tokens are revoked')
    t.equal(errorCode(res), 55)
  }

  // another session of the same user is not touched
  const otherValid = await post(app, '/auth/validate', { JWT: other.jwt })
  t.equal(otherValid.statusCode, 200)
  const otherRefresh = await post(app, '/auth/refresh', { refresh_token: other.refresh_token })
  t.equal(otherRefresh.statusCode, 200)
}

t.test('a reused refresh token revokes its family (memory store)', async (t) => {
  await reuseRevokesTheFamily(t, {})
})

t.test('a reused refresh token revokes its family (Redis store)', async (t) => {
  const { store } = redisStore(t, 'refresh-reuse')
  await reuseRevokesTheFamily(t, { store })
})

t.test('a reused refresh token revokes its family (Redis Cluster store)', async (t) => {
  const { store } = await clusterStore(t, 'refresh-reuse')
  await reuseRevokesTheFamily(t, { store })
})

t.test('a reused refresh token revokes its family (PostgreSQL store)', async (t) => {
  const { store } = await postgresStore(t, 'refresh-reuse')
  await reuseRevokesTheFamily(t, { store })
})

t.test('reuse of the previous token after the reuse interval also revokes the family', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const second = (await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).json().data
  const third = (await post(app, '/auth/refresh', { refresh_token: second.refresh_token })).json().data
  clock.advance(30_001)
  const reuse = await post(app, '/auth/refresh', { refresh_token: second.refresh_token })
  t.equal(errorCode(reuse), 51)
  const newest = await post(app, '/auth/refresh', { refresh_token: third.refresh_token })
  t.equal(newest.statusCode, 401)
})

t.test('a revoked session refuses its refresh token without calling it reuse', async (t) => {
  const { app } = await buildApp(ON)
  t.teardown(() => app.close())
  const reused: unknown[] = []
  app.jwtLogin.events.on('refresh.reused', (e) => reused.push(e))
  const first = await loginTokens(app)
  const revoked = await post(app, '/auth/revoke', { JWT: first.jwt })
  t.equal(revoked.statusCode, 200)
  const res = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(res.statusCode, 401)
  t.equal(errorCode(res), 51)
  t.same(reused, [])
})
