import t from 'tap'
import { resolveSettings } from '../../lib/config/settings.js'
import { sha256Base64url } from '../../lib/core/crypto.js'
import { JwtLoginError, MemoryStore, type StateStore } from '../../lib/index.js'
import { Revocation, stateKeys } from '../../lib/tokens/revocation.js'
import { USER_AGENT_MAX_LENGTH } from '../../lib/tokens/session-index.js'
import { devicesKey, TrustedDevices, type TrustRequest } from '../../lib/tokens/trusted-devices.js'
import { HS_SECRET, testClock } from '../helpers/app.js'
import { contendedStore } from '../helpers/faults.js'

// The unit of trusted devices: one store entry per user, changed by compare-and-set, holding each
// device's id, the hash of its current secret, its times, and the IP and User-Agent at trust.

const DAY = 24 * 60 * 60 * 1000
const USER = 7
const OTHER = 8
const DEVICE_TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/
const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } })

/** A memory store that counts its calls, and may let a concurrent writer in just before a compare-and-set. */
class WatchedStore extends MemoryStore {
  readonly calls: string[] = []
  /** Runs once, right before the next compare-and-set: another writer that got there first. */
  beforeNextWrite: (() => Promise<void>) | null = null

  override async get (key: string): Promise<string | null> {
    this.calls.push(`get ${key}`)
    return await super.get(key)
  }

  override async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    this.calls.push(`getMany ${keys.join(' ')}`)
    return await super.getMany(keys)
  }

  override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    const first = this.beforeNextWrite
    this.beforeNextWrite = null
    if (first !== null) await first()
    this.calls.push(`compareAndSet ${key}`)
    return await super.compareAndSet(key, expected, value, ttlMs)
  }

  override async delete (key: string): Promise<void> {
    this.calls.push(`delete ${key}`)
    await super.delete(key)
  }
}

function setup (): { clock: ReturnType<typeof testClock>, store: WatchedStore, devices: TrustedDevices, request: (over?: Partial<TrustRequest>) => TrustRequest } {
  const clock = testClock()
  const store = new WatchedStore({ clock })
  const devices = new TrustedDevices(store, clock, new Revocation(store, clock))
  const request = (over: Partial<TrustRequest> = {}): TrustRequest => ({ userId: USER, trustedAt: clock.now, lifetimeMs: DAY, max: 10, ip: '203.0.113.9', userAgent: 'Firefox/140', ...over })
  return { clock, store, devices, request }
}

const idOf = (token: string): string => token.slice(0, 22)
const secretOf = (token: string): string => token.slice(23)

t.test('trust: a token <device id>.<secret>; the store keeps its hash, never the secret', async (t) => {
  const { clock, store, devices, request } = setup()
  const trustedAt = clock.now
  const trusted = await devices.trust(request())
  t.match(trusted.token, DEVICE_TOKEN)
  t.equal(trusted.deviceId, idOf(trusted.token))
  t.same(trusted.dropped, [])
  const raw = await store.get(devicesKey(USER)) as string
  t.equal(devicesKey(USER), 'devices:user:7')
  t.notOk(raw.includes(secretOf(trusted.token)), 'no secret stored')
  t.same(JSON.parse(raw), [[trusted.deviceId, sha256Base64url(secretOf(trusted.token)), trustedAt, 0, trustedAt + DAY, '203.0.113.9', 'Firefox/140']])
  t.same(await devices.list(USER), [{ id: trusted.deviceId, trustedAt, lastUsedAt: null, expiresAt: trustedAt + DAY, ip: '203.0.113.9', userAgent: 'Firefox/140' }])
  t.same(await devices.list(OTHER), [], 'per user')

  const bare = await devices.trust(request({ userAgent: undefined }))
  const long = await devices.trust(request({ userAgent: 'U'.repeat(USER_AGENT_MAX_LENGTH + 100) }))
  const listed = await devices.list(USER)
  t.equal(listed.find(d => d.id === bare.deviceId)?.userAgent, null, 'no User-Agent: null')
  t.equal(listed.find(d => d.id === long.deviceId)?.userAgent, 'U'.repeat(USER_AGENT_MAX_LENGTH), 'a long one cut')
  t.equal(new Set([trusted.token, bare.token, long.token].map(secretOf)).size, 3, 'each secret its own')
})

t.test('the entry lives as long as its longest-lived device', async (t) => {
  const { clock, store, devices, request } = setup()
  const start = clock.now
  await devices.trust(request({ lifetimeMs: 3 * DAY }))
  await devices.trust(request({ lifetimeMs: DAY }))
  clock.now = start + 3 * DAY - 1
  t.equal((await devices.list(USER)).length, 1, 'the shorter one expired')
  t.not(await store.get(devicesKey(USER)), null)
  clock.now = start + 3 * DAY
  t.equal(await store.get(devicesKey(USER)), null, 'the entry expired with the last device')
  t.same(await devices.list(USER), [])
})

t.test('use: answers the successor of the same device; the token spent is refused after', async (t) => {
  const { clock, store, devices, request } = setup()
  const trusted = await devices.trust(request())
  clock.advance(60_000)
  const used = await devices.use(USER, trusted.token)
  t.not(used, null)
  const next = used?.token as string
  t.match(next, DEVICE_TOKEN)
  t.equal(used?.deviceId, trusted.deviceId)
  t.equal(idOf(next), trusted.deviceId, 'the same device')
  t.not(secretOf(next), secretOf(trusted.token), 'a new secret')
  t.notOk((await store.get(devicesKey(USER)))?.includes(secretOf(next)), 'only its hash is stored')
  const [listed] = await devices.list(USER)
  t.equal(listed?.lastUsedAt, clock.now, 'its last use')
  t.equal(listed?.expiresAt, clock.now - 60_000 + DAY, 'a use does not extend it')

  t.equal(await devices.use(USER, trusted.token), null, 'the spent token')
  clock.advance(1000)
  const third = await devices.use(USER, next)
  t.equal(third?.deviceId, trusted.deviceId, 'the successor works')
  t.equal(await devices.use(USER, next), null, 'once')
})

t.test('use: giveBack undoes the rotation, only over its own write', async (t) => {
  const { devices, request } = setup()
  const trusted = await devices.trust(request())
  const used = await devices.use(USER, trusted.token)
  await used?.giveBack()
  t.equal(await devices.use(USER, used?.token as string), null, 'the successor given back is refused')
  const again = await devices.use(USER, trusted.token)
  t.not(again, null, 'the token presented works again')
  const later = await devices.use(USER, again?.token as string)
  await again?.giveBack()
  t.not(await devices.use(USER, later?.token as string), null, 'a give-back after a later rotation changes nothing')
})

t.test('use: refused for another user, an unknown device, a wrong secret; nothing written', async (t) => {
  const { store, devices, request } = setup()
  const mine = await devices.trust(request())
  const theirs = await devices.trust(request({ userId: OTHER }))
  const before = await store.get(devicesKey(USER))
  store.calls.length = 0
  t.equal(await devices.use(OTHER, mine.token), null, 'another user\'s token')
  t.equal(await devices.use(USER, theirs.token), null, 'and the other way round')
  t.equal(await devices.use(USER, `${'A'.repeat(22)}.${secretOf(mine.token)}`), null, 'an unknown device with a real secret')
  t.equal(await devices.use(USER, `${mine.deviceId}.${secretOf(theirs.token)}`), null, 'a secret of another device')
  t.equal(await devices.use(USER, `${mine.deviceId}.${'A'.repeat(43)}`), null, 'a wrong secret')
  t.equal(await devices.use(9, mine.token), null, 'a user without devices')
  t.notOk(store.calls.some(call => call.startsWith('compareAndSet')), 'no write')
  t.equal(await store.get(devicesKey(USER)), before)
  t.not(await devices.use(USER, mine.token), null, 'the token still works')
  t.not(await devices.use(OTHER, theirs.token), null)
})

t.test('use: a malformed token answers null without a store call', async (t) => {
  const { store, devices, request } = setup()
  const { token } = await devices.trust(request())
  const [id, secret] = token.split('.') as [string, string]
  store.calls.length = 0
  const malformed = [
    '', '.', 'x', id, `${id}.`, `.${secret}`, `${id}${secret}`, `${id}.${secret}=`, `${id}.${secret}A`, `${id}A.${secret}`, `${id.slice(1)}.${secret}`,
    `${id}.${secret.slice(1)}`, ` ${token}`, `${token} `, `${token}\n`, `${id}..${secret}`, `${id}.${secret}.${secret}`, `${id.replace(/^./, '+')}.${secret}`,
    `${id}.${secret.replace(/^./, '/')}`, `${id}.${secret.replace(/^./, 'é')}`, 'A'.repeat(66), `${token}.${token}`
  ]
  for (const candidate of malformed) t.equal(await devices.use(USER, candidate), null, JSON.stringify(candidate))
  t.same(store.calls, [], 'no store call')
  t.not(await devices.use(USER, token), null, 'the real token was not spent')
})

t.test('expiry: a device works until its last millisecond; later trusts and uses drop the expired', async (t) => {
  const { clock, store, devices, request } = setup()
  const start = clock.now
  const short = await devices.trust(request({ lifetimeMs: 1000 }))
  const long = await devices.trust(request({ lifetimeMs: DAY }))
  clock.now = start + 999
  const last = await devices.use(USER, short.token)
  t.equal(last?.deviceId, short.deviceId, 'one millisecond before it expires')
  clock.now = start + 1000
  t.equal(await devices.use(USER, last?.token as string), null, 'when it expires')
  t.same((await devices.list(USER)).map(d => d.id), [long.deviceId], 'not listed')
  t.ok((await store.get(devicesKey(USER)))?.includes(short.deviceId), 'still in the entry')

  const used = await devices.use(USER, long.token)
  t.not(used, null)
  t.notOk((await store.get(devicesKey(USER)))?.includes(short.deviceId), 'a use writes the expired out')

  const expiring = await devices.trust(request({ lifetimeMs: 1000 }))
  clock.advance(1000)
  const fresh = await devices.trust(request({ max: 2 }))
  t.same(fresh.dropped, [], 'an expired device is not counted, nor reported as dropped')
  const ids = JSON.parse(await store.get(devicesKey(USER)) as string).map((entry: string[]) => entry[0])
  t.same(ids, [long.deviceId, fresh.deviceId], 'a trust writes the expired out')
  t.notOk(ids.includes(expiring.deviceId))
})

t.test('cutoff: a device trusted before its user\'s cutoff is refused and not listed', async (t) => {
  const { clock, store, devices, request } = setup()
  const before = await devices.trust(request())
  clock.advance(1000)
  const cutoff = clock.now
  const at = await devices.trust(request())
  const other = await devices.trust(request({ userId: OTHER }))
  await store.set(stateKeys.userCutoff(USER), String(cutoff), DAY)
  clock.advance(1000)
  const after = await devices.trust(request())

  t.same((await devices.list(USER)).map(d => d.id), [at.deviceId, after.deviceId], 'the bare time: from the cutoff on')
  t.equal(await devices.use(USER, before.token), null, 'trusted before the cutoff')
  t.not(await devices.use(USER, at.token), null, 'trusted at the cutoff')
  t.not(await devices.use(USER, after.token), null, 'trusted after it')
  t.not(await devices.use(OTHER, other.token), null, 'another user\'s cutoff is not this one\'s')
})

t.test('cutoff written by Revocation: a sign-out everywhere that keeps a session, and a password change held', async (t) => {
  const { clock, store, devices, request } = setup()
  const revocation = new Revocation(store, clock)
  const before = await devices.trust(request())
  clock.advance(1000)
  await revocation.revokeUserTokens(settings, USER, clock.now, 'kept-session-id')
  t.ok((await store.get(stateKeys.userCutoff(USER)))?.startsWith('{'), 'the record form')
  t.equal(await devices.use(USER, before.token), null, 'a kept session keeps no device')
  t.same(await devices.list(USER), [])
  clock.advance(1000)
  const after = await devices.trust(request())
  t.equal((await devices.list(USER)).length, 1)

  await revocation.holdUserTokens(settings, USER, 'reset-1', clock.now + 60_000)
  t.equal(await devices.use(USER, after.token), null, 'a password change in progress ends it')
  t.same(await devices.list(USER), [])
  clock.advance(1)
  await revocation.releaseUserTokens(settings, USER, 'reset-1', clock.now)
  t.equal(await devices.use(USER, after.token), null, 'and once it is done')
})

t.test('max: beyond it the oldest devices are dropped, and answered', async (t) => {
  const { clock, devices, request } = setup()
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    const trusted = await devices.trust(request({ max: 3 }))
    t.same(trusted.dropped, [], `device ${i + 1} of 3`)
    ids.push(trusted.deviceId)
    clock.advance(1000)
  }
  const fourth = await devices.trust(request({ max: 3 }))
  t.same(fourth.dropped, [ids[0]], 'the oldest')
  t.same((await devices.list(USER)).map(d => d.id), [ids[1], ids[2], fourth.deviceId])
  const lowered = await devices.trust(request({ max: 1 }))
  t.same(lowered.dropped, [ids[1], ids[2], fourth.deviceId], 'a lower max drops every older one')
  t.same((await devices.list(USER)).map(d => d.id), [lowered.deviceId])
})

t.test('forget: one device of the user; false, with no write, when it is not there', async (t) => {
  const { store, devices, request } = setup()
  const first = await devices.trust(request())
  const second = await devices.trust(request())
  const theirs = await devices.trust(request({ userId: OTHER }))
  store.calls.length = 0
  t.equal(await devices.forget(USER, theirs.deviceId), false, 'another user\'s device')
  t.equal(await devices.forget(USER, 'A'.repeat(22)), false, 'an unknown one')
  t.notOk(store.calls.some(call => call.startsWith('compareAndSet')), 'no write')
  t.same((await devices.list(OTHER)).map(d => d.id), [theirs.deviceId], 'theirs stays')

  t.equal(await devices.forget(USER, first.deviceId), true)
  t.same((await devices.list(USER)).map(d => d.id), [second.deviceId], 'the other stays')
  t.equal(await devices.use(USER, first.token), null, 'a forgotten device is refused')
  t.equal(await devices.forget(USER, first.deviceId), false, 'twice')
  t.equal(await devices.forget(USER, second.deviceId), true, 'the last one')
  t.same(await devices.list(USER), [])
  t.equal(await devices.use(USER, second.token), null)
  t.equal(await devices.forget(9, first.deviceId), false, 'a user without devices')
})

t.test('forgetAll: every device of the user in one delete', async (t) => {
  const { store, devices, request } = setup()
  const tokens = [await devices.trust(request()), await devices.trust(request())].map(d => d.token)
  const theirs = await devices.trust(request({ userId: OTHER }))
  store.calls.length = 0
  await devices.forgetAll(USER)
  t.same(store.calls, [`delete ${devicesKey(USER)}`])
  t.same(await devices.list(USER), [])
  for (const token of tokens) t.equal(await devices.use(USER, token), null)
  t.not(await devices.use(OTHER, theirs.token), null, 'another user\'s devices stay')
  await t.resolves(devices.forgetAll(9), 'a user without devices')
})

t.test('a use that loses its compare-and-set to another device tries again; of two concurrent uses of one token one rotates', async (t) => {
  const { store, devices, request } = setup()
  const { token } = await devices.trust(request())
  const other = await devices.trust(request())
  // another device's use lands between this use's read and its write
  store.beforeNextWrite = async () => { t.not(await devices.use(USER, other.token), null, 'the other writer') }
  const retried = await devices.use(USER, token)
  t.not(retried, null, 'the race lost to another device is tried again, and wins')

  for (let round = 0; round < 5; round++) {
    const current = (round === 0 ? retried?.token : undefined) ?? (await devices.trust(request())).token
    const both = await Promise.all([devices.use(USER, current), devices.use(USER, current)])
    t.equal(both.filter(answer => answer !== null).length, 1, `round ${round}: exactly one`)
  }
})

t.test('concurrent trusts all land; a store that always loses fails closed', async (t) => {
  const { devices, request } = setup()
  const trusted = await Promise.all(Array.from({ length: 6 }, async () => await devices.trust(request())))
  t.equal(new Set((await devices.list(USER)).map(d => d.id)).size, 6, 'none lost')
  t.same(trusted.flatMap(d => d.dropped), [])

  const clock = testClock()
  const memory = new MemoryStore({ clock })
  const lost = new TrustedDevices(contendedStore(memory), clock, new Revocation(memory, clock))
  await t.rejects(lost.trust(request()), { name: 'JwtLoginError', code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', statusCode: 503 })
  const real = await new TrustedDevices(memory, clock, new Revocation(memory, clock)).trust(request())
  await t.rejects(lost.use(USER, real.token), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' }, 'a use whose writes are all refused fails closed')
  t.equal((await lost.list(USER)).length, 1, 'reads go through (a store without getMany)')
  t.equal(await lost.forget(USER, real.deviceId).catch((error: JwtLoginError) => error.code), 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.not(await new TrustedDevices(memory, clock, new Revocation(memory, clock)).use(USER, real.token), null, 'nothing was spent')
})

t.test('a store answering undefined for a missing key (getMany of a custom store) reads as absent', async (t) => {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  const sparse: StateStore = {
    ...contendedStore(memory),
    compareAndSet: async (key, expected, value, ttlMs) => await memory.compareAndSet(key, expected, value, ttlMs),
    getMany: async (keys) => (await memory.getMany(keys)).map(value => value ?? undefined) as unknown as Array<string | null>
  }
  const devices = new TrustedDevices(sparse, clock, new Revocation(memory, clock))
  t.same(await devices.list(USER), [])
  const { token } = await devices.trust({ userId: USER, trustedAt: clock.now, lifetimeMs: DAY, max: 10, ip: '::1', userAgent: undefined })
  t.equal((await devices.list(USER)).length, 1)
  t.not(await devices.use(USER, token), null)
  await memory.set(stateKeys.userCutoff(USER), String(clock.now + 1), DAY)
  t.same(await devices.list(USER), [], 'a cutoff read through it')
})

t.test('edges: a give-back after the device expired changes nothing; a give-back that keeps losing gives up quietly; a device removed between the check and the write is not found', async (t) => {
  const { clock, store, devices, request } = setup()
  const trusted = await devices.trust(request())
  const used = await devices.use(USER, trusted.token)
  clock.advance(DAY + 1)
  await used?.giveBack()
  t.equal(await store.get(devicesKey(USER)), null, 'the entry expired with its last device')

  // a store whose compare-and-set starts losing after the use: its give-back resolves, it does not throw
  const memory = new MemoryStore({ clock })
  let losing = false
  const switching: StateStore = {
    get: async (key) => await memory.get(key),
    getMany: async (keys) => await memory.getMany(keys),
    set: async (key, value, ttlMs) => { await memory.set(key, value, ttlMs) },
    consume: async (key) => await memory.consume(key),
    increment: async (key, ttlMs) => await memory.increment(key, ttlMs),
    delete: async (key) => { await memory.delete(key) },
    compareAndSet: async (key, expected, value, ttlMs) => losing ? false : await memory.compareAndSet(key, expected, value, ttlMs)
  }
  const switched = new TrustedDevices(switching, clock, new Revocation(memory, clock))
  const again = await switched.trust(request())
  const spent = await switched.use(USER, again.token)
  losing = true
  await t.resolves((spent as { giveBack: () => Promise<void> }).giveBack(), 'a give-back that keeps losing gives up quietly')
  losing = false
  t.equal(await switched.use(USER, again.token), null, 'and the rotation stands')

  // a device forgotten by another request between the liveness check and the write
  const racing = new (class extends MemoryStore {
    drop = false
    override async get (key: string): Promise<string | null> {
      if (this.drop && key === devicesKey(USER)) { this.drop = false; await super.delete(key) }
      return await super.get(key)
    }
  })({ clock })
  const raced = new TrustedDevices(racing, clock, new Revocation(racing, clock))
  const one = await raced.trust(request())
  racing.drop = true
  t.equal(await raced.forget(USER, one.deviceId), false, 'gone by the time of the write: not found')
})
