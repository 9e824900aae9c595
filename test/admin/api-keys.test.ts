// The API-key routes (POST and GET /account/api-keys, DELETE /account/api-keys/{id}) and the host API (createApiKey, listApiKeys, revokeApiKey), on the memory store.
import t from 'tap'
import { JwtLoginSettingsError } from '../../lib/index.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { buildApp } from '../helpers/app.js'
import { errorOf, PREFIX } from '../helpers/http.js'
import { collect } from '../helpers/oauth.js'
import { BOB } from '../helpers/two-factor.js'
import { actingToken, API_KEYS, createKey, deleteKey, KEY_FORM, keysApp, listKeys, newKey, signIn, withKey } from '../helpers/api-keys.js'

const DAY = 86_400_000

t.test('apiKeys.enabled off (the default): 403 / 253 on the three routes, and the host API refuses a creation', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  t.same(errorOf(await createKey(app, jwt)), [403, 253])
  t.same(errorOf(await listKeys(app, jwt)), [403, 253])
  t.same(errorOf(await deleteKey(app, jwt, 'abc')), [403, 253])
  await t.rejects(app.jwtLogin.createApiKey(1, { name: 'ci' }), { code: 'ERR_JWT_LOGIN_API_KEYS_DISABLED', statusCode: 403 })
  t.same(await app.jwtLogin.listApiKeys(1), [], 'listing and ending work either way')
  t.equal(await app.jwtLogin.revokeApiKey(1, 'abc'), false)
})

t.test('a key is answered once, in data.key, with its listing fields; only its hash is stored; the listing never shows it', async (t) => {
  const store = new MemoryStore()
  const written: string[] = []
  const set = store.set.bind(store)
  store.set = async (key, value, ttl) => { written.push(value); await set(key, value, ttl) }
  const { app, clock } = await keysApp({}, { store })
  t.teardown(() => app.close())
  const created = collect(app, 'api_key.created')
  const jwt = await signIn(app)
  const res = await createKey(app, jwt, { name: 'nightly export', scopes: ['orders:read', 'reports'] })
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.match(data.key, KEY_FORM, '<prefix>_<id>_<secret>')
  t.equal(data.key.slice(5, 21), data.id, 'the id is the key\'s middle part')
  t.same({ ...data, key: undefined }, {
    key: undefined,
    id: data.id,
    name: 'nightly export',
    prefix: `jwtl_${data.id as string}`,
    scopes: ['orders:read', 'reports'],
    created_at: new Date(clock.now).toISOString(),
    expires_at: new Date(clock.now + 90 * DAY).toISOString()
  }, 'the default lifetime: 90 days; no last use yet')
  t.same(created, [{ userId: 1, keyId: data.id, ip: '127.0.0.1' }])
  const secret = (data.key as string).slice(22)
  t.notOk(written.some(value => value.includes(secret)), 'the secret is written nowhere')

  const listed = await listKeys(app, jwt)
  t.equal(listed.statusCode, 200)
  t.same(listed.json().data.api_keys, [{ ...data, key: undefined }].map(({ key: _key, ...item }) => item))
  t.notOk(listed.body.includes(secret))

  const chosen = (await createKey(app, jwt, { name: 'a day', expires_in: 86_400 })).json().data
  t.equal(chosen.expires_at, new Date(clock.now + DAY).toISOString(), 'expires_in in seconds')
  t.same(chosen.scopes, [], 'no scope asked: none carried')
})

t.test('400: a scope the host does not declare, or twice, an expires_in out of range (259); no name, a name of control or format characters, over 100 code points (203); nothing created', async (t) => {
  const { app } = await keysApp({ apiKeys: { lifetime: { min: '1h', max: '30d', default: '7d' } } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const refused = async (body: Record<string, unknown>): Promise<[number, number | undefined]> => errorOf(await createKey(app, jwt, body))
  t.same(await refused({ name: 'x', scopes: ['admin'] }), [400, 259], 'undeclared')
  t.same(await refused({ name: 'x', scopes: ['reports', 'reports'] }), [400, 259], 'twice')
  t.same(await refused({ name: 'x', expires_in: 3599 }), [400, 259], 'under apiKeys.lifetime.min')
  t.same(await refused({ name: 'x', expires_in: 30 * 86_400 + 1 }), [400, 259], 'over apiKeys.lifetime.max')
  t.match((await createKey(app, jwt, { name: 'x', expires_in: 10 })).json().data.message, /expires_in/, 'the field is named')
  t.same(await refused({ scopes: ['reports'] }), [400, 203], 'a name is required')
  t.same(await refused({ name: '\u0007bell' }), [400, 203])
  for (const hidden of ['a\u0085b', 'invoice\u202Egnp.exe', 'a\u2066b', 'zero\u200Bwidth', 'lone \uD800 half', 'bom\uFEFF']) {
    t.same(await refused({ name: hidden }), [400, 203], JSON.stringify(hidden))
  }
  t.equal((await createKey(app, jwt, { name: '🔑'.repeat(100) })).statusCode, 200, '100 code points (200 UTF-16 units), as the schema counts')
  t.equal((await createKey(app, jwt, { name: 'team 👩\u200D💻' })).statusCode, 200, 'an emoji sequence\'s joiner is no hidden character')
  t.same(await refused({ name: '🔑'.repeat(101) }), [400, 203])
  t.same(await refused({ name: '   ' }), [400, 203])
  t.same(await refused({ name: 'x'.repeat(101) }), [400, 203], 'over 100 characters')
  t.same(await refused({ name: 'x'.repeat(201) }), [400, 203], 'the schema\'s bound')
  t.same(await refused({ name: 'x', expires_in: 'soon' }), [400, 203], 'not a number')
  t.equal((await listKeys(app, jwt)).json().data.api_keys.length, 2, 'only the two good names')
  t.equal((await createKey(app, jwt, { name: 'x', expires_in: 30 * 86_400 })).statusCode, 200, 'the bounds themselves are allowed')
})

t.test('409 / 257 past apiKeys.maxPerUser; an ended or expired key frees its place', async (t) => {
  const { app, clock } = await keysApp({ apiKeys: { maxPerUser: 2 } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const first = await newKey(app, jwt, { name: 'one', expires_in: 3600 })
  await newKey(app, jwt, { name: 'two' })
  t.same(errorOf(await createKey(app, jwt, { name: 'three' })), [409, 257])
  t.equal((await deleteKey(app, jwt, first.id)).statusCode, 200)
  const third = await newKey(app, jwt, { name: 'three', expires_in: 3600 })
  t.same(errorOf(await createKey(app, jwt, { name: 'four' })), [409, 257])
  clock.advance(3600_000 + 1)
  const fresh = await signIn(app)
  t.equal((await createKey(app, fresh, { name: 'four' })).statusCode, 200, 'the expired one no longer counts')
  t.same((await listKeys(app, fresh)).json().data.api_keys.map((key: { name: string }) => key.name), ['two', 'four'], 'nor is listed')
  t.equal((await withKey(app, (third as { key: string }).key, { path: '/any' })).statusCode, 401, 'an expired key works no more')
})

t.test('a creation needs a sign-in within account.recentAuth (401 / 220); listing and ending do not', async (t) => {
  const { app, clock } = await keysApp({ account: { enabled: true, recentAuth: '5m' } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { id } = await newKey(app, jwt)
  clock.advance(5 * 60_000 + 1000)
  t.same(errorOf(await createKey(app, jwt)), [401, 220])
  t.equal((await listKeys(app, jwt)).statusCode, 200)
  t.equal((await deleteKey(app, jwt, id)).statusCode, 200)
})

t.test('DELETE: the user\'s own key ends (api_key.revoked, reason user); another user\'s, an ended or an unknown id answers 404 / 258 and changes nothing', async (t) => {
  const { app, users } = await keysApp()
  t.teardown(() => app.close())
  await users.addUser(BOB)
  const revoked = collect(app, 'api_key.revoked')
  const alice = await signIn(app)
  const bob = await signIn(app, BOB)
  const mine = await newKey(app, alice)
  const bobs = await newKey(app, bob)
  t.same(errorOf(await deleteKey(app, alice, bobs.id)), [404, 258], 'bob\'s key')
  t.equal((await withKey(app, bobs.key)).statusCode, 200, 'which still works')
  t.same(errorOf(await deleteKey(app, alice, 'AAAAAAAAAAAAAAAA')), [404, 258], 'unknown')
  t.same(errorOf(await deleteKey(app, alice, 'not a key!')), [400, 203], 'not an id')
  const res = await deleteKey(app, alice, mine.id)
  t.same(res.json(), { success: true, data: { id: mine.id } })
  t.same(errorOf(await deleteKey(app, alice, mine.id)), [404, 258], 'ended already')
  t.same(revoked, [{ userId: 1, keyId: mine.id, reason: 'user' }])
  t.same((await listKeys(app, alice)).json().data.api_keys, [])
})

t.test('a token acting for the user (an act claim) is refused on the three routes: 403 / 252', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { id } = await newKey(app, jwt)
  const acting = actingToken(jwt)
  t.same(errorOf(await createKey(app, acting)), [403, 252])
  t.same(errorOf(await listKeys(app, acting)), [403, 252])
  t.same(errorOf(await deleteKey(app, acting, id)), [403, 252])
  t.equal((await listKeys(app, jwt)).json().data.api_keys.length, 1, 'nothing changed')
})

t.test('a key never signs in to the plugin\'s own routes: 403 / 260, in the header or the JWT field', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const { key } = await newKey(app, await signIn(app))
  t.same(errorOf(await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${key}` } })), [403, 260])
  t.same(errorOf(await app.inject({ method: 'GET', url: API_KEYS, headers: { authorization: `Bearer ${key}` } })), [403, 260], 'not even to make more keys')
  t.same(errorOf(await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: key } })), [403, 260])
  t.same(errorOf(await app.inject({ method: 'GET', url: `${PREFIX}/account`, headers: { authorization: `Bearer ${key}` } })), [403, 260])
  t.same(errorOf(await app.inject({ method: 'POST', url: `${PREFIX}/account/email/verification`, payload: { JWT: key } })), [403, 260], 'where a token is optional too')
  t.same(errorOf(await app.inject({ method: 'GET', url: '/token', headers: { authorization: `Bearer ${key}` } })), [401, 2], 'a host route without apiKey: refused as any value that is no token')
  t.same(errorOf(await app.inject({ method: 'GET', url: '/token', headers: { 'x-api-key': key } })), [401, 53], 'and X-API-Key is not read there')
})

t.test('the host API: createApiKey answers the key once, listApiKeys, revokeApiKey; bad input is JwtLoginSettingsError; a locked user 403 / 251', async (t) => {
  const { app, users } = await keysApp({ apiKeys: { maxPerUser: 2 } })
  t.teardown(() => app.close())
  const created = collect(app, 'api_key.created')
  const revoked = collect(app, 'api_key.revoked')
  const api = app.jwtLogin
  const key = await api.createApiKey(1, { name: 'deploy', scopes: ['orders:write'], expiresIn: 3600 })
  t.match(key, { key: KEY_FORM, id: String, name: 'deploy', scopes: ['orders:write'], lastUsedAt: null, createdAt: Number, expiresAt: Number })
  t.equal(key.expiresAt - key.createdAt, 3600_000)
  t.same(created, [{ userId: 1, keyId: key.id, ip: null }], 'no client address for the host')
  t.same(await api.listApiKeys(1), [{ id: key.id, name: 'deploy', scopes: ['orders:write'], createdAt: key.createdAt, expiresAt: key.expiresAt, lastUsedAt: null }])
  t.equal((await withKey(app, key.key, { path: '/any' })).statusCode, 200, 'it works')

  const settingsError = async (promise: Promise<unknown>, path: string): Promise<void> => {
    const error = await promise.then(() => null, (error: unknown) => error)
    t.ok(error instanceof JwtLoginSettingsError, path)
    t.match((error as Error).message, path)
  }
  await settingsError(api.createApiKey(0, { name: 'x' }), 'createApiKey/userId')
  await settingsError(api.createApiKey(42, { name: 'x' }), 'createApiKey/userId')
  await settingsError(api.createApiKey(1, { name: '' }), 'createApiKey/name')
  await settingsError(api.createApiKey(1, undefined as never), 'createApiKey/name')
  await settingsError(api.createApiKey(1, { name: 'x', scopes: ['admin'] }), 'createApiKey/scopes')
  await settingsError(api.createApiKey(1, { name: 'x', scopes: 'reports' as never }), 'createApiKey/scopes')
  await settingsError(api.createApiKey(1, { name: 'x', expiresIn: 1.5 }), 'createApiKey/expiresIn')
  await settingsError(api.listApiKeys(-1), 'listApiKeys/userId')
  await settingsError(api.revokeApiKey(1, '../x'), 'revokeApiKey/id')
  await settingsError(api.revokeApiKey(1, 5 as never), 'revokeApiKey/id')
  await settingsError(api.revokeApiKey('1' as never, key.id), 'revokeApiKey/userId')

  await api.createApiKey(1, { name: 'second' })
  await t.rejects(api.createApiKey(1, { name: 'third' }), { code: 'ERR_JWT_LOGIN_API_KEY_LIMIT', statusCode: 409 })
  t.equal(await api.revokeApiKey(1, key.id), true)
  t.equal(await api.revokeApiKey(1, key.id), false, 'once')
  t.same(revoked, [{ userId: 1, keyId: key.id, reason: 'host' }])
  t.equal((await withKey(app, key.key, { path: '/any' })).statusCode, 401, 'it works no more')

  const bob = await users.addUser(BOB)
  await api.lockUser(bob.ID, { reason: 'abuse' })
  await t.rejects(api.createApiKey(bob.ID, { name: 'x' }), { code: 'ERR_JWT_LOGIN_USER_LOCKED', statusCode: 403 })
  t.same(await api.listApiKeys(bob.ID), [])
})

t.test('the settings: a prefix of the host\'s own, for its secret scanners', async (t) => {
  const { app } = await keysApp({ apiKeys: { prefix: 'acme' } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { key, id } = await newKey(app, jwt)
  t.match(key, /^acme_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/)
  t.equal((await listKeys(app, jwt)).json().data.api_keys[0].prefix, `acme_${id}`)
  t.equal((await withKey(app, key, { via: 'bearer' })).statusCode, 200)
  t.same(errorOf(await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${key}` } })), [403, 260])
  t.same(errorOf(await withKey(app, key.replace('acme_', 'jwtl_'))), [401, 254], 'another prefix: no key of this site')
})

t.test('a key\'s listing says when it was last used, written on the first request of each apiKeys.limits.perKey window (a minute by default)', async (t) => {
  const { app, clock } = await keysApp()
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { key } = await newKey(app, jwt)
  const lastUsed = async (): Promise<string | undefined> => (await listKeys(app, jwt)).json().data.api_keys[0].last_used_at
  t.equal(await lastUsed(), undefined)
  const first = clock.now
  t.equal((await withKey(app, key)).statusCode, 200)
  t.equal(await lastUsed(), new Date(first).toISOString())
  clock.advance(30_000)
  await withKey(app, key)
  t.equal(await lastUsed(), new Date(first).toISOString(), 'not within the window')
  clock.advance(30_000)
  await withKey(app, key)
  t.equal(await lastUsed(), new Date(clock.now).toISOString(), 'the next window')

  // a key without the route's scope was still used: the window's first request writes its last use, refused or not
  const narrow = await newKey(app, jwt, { name: 'reports', scopes: ['reports'] })
  const narrowUsed = async (): Promise<string | undefined> => (await listKeys(app, jwt)).json().data.api_keys.find((k: { id: string }) => k.id === narrow.id).last_used_at
  t.equal((await withKey(app, narrow.key)).statusCode, 403, 'refused for the scope')
  t.equal(await narrowUsed(), new Date(clock.now).toISOString(), 'its use is written all the same')
})
