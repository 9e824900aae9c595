// A user's lock in the cutoff entry (lib/tokens/user-lock.ts, revocation.ts): read by `lockIn`, kept through every other change of the cutoff, folded into the time once passed, lifted with a moved cutoff, stored as long as it holds.
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { resolveSettings, type Settings } from '../../lib/config/settings.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { cutoffTime, sessionEnded, stateKeys } from '../../lib/tokens/revocation.js'
import { TokenService } from '../../lib/tokens/service.js'
import { LOCK_KEPT_MS, lockEnd, lockIn } from '../../lib/tokens/user-lock.js'
import { HS_SECRET, testClock } from '../helpers/app.js'

const USER_ID = 7
const settings = (skew: string | 0 = 0): Settings => resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true }, sessions: { clockSkew: skew } })

/** A token service on a memory store that records the TTL of every write of the user's cutoff. */
function kit (skew: string | 0 = 0): { tokens: TokenService, store: MemoryStore, clock: ReturnType<typeof testClock>, ttls: number[], raw: () => Promise<string | null>, ended: (startedAt: number) => Promise<boolean> } {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  const ttls: number[] = []
  const compareAndSet = store.compareAndSet.bind(store)
  store.compareAndSet = async (key, expected, value, ttlMs) => {
    if (key === stateKeys.userCutoff(USER_ID)) ttls.push(ttlMs)
    return await compareAndSet(key, expected, value, ttlMs)
  }
  const tokens = new TokenService(buildKeyMaterial(settings(skew).tokens), 'HS256', store, clock)
  const raw = async (): Promise<string | null> => await store.get(stateKeys.userCutoff(USER_ID))
  const ended = async (startedAt: number): Promise<boolean> => sessionEnded(tokens.newSessionId(startedAt), null, await raw())
  return { tokens, store, clock, ttls, raw, ended }
}

t.test('lockIn reads a lock while it holds, and nothing else', async (t) => {
  const now = 1_000_000
  t.equal(lockIn(null, now), null, 'no entry')
  t.equal(lockIn(String(now), now), null, 'the bare time')
  t.equal(lockIn(JSON.stringify({ t: now, k: ['x'] }), now), null, 'a record without a lock')
  t.same(lockIn(JSON.stringify({ t: now, l: { u: null, a: now - 5 } }), now), { until: null, lockedAt: now - 5 }, 'an indefinite lock')
  t.same(lockIn(JSON.stringify({ t: now, l: { u: now + 1, a: now - 5 } }), now), { until: now + 1, lockedAt: now - 5 }, 'a timed lock before its end')
  t.equal(lockIn(JSON.stringify({ t: now, l: { u: now, a: now - 5 } }), now), null, 'at its end, lifted')
  t.equal(lockEnd({ u: null, a: 0 }), Number.POSITIVE_INFINITY)
})

t.test('a lock ends every session, trusted devices included, and stays through every other change of the cutoff', async (t) => {
  const { tokens, clock, raw, ended } = kit()
  const s = settings()
  const t0 = clock.now
  await tokens.lockUser(s, USER_ID, null)
  t.equal(await ended(t0 - 1), true, 'a session from before')
  t.equal(await ended(t0 + 86_400_000), true, 'a session that started after the lock (a sign-in that raced it)')
  t.equal(cutoffTime(await raw() as string), Number.POSITIVE_INFINITY, 'no trusted device outlives it')
  t.equal(await tokens.userCutoff(USER_ID), Number.POSITIVE_INFINITY)

  const stillLocked = async (what: string): Promise<void> => { t.same(await tokens.lockOf(USER_ID), { until: null, lockedAt: t0 }, what) }
  clock.advance(1000)
  await tokens.revokeUserTokens(s, USER_ID)
  await stillLocked('after a sign-out everywhere')
  const kept = await tokens.revokeUserTokens(s, USER_ID, clock.now, tokens.newSessionId(clock.now))
  t.same(kept, { kept: false, until: clock.now, endedBefore: true }, 'a sign-out everywhere that keeps its session: that session has ended, nothing written')
  await stillLocked('after a sign-out everywhere with keep')
  const held = await tokens.holdUserTokens(s, USER_ID, 'change', clock.now + 60_000)
  await stillLocked('during a password change')
  await tokens.releaseUserTokens(s, USER_ID, 'change', clock.now, held)
  await stillLocked('after it')
  await tokens.holdUserTokens(s, USER_ID, 'cancelled', clock.now + 60_000)
  await tokens.cancelHold(s, USER_ID, 'cancelled')
  await stillLocked('after a cancelled one')
  t.equal(await ended(clock.now + 1000), true, 'still every session')
})

t.test('a timed lock lifts at its end and is folded into the time at the next write', async (t) => {
  const { tokens, clock, raw, ended } = kit()
  const s = settings()
  const t0 = clock.now
  await tokens.lockUser(s, USER_ID, t0 + 60_000)
  t.equal(await ended(t0 + 59_999), true, 'a session that starts before its end is ended')
  clock.advance(60_000)
  t.equal(await tokens.lockOf(USER_ID), null, 'lifted at its end')
  t.equal(await ended(t0 + 59_999), true, 'what started before its end stays ended')
  t.equal(await ended(t0 + 60_000), false, 'a session from its end lives')
  t.equal(await tokens.unlockUser(s, USER_ID), false, 'nothing to lift: nothing written')
  t.match(await raw(), /"l"/, 'still in the entry until the next write')
  await tokens.revokeUserTokens(s, USER_ID, t0)
  t.equal(await raw(), String(t0 + 60_000), 'folded: the bare time of its end')
  t.equal(await ended(t0 + 59_999), true)
  t.equal(await ended(t0 + 60_000), false)
})

t.test('unlockUser moves the cutoff: a sign-in that raced the lock never comes back, and nothing an earlier sign-out kept does', async (t) => {
  const { tokens, store, clock, ended } = kit('2s')
  const s = settings('2s')
  const t0 = clock.now
  await tokens.lockUser(s, USER_ID, null)
  clock.advance(5000)
  t.equal(await tokens.unlockUser(s, USER_ID), true)
  t.equal(await tokens.lockOf(USER_ID), null)
  t.equal(await ended(t0 + 500), true, 'a session that started during the lock stays ended')
  t.equal(await ended(clock.now + 1999), true, 'and one within the clock skew after the unlock')
  t.equal(await ended(clock.now + 2000), false, 'a sign-in after it lives')

  // an entry holding both a kept session and a lock (written by an older version, or by hand): the unlock keeps nothing
  const kept = tokens.newSessionId(t0 - 1000)
  await store.set(stateKeys.userCutoff(USER_ID), JSON.stringify({ t: t0, k: [kept], l: { u: null, a: t0 } }), 60_000)
  t.equal(await tokens.unlockUser(s, USER_ID), true)
  t.equal(sessionEnded(kept, null, await store.get(stateKeys.userCutoff(USER_ID))), true, 'the kept session stays ended')
})

t.test('a lock is stored as long as it holds: an indefinite one for LOCK_KEPT_MS, a timed one past its end by the usual time', async (t) => {
  const { tokens, clock, ttls } = kit()
  const s = settings()
  const usual = Math.max(s.refresh.lifetimeMs, s.tokens.lifetimeMs) + s.tokens.leewayMs
  await tokens.lockUser(s, USER_ID, null)
  t.equal(ttls.at(-1), LOCK_KEPT_MS, 'indefinite')
  await tokens.revokeUserTokens(s, USER_ID)
  t.equal(ttls.at(-1), LOCK_KEPT_MS, 'kept so by any other write while it holds')
  await tokens.lockUser(s, USER_ID, clock.now + 3_600_000)
  t.equal(ttls.at(-1), 3_600_000 + usual, 'timed: its end, then as long as a token from before it may live')
  await tokens.unlockUser(s, USER_ID)
  t.equal(ttls.at(-1), usual, 'unlocked: the usual time')
})

t.test('a lock replaces the one before it', async (t) => {
  const { tokens, clock } = kit()
  const s = settings()
  await tokens.lockUser(s, USER_ID, null)
  clock.advance(10)
  t.same(await tokens.lockUser(s, USER_ID, clock.now + 1000), { until: clock.now + 1000, lockedAt: clock.now })
  t.same(await tokens.lockOf(USER_ID), { until: clock.now + 1000, lockedAt: clock.now })
  clock.advance(1000)
  t.equal(await tokens.lockOf(USER_ID), null)
})

t.test('a session that started in the lock\'s own millisecond stays ended after an unlock in that millisecond too', async (t) => {
  const { tokens, clock, ended } = kit()
  const s = settings()
  await tokens.lockUser(s, USER_ID, null)
  t.equal(await tokens.unlockUser(s, USER_ID), true)
  t.equal(await ended(clock.now), true)
  t.equal(await ended(clock.now + 1), false)
})
