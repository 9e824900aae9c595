// passwordLogin called directly, on a context built as the plugin builds it: no Fastify, no HTTP.
import t from 'tap'
import type { SecondFactorGate, SignInResult } from '../../lib/adapters/second-factor.js'
import { passwordLogin, type LoginInput } from '../../lib/login/flow.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import { ALICE } from '../helpers/fixtures.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

/** Whether each session's refresh family is in the store (not ended, not expired). */
async function familiesLive (kit: { store: { get: (key: string) => Promise<string | null> } }, ids: string[]): Promise<boolean[]> {
  return await Promise.all(ids.map(async (id) => { const raw = await kit.store.get(`session:${id}`); return raw !== null && raw !== 'revoked' }))
}

/** A login as the route reads it: the fields given, the others absent. */
function input (fields: Partial<LoginInput>): LoginInput {
  return { email: undefined, username: undefined, login: undefined, password: undefined, passwordHash: undefined, ...fields }
}

const RIGHT = input({ email: ALICE.email, password: ALICE.password })
const WRONG = { code: 'ERR_JWT_LOGIN_WRONG_CREDENTIALS', errorCode: 48, statusCode: 401 }
const LIMITED = { code: 'ERR_JWT_LOGIN_RATE_LIMITED', errorCode: 200, statusCode: 429 }

/** Counts the adapter's password verifications (the guard calls the adapter as it is at call time). */
function countVerifications (kit: FlowKit): () => number {
  const original = kit.users.verifyPassword.bind(kit.users)
  let count = 0
  kit.users.verifyPassword = async (user, password) => {
    count++
    return await original(user, password)
  }
  return () => count
}

/** The session ids in the user's index, oldest first. */
async function indexedSessions (kit: FlowKit): Promise<string[]> {
  const raw = await kit.store.get(sessionIndexKey(kit.aliceId))
  return raw === null ? [] : (JSON.parse(raw) as Array<[string]>).map(([sessionId]) => sessionId)
}

/** The final tokens of a sign-in: a challenge instead fails the test. */
function finalTokens (result: SignInResult): { jwt: string, refresh_token?: string } {
  if ('two_factor_required' in result) throw new Error('a two-factor challenge, not a session')
  return result
}

/** The claims of a final token the flow answered. */
function claimsOf (kit: FlowKit, jwt: string): { sub: string, sid: string } {
  return kit.ctx.tokens.verify(kit.settings, jwt, 'access').payload
}

/** What the flow refused with, for comparing two refusals whole. */
async function refusal (work: Promise<unknown>): Promise<unknown> {
  const error = await work.then(() => null, (thrown: unknown) => thrown)
  if (!(error instanceof Error)) throw new Error('the flow answered instead of refusing')
  return { ...error, message: error.message }
}

t.test('the right password, by any one identifier, answers a final token of a new session in the index', async (t) => {
  const kit = await flowKit()
  const succeeded = collect(kit, 'login.succeeded')
  const sessions: string[] = []
  for (const fields of [{ email: ALICE.email }, { email: ALICE.email.toUpperCase() }, { username: ALICE.login }, { login: ALICE.login }]) {
    const result = finalTokens(await passwordLogin(kit.ctx, kit.call(), input({ ...fields, password: ALICE.password })))
    t.notOk('refresh_token' in result, 'no refresh token while refresh is off')
    const claims = claimsOf(kit, result.jwt)
    t.equal(claims.sub, String(kit.aliceId))
    sessions.push(claims.sid)
  }
  t.equal(new Set(sessions).size, 4, 'a session each')
  t.same(await indexedSessions(kit), sessions, 'each joined the index, in order')
  t.same(succeeded, sessions.map(() => ({ userId: kit.aliceId, ip: '203.0.113.7', method: 'password' })))
})

t.test('with refresh on, the session has its refresh token', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true } })
  const result = finalTokens(await passwordLogin(kit.ctx, kit.call(), RIGHT))
  const sid = claimsOf(kit, result.jwt).sid
  t.equal(result.refresh_token?.split('.')[0], sid, 'the refresh token names the session')
  t.same(await familiesLive(kit, [sid]), [true], 'its refresh family is written')
})

t.test('a wrong password and an unknown user get the same refusal, and no session', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'login.failed')
  const verifications = countVerifications(kit)
  const wrong = await refusal(passwordLogin(kit.ctx, kit.call(), input({ email: ALICE.email, password: 'not it' })))
  t.match(wrong, WRONG)
  t.equal(verifications(), 1, 'the password was verified')
  t.same(await refusal(passwordLogin(kit.ctx, kit.call(), input({ email: 'nobody@example.com', password: 'not it' }))), wrong, 'unknown email')
  t.same(await refusal(passwordLogin(kit.ctx, kit.call(), input({ username: 'nobody', password: ALICE.password }))), wrong, 'unknown login name')
  t.equal(verifications(), 1, 'an unknown user is no adapter call (the flow spends the same time on a dummy hash)')
  t.same(failed, [1, 2, 3].map(() => ({ ip: '203.0.113.7', reason: 'wrong_credentials', errorCode: 48 })))
  t.same(await indexedSessions(kit), [], 'no session')
})

t.test('exactly one identifier and exactly one of password or password_hash, checked before anything is counted', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'login.failed')
  const hash = (await kit.users.findByEmail(ALICE.email))?.passwordHash
  const cases: Array<[Partial<LoginInput>, string]> = [
    [{}, 'ERR_JWT_LOGIN_LOGIN_MISSING'],
    [{ password: ALICE.password }, 'ERR_JWT_LOGIN_LOGIN_MISSING'],
    [{ email: ALICE.email, username: ALICE.login, password: ALICE.password }, 'ERR_JWT_LOGIN_LOGIN_MISSING'],
    [{ username: ALICE.login, login: ALICE.login, password: ALICE.password }, 'ERR_JWT_LOGIN_LOGIN_MISSING'],
    [{ email: ALICE.email, login: ALICE.login }, 'ERR_JWT_LOGIN_LOGIN_MISSING'],
    [{ email: ALICE.email }, 'ERR_JWT_LOGIN_PASSWORD_MISSING'],
    [{ email: ALICE.email, password: ALICE.password, passwordHash: hash }, 'ERR_JWT_LOGIN_PASSWORD_MISSING'],
    [{ email: ALICE.email, passwordHash: hash }, 'ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED']
  ]
  for (const [fields, code] of cases) {
    await t.rejects(passwordLogin(kit.ctx, kit.call(), input(fields)), { code }, JSON.stringify(Object.keys(fields)))
  }
  t.equal(kit.store.size, 0, 'nothing counted, nothing written')
  t.same(failed, [], 'no failed login: nothing was tried')
})

t.test('password_hash, when allowed: the stored hash signs in, anything else is the same refusal', async (t) => {
  const kit = await flowKit({ login: { allowPasswordHash: true } })
  const succeeded = collect(kit, 'login.succeeded')
  const hash = (await kit.users.findByEmail(ALICE.email))?.passwordHash as string
  const result = finalTokens(await passwordLogin(kit.ctx, kit.call(), input({ username: ALICE.login, passwordHash: hash })))
  t.equal(claimsOf(kit, result.jwt).sub, String(kit.aliceId))
  t.same(succeeded, [{ userId: kit.aliceId, ip: '203.0.113.7', method: 'password_hash' }])

  const wrong = await refusal(passwordLogin(kit.ctx, kit.call(), input({ username: ALICE.login, passwordHash: `${hash.slice(0, -2)}${hash.endsWith('AA') ? 'BB' : 'AA'}` })))
  t.match(wrong, WRONG)
  t.same(await refusal(passwordLogin(kit.ctx, kit.call(), input({ username: 'nobody', passwordHash: hash }))), wrong, 'unknown user')
  t.same(await refusal(passwordLogin(kit.ctx, kit.call(), input({ username: ALICE.login, passwordHash: ALICE.password }))), wrong, 'the password itself is no hash')
  ;(kit.users as unknown as Record<string, unknown>).getPasswordHash = undefined
  t.same(await refusal(passwordLogin(kit.ctx, kit.call(), input({ username: ALICE.login, passwordHash: hash }))), wrong, 'an adapter without getPasswordHash refuses every hash')
  t.equal(succeeded.length, 1)
})

t.test('20 concurrent wrong passwords on one account: exactly loginPerAccount.max are verified, the rest are 429', async (t) => {
  const max = 5
  const kit = await flowKit({ limits: { loginPerAccount: { max, window: '15m' } } })
  const failed = collect(kit, 'login.failed')
  const verifications = countVerifications(kit)
  // from 20 addresses, so only the account's count can refuse them
  const answers = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) =>
    await passwordLogin(kit.ctx, kit.call(`198.51.100.${i + 1}`), input({ email: ALICE.email, password: `guess ${i}` }))))
  const errors = answers.map(answer => answer.status === 'rejected' ? answer.reason as { code: string, retryAfter?: number } : null)
  t.ok(errors.every(error => error !== null), 'no guess signed in')
  t.equal(errors.filter(error => error?.code === WRONG.code).length, max, 'wrong passwords answered')
  const limited = errors.filter(error => error?.code === LIMITED.code)
  t.equal(limited.length, 20 - max, 'the others refused unverified')
  t.ok(limited.every(error => error?.retryAfter !== undefined && error.retryAfter > 0 && error.retryAfter <= 900), 'Retry-After within the window')
  t.equal(verifications(), max, 'no more verifications than the limit')
  t.equal(failed.filter(event => event.reason === 'wrong_credentials').length, max)
  t.equal(failed.filter(event => event.reason === 'rate_limited').length, 20 - max)

  await t.rejects(passwordLogin(kit.ctx, kit.call('192.0.2.1'), input({ username: ALICE.login, password: ALICE.password })), LIMITED, 'the right password too, by another identifier, while locked')
  t.equal(verifications(), max, 'and it was not verified')
  kit.clock.advance(15 * 60_000)
  t.equal(claimsOf(kit, finalTokens(await passwordLogin(kit.ctx, kit.call(), RIGHT)).jwt).sub, String(kit.aliceId), 'the window over, the owner signs in')
})

t.test('12 concurrent guesses from one client at 12 unknown accounts: exactly loginPerIp.max are evaluated', async (t) => {
  const max = 4
  const kit = await flowKit({ limits: { loginPerIp: { max, window: '15m' } } })
  const failed = collect(kit, 'login.failed')
  const answers = await Promise.allSettled(Array.from({ length: 12 }, async (_, i) =>
    await passwordLogin(kit.ctx, kit.call(), input({ email: `ghost${i}@example.com`, password: 'guess' }))))
  const codes = answers.map(answer => answer.status === 'rejected' ? (answer.reason as { code: string }).code : 'signed in')
  t.equal(codes.filter(code => code === WRONG.code).length, max)
  t.equal(codes.filter(code => code === LIMITED.code).length, 12 - max)
  t.equal(failed.filter(event => event.reason === 'wrong_credentials').length, max)

  await t.rejects(passwordLogin(kit.ctx, kit.call(), RIGHT), LIMITED, 'the client is locked out, whatever the account')
  await t.rejects(passwordLogin(kit.ctx, kit.call('192.0.2.1'), input({ email: 'ghost0@example.com', password: 'guess' })), WRONG, 'another client is not')
})

t.test('a success forgives the account\'s failures; an attempt that was not evaluated is given back', async (t) => {
  const max = 3
  const kit = await flowKit({ limits: { loginPerAccount: { max, window: '15m' } } })
  const wrong = async (): Promise<unknown> => await passwordLogin(kit.ctx, kit.call(), input({ email: ALICE.email, password: 'wrong' }))
  for (let i = 0; i < max - 1; i++) await t.rejects(wrong(), WRONG)
  await passwordLogin(kit.ctx, kit.call(), RIGHT)
  for (let i = 0; i < max; i++) await t.rejects(wrong(), WRONG, 'the failures before the success no longer count')
  await t.rejects(wrong(), LIMITED, 'but these do')

  const other = await flowKit({ limits: { loginPerAccount: { max: 1, window: '15m' } } })
  const findByEmail = other.users.findByEmail.bind(other.users)
  other.users.findByEmail = async () => { throw new Error('user database down') }
  for (let i = 0; i < 3; i++) await t.rejects(passwordLogin(other.ctx, other.call(), RIGHT), { name: 'HostPortError', port: 'users' })
  other.users.findByEmail = findByEmail
  t.equal(claimsOf(other, finalTokens(await passwordLogin(other.ctx, other.call(), RIGHT)).jwt).sub, String(other.aliceId), 'the lookups that failed were not counted')
})

t.test('the secondFactor seam: a host gate that answers a challenge answers the login', async (t) => {
  let challenge = true
  const seen: Array<{ userId: number, ip: string, startedAt: number }> = []
  const gate: SecondFactorGate = async (_user, publicUser, call) => {
    seen.push({ userId: publicUser.ID, ip: call.ip, startedAt: call.startedAt })
    return challenge ? { two_factor_required: true, jwt: 'the host\'s interim token' } : null
  }
  const kit = await flowKit({}, { secondFactor: gate })
  const succeeded = collect(kit, 'login.succeeded')
  await t.rejects(passwordLogin(kit.ctx, kit.call(), input({ email: ALICE.email, password: 'wrong' })), WRONG)
  t.same(seen, [], 'a wrong password never reaches the gate')

  const call = kit.call('192.0.2.9')
  t.same(await passwordLogin(kit.ctx, call, RIGHT), { two_factor_required: true, jwt: 'the host\'s interim token' })
  t.same(seen, [{ userId: kit.aliceId, ip: '192.0.2.9', startedAt: call.startedAt }])
  t.same(succeeded, [], 'no login.succeeded before the second factor')
  t.same(await indexedSessions(kit), [], 'no session yet')

  challenge = false
  const result = finalTokens(await passwordLogin(kit.ctx, kit.call(), RIGHT))
  t.equal(claimsOf(kit, result.jwt).sub, String(kit.aliceId), 'a gate answering null lets the sign-in finish')
  t.equal(succeeded.length, 1)
  t.equal((await indexedSessions(kit)).length, 1)
})
