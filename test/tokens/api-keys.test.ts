// The API keys' storage (ApiKeys) and the end of every key (endApiKeys, the cutoff's end of keys) called directly: a creation that an end of every key sends back, failing deletions, the listing's leftovers, a password reset.
import t from 'tap'
import { resetCredentials } from '../../lib/account/credentials.js'
import { endApiKeys, keysEnd } from '../../lib/sessions/api-keys.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { ApiKeys, apiKeyKeys, looksLikeApiKey, parseApiKey, type NewApiKey } from '../../lib/tokens/api-keys.js'
import { endsKey, keysEndedBefore, mergeKeysEnd, writeCutoff } from '../../lib/tokens/cutoff-record.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { testClock } from '../helpers/fixtures.js'
import { collect, flowKit } from '../helpers/flows.js'

const HOUR = 3_600_000

function keysOn (): { keys: ApiKeys, store: MemoryStore, clock: ReturnType<typeof testClock> } {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  return { keys: new ApiKeys(store, clock), store, clock }
}

const request = (check: NewApiKey['check'] = async () => {}): NewApiKey => ({ userId: 7, name: 'ci', scopes: ['a'], lifetimeMs: HOUR, prefix: 'jwtl', max: 5, check })

t.test('a key\'s form: the prefix, 16 and 43 base64url characters, split by their lengths', async (t) => {
  const { keys } = keysOn()
  const { key, info } = await keys.create(request())
  t.same(parseApiKey(key, 'jwtl'), { id: info.id, secret: key.slice(22) })
  t.equal(parseApiKey(key, 'acme'), null, 'another prefix')
  t.equal(parseApiKey(`${key}x`, 'jwtl'), null)
  t.equal(parseApiKey('jwtl_' + '_'.repeat(16) + '_' + '-'.repeat(43), 'jwtl')?.id, '_'.repeat(16), 'an id of underscores is still one')
  t.ok(looksLikeApiKey('jwtl_anything', 'jwtl'))
  t.notOk(looksLikeApiKey('jwtlx_anything', 'jwtl'))
})

t.test('a creation sent back by an end of every key tries again from the read; one sent back every time fails closed (503 / 201) and leaves nothing', async (t) => {
  const { keys, store } = keysOn()
  let ends = 1
  const once = await keys.create(request(async () => { if (ends-- > 0) await keys.endAll(7, () => {}) }))
  t.same((await keys.list(7)).map(key => key.id), [once.info.id], 'the second try wrote')

  let tries = 0
  await t.rejects(keys.create(request(async () => {
    tries++
    // each end of every key lands between the creation's read of the index and its write
    setImmediate(() => { keys.endAll(7, () => {}).catch(() => {}) })
    await new Promise(resolve => setTimeout(resolve, 5))
  })), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', statusCode: 503 })
  t.equal(tries, 3)
  t.same(await keys.list(7), [])
  const index = JSON.parse(await store.get(apiKeyKeys.index(7)) as string) as { g: number, k: unknown[] }
  t.same(index.k, [], 'no key listed')
})

t.test('a refused creation deletes its record; a deletion that fails is no one\'s concern (the record works without its index never)', async (t) => {
  const { keys, store } = keysOn()
  await keys.create(request())
  store.delete = async () => { throw new Error('the store is down') }
  await t.rejects(keys.create({ ...request(), max: 1 }), { code: 'ERR_JWT_LOGIN_API_KEY_LIMIT' })
})

t.test('a creation whose index write fails: the failure answers, the record and the index entry are taken back as far as the store lets', async (t) => {
  const { keys, store } = keysOn()
  const compareAndSet = store.compareAndSet.bind(store)
  // the write lands, its answer is lost: the key leaves the index again
  store.compareAndSet = async (...args) => { await compareAndSet(...args); store.compareAndSet = compareAndSet; throw new Error('the answer was lost') }
  await t.rejects(keys.create(request()), /the answer was lost/)
  t.same(JSON.parse(await store.get(apiKeyKeys.index(7)) as string).k, [], 'no place held')
  // the store down for good: the same failure, nothing more to do
  store.compareAndSet = async () => { throw new Error('the store is down') }
  await t.rejects(keys.create(request()), /the store is down/)
  t.same(await keys.list(7), [])
})

t.test('the listing leaves out what its index lists without a live record of the user', async (t) => {
  const { keys, store, clock } = keysOn()
  const gone = await keys.create(request())
  const foreign = await keys.create(request())
  const kept = await keys.create({ ...request(), lifetimeMs: 2 * HOUR })
  await store.delete(apiKeyKeys.record(gone.info.id))
  const record = JSON.parse(await store.get(apiKeyKeys.record(foreign.info.id)) as string) as Record<string, unknown>
  await store.set(apiKeyKeys.record(foreign.info.id), JSON.stringify({ ...record, u: 8 }), HOUR)
  t.same((await keys.list(7)).map(key => key.id), [kept.info.id])
  t.same(await keys.list(8), [], 'nor does another user\'s index find it')
  clock.advance(2 * HOUR)
  t.same(await keys.list(7), [], 'expired')
})

t.test('fifty ends of one key at once: the index forgets it once, and only that call answers true', async (t) => {
  const { keys } = keysOn()
  const { info } = await keys.create(request())
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await keys.revoke(7, info.id)))
  t.equal(answers.filter(removed => removed).length, 1)
  t.equal(await keys.revoke(7, info.id), false)
  t.same(await keys.list(7), [])
})

t.test('endApiKeys: the keys end in one write; records that cannot be deleted are logged, not the request\'s failure', async (t) => {
  const kit = await flowKit({ apiKeys: { enabled: true } })
  const revoked = collect(kit, 'api_key.revoked')
  const one = await kit.ctx.tokens.apiKeys.create({ ...request(), userId: kit.aliceId })
  const two = await kit.ctx.tokens.apiKeys.create({ ...request(), userId: kit.aliceId })
  kit.store.delete = async () => { throw new Error('the store is down') }
  await endApiKeys(kit.ctx, kit.aliceId, 'locked')
  t.same(revoked, [one, two].map(({ info }) => ({ userId: kit.aliceId, keyId: info.id, reason: 'locked' })))
  t.same(await kit.ctx.tokens.apiKeys.list(kit.aliceId), [])
  t.match(kit.log, [{ level: 'warn', message: /ended API keys could not all be deleted/ }])
  t.notOk(JSON.stringify(kit.log).includes(one.key.slice(22)), 'no key in the log')

  kit.store.compareAndSet = async () => { throw new Error('the store is down') }
  await t.rejects(endApiKeys(kit.ctx, kit.aliceId, 'locked'), /the store is down/, 'the index\'s write failing: a rejection')
})

t.test('a password reset of an address nobody had proven ends the keys (reason password_reset), in the cutoff first; one whose user holds no key writes no cutoff', async (t) => {
  const kit = await flowKit({ apiKeys: { enabled: true } })
  const revoked = collect(kit, 'api_key.revoked')
  const alice = await kit.users.findById(kit.aliceId)
  await resetCredentials(kit.ctx, kit.call(), kit.aliceId, alice, 'password_reset', false)
  t.equal(await kit.store.get(stateKeys.userCutoff(kit.aliceId)), null, 'no key: the cutoff is not written')
  const { info } = await kit.ctx.tokens.apiKeys.create({ ...request(), userId: kit.aliceId })
  // the index's change lost: the cutoff alone ends the key
  const cas = kit.store.compareAndSet.bind(kit.store)
  kit.store.compareAndSet = async (key, ...rest) => { if (key.startsWith('api-keys:')) throw new Error('the store is down'); return await cas(key, ...rest) }
  await t.rejects(resetCredentials(kit.ctx, kit.call(), kit.aliceId, alice, 'password_reset', false), /the store is down/)
  t.same(await kit.ctx.tokens.apiKeys.list(kit.aliceId), [], 'ended by the cutoff: not listed')
  t.equal(keysEndedBefore(await kit.store.get(stateKeys.userCutoff(kit.aliceId))), kit.clock.now + 1)
  kit.store.compareAndSet = cas
  await resetCredentials(kit.ctx, kit.call(), kit.aliceId, alice, 'password_reset', false)
  t.same(revoked, [{ userId: kit.aliceId, keyId: info.id, reason: 'password_reset' }], 'the retry finishes it')
  t.same(JSON.parse(await kit.store.get(apiKeyKeys.index(kit.aliceId)) as string).k, [])
})

t.test('the cutoff\'s end of keys: kept through other changes and merged with a later one, dropped once its keys have expired; the bare time otherwise', async (t) => {
  t.equal(writeCutoff({ t: 5 }), '5')
  t.equal(keysEndedBefore(null), 0)
  t.equal(keysEndedBefore('5'), 0)
  t.equal(keysEndedBefore(writeCutoff({ t: 5, k: ['s'] })), 0)
  t.equal(keysEndedBefore(writeCutoff({ t: 5, x: [3, 9] })), 3)
  // what the key check reads: a lock while it holds, or an end of every key after the key's creation
  t.equal(endsKey(null, 1, 10), false)
  t.equal(endsKey('5', 1, 10), false, 'the bare time ends no key')
  t.equal(endsKey(writeCutoff({ t: 5, k: ['s'] }), 1, 10), false)
  t.equal(endsKey(writeCutoff({ t: 5, x: [3, 9] }), 2, 10), true, 'created before the end')
  t.equal(endsKey(writeCutoff({ t: 5, x: [3, 9] }), 3, 10), false, 'created at it: after')
  t.equal(endsKey(writeCutoff({ t: 5, l: { u: null, a: 5 } }), 8, 10), true, 'locked until unlocked')
  t.equal(endsKey(writeCutoff({ t: 5, l: { u: 20, a: 5 } }), 8, 10), true, 'locked until a time to come')
  t.equal(endsKey(writeCutoff({ t: 5, l: { u: 10, a: 5 } }), 8, 10), false, 'a lock that has passed')
  t.same(mergeKeysEnd([3, 9], [4, 8], 0), [4, 9])
  t.same(mergeKeysEnd([3, 9], undefined, 0), [3, 9])
  t.same(mergeKeysEnd([3, 9], [4, 12], 10), [4, 12], 'the expired one is dropped')
  t.equal(mergeKeysEnd([3, 9], undefined, 9), undefined)

  const kit = await flowKit({ apiKeys: { enabled: true } })
  const settings = kit.call().settings
  await kit.ctx.tokens.revokeUserTokens(settings, kit.aliceId)
  t.match(await kit.store.get(stateKeys.userCutoff(kit.aliceId)), /^\d+$/, 'no key: a bare time')
  const year = 365 * 24 * HOUR
  await kit.ctx.tokens.apiKeys.create({ ...request(), userId: kit.aliceId, lifetimeMs: year })
  const ends = await keysEnd(kit.ctx, kit.aliceId, kit.clock.now + 1)
  t.same(ends, [kit.clock.now + 1, kit.clock.now + year])
  await kit.ctx.tokens.revokeUserTokens(settings, kit.aliceId, undefined, undefined, ends)
  // a password change's hold and release, and a lock and unlock, keep it
  const held = await kit.ctx.tokens.holdUserTokens(settings, kit.aliceId, 'change', kit.clock.now + 10)
  await kit.ctx.tokens.releaseUserTokens(settings, kit.aliceId, 'change', undefined, held)
  await kit.ctx.tokens.lockUser(settings, kit.aliceId, null)
  await kit.ctx.tokens.unlockUser(settings, kit.aliceId)
  t.equal(keysEndedBefore(await kit.store.get(stateKeys.userCutoff(kit.aliceId))), (ends as [number, number])[0])
  // the entry outlives every token: it lives until the key it ended expires
  kit.clock.advance(year - HOUR)
  t.equal(keysEndedBefore(await kit.store.get(stateKeys.userCutoff(kit.aliceId))), (ends as [number, number])[0], 'there a year on')
  kit.clock.advance(2 * HOUR)
  await kit.ctx.tokens.revokeUserTokens(settings, kit.aliceId)
  t.match(await kit.store.get(stateKeys.userCutoff(kit.aliceId)), /^\d+$/, 'its keys expired: the bare time again')
})
