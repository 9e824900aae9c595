import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
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

t.test('the service stores a new and a rotated session in the stored format', async (t) => {
  const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } })
  const clock = testClock()
  const store = new MemoryStore({ clock })
  t.teardown(async () => { await store.close() })
  const tokens = new TokenService(buildKeyMaterial(settings.tokens), settings.tokens.algorithm, store, clock)
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
