import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { TokenService } from '../../lib/tokens/service.js'
import { buildApp, HS_SECRET, testClock } from '../helpers/app.js'
import { claimsOf, loginTokens, post } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'

const ROTATIONS = 10_000

const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } })

async function tokenService (store: StateStore, clock: ReturnType<typeof testClock>): Promise<TokenService> {
  return new TokenService(buildKeyMaterial(settings.tokens), settings.tokens.algorithm, store, clock)
}

t.test(`${ROTATIONS} rotations of one session leave one store entry (memory store)`, async (t) => {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  t.teardown(async () => { await store.close() })
  const tokens = await tokenService(store, clock)
  const sessionId = tokens.newSessionId()
  let token = await tokens.issueRefreshToken(settings, 1, sessionId)
  t.same(store.counts, { state: 1, counters: 0 })
  for (let i = 0; i < ROTATIONS; i++) {
    clock.advance(1000)
    token = (await tokens.rotateRefreshToken(settings, token, async () => ({ user: null }), () => { throw new Error('not a reuse') })).refreshToken
  }
  t.same(store.counts, { state: 1, counters: 0 }, 'still one entry: the session record')
  // the bound holds for the record's size too: it names two generations, never the history
  const record = await store.get(`session:${sessionId}`) as string
  t.ok(record.length < 400, `the record stays small (${record.length} characters)`)
})

t.test('refreshes over HTTP: entries per live session stay constant (memory store)', async (t) => {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  t.teardown(async () => { await store.close() })
  const { app } = await buildApp({ refresh: { enabled: true }, limits: { requestsPerIp: { max: 100_000 } } }, { clock, store })
  t.teardown(() => app.close())
  const sessions = [await loginTokens(app), await loginTokens(app), await loginTokens(app)]
  const baseline = store.counts.state
  t.equal(baseline, 4, 'one state entry per live session, and the user\'s session index')
  for (let round = 0; round < 200; round++) {
    clock.advance(60_000)
    for (const [index, session] of sessions.entries()) {
      const res = await post(app, '/auth/refresh', { refresh_token: session.refresh_token })
      t.equal(res.statusCode, 200)
      sessions[index] = res.json().data
    }
  }
  t.equal(store.counts.state, baseline, 'after 600 refreshes, still one entry per session')

  // a revocation costs one entry, and replaces the session's own
  const revoked = await post(app, '/auth/revoke', { JWT: sessions[0]?.jwt })
  t.equal(revoked.statusCode, 200)
  t.equal(store.counts.state, baseline, 'the revocation took the place of the session record')
  t.equal(await store.get(`session:${claimsOf(sessions[0]?.jwt as string).sid as string}`), 'revoked')
})

t.test('1,000 rotations of one session leave one key in Redis', async (t) => {
  const { store, prefix } = redisStore(t, 'store-growth')
  const clock = testClock()
  const tokens = await tokenService(store, clock)
  const sessionId = tokens.newSessionId()
  let token = await tokens.issueRefreshToken(settings, 1, sessionId)
  for (let i = 0; i < 1000; i++) {
    clock.advance(1000)
    token = (await tokens.rotateRefreshToken(settings, token, async () => ({ user: null }), () => { throw new Error('not a reuse') })).refreshToken
  }
  const { Redis } = await import('ioredis')
  const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  t.teardown(async () => { await admin.quit() })
  t.same(await admin.keys(`${prefix}*`), [`${prefix}session:${sessionId}`])
})
