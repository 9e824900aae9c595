import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { resolveSettings, type Settings } from '../../lib/config/settings.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { TokenService } from '../../lib/tokens/service.js'
import type { PublicUser } from '../../lib/adapters/users.js'
import { HS_SECRET, testClock } from '../helpers/app.js'
import { contendedStore } from '../helpers/faults.js'
import { storeOf, type StoreKind } from '../helpers/shared-stores.js'

// Defect 6 of the attack report: the per-user cutoff was a plain `set`, so a later write with an
// earlier time won (two overlapping resets, or instances whose clocks differ), and a session
// started with a superseded password survived, or a session already ended validated again.

const USER: PublicUser = { ID: 7, user_login: 'kim', user_email: 'kim@example.com', display_name: 'Kim', roles: [] }
const settings = (skew: string | 0 = 0): Settings => resolveSettings({
  tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
  refresh: { enabled: true },
  sessions: { clockSkew: skew }
})

const KINDS: StoreKind[] = ['memory', 'redis', 'cluster', 'postgres']

for (const kind of KINDS) {
  t.test(`${kind}: cutoffs only move forward`, async (t) => {
    const clock = testClock(Date.now())
    const store = await storeOf(t, kind, 'cutoff-forward', clock)
    const tokens = new TokenService(buildKeyMaterial(settings().tokens), 'HS256', store, clock)
    const session = (startedAt: number): ReturnType<TokenService['sign']>['claims'] =>
      tokens.sign(settings(), USER, 'access', { sessionId: tokens.newSessionId(startedAt) }).claims
    const t0 = clock()

    await tokens.revokeUserTokens(settings(), USER.ID, t0 + 10_000)
    await tokens.revokeUserTokens(settings(), USER.ID, t0)
    t.equal(await tokens.isRevoked(session(t0 + 5000)), true, 'a later write with an earlier time does not lower the cutoff')
    t.equal(await tokens.userCutoff(USER.ID), t0 + 10_000)

    // two overlapping password changes: the first one's final write must not undo the second's hold
    await tokens.holdUserTokens(settings(), USER.ID, 'first', t0 + 60_000)
    await tokens.holdUserTokens(settings(), USER.ID, 'second', t0 + 60_001)
    await tokens.releaseUserTokens(settings(), USER.ID, 'first', t0 + 1000)
    t.equal(await tokens.isRevoked(session(t0 + 30_000)), true, 'a newer change still holds its provisional cutoff')
    await tokens.releaseUserTokens(settings(), USER.ID, 'second', t0 + 12_000)
    t.equal(await tokens.userCutoff(USER.ID), t0 + 12_000, 'both released: the latest moment a change ended')
    t.equal(await tokens.isRevoked(session(t0 + 11_000)), true)
    t.equal(await tokens.isRevoked(session(t0 + 12_000)), false, 'a session started after the last change lives')

    // a hold never released (its final write failed) ends what started before it, and is folded in once past
    await tokens.holdUserTokens(settings(), USER.ID, 'lost', t0 + 20_000)
    clock.advance(21_000)
    await tokens.revokeUserTokens(settings(), USER.ID, t0)
    t.equal(await tokens.userCutoff(USER.ID), t0 + 20_000, 'the lost hold became the cutoff')
  })

  t.test(`${kind}: concurrent cutoff writes never lose the latest`, async (t) => {
    const clock = testClock(Date.now())
    const store = await storeOf(t, kind, 'cutoff-concurrent', clock)
    const instances = [0, 1, 2].map(() => new TokenService(buildKeyMaterial(settings().tokens), 'HS256', store, clock))
    const t0 = clock()
    const times = Array.from({ length: 12 }, (_, i) => t0 + ((i * 7) % 12) * 1000)
    await Promise.all(times.map(async (at, i) => await (instances[i % 3] as TokenService).revokeUserTokens(settings(), USER.ID, at)))
    t.equal(await (instances[0] as TokenService).userCutoff(USER.ID), Math.max(...times))
  })

  t.test(`${kind}: two instances whose clocks differ by 2 s, with sessions.clockSkew 2s`, async (t) => {
    const trueClock = testClock(Date.now())
    const behind = Object.assign(() => trueClock() - 2000, { now: 0, advance: () => {} })
    const store = await storeOf(t, kind, 'cutoff-skew', trueClock)
    const resetting = new TokenService(buildKeyMaterial(settings().tokens), 'HS256', store, behind)
    const signingIn = new TokenService(buildKeyMaterial(settings().tokens), 'HS256', store, trueClock)

    // a sign-in that checked the old password started a second before the change, on the right clock
    const oldPassword = signingIn.sign(settings(), USER, 'access', { sessionId: signingIn.newSessionId(trueClock() - 1000) }).claims
    // the change, written by the instance whose clock is 2 s behind
    await resetting.holdUserTokens(settings('2s'), USER.ID, 'change', behind() + 60_000)
    await resetting.releaseUserTokens(settings('2s'), USER.ID, 'change')
    t.equal(await signingIn.isRevoked(oldPassword), true, 'the session of the old password ends')

    // without the stated skew it would survive: the cutoff is 2 s early on the slow clock
    const other = { ...USER, ID: 8 }
    const survivor = signingIn.sign(settings(), other, 'access', { sessionId: signingIn.newSessionId(trueClock() - 1000) }).claims
    await resetting.revokeUserTokens(settings(0), other.ID)
    t.equal(await signingIn.isRevoked(survivor), false, 'clockSkew 0 trusts the clocks (documented)')
  })
}

t.test('a cutoff write that keeps losing its compare-and-set gives up with 503 / 201', async (t) => {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  t.teardown(async () => { await memory.close() })
  // another writer always gets there first
  const contended = contendedStore(memory)
  const tokens = new TokenService(buildKeyMaterial(settings().tokens), 'HS256', contended, clock)
  const error = await tokens.revokeUserTokens(settings(), USER.ID).then(() => null, (e: unknown) => e)
  t.match(error, { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', statusCode: 503 })
  t.equal(await tokens.userCutoff(USER.ID), null, 'nothing was written')
})

t.test('cancelHold takes a provisional cutoff back without moving the cutoff, and leaves the others', async (t) => {
  const clock = testClock(Date.now())
  const store = new MemoryStore({ clock })
  t.teardown(() => store.close())
  const tokens = new TokenService(buildKeyMaterial(settings().tokens), 'HS256', store, clock)
  const t0 = clock()
  const before = tokens.sign(settings(), USER, 'access', { sessionId: tokens.newSessionId(t0 - 1000) }).claims
  await tokens.cancelHold(settings(), USER.ID, 'never held')
  t.equal(await tokens.isRevoked(before), false, 'nothing held: nothing ended')
  await tokens.revokeUserTokens(settings(), USER.ID, t0 - 5000)
  const written = await tokens.holdUserTokens(settings(), USER.ID, 'change', t0 + 60_000)
  await tokens.holdUserTokens(settings(), USER.ID, 'other', t0 + 60_000)
  t.equal(await tokens.isRevoked(before), true, 'held: the session is refused')
  await tokens.cancelHold(settings(), USER.ID, 'change', written)
  t.equal(await tokens.isRevoked(before), true, 'the other change still holds it')
  await tokens.cancelHold(settings(), USER.ID, 'other')
  t.equal(await tokens.isRevoked(before), false, 'both taken back: the session lives again')
  t.equal(await tokens.userCutoff(USER.ID), t0 - 5000, 'and the cutoff is where it was')
})
