import { randomBytes, randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import t from 'tap'
import { ALICE, API_KEY_SCOPE, BOB, LOCKOUT_MAX } from '../../examples/two-instances/users.js'
import { refusedStart, startHost, stopHost, type Answer, type Host } from '../helpers/example-hosts.js'
import { claimsOf } from '../helpers/http.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'

const PREFIX = `jwt-login-test:two-instances:${randomUUID()}:`
const JWT_SECRET = randomBytes(32).toString('base64url')

const env = { REDIS_URL, REDIS_PREFIX: PREFIX, JWT_SECRET, PORT: '0' }
const [a, b] = await Promise.all([startHost(env, 'a'), startHost(env, 'b')])
t.teardown(async () => {
  await Promise.all([stopHost(a), stopHost(b)])
  await deleteKeys(PREFIX)
})

const call = async (instance: Host, path: string, body: Record<string, unknown>): Promise<Answer> => await instance.call(path, body)

const login = async (on: Host, who: { email: string, password: string }): Promise<Answer> =>
  await call(on, '/auth', { email: who.email, password: who.password })

t.test('a host without JWT_SECRET refuses to start (no made-up key)', async (t) => {
  const { JWT_SECRET: _unset, ...withoutKey } = { ...process.env, ...env }
  const { code, stderr } = await refusedStart(withoutKey)
  t.not(code, 0)
  t.match(stderr, 'JWT_SECRET is required')
})

t.test('a host refuses a STORE it does not know (no silent fallback to memory)', async (t) => {
  const { code, stderr } = await refusedStart({ ...process.env, ...env, STORE: 'memory' })
  t.not(code, 0)
  t.match(stderr, "unknown STORE 'memory'")
})

t.test('two processes listen on their own ports', async (t) => {
  t.not(a.base, b.base)
  t.match(a.base, /^http:\/\/127\.0\.0\.1:\d+$/)
})

t.test('a token signed by one instance validates on the other; the session lives in the shared Redis', async (t) => {
  const signedIn = await login(a, ALICE)
  t.equal(signedIn.status, 200)
  const validated = await call(b, '/auth/validate', { JWT: signedIn.data.jwt })
  t.equal(validated.status, 200)
  t.equal(validated.data.user.user_email, ALICE.email)

  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  t.teardown(() => redis.quit())
  t.not(await redis.get(`${PREFIX}session:${String(claimsOf(signedIn.data.jwt).sid)}`), null, 'the session record under the shared prefix')
})

t.test('a revoke through one instance is refused by the other at once', async (t) => {
  const { data: tokens } = await login(a, ALICE)
  t.equal((await call(b, '/auth/validate', { JWT: tokens.jwt })).status, 200)
  const revoked = await call(a, '/auth/revoke', { JWT: tokens.jwt })
  t.same(revoked, { status: 200, data: { message: 'Token was revoked.', jwt: [tokens.jwt] }, retryAfter: null })

  const validated = await call(b, '/auth/validate', { JWT: tokens.jwt })
  t.same([validated.status, validated.data.errorCode], [401, 55])
  const refreshed = await call(b, '/auth/refresh', { refresh_token: tokens.refresh_token })
  t.same([refreshed.status, refreshed.data.errorCode], [401, 51], 'the session refresh token is gone too')
})

t.test('a refresh token reused across instances ends its session everywhere', async (t) => {
  const { data: first } = await login(a, ALICE)
  const { data: other } = await login(b, ALICE)
  const second = await call(a, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(second.status, 200)
  const third = await call(b, '/auth/refresh', { refresh_token: second.data.refresh_token })
  t.equal(third.status, 200, 'the rotation continues on the other instance')

  // a thief replays the first (long spent) refresh token on the other instance
  const replay = await call(b, '/auth/refresh', { refresh_token: first.refresh_token })
  t.same([replay.status, replay.data.errorCode], [401, 51])
  const newest = await call(a, '/auth/refresh', { refresh_token: third.data.refresh_token })
  t.same([newest.status, newest.data.errorCode], [401, 51], 'the newest refresh token of the family fails too')
  for (const [jwt, on] of [[first.jwt, a], [second.data.jwt, b], [third.data.jwt, a]] as const) {
    const res = await call(on, '/auth/validate', { JWT: jwt })
    t.same([res.status, res.data.errorCode], [401, 55], 'every access token of the session is revoked')
  }

  t.equal((await call(a, '/auth/validate', { JWT: other.jwt })).status, 200, 'another session of the user stands')
  t.equal((await call(a, '/auth/refresh', { refresh_token: other.refresh_token })).status, 200)
})

t.test('failed logins split across the instances lock the account on both', async (t) => {
  const wrong = { email: BOB.email, password: 'not the password' }
  const failures = Array.from({ length: LOCKOUT_MAX }, (_, i) => i % 2 === 0 ? a : b) // a, b, a, ...
  for (const on of failures) {
    const res = await login(on, wrong)
    t.same([res.status, res.data.errorCode], [401, 48])
  }
  for (const on of [b, a]) {
    const res = await login(on, BOB)
    t.same([res.status, res.data.errorCode], [429, 200], 'locked: even the right password is refused, unverified')
    t.ok(Number(res.retryAfter) > 0, 'with Retry-After')
  }
  const other = await login(b, ALICE)
  t.equal(other.status, 200, 'another account is not locked')
})

t.test('an API key made through one instance works on the other\'s GET /orders, and ends on both when deleted', async (t) => {
  const { data: tokens } = await login(a, ALICE)
  const created = await call(a, '/account/api-keys', { JWT: tokens.jwt, name: 'nightly export', scopes: [API_KEY_SCOPE] })
  t.equal(created.status, 200)
  const { key, id } = created.data as { key: string, id: string }
  const used = await b.get('/orders', { 'x-api-key': key })
  t.same([used.status, used.data.keyId], [200, id], 'the key, on the other instance')
  const signedIn = await b.get('/orders', { authorization: `Bearer ${tokens.jwt}` })
  t.same([signedIn.status, signedIn.data.keyId], [200, null], 'a signed-in user\'s token too')
  t.equal((await a.get('/orders')).status, 401, 'neither: refused')
  t.equal((await b.call(`/account/api-keys/${id}`, { JWT: tokens.jwt }, 'DELETE')).status, 200, 'deleted through the other instance')
  for (const on of [a, b]) {
    const refused = await on.get('/orders', { 'x-api-key': key })
    t.same([refused.status, refused.data.data?.errorCode], [401, 254], `refused on ${on.name}`)
  }
})
