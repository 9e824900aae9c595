import t, { type Test } from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { resolveSettings, type Settings } from '../../lib/config/settings.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { decodeSession, encodeSession } from '../../lib/tokens/session-record.js'
import { TokenService } from '../../lib/tokens/service.js'
import { HS_SECRET, testClock } from '../helpers/app.js'

// Stores in production hold session records: their JSON must keep its short names and their order.

const HASH = /[A-Za-z0-9_-]{43}/.source
const SEALED = /[A-Za-z0-9_-]+/.source

t.test('a record written before the split decodes, and encodes back to the same bytes', async (t) => {
  const fresh = '{"u":7,"h":"current"}'
  const rotated = '{"u":7,"h":"current","p":"previous","n":"sealed","t":1700000000000}'
  t.same(decodeSession(fresh), { userId: 7, currentHash: 'current', previousHash: undefined, sealedCurrent: undefined, rotatedAt: undefined })
  t.same(decodeSession(rotated), { userId: 7, currentHash: 'current', previousHash: 'previous', sealedCurrent: 'sealed', rotatedAt: 1700000000000 })
  t.equal(encodeSession(decodeSession(fresh)), fresh)
  t.equal(encodeSession(decodeSession(rotated)), rotated)
})

/** A token service on a memory store and a test clock, with refresh on; the store closes with `t`. */
function serviceKit (t: Test): { settings: Settings, clock: ReturnType<typeof testClock>, store: MemoryStore, tokens: TokenService } {
  const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } })
  const clock = testClock()
  const store = new MemoryStore({ clock })
  t.teardown(async () => { await store.close() })
  return { settings, clock, store, tokens: new TokenService(buildKeyMaterial(settings.tokens), settings.tokens.algorithm, store, clock) }
}

t.test('the service stores a new and a rotated session in the stored format', async (t) => {
  const { settings, clock, store, tokens } = serviceKit(t)
  const sessionId = tokens.newSessionId()
  const token = await tokens.issueRefreshToken(settings, 12, sessionId)
  const indexedUntil = clock.now + settings.refresh.lifetimeMs * 1.5
  t.match(await store.get(`session:${sessionId}`), new RegExp(`^\\{"u":12,"h":"${HASH}","x":${indexedUntil}\\}$`), 'how long the index keeps it, as `x`: one and a half lifetimes')
  clock.advance(1000)
  const rotated = await tokens.rotateRefreshToken(settings, token, async () => ({ user: null }), () => { throw new Error('not a reuse') })
  t.match(await store.get(`session:${sessionId}`), new RegExp(`^\\{"u":12,"h":"${HASH}","p":"${HASH}","n":"${SEALED}","t":${clock.now},"x":${indexedUntil}\\}$`), 'a rotation within half a lifetime leaves `x`')
  clock.advance(settings.refresh.lifetimeMs / 2)
  await tokens.rotateRefreshToken(settings, rotated.refreshToken, async () => ({ user: null }), () => { throw new Error('not a reuse') })
  t.match(await store.get(`session:${sessionId}`), new RegExp(`"x":${clock.now + settings.refresh.lifetimeMs * 1.5}\\}$`), 'once the family would outlive its index entry, the entry is moved, and `x` with it')
})

t.test('a session records its password fingerprint as `f`; recordFingerprint replaces it without moving the end, and leaves ended or expired sessions be', async (t) => {
  const { settings, clock, store, tokens } = serviceKit(t)
  const sessionId = tokens.newSessionId()
  await tokens.issueRefreshToken(settings, 12, sessionId, ['pwd'], 'first')
  t.match(await store.get(`session:${sessionId}`), /,"m":\["pwd"\],"f":"first"\}$/, 'written last, as `f`')
  clock.advance(1000)
  await tokens.recordFingerprint(settings, sessionId, 'second')
  t.match(await store.get(`session:${sessionId}`), /"f":"second"\}$/, 'replaced')
  clock.advance(settings.refresh.lifetimeMs - 1001)
  t.not(await store.get(`session:${sessionId}`), null, 'still there a lifetime after its start, less a millisecond')
  clock.advance(1)
  t.equal(await store.get(`session:${sessionId}`), null, 'and gone at its end: the record did not move it')

  await tokens.recordFingerprint(settings, sessionId, 'third')
  t.equal(await store.get(`session:${sessionId}`), null, 'nothing is written for a session gone')
  const ended = tokens.newSessionId()
  await tokens.issueRefreshToken(settings, 12, ended)
  await tokens.revokeSession(settings, ended)
  const revoked = await store.get(`session:${ended}`)
  await tokens.recordFingerprint(settings, ended, 'third')
  t.equal(await store.get(`session:${ended}`), revoked, 'nor for one ended')

  // a clock that moved past the session's end before the store expired it: nothing is written
  const late = tokens.newSessionId()
  await tokens.issueRefreshToken(settings, 12, late)
  const lateTokens = new TokenService(buildKeyMaterial(settings.tokens), settings.tokens.algorithm, store, () => clock.now + settings.refresh.lifetimeMs)
  await lateTokens.recordFingerprint(settings, late, 'third')
  t.notMatch(await store.get(`session:${late}`), /"f"/, 'an expired session records nothing')
})

t.test('recordFingerprint gives up, 503, when the session keeps changing under it', async (t) => {
  const { settings, store, tokens } = serviceKit(t)
  const sessionId = tokens.newSessionId()
  await tokens.issueRefreshToken(settings, 12, sessionId)
  Object.defineProperty(store, 'compareAndSet', { value: async () => false })
  await t.rejects(tokens.recordFingerprint(settings, sessionId, 'never'), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' })
})
