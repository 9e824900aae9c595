import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { createSigner } from 'fast-jwt'
import t, { type Test } from 'tap'
import { systemClock } from '../../lib/core/clock.js'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { sessionStart } from '../../lib/tokens/session-id.js'
import { TokenService } from '../../lib/tokens/service.js'
import type { PublicUser } from '../../lib/adapters/users.js'
import { ALICE, HS_SECRET, buildApp, testClock } from '../helpers/app.js'
import { faultyStore, measure } from '../helpers/faults.js'

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

function parts (jwt: string): { header: Record<string, unknown>, payload: Record<string, unknown>, signature: string } {
  const [h, p, s] = jwt.split('.') as [string, string, string]
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p, 'base64url').toString()),
    signature: s
  }
}

async function login (app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data.jwt as string
}

async function validate (app: FastifyInstance, jwt: string): Promise<{ statusCode: number, errorCode: number | undefined }> {
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: jwt } })
  return { statusCode: res.statusCode, errorCode: res.json().data.errorCode }
}

async function hsApp (t: Test): Promise<{ app: FastifyInstance, clock: ReturnType<typeof testClock>, users: Awaited<ReturnType<typeof buildApp>>['users'] }> {
  const clock = testClock()
  const { app, users } = await buildApp({}, { clock })
  t.teardown(() => app.close())
  return { app, clock, users }
}

/** Claims as the plugin writes them, at the test clock's time. */
function claims (clock: () => number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = Math.floor(clock() / 1000)
  return { sub: '1', iat, exp: iat + 900, jti: randomUUID(), iss: 'jwt-login', aud: 'jwt-login', typ: 'access', sid: `${clock().toString(36)}-${randomUUID()}`, ...overrides }
}

function signHs (payload: Record<string, unknown>): string {
  return createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })(payload)
}

/** Signs any payload, even one fast-jwt's signer refuses, under any header. */
function signRaw (payload: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT', kid: 'k1' }): string {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', HS_SECRET).update(input).digest('base64url')}`
}

t.test('a token signed by the same key with the right claims validates (control)', async (t) => {
  const { app, clock } = await hsApp(t)
  t.same(await validate(app, signHs(claims(clock))), { statusCode: 200, errorCode: undefined })
  t.same(await validate(app, signRaw(claims(clock))), { statusCode: 200, errorCode: undefined })
})

t.test('alg none is 401 / 8', async (t) => {
  const { app, clock } = await hsApp(t)
  const token = `${b64({ alg: 'none', typ: 'JWT', kid: 'k1' })}.${b64(claims(clock))}.`
  t.same(await validate(app, token), { statusCode: 401, errorCode: 8 })
  const withSignature = `${b64({ alg: 'none', typ: 'JWT', kid: 'k1' })}.${b64(claims(clock))}.c2ln`
  t.same(await validate(app, withSignature), { statusCode: 401, errorCode: 8 })
})

t.test('HS256 signed with the public key PEM of an RS256 set is 401 / 8', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
  })
  const clock = testClock()
  const { app } = await buildApp({ tokens: { algorithm: 'RS256', keys: [{ kid: 'k1', privateKey }] } }, { clock })
  t.teardown(() => app.close())
  t.equal((await validate(app, await login(app))).statusCode, 200, 'a genuine RS256 token is good')
  const signingInput = `${b64({ alg: 'HS256', typ: 'JWT', kid: 'k1' })}.${b64(claims(clock))}`
  const forged = `${signingInput}.${createHmac('sha256', publicKey).update(signingInput).digest('base64url')}`
  t.same(await validate(app, forged), { statusCode: 401, errorCode: 8 })
})

t.test('a token of another HMAC algorithm with the same secret is 401 / 8', async (t) => {
  const { app, clock } = await hsApp(t)
  const token = createSigner({ key: HS_SECRET, algorithm: 'HS512', kid: 'k1' })(claims(clock))
  t.same(await validate(app, token), { statusCode: 401, errorCode: 8 })
})

t.test('tampered payload is 401 / 11', async (t) => {
  const { app } = await hsApp(t)
  const jwt = await login(app)
  const { header, payload, signature } = parts(jwt)
  const forged = `${b64(header)}.${b64({ ...payload, roles: ['administrator'] })}.${signature}`
  t.same(await validate(app, forged), { statusCode: 401, errorCode: 11 })
})

t.test('tampered signature is 401 / 11', async (t) => {
  const { app } = await hsApp(t)
  const jwt = await login(app)
  const [h, p, s] = jwt.split('.') as [string, string, string]
  const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
  t.same(await validate(app, `${h}.${p}.${flipped}`), { statusCode: 401, errorCode: 11 })
  t.same(await validate(app, `${h}.${p}.`), { statusCode: 401, errorCode: 8 }, 'an empty signature counts as no signature')
})

t.test('a token that is not three segments is 401 / 2', async (t) => {
  const { app } = await hsApp(t)
  const jwt = await login(app)
  for (const token of ['abc', 'abc.def', `${jwt}.extra`, 'a b.c.d', 'a+b.c/d.e']) {
    t.same(await validate(app, token), { statusCode: 401, errorCode: 2 }, token)
  }
})

t.test('segments that are not base64url JSON are 401 / 22', async (t) => {
  const { app, clock } = await hsApp(t)
  const good = b64(claims(clock))
  for (const token of ['abc.def.ghi', `${b64({ alg: 'HS256', kid: 'k1' })}.bm90LWpzb24.sig`, `bm90LWpzb24.${good}.sig`]) {
    t.same(await validate(app, token), { statusCode: 401, errorCode: 22 }, token)
  }
})

t.test('expired: past exp plus leeway is 401 / 14; within leeway is still good', async (t) => {
  const { app, clock } = await hsApp(t)
  const jwt = await login(app)
  clock.advance(15 * 60_000 + 4_000)
  t.equal((await validate(app, jwt)).statusCode, 200, 'within the 5 s leeway')
  // fast-jwt decides the bound: good up to exp + leeway itself, refused a millisecond later
  clock.advance(1_001)
  t.same(await validate(app, jwt), { statusCode: 401, errorCode: 14 })
})

t.test('iat in the future beyond the leeway is 401 / 12', async (t) => {
  const { app, clock } = await hsApp(t)
  clock.advance(3_000)
  const nearFuture = await login(app)
  clock.advance(57_000)
  const future = await login(app)
  clock.advance(-60_000)
  t.same(await validate(app, future), { statusCode: 401, errorCode: 12 })
  t.equal((await validate(app, nearFuture)).statusCode, 200, '3 s ahead is within the leeway')
  t.same(await validate(app, signHs(claims(clock, { nbf: Math.floor(clock() / 1000) + 60 }))), { statusCode: 401, errorCode: 12 }, 'nbf in the future')
})

t.test('wrong iss or aud is 401 / 11', async (t) => {
  const { app, clock } = await hsApp(t)
  t.same(await validate(app, signHs(claims(clock, { iss: 'someone-else' }))), { statusCode: 401, errorCode: 11 }, 'iss')
  t.same(await validate(app, signHs(claims(clock, { aud: 'someone-else' }))), { statusCode: 401, errorCode: 11 }, 'aud')
  t.same(await validate(app, signHs(claims(clock, { aud: ['jwt-login', 'other'] }))), { statusCode: 401, errorCode: 11 }, 'aud as an array')
})

t.test('wrong kind, bad sub: 401', async (t) => {
  const { app, clock } = await hsApp(t)
  t.same(await validate(app, signHs(claims(clock, { typ: 'interim', aud: 'jwt-login:2fa' }))), { statusCode: 401, errorCode: 110 }, 'an interim token')
  t.same(await validate(app, signHs(claims(clock, { typ: 'refresh' }))), { statusCode: 401, errorCode: 11 }, 'unknown typ')
  for (const sub of ['0', 'abc', '1.5', '-1']) {
    t.same(await validate(app, signHs(claims(clock, { sub }))), { statusCode: 401, errorCode: 11 }, `sub ${sub}`)
  }
  t.same(await validate(app, signHs(claims(clock, { jti: 42 }))), { statusCode: 401, errorCode: 11 }, 'jti not a string')
  t.same(await validate(app, signRaw(claims(clock, { exp: 'never' }))), { statusCode: 401, errorCode: 11 }, 'exp not a number')
})

t.test('a critical header extension is refused: 401 / 11', async (t) => {
  const { app, clock } = await hsApp(t)
  const header = { alg: 'HS256', typ: 'JWT', kid: 'k1', crit: ['x-unknown'], 'x-unknown': true }
  t.same(await validate(app, signRaw(claims(clock), header)), { statusCode: 401, errorCode: 11 })
  t.same(await validate(app, signRaw(claims(clock), { alg: 'HS256', kid: 'k1' })), { statusCode: 200, errorCode: undefined }, 'another header of the same key is fine')
})

t.test('a missing required claim is 401', async (t) => {
  const { app, clock } = await hsApp(t)
  for (const claim of ['sub', 'exp', 'jti', 'iss', 'aud', 'typ', 'sid']) {
    const payload = claims(clock)
    delete payload[claim]
    const res = await validate(app, signHs(payload))
    t.equal(res.statusCode, 401, claim)
    t.equal(res.errorCode, 11, claim)
  }
})

t.test('a revoked token is 401 / 55', async (t) => {
  const { app } = await hsApp(t)
  const jwt = await login(app)
  const revoke = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/revoke', payload: { JWT: jwt } })
  t.equal(revoke.statusCode, 200)
  t.same(await validate(app, jwt), { statusCode: 401, errorCode: 55 })
})

t.test('a token revoked through the decorator is 401 / 55; verify answers claims', async (t) => {
  const { app } = await hsApp(t)
  const jwt = await login(app)
  const verified = await app.jwtLogin.verify(jwt)
  t.equal(verified.sub, '1')
  await app.jwtLogin.revoke(jwt)
  await t.rejects(app.jwtLogin.verify(jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' })
  t.same(await validate(app, jwt), { statusCode: 401, errorCode: 55 })
})

t.test('a token whose user was removed is 401 / 24', async (t) => {
  const { app, users } = await hsApp(t)
  const jwt = await login(app)
  await users.removeUser(1)
  t.same(await validate(app, jwt), { statusCode: 401, errorCode: 24 })
})

const SETTINGS = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } })
const USER: PublicUser = { ID: 1, user_login: 'alice', user_email: 'alice@example.com', display_name: 'Alice', roles: ['subscriber'] }

async function tokenService (t: Test): Promise<{ tokens: TokenService, clock: ReturnType<typeof testClock>, store: MemoryStore }> {
  const clock = testClock()
  const store = new MemoryStore({ clock })
  const tokens = new TokenService(buildKeyMaterial(SETTINGS.tokens), 'HS256', store, clock)
  t.teardown(async () => { await store.close() })
  return { tokens, clock, store }
}

t.test('revokeUserTokens: sessions started before the cutoff are refused, later ones accepted', async (t) => {
  const { tokens, clock } = await tokenService(t)
  t.equal(tokens.algorithm, 'HS256')
  const before = tokens.sign(SETTINGS, USER, 'access', { sessionId: tokens.newSessionId() })
  const beforeRefresh = await tokens.issueRefreshToken(SETTINGS, USER.ID, before.claims.sid)
  clock.advance(1)
  const other = tokens.sign(SETTINGS, { ...USER, ID: 2 }, 'access', { sessionId: tokens.newSessionId() })
  clock.advance(1)
  await tokens.revokeUserTokens(SETTINGS, USER.ID)

  const verifiedBefore = tokens.verify(SETTINGS, before.token, 'access')
  t.equal(await tokens.isRevoked(verifiedBefore.payload), true, 'an older session is refused')
  await t.rejects(tokens.rotateRefreshToken(SETTINGS, beforeRefresh, async () => ({ user: null }), () => {}), { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID' }, 'its refresh token too')
  t.equal(await tokens.isRevoked(tokens.verify(SETTINGS, other.token, 'access').payload), false, 'another user is not touched')

  // a session that starts after the cutoff, even in the same second (iat equal)
  clock.advance(1)
  const after = tokens.sign(SETTINGS, USER, 'access', { sessionId: tokens.newSessionId() })
  t.equal(after.claims.iat, before.claims.iat, 'same whole second as the refused token')
  t.equal(await tokens.isRevoked(tokens.verify(SETTINGS, after.token, 'access').payload), false, 'a later session is accepted')
  const afterRefresh = await tokens.issueRefreshToken(SETTINGS, USER.ID, after.claims.sid)
  const rotated = await tokens.rotateRefreshToken(SETTINGS, afterRefresh, async () => ({ user: null }), () => {})
  t.equal(rotated.sessionId, after.claims.sid)
})

t.test('session ids carry their start time', async (t) => {
  const { tokens, clock } = await tokenService(t)
  t.equal(sessionStart(tokens.newSessionId()), clock.now)
  t.equal(sessionStart('!!-not-a-time'), 0, 'a foreign id counts as started at 0')
  t.equal(sessionStart('nodash'), 0, 'an id without a start time counts as started at 0')
})

/** The store without its getMany, as a store that does not offer one. */
function withoutGetMany (store: MemoryStore): StateStore {
  return new Proxy(store, { get: (target, property) => property === 'getMany' ? undefined : (Reflect.get(target, property, target) as (...args: unknown[]) => unknown).bind(target) })
}

t.test('isRevoked reads the session and the user cutoff in one getMany; without one, two gets', async (t) => {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  t.teardown(async () => { await memory.close() })
  for (const [name, inner, methods] of [['getMany', memory, ['getMany']], ['no getMany', withoutGetMany(memory), ['get', 'get']]] as const) {
    const store = faultyStore(inner)
    const tokens = new TokenService(buildKeyMaterial(SETTINGS.tokens), 'HS256', store, clock)
    const live = tokens.sign(SETTINGS, USER, 'access', { sessionId: tokens.newSessionId() }).claims
    const { result, calls } = await measure(store.faults, async () => await tokens.isRevoked(live))
    t.equal(result, false, `${name}: a live session`)
    t.same(calls.map(call => call.method), methods, `${name}: the store calls`)
    t.match(calls.map(call => call.key).join(' '), `session:${live.sid}`, `${name}: the session entry is read`)
    t.match(calls.map(call => call.key).join(' '), 'revoked:user:1', `${name}: the user cutoff is read`)

    const ended = tokens.sign(SETTINGS, USER, 'access', { sessionId: tokens.newSessionId() }).claims
    await tokens.revokeSession(SETTINGS, ended.sid)
    t.equal(await tokens.isRevoked(ended), true, `${name}: an ended session`)
    clock.advance(1)
    await tokens.revokeUserTokens(SETTINGS, USER.ID)
    t.equal(await tokens.isRevoked(live), true, `${name}: a session older than the user cutoff`)
    clock.advance(1)
    t.equal(await tokens.isRevoked(tokens.sign(SETTINGS, USER, 'access', { sessionId: tokens.newSessionId() }).claims), false, `${name}: a later session`)
    await memory.delete(`revoked:user:${USER.ID}`)
  }
})

t.test('the system clock: verifiers are kept per settings snapshot, so issuer, audience and leeway follow a reload', async (t) => {
  const signingClock = testClock(Date.now())
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  const signer = new TokenService(buildKeyMaterial(SETTINGS.tokens), 'HS256', store, signingClock)
  const tokens = new TokenService(buildKeyMaterial(SETTINGS.tokens), 'HS256', store, systemClock)
  const sign = (): string => signer.sign(SETTINGS, USER, 'access', { sessionId: signer.newSessionId() }).token
  const code = (settings: typeof SETTINGS, token: string): unknown => {
    try {
      tokens.verify(settings, token, 'access')
      return 'valid'
    } catch (error) {
      return (error as { code: string }).code
    }
  }

  const token = sign()
  t.equal(code(SETTINGS, token), 'valid')
  t.equal(code(SETTINGS, token), 'valid', 'again, through the kept verifier')
  const otherIssuer = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], issuer: 'elsewhere' } })
  t.equal(code(otherIssuer, token), 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID', 'a new issuer refuses the old one')
  const otherAudience = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], audience: 'elsewhere' } })
  t.equal(code(otherAudience, token), 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID', 'a new audience refuses the old one')
  t.equal(code(SETTINGS, token), 'valid', 'the first snapshot keeps its own')

  signingClock.advance(20_000)
  const ahead = sign()
  t.equal(code(SETTINGS, ahead), 'ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID', 'iat 20 s ahead, 5 s leeway')
  const wide = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], leeway: '1m' } })
  t.equal(code(wide, ahead), 'valid', 'within a leeway of one minute')

  signingClock.advance(-20_000 - 15.5 * 60_000)
  const old = sign()
  t.equal(code(SETTINGS, old), 'ERR_JWT_LOGIN_TOKEN_EXPIRED', 'exp 30 s ago')
  t.equal(code(wide, old), 'valid', 'within a leeway of one minute')
})

t.test('the kinds: each refused where the other belongs, with its own code', async (t) => {
  const { tokens } = await tokenService(t)
  const sessionId = tokens.newSessionId()
  const access = tokens.sign(SETTINGS, USER, 'access', { sessionId }).token
  const interim = tokens.sign(SETTINGS, USER, 'interim', { sessionId }).token
  // the service finds the key of its own tokens by this exact header segment, without a parse
  t.equal(access.split('.')[0], b64({ alg: 'HS256', typ: 'JWT', kid: 'k1' }), 'the header as fast-jwt writes it')
  t.equal(tokens.verify(SETTINGS, interim, 'interim').payload.typ, 'interim')
  t.throws(() => tokens.verify(SETTINGS, interim, 'access'), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_USED' })
  t.throws(() => tokens.verify(SETTINGS, access, 'interim'), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' })
  const iat = Math.floor(Date.UTC(2026, 10, 22, 12) / 1000)
  const mixed = signHs({ sub: '1', iat, exp: iat + 300, jti: randomUUID(), iss: 'jwt-login', aud: 'jwt-login:2fa', typ: 'access', sid: sessionId })
  t.throws(() => tokens.verify(SETTINGS, mixed, 'interim'), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' }, 'the interim audience with another typ')
  t.throws(() => tokens.verify(SETTINGS, mixed, 'access'), { code: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID' }, 'nor is it a final token')
  const badIssuer = signHs({ sub: '1', iat, exp: iat + 300, jti: randomUUID(), iss: 'other', aud: 'jwt-login:2fa', typ: 'interim', sid: sessionId })
  t.throws(() => tokens.verify(SETTINGS, badIssuer, 'interim'), { code: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID' }, 'another issuer')
})

t.test('a revocation outlives every token issued before a reload shortened the lifetimes', async (t) => {
  const { tokens, clock } = await tokenService(t)
  const long = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], lifetime: '1h' }, refresh: { enabled: true, lifetime: '2h' } })
  const short = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], lifetime: '5m' }, refresh: { enabled: true, lifetime: '10m' } })
  // one session's old token under the long lifetime; a newer one, presented, under the short one
  const sessionId = tokens.newSessionId()
  const old = tokens.sign(long, USER, 'access', { sessionId })
  const refresh = await tokens.issueRefreshToken(long, USER.ID, sessionId)
  const presented = tokens.sign(short, USER, 'access', { sessionId })
  await tokens.revoke(short, presented.claims)
  clock.advance(30 * 60 * 1000)
  t.equal(await tokens.isRevoked(tokens.verify(short, old.token, 'access').payload), true, 'the older, longer token is still refused')

  const other = tokens.sign(long, { ...USER, ID: 2 }, 'access', { sessionId: tokens.newSessionId() })
  clock.advance(1)
  await tokens.revokeUserTokens(short, 2)
  clock.advance(20 * 60 * 1000)
  t.equal(await tokens.isRevoked(tokens.verify(short, other.token, 'access').payload), true, 'a user cutoff outlives it too')
  await t.rejects(tokens.rotateRefreshToken(short, refresh, async () => ({ user: null }), () => {}), { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID' }, 'and the session refresh family is gone')
})
