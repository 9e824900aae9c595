import { generateKeyPairSync, randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import jwtLogin, { JwtLoginSettingsError, MemoryStore, restRouteRewrite, type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, registrationRefusal } from '../helpers/app.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }
const PKCS8 = { type: 'pkcs8', format: 'pem' } as const
const SPKI = { type: 'spki', format: 'pem' } as const

/** The error registration rejects with (a test fails when it resolves). */
const refusal = async (options: Partial<JwtLoginOptions>, host?: (app: FastifyInstance) => void): Promise<JwtLoginSettingsError> => await registrationRefusal(options, host)

/** A port or store with only `methods` of `full`, bound. */
function partial<T extends object> (full: T, methods: string[]): T {
  const record = full as unknown as Record<string, (...args: unknown[]) => unknown>
  return Object.fromEntries(methods.map(m => [m, (record[m] as (...args: unknown[]) => unknown).bind(full)])) as T
}

const PORT_METHODS = ['methodOf', 'getTotpSecret', 'setTotpSecret', 'consumeBackupCode', 'replaceBackupCodes']
const STORE_METHODS = ['get', 'set', 'consume', 'increment', 'compareAndSet', 'delete']

t.test('a two-factor port missing methods: the first in the path, every missing one in the message', async (t) => {
  const port = new MemoryTwoFactorStore()
  const some = await refusal({ twoFactor: { port: partial(port, ['methodOf', 'getTotpSecret']) } })
  t.equal(some.path, 'twoFactor/port/setTotpSecret')
  t.match(some.message, 'jwt-login: invalid option twoFactor/port/setTotpSecret: the two-factor port (TwoFactorPort) must implement methodOf, getTotpSecret, setTotpSecret, consumeBackupCode, replaceBackupCodes; missing: setTotpSecret, consumeBackupCode, replaceBackupCodes')
  for (const method of PORT_METHODS) {
    const error = await refusal({ twoFactor: { port: partial(port, PORT_METHODS.filter(m => m !== method)) } })
    t.equal(error.path, `twoFactor/port/${method}`, method)
    t.match(error.message, `missing: ${method}`, method)
  }
  t.equal((await refusal({ twoFactor: {} as never })).path, 'twoFactor/port/methodOf', 'no port at all')
  t.equal((await refusal({ twoFactor: { port: { ...partial(port, PORT_METHODS), methodOf: 'totp' } as never } })).path, 'twoFactor/port/methodOf', 'a value that is not a function')
  t.match(await refusal({ twoFactor: null as never }), { path: 'twoFactor', message: /invalid option twoFactor: must be an object with a port/ })
  t.match(await refusal({ twoFactor: { port, mailer: {} as never } }), { path: 'twoFactor/mailer/send', message: /the mailer must implement send; missing: send/ })
})

t.test('a store missing methods names each; an optional method that is not one is refused', async (t) => {
  const store = new MemoryStore()
  t.teardown(() => store.close())
  const error = await refusal({ store: partial(store, ['get', 'set', 'compareAndSet', 'delete']) })
  t.equal(error.path, 'store/consume')
  t.match(error.message, 'invalid option store/consume: the state store (StateStore) must implement get, set, consume, increment, compareAndSet, delete; missing: consume, increment')
  t.equal((await refusal({ store: 'redis' as never })).path, 'store/get')
  for (const method of ['getMany', 'close', 'attachLogger']) {
    const bad = { ...partial(store, STORE_METHODS), [method]: true }
    t.match(await refusal({ store: bad as never }), { path: `store/${method}`, message: /is optional, but when present must be a method/ }, method)
  }
})

t.test('a mailer without send is refused, where it is given and where reset needs one', async (t) => {
  t.match(await refusal({ mailer: {} as never }), { path: 'mailer/send', message: /invalid option mailer\/send: the mailer must implement send/ })
  t.match(await refusal({ mailer: { send: 'smtp://x' } as never }), { path: 'mailer/send' })
  t.match(await refusal({ settings: { tokens: TOKENS, resetPassword: { enabled: true } } }), { path: 'resetPassword/enabled', message: /needs the `mailer` option/ })
})

t.test('a user adapter missing methods: every missing one in the message', async (t) => {
  const users = new MemoryUserAdapter()
  const error = await refusal({ users: partial(users, ['findById', 'toPublicUser']) })
  t.equal(error.path, 'users/findByEmail')
  t.match(error.message, 'invalid option users/findByEmail: the user adapter (UserAdapter) must implement findByEmail, findByLogin, findById, verifyPassword, toPublicUser; missing: findByEmail, findByLogin, verifyPassword')
})

t.test('a bad settingsTtl is refused, saying what a duration is', async (t) => {
  for (const ttl of ['soon', '0s', 0, -1, Number.NaN, Infinity, 2 ** 31, '30 fortnights', {}, null]) {
    const error = await refusal({ settingsTtl: ttl as never, settings: async () => ({ tokens: TOKENS }) })
    t.equal(error.path, 'settingsTtl', String(ttl))
    t.match(error.message, "invalid option settingsTtl: must be a duration (seconds as a number above 0, or a string such as '30s', '15m', '14d') from 1 ms to 24 days", String(ttl))
  }
  for (const ttl of ['10s', 1, '24d']) {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(jwtLogin, { users: new MemoryUserAdapter(), settingsTtl: ttl, settings: async () => ({ tokens: TOKENS }) })
    await t.resolves(async () => { await app.ready() }, String(ttl))
  }
})

t.test('union settings: an unknown algorithm or preset lists the allowed ones, a bad duration says what one is', async (t) => {
  const cases: Array<[Partial<SettingsInput>, string, string]> = [
    [{ tokens: { ...TOKENS, algorithm: 'HS999' as never } }, 'tokens/algorithm', 'must be one of HS256, HS384, HS512, RS256, RS384, RS512, PS256, ES256, ES384, EdDSA'],
    [{ tokens: { ...TOKENS, lifetime: 'soon' } }, 'tokens/lifetime', "must be a duration: seconds as a number above 0, or a string such as '30s', '15m', '14d'"],
    [{ tokens: TOKENS, refresh: { reuseInterval: 'soon' } }, 'refresh/reuseInterval', "must be a duration: seconds as a number above 0, or a string such as '30s', '15m', '14d', or 0 for none"],
    [{ tokens: TOKENS, oauth: { providers: { idp: { clientId: 'c', preset: 'okta' as never } } } }, 'oauth/providers/idp/preset', 'must be one of google, auth0, microsoft, apple, generic, github, facebook, discord, oauth2']
  ]
  for (const [settings, path, reason] of cases) {
    const error = await refusal({ settings: settings as SettingsInput })
    t.equal(error.path, path)
    t.equal(error.message, `jwt-login: invalid setting ${path}: ${reason}`)
  }
})

t.test('an RSA key under 2048 bits is refused naming the kid', async (t) => {
  const small = generateKeyPairSync('rsa', { modulusLength: 1024, publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
  const big = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
  const signing = await refusal({ settings: { tokens: { algorithm: 'RS256', keys: [{ kid: 'small-one', privateKey: small.privateKey }] } } })
  t.equal(signing.path, 'tokens/keys/0/privateKey')
  t.match(signing.message, 'the RSA key of kid "small-one" has 1024 bits, under 2048 bits: RS256 needs at least 2048')
  const verifying = await refusal({ settings: { tokens: { algorithm: 'PS256', keys: [{ kid: 'a', privateKey: big.privateKey }, { kid: 'old', publicKey: small.publicKey }] } } })
  t.equal(verifying.path, 'tokens/keys/1/publicKey')
  t.match(verifying.message, 'kid "old" has 1024 bits, under 2048 bits: PS256')
  const wrongType = await refusal({ settings: { tokens: { algorithm: 'ES256', keys: [{ kid: 'rsa-key', privateKey: big.privateKey }] } } })
  t.match(wrongType.message, 'the key of kid "rsa-key" does not fit ES256')
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
  t.match(await refusal({ settings: { tokens: { algorithm: 'ES384', keys: [{ kid: 'p256', privateKey: p256.privateKey }] } } }), { path: 'tokens/keys/0/privateKey', message: /the key of kid "p256" does not fit ES384/ })
})

t.test('a key pair under an HMAC algorithm says HS256 is the default and how to choose another', async (t) => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
  const byDefault = await refusal({ settings: { tokens: { keys: [{ kid: 'k1', privateKey: pair.privateKey }] } } })
  t.equal(byDefault.path, 'tokens/keys/0/privateKey')
  t.equal(byDefault.message, 'jwt-login: invalid setting tokens/keys/0/privateKey: HS256, the default algorithm, signs with a shared secret and takes no privateKey; to sign with a key pair set tokens/algorithm to RS256, RS384, RS512, PS256, ES256, ES384 or EdDSA')
  const chosen = await refusal({ settings: { tokens: { algorithm: 'HS384', keys: [{ kid: 'k1', secret: 'x'.repeat(48), publicKey: pair.publicKey }] } } })
  t.equal(chosen.path, 'tokens/keys/0/publicKey')
  t.match(chosen.message, 'HS384 signs with a shared secret and takes no publicKey; to sign with a key pair set tokens/algorithm to')
})

t.test('bounded lists: at most 10 signing keys and 100 auth codes', async (t) => {
  const keys = Array.from({ length: 11 }, (_, i) => ({ kid: `k${i}`, secret: 'x'.repeat(32) }))
  t.match(await refusal({ settings: { tokens: { keys } } }), { path: 'tokens/keys', message: /invalid setting tokens\/keys: .*10/ })
  const codes = Array.from({ length: 101 }, (_, i) => ({ code: `code-${i}` }))
  t.match(await refusal({ settings: { tokens: TOKENS, authCodes: { codes } } }), { path: 'authCodes/codes', message: /100/ })
  const app = Fastify()
  t.teardown(() => app.close())
  await t.resolves(async () => { await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: keys.slice(0, 10) }, authCodes: { codes: codes.slice(0, 100) } } }) }, 'the limits themselves are accepted')
})

t.test('settings that need an optional adapter method: pass-the-hash needs getPasswordHash, auto-registration needs createUser', async (t) => {
  class Bare extends MemoryUserAdapter {}
  Object.defineProperty(Bare.prototype, 'getPasswordHash', { value: undefined })
  Object.defineProperty(Bare.prototype, 'createUser', { value: undefined })
  const hash = await refusal({ users: new Bare(), settings: { tokens: TOKENS, login: { allowPasswordHash: true } } })
  t.equal(hash.path, 'login/allowPasswordHash')
  t.equal(hash.message, 'jwt-login: invalid setting login/allowPasswordHash: logging in with password_hash needs the user adapter to implement getPasswordHash (capability `getPasswordHash` of UserAdapter; docs/adapters.md)')
  const provider = { enabled: true, issuer: 'https://idp.example', clientId: 'c', acceptIdToken: true, autoRegister: true }
  const register = await refusal({ users: new Bare(), settings: { tokens: TOKENS, oauth: { providers: { idp1: provider } } } })
  t.equal(register.path, 'oauth/providers/idp1/autoRegister')
  t.match(register.message, 'registering users needs the user adapter to implement createUser')
  // a provider that is switched off, or does not register users, needs no createUser
  const app = Fastify()
  t.teardown(() => app.close())
  await t.resolves(async () => { await app.register(jwtLogin, { users: new Bare(), settings: { tokens: TOKENS, oauth: { providers: { idp1: { ...provider, enabled: false }, idp2: { ...provider, autoRegister: false } } } } }) })
})

t.test('restRoute and a host that owns /: refused in either order, naming restRoute and restRouteRewrite()', async (t) => {
  const before = await refusal({}, (app) => { app.get('/', async () => ({ home: true })) })
  t.equal(before.path, 'restRoute')
  t.equal(before.message, 'jwt-login: invalid option restRoute: GET / is already declared by the host (or another jwt-login instance: give it restRoute: false), and restRoute (on by default) serves /?rest_route= on /: to keep your own /, register jwt-login with restRoute: false and pass restRouteRewrite() to Fastify({ rewriteUrl }), which still answers /?rest_route=')
  t.match(await refusal({}, (app) => { app.post('/', async () => ({})) }), { path: 'restRoute', message: /POST \/ is already declared by the host/ }, 'any of the methods it serves')
  t.match(await refusal({}, (app) => { app.get('/*', async () => ({ spa: true })) }), { path: 'restRoute', message: /GET \/\* \(a wildcard that also answers \/\) is already declared by the host/ }, 'a root wildcard answers / too')

  // after the plugin: the host's own fastify.get('/') throws the named error (Fastify would throw its bare duplicate error)
  const after = Fastify()
  t.teardown(() => after.close())
  await after.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  t.throws(() => after.get('/', async () => ({ home: true })), { name: 'JwtLoginSettingsError', path: 'restRoute', message: /GET \/ is already declared by jwt-login.*restRouteRewrite\(\)/ })
  t.throws(() => after.route({ method: ['PUT', 'PATCH'], url: '/', handler: async () => ({}) }), { path: 'restRoute', message: /PUT \/ is already declared by jwt-login/ })
  t.throws(() => after.get('/*', async () => ({ spa: true })), { path: 'restRoute', message: /GET \/\* \(a wildcard that also answers \/\) is already declared by jwt-login/ })
  t.throws(() => after.get('*', async () => ({ spa: true })), { path: 'restRoute', message: /GET \* \(a wildcard that also answers \/\) is already declared by jwt-login/ }, 'written without its slash too')
  // every other method on / is the plugin's too (no request to / may reach a 404 that logs its query): one the host declared before stays the host's
  t.throws(() => after.head('/', async () => {}), { path: 'restRoute', message: /HEAD \/ is already declared by jwt-login.*declare it before registering jwt-login/ })
  t.throws(() => after.route({ method: 'OPTIONS', url: '/', handler: async () => ({}) }), { path: 'restRoute', message: /OPTIONS \/ is already declared by jwt-login/ }, 'OPTIONS, its CORS off')
  after.get('/home', async () => ({ home: true }))
  after.route({ method: 'TRACE', url: '*', handler: async () => 'host trace' })
  after.register(async (scope) => { scope.get('/', async () => ({ api: true })) }, { prefix: '/api' })
  await after.ready()
  t.same((await after.inject({ method: 'GET', url: '/api' })).json(), { api: true }, 'a prefixed / is not the host\'s /')
  t.equal((await after.inject({ method: 'TRACE', url: '/home' })).body, 'host trace', 'a host wildcard of another method keeps its other paths')
  const early = Fastify()
  t.teardown(() => early.close())
  early.head('/', async () => {})
  early.route({ method: 'OPTIONS', url: '/', handler: async () => ({ searched: true }) })
  await early.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  await early.ready()
  t.same((await early.inject({ method: 'OPTIONS', url: '/' })).json(), { searched: true }, 'declared before: OPTIONS / stays the host\'s (its CORS off)')
  t.equal((await early.inject({ method: 'HEAD', url: '/' })).statusCode, 200, 'declared before: HEAD / stays the host\'s')

  // after the plugin, in a child plugin of the host: ready() rejects
  const child = Fastify()
  t.teardown(() => child.close())
  await child.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  child.register(async (scope) => { scope.get('/', async () => ({ home: true })) })
  await t.rejects(async () => { await child.ready() }, { name: 'JwtLoginSettingsError', path: 'restRoute' })

  // jwt-login in a prefixed scope of the host puts its route on that scope's root, and checks that one
  const scoped = Fastify()
  t.teardown(() => scoped.close())
  scoped.register(async (api) => {
    api.get('/', async () => ({ api: true }))
    await api.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  }, { prefix: '/blog' })
  await t.rejects(async () => { await scoped.ready() }, { path: 'restRoute', message: /GET \/blog is already declared by the host/ })
  const scopedAfter = Fastify()
  t.teardown(() => scopedAfter.close())
  scopedAfter.register(async (api) => {
    await api.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
    api.get('/', async () => ({ api: true }))
  }, { prefix: '/blog' })
  await t.rejects(async () => { await scopedAfter.ready() }, { path: 'restRoute', message: /GET \/blog is already declared by jwt-login/ })

  // the way out the message names
  const host = Fastify({ rewriteUrl: restRouteRewrite() })
  t.teardown(() => host.close())
  host.get('/', async () => ({ home: true }))
  await host.register(jwtLogin, { users: new MemoryUserAdapter(), restRoute: false, settings: { tokens: TOKENS } })
  await host.ready()
  t.same((await host.inject({ method: 'GET', url: '/' })).json(), { home: true })
  t.equal((await host.inject({ method: 'GET', url: '/?rest_route=/jwt-login/v1/auth/validate' })).statusCode, 400, 'the plugin still answers /?rest_route=')
})

t.test('a store the host passes is the host\'s: app.close() leaves it, and its Redis client, working', async (t) => {
  const prefix = `jwt-login-test:misconfig:${randomUUID()}:`
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  const store = new RedisStore({ client, prefix })
  t.teardown(async () => {
    await deleteKeys(prefix)
    await client.quit()
  })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, store, settings: { tokens: TOKENS } })
  await app.ready()
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200)
  await app.close()
  t.equal(client.status, 'ready', 'the client is still connected')
  t.equal(await client.ping(), 'PONG')
  await store.set('after-close', 'still here', 10_000)
  t.equal(await store.get('after-close'), 'still here', 'the store still works')

  const memory = new MemoryStore()
  let closed = 0
  const close = memory.close.bind(memory)
  memory.close = async () => { closed++; await close() }
  const other = Fastify()
  await other.register(jwtLogin, { users, store: memory, settings: { tokens: TOKENS } })
  await other.ready()
  await other.close()
  t.equal(closed, 0, 'a host MemoryStore is not closed either')
  await memory.set('k', 'v', 10_000)
  t.equal(await memory.get('k'), 'v')
  await memory.close()
})

t.test('a store the plugin creates is closed on app.close()', async (t) => {
  const original = MemoryStore.prototype.close
  const closed: MemoryStore[] = []
  MemoryStore.prototype.close = async function (this: MemoryStore) {
    closed.push(this)
    await original.call(this)
  }
  t.teardown(() => { MemoryStore.prototype.close = original })
  const app = Fastify()
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  await app.ready()
  t.equal(closed.length, 0)
  await app.close()
  t.equal(closed.length, 1, 'its MemoryStore was closed (its sweep timer cleared)')
})

t.test('jwtLogin.settings is a frozen view without secrets; the flows still use the real ones', async (t) => {
  const authCode = `auth-code-${randomUUID()}`
  const clientSecret = `client-secret-${randomUUID()}`
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const endpoints = { issuer: 'http://127.0.0.1:9/idp', token: 'http://127.0.0.1:9/token', jwks: 'http://127.0.0.1:9/jwks' }
  let validate = true
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, {
    users,
    settings: async () => ({
      validate: { enabled: validate },
      tokens: { algorithm: 'RS256', keys: [{ kid: 'signing', privateKey: rsa.privateKey }, { kid: 'verify-only', publicKey: rsa.publicKey }] },
      authCodes: { codes: [{ code: authCode }], requireFor: { auth: true } },
      oauth: { providers: { idp: { enabled: true, endpoints, clientId: 'client-1', clientSecret, acceptIdToken: true } } }
    })
  })
  await app.ready()

  const view = app.jwtLogin.settings
  t.same(view.tokens.keys, [{ kid: 'signing', privateKey: '[redacted]' }, { kid: 'verify-only', publicKey: rsa.publicKey }], 'kids and public keys stay')
  t.equal(view.tokens.algorithm, 'RS256')
  t.same(view.authCodes.codes, [{ code: '[redacted]', expiresAt: null, role: null }])
  t.equal(view.oauth.providers.idp?.clientSecret, '[redacted]')
  t.equal(view.oauth.providers.idp?.clientId, 'client-1')
  const json = JSON.stringify(view)
  for (const secret of [authCode, clientSecret, rsa.privateKey, 'PRIVATE KEY']) t.notOk(json.includes(secret), 'no secret in JSON')
  t.ok(Object.isFrozen(view) && Object.isFrozen(view.tokens.keys[0]) && Object.isFrozen(view.authCodes.codes), 'frozen all the way down')
  t.throws(() => { (view.tokens.keys[0] as { privateKey?: string }).privateKey = 'x' }, TypeError)
  t.equal(app.jwtLogin.settings, view, 'one view per settings object')

  const refused = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(refused.statusCode, 400, 'the auth code is still required')
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password, AUTH_KEY: authCode } })
  t.equal(login.statusCode, 200, 'the real auth code and private key still work')
  t.equal((await app.jwtLogin.verify(login.json().data.jwt)).sub, '1')

  validate = false
  await app.jwtLogin.reloadSettings()
  t.not(app.jwtLogin.settings, view, 'a reload gives a new view')
  t.equal(app.jwtLogin.settings.validate.enabled, false)
  t.equal(app.jwtLogin.settings.tokens.keys[0]?.privateKey, '[redacted]')
})

t.test('an HMAC secret is redacted too', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  await app.ready()
  t.same(app.jwtLogin.settings.tokens.keys, [{ kid: 'k1', secret: '[redacted]' }])
  t.notOk(JSON.stringify(app.jwtLogin.settings).includes(HS_SECRET))
})
