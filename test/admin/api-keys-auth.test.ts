// API keys on host routes (`authenticateWith({ apiKey: true, scopes })`): the right scope, the wrong one, a missing or unknown key, the limits, and what ends a key.
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin, { JwtLoginSettingsError } from '../../lib/index.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { actingToken, createKey, deleteKey, keysApp, listKeys, newKey, signIn, withKey } from '../helpers/api-keys.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { errorOf, PREFIX } from '../helpers/http.js'
import { collect } from '../helpers/oauth.js'

t.test('the done-when: a key works with the right scope, 403 with a wrong one, 401 missing or unknown, 429 with Retry-After past its limit', async (t) => {
  const { app, clock } = await keysApp({ apiKeys: { limits: { perKey: { max: 3, window: '1m' } } } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const reader = await newKey(app, jwt, { name: 'reader', scopes: ['orders:read', 'reports'] })
  const writer = await newKey(app, jwt, { name: 'writer', scopes: ['orders:write'] })

  const res = await withKey(app, reader.key)
  t.equal(res.statusCode, 200)
  t.same(res.json(), { user: { ID: 1, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName, roles: ['subscriber'] }, claims: null, actor: null, apiKey: { id: reader.id, name: 'reader', scopes: ['orders:read', 'reports'] } }, 'the user, and the key')
  t.equal((await withKey(app, reader.key, { via: 'bearer' })).statusCode, 200, 'Authorization: Bearer <key> too')

  const wrong = await withKey(app, writer.key)
  t.same(errorOf(wrong), [403, 255])
  t.match(wrong.headers['www-authenticate'], /insufficient_scope/)
  t.equal((await withKey(app, writer.key, { path: '/any' })).statusCode, 200, 'a route that asks no scope takes it')

  const missing = await app.inject({ method: 'GET', url: '/orders' })
  t.same(errorOf(missing), [401, 53], 'no key, no token: the challenge of a bare route')
  for (const key of [
    `${reader.key.slice(0, -1)}${reader.key.endsWith('A') ? 'B' : 'A'}`,
    `jwtl_${'A'.repeat(16)}_${'A'.repeat(43)}`,
    'jwtl_short',
    ''
  ]) t.same(errorOf(await withKey(app, key, { ip: '192.0.2.9' })), [401, 254], `refused alike: ${key.slice(0, 8)}`)
  t.same(errorOf(await app.inject({ method: 'GET', url: '/orders', headers: { 'x-api-key': reader.key, authorization: `Bearer ${jwt}` } })), [401, 254], 'a key and a token at once: refused')

  t.equal((await withKey(app, reader.key)).statusCode, 200, 'the third request of the window')
  const limited = await withKey(app, reader.key)
  t.same(errorOf(limited), [429, 256], 'the fourth: the key\'s limit, never a 401')
  t.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 60, 'Retry-After: the window\'s rest')
  t.equal((await withKey(app, writer.key, { path: '/any' })).statusCode, 200, 'another key has its own count')
  clock.advance(60_000)
  t.equal((await withKey(app, reader.key)).statusCode, 200, 'the next window')
})

t.test('an access token still works where keys do, and scopes do not hold it; request.jwtLogin.apiKey is null then', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const res = await app.inject({ method: 'GET', url: '/orders', headers: { authorization: `Bearer ${jwt}` } })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { user: { ID: 1 }, claims: { sub: '1' }, apiKey: null })
  t.same(errorOf(await app.inject({ method: 'GET', url: '/orders', headers: { authorization: 'Bearer not-a-token' } })), [401, 2], 'a value that is neither: refused as a token')
})

t.test('wrong keys are counted per client IP: past apiKeys.limits.wrongKeysPerIp, 429 / 200 with Retry-After, the right key too; other clients go on', async (t) => {
  const { app, clock } = await keysApp({ apiKeys: { limits: { wrongKeysPerIp: { max: 3, window: '10m' } } } })
  t.teardown(() => app.close())
  const refused = collect(app, 'api_key.refused')
  const { key, id } = await newKey(app, await signIn(app))
  const wrongKey = `jwtl_${'B'.repeat(16)}_${'C'.repeat(43)}`
  for (let i = 0; i < 3; i++) t.same(errorOf(await withKey(app, wrongKey, { ip: '198.51.100.7' })), [401, 254])
  const limited = await withKey(app, key, { ip: '198.51.100.7' })
  t.same(errorOf(limited), [429, 200], 'the address is past its limit: even the right key waits')
  t.equal(limited.headers['retry-after'], '600')
  t.equal((await withKey(app, key, { ip: '198.51.100.8' })).statusCode, 200, 'another address')
  clock.advance(600_000)
  t.equal((await withKey(app, key, { ip: '198.51.100.7' })).statusCode, 200, 'after the window')
  t.same(refused.slice(0, 4), [
    ...Array.from({ length: 3 }, () => ({ ip: '198.51.100.7', errorCode: 254, keyId: null })),
    { ip: '198.51.100.7', errorCode: 200, keyId: null }
  ], 'api_key.refused: the address and the code, never the key')
  await withKey(app, key, { ip: '198.51.100.7', path: '/any' })
  t.notOk(JSON.stringify(refused).includes(key.slice(22)))
  t.notOk(refused.some(event => event.keyId === id))
})

t.test('a key stops working after DELETE /account/api-keys/{id}, and after lockUser (unlocking does not bring it back)', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const revoked = collect(app, 'api_key.revoked')
  const jwt = await signIn(app)
  const deleted = await newKey(app, jwt)
  const locked = await newKey(app, jwt, { name: 'other', scopes: ['orders:read'] })
  t.equal((await withKey(app, deleted.key)).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `${PREFIX}/account/api-keys/${deleted.id}`, headers: { authorization: `Bearer ${jwt}` } })).statusCode, 200)
  t.same(errorOf(await withKey(app, deleted.key)), [401, 254])

  t.equal((await withKey(app, locked.key)).statusCode, 200)
  await app.jwtLogin.lockUser(1, { reason: 'compromised' })
  t.same(errorOf(await withKey(app, locked.key)), [401, 254], 'the lock ends it at once')
  await app.jwtLogin.unlockUser(1)
  t.same(errorOf(await withKey(app, locked.key)), [401, 254], 'for good')
  t.same(await app.jwtLogin.listApiKeys(1), [])
  t.same(revoked.map(event => event.reason), ['user', 'locked'])
})

t.test('a key whose record outlived its end (a deletion that failed) is refused: by its index, and while its user is locked by the lock too', async (t) => {
  const store = new MemoryStore()
  const { app } = await keysApp({}, { store })
  t.teardown(() => app.close())
  const { key, id } = await newKey(app, await signIn(app))
  const saved = async (): Promise<Array<[string, string]>> => [[`api-key:${id}`, await store.get(`api-key:${id}`) as string], ['api-keys:user:1', await store.get('api-keys:user:1') as string]]
  const restore = async (entries: Array<[string, string]>): Promise<void> => { for (const [name, value] of entries) await store.set(name, value, 60_000) }
  const before = await saved()

  await app.jwtLogin.revokeApiKey(1, id)
  await restore(before.slice(0, 1))
  t.same(errorOf(await withKey(app, key)), [401, 254], 'the record back, its index without it')

  // the lock written, its end of the keys lost (a store that failed between the two writes)
  await app.jwtLogin.lockUser(1, { reason: 'compromised' })
  await restore(before)
  t.same(errorOf(await withKey(app, key)), [401, 254], 'record and index back: the lock refuses it')
  await app.jwtLogin.unlockUser(1)
  t.equal((await withKey(app, key)).statusCode, 200, 'the check itself: once unlocked, that restored key would work')

  await store.delete('api-keys:user:1')
  t.same(errorOf(await withKey(app, key)), [401, 254], 'the record without any index (gone or expired): refused')
})

t.test('keys end with a sign-out everywhere (DELETE /sessions, kept session or not; endAllSessions) and with DELETE /users; a user the adapter no longer finds is refused', async (t) => {
  const { app, users, clock } = await keysApp()
  t.teardown(() => app.close())
  const revoked = collect(app, 'api_key.revoked')
  const bearer = async (): Promise<Record<string, string>> => ({ authorization: `Bearer ${await signIn(app)}` })
  // each sign-out everywhere ends the sessions of its millisecond too: the next sign-in comes a second later
  const later = (): void => { clock.advance(1000) }

  let { key } = await newKey(app, await signIn(app))
  t.equal((await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions?keep_current=true`, headers: await bearer() })).statusCode, 200)
  t.same(errorOf(await withKey(app, key)), [401, 254], 'keep_current keeps the session, not the keys')
  later()

  key = (await newKey(app, await signIn(app))).key
  t.equal((await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions`, headers: await bearer() })).statusCode, 200)
  t.same(errorOf(await withKey(app, key)), [401, 254])
  later()

  key = (await newKey(app, await signIn(app))).key
  await t.rejects(app.jwtLogin.endAllSessions(1, { keep: 'no session' }), { name: 'JwtLoginSettingsError', path: 'endAllSessions/keep' })
  t.equal((await withKey(app, key)).statusCode, 200, 'a refused call ends nothing')
  await app.jwtLogin.endAllSessions(1)
  t.same(errorOf(await withKey(app, key)), [401, 254], 'the host\'s sign-out everywhere')
  t.same(revoked.map(event => event.reason), ['sign_out_everywhere', 'sign_out_everywhere', 'sign_out_everywhere'])
  later()

  key = (await newKey(app, await signIn(app))).key
  const gone = await newKey(app, await signIn(app), { name: 'gone', scopes: ['orders:read'] })
  const deleted = await app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: await bearer() })
  t.equal(deleted.statusCode, 200, deleted.body)
  t.same(errorOf(await withKey(app, key)), [401, 254], 'the user deleted')
  t.equal(revoked.at(-1)?.reason, 'user_deleted')
  later()

  // a key whose user the host removed itself: its index still lists it
  await users.addUser(ALICE)
  const fresh = await newKey(app, await signIn(app))
  t.equal((await withKey(app, fresh.key)).statusCode, 200)
  await users.removeUser(2)
  t.same(errorOf(await withKey(app, fresh.key)), [401, 254])
  t.same(errorOf(await withKey(app, gone.key)), [401, 254])
})

t.test('a password change does not end the keys (a key is no password)', async (t) => {
  const { app } = await keysApp({ account: { enabled: true } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { key } = await newKey(app, jwt)
  const changed = await app.inject({ method: 'PUT', url: `${PREFIX}/account/password`, headers: { authorization: `Bearer ${jwt}` }, payload: { current_password: ALICE.password, new_password: 'another long passphrase here' } })
  t.equal(changed.statusCode, 200, changed.body)
  t.equal((await withKey(app, key)).statusCode, 200)
  t.equal((await app.jwtLogin.listApiKeys(1)).length, 1)
})

t.test('with apiKeys off, a key on a route that takes keys answers 403 / 253; a token still works', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { key } = await newKey(app, jwt)
  const off = await keysApp({ apiKeys: { enabled: false } }, {})
  t.teardown(() => off.app.close())
  t.same(errorOf(await withKey(off.app, key)), [403, 253])
  t.equal((await off.app.inject({ method: 'GET', url: '/orders', headers: { authorization: `Bearer ${await signIn(off.app)}` } })).statusCode, 200)
})

t.test('a scope the host stops declaring is no longer carried', async (t) => {
  let scopes = ['orders:read', 'reports']
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, {
    users,
    settingsTtl: '1h',
    settings: async () => ({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, apiKeys: { enabled: true, scopes } })
  })
  app.get('/reports', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true, scopes: ['reports'] }) }, async (request) => request.jwtLogin)
  app.get('/any', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true }) }, async (request) => request.jwtLogin)
  await app.ready()
  const { key } = await app.jwtLogin.createApiKey(1, { name: 'r', scopes: ['orders:read', 'reports'] })
  t.equal((await withKey(app, key, { path: '/reports' })).statusCode, 200)
  scopes = ['orders:read']
  await app.jwtLogin.reloadSettings()
  t.same(errorOf(await withKey(app, key, { path: '/reports' })), [403, 255])
  t.same((await withKey(app, key, { path: '/any' })).json().apiKey.scopes, ['orders:read'])
})

t.test('authenticateWith refuses options that cannot hold: undeclared scopes, scopes without apiKey, a sign-in\'s conditions on a key', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const refusal = (options: Record<string, unknown>): string => {
    try {
      app.jwtLogin.authenticateWith(options)
    } catch (error) {
      t.ok(error instanceof JwtLoginSettingsError)
      return (error as Error).message
    }
    return 'accepted'
  }
  t.match(refusal({ apiKey: true, scopes: ['admin'] }), /authenticateWith\/scopes: "admin" is not declared in apiKeys.scopes/)
  t.match(refusal({ scopes: ['reports'] }), /authenticateWith\/scopes: scopes apply to API keys/)
  t.match(refusal({ apiKey: true, scopes: 'reports' }), /authenticateWith\/scopes: must be a list/)
  t.match(refusal({ apiKey: true, maxAge: '5m' }), /authenticateWith\/apiKey/)
  t.match(refusal({ apiKey: true, amr: ['mfa'] }), /authenticateWith\/apiKey/)
  t.match(refusal({ amr: 'mfa' }), /authenticateWith\/amr/)
  t.equal(refusal({ apiKey: true, scopes: ['reports'] }), 'accepted')
  t.equal(typeof app.jwtLogin.authenticateWith(undefined as never), 'function', 'no options: authenticate')
})

t.test('a lock refused (a time past, a user the adapter does not know) ends no key', async (t) => {
  const { app, clock } = await keysApp()
  t.teardown(() => app.close())
  const { key } = await newKey(app, await signIn(app))
  await t.rejects(app.jwtLogin.lockUser(1, { reason: 'r', until: clock.now - 1 }), { name: 'JwtLoginSettingsError', path: 'lockUser/until' })
  await t.rejects(app.jwtLogin.lockUser(1, { reason: 'r', until: new Date(Number.NaN) }), { name: 'JwtLoginSettingsError', path: 'lockUser/until' })
  await t.rejects(app.jwtLogin.lockUser(42, { reason: 'r' }), { name: 'JwtLoginSettingsError', path: 'lockUser/userId' })
  t.equal((await withKey(app, key)).statusCode, 200)
  await app.jwtLogin.lockUser(1, { reason: 'r', until: new Date(clock.now + 60_000) })
  t.equal((await withKey(app, key)).statusCode, 401, 'a lock with an end ends the keys too')
})

t.test('an impersonation token passes a host route that takes keys as any token does (the impersonation work decides its refusals)', async (t) => {
  const { app } = await keysApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/orders', headers: { authorization: `Bearer ${actingToken(await signIn(app))}` } })
  t.equal(res.statusCode, 200)
  t.match(res.json().claims, { act: { sub: '99' } })
})

t.test('a failing store: 503, logged without the key', async (t) => {
  const store = new MemoryStore()
  const lines: string[] = []
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users, store, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, apiKeys: { enabled: true } } })
  app.get('/any', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true }) }, async () => 'ok')
  await app.ready()
  const { key } = await app.jwtLogin.createApiKey(1, { name: 'x' })
  const down = async (): Promise<never> => { throw new Error('the store is down') }
  Object.assign(store, { get: down, getMany: down })
  t.same(errorOf(await withKey(app, key, { path: '/any' })), [503, 201])
  t.same(errorOf(await withKey(app, key, { path: '/any', via: 'bearer' })), [503, 201])
  t.ok(lines.length > 0, 'logged')
  t.notOk(lines.some(line => line.includes(key.slice(22))), 'no secret of the key in a log line')
})

t.test('apiKeys.header: a key comes in the header the settings name (Simple JWT Login\'s header_name), no longer in X-API-Key', async (t) => {
  const { app } = await keysApp({ apiKeys: { header: 'X-Site-Key' } })
  t.teardown(() => app.close())
  const { key, id } = await newKey(app, await signIn(app))
  const res = await app.inject({ method: 'GET', url: '/orders', headers: { 'x-site-key': key } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().apiKey.id, id)
  t.same(errorOf(await withKey(app, key)), [401, 53], 'X-API-Key is no key header here: the request carries no credential')
  t.equal((await withKey(app, key, { via: 'bearer' })).statusCode, 200, 'Authorization: Bearer still takes it')
})

t.test('apiKeys.selfService off: the routes answer 403 / 253, the host still mints keys, and they work', async (t) => {
  const { app } = await keysApp({ apiKeys: { selfService: false } })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  t.same(errorOf(await createKey(app, jwt)), [403, 253])
  t.same(errorOf(await listKeys(app, jwt)), [403, 253])
  const created = await app.jwtLogin.createApiKey(1, { name: 'by the host', scopes: ['orders:read'] })
  t.same(errorOf(await deleteKey(app, jwt, created.id)), [403, 253], 'nor may the user end it at the route')
  t.equal((await withKey(app, created.key)).statusCode, 200, 'the host\'s key works on a host route')
  t.same((await app.jwtLogin.listApiKeys(1)).map(key => key.id), [created.id])
})

t.test('a key past its limit is refused before the adapter is asked: 100 requests at once, the limit 5, five findById', async (t) => {
  const { app, users } = await keysApp({ apiKeys: { limits: { perKey: { max: 5, window: '1m' } } } })
  t.teardown(() => app.close())
  const { key } = await newKey(app, await signIn(app))
  let finds = 0
  const find = users.findById.bind(users)
  users.findById = async (id) => { finds++; return await find(id) }
  const answers = await Promise.all(Array.from({ length: 100 }, async () => (await withKey(app, key)).statusCode))
  t.equal(answers.filter(status => status === 200).length, 5)
  t.equal(answers.filter(status => status === 429).length, 95)
  t.equal(finds, 5)
})

t.test('a burst of 50 requests of one key writes its last use once', async (t) => {
  const store = new MemoryStore()
  const { app } = await keysApp({}, { store })
  t.teardown(() => app.close())
  const { key } = await newKey(app, await signIn(app))
  let writes = 0
  const set = store.set.bind(store)
  store.set = async (name, value, ttlMs) => { if (name.startsWith('api-key-used:')) writes++; await set(name, value, ttlMs) }
  await Promise.all(Array.from({ length: 50 }, async () => await withKey(app, key)))
  t.equal(writes, 1)
})

t.test('on a store without readAndIncrement, the key\'s use is counted beside the reads of its user\'s index and cutoff: the limit holds the same, and an ended key is refused', async (t) => {
  const store = new MemoryStore()
  // a store of a host's own without the batch (the memory store's taken away)
  Reflect.set(store, 'readAndIncrement', undefined)
  const { app } = await keysApp({ apiKeys: { limits: { perKey: { max: 3, window: '1m' } } } }, { store })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const { key, id } = await newKey(app, jwt)
  const answers = await Promise.all(Array.from({ length: 10 }, async () => (await withKey(app, key)).statusCode))
  t.same([answers.filter(status => status === 200).length, answers.filter(status => status === 429).length], [3, 7])
  t.equal((await deleteKey(app, jwt, id)).statusCode, 200)
  t.same(errorOf(await withKey(app, key)), [401, 254], 'ended: refused')
})
