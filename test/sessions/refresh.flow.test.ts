// refreshSession called directly, on a context built as the plugin builds it: no Fastify, no HTTP.
import t from 'tap'
import type { SettingsInput } from '../../lib/index.js'
import { sha256Base64url } from '../../lib/core/crypto.js'
import { authenticateToken } from '../../lib/sessions/authenticate.js'
import { refreshSession, type RefreshInput } from '../../lib/sessions/refresh.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { decodeSession, encodeSession } from '../../lib/tokens/session-record.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

const ON = { refresh: { enabled: true } }
const INVALID = { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID', errorCode: 51, statusCode: 401 }
const INTERIM = { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_USED', errorCode: 110, statusCode: 401 }

type Kit = FlowKit & { port: MemoryTwoFactorStore }

/** A kit with refresh on (and `settings` over it) whose two-factor port can put alice's second factor on. */
async function refreshKit (settings: Partial<SettingsInput> = {}): Promise<Kit> {
  const port = new MemoryTwoFactorStore()
  return { ...await flowKit({ ...ON, ...settings }, { twoFactor: { port } }), port }
}

/** A new session of alice: its access token, its refresh token and its id. */
async function signIn (kit: FlowKit): Promise<{ jwt: string, refreshToken: string, sessionId: string }> {
  const result = await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))
  if (!('refresh_token' in result) || result.refresh_token === undefined) throw new Error('no refresh token: is refresh on?')
  return { jwt: result.jwt, refreshToken: result.refresh_token, sessionId: result.refresh_token.split('.')[0] as string }
}

/** Alice's interim token: a challenge started with her second factor on, which is then turned off again. */
async function interimToken (kit: Kit): Promise<string> {
  kit.port.enable(kit.aliceId, 'totp')
  const challenge = await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))
  kit.port.disable(kit.aliceId)
  return challenge.jwt
}

/** A refresh as the route reads it. */
function input (refreshToken: string | undefined, jwt?: string): RefreshInput {
  return { refreshToken, jwt }
}

/** The session's one store entry, decoded; `revoked` once it ended, `null` when it is gone. */
async function storedSession (kit: FlowKit, sessionId: string): Promise<ReturnType<typeof decodeSession> | 'revoked' | null> {
  const raw = await kit.store.get(stateKeys.session(sessionId))
  return raw === null || raw === 'revoked' ? raw : decodeSession(raw)
}

/** The hash the store keeps of a refresh token's secret. */
/** A refresh token's secret: between the session id and the user id. */
function secretOf (refreshToken: string): string {
  return refreshToken.split('.')[1] as string
}

function hashOf (refreshToken: string): string {
  return sha256Base64url(secretOf(refreshToken))
}

t.test('rotation: a new access token in the same session and a new refresh token; the store keeps both hashes', async (t) => {
  const kit = await refreshKit()
  const refreshed = collect(kit, 'token.refreshed')
  const session = await signIn(kit)
  kit.clock.advance(10_000)
  const next = await refreshSession(kit.ctx, kit.call('192.0.2.8'), input(session.refreshToken))
  t.not(next.refresh_token, session.refreshToken)
  t.equal(next.refresh_token.split('.')[0], session.sessionId, 'the same session')
  const claims = (await authenticateToken(kit.ctx, kit.call(), next.jwt)).verified.payload
  t.equal(claims.sid, session.sessionId)
  t.equal(claims.sub, String(kit.aliceId))
  t.match(await storedSession(kit, session.sessionId), { userId: kit.aliceId, currentHash: hashOf(next.refresh_token), previousHash: hashOf(session.refreshToken), rotatedAt: kit.clock.now })
  t.same(refreshed, [{ userId: kit.aliceId, sessionId: session.sessionId, ip: '192.0.2.8' }])
  const after = await refreshSession(kit.ctx, kit.call(), input(next.refresh_token))
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(after.refresh_token), previousHash: hashOf(next.refresh_token) }, 'the successor rotates in turn')
})

t.test('an interim token, as the refresh token or as the JWT, is 110 before the missing-token check', async (t) => {
  const kit = await refreshKit()
  const interim = await interimToken(kit)
  const session = await signIn(kit)
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(interim)), INTERIM, 'as the refresh token')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(undefined, interim)), INTERIM, 'as the JWT, with no refresh token: 110, not 400 / 51')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(undefined)), { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING', errorCode: 51, statusCode: 400 }, 'nothing: missing')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(undefined, session.jwt)), { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING' }, 'a final JWT is no refresh token')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(session.jwt)), INVALID, 'not even in its place')
})

t.test('a made-up secret under a live session id is refused and ends nothing; a token the plugin issued for it is a reuse', async (t) => {
  const kit = await refreshKit()
  const reused = collect(kit, 'refresh.reused')
  const session = await signIn(kit)
  const secret = secretOf(session.refreshToken)
  t.equal(secret.length, 65, '16 random bytes and a keyed hash of the session id and those bytes')
  t.equal(session.refreshToken, `${session.sessionId}.${secret}.${kit.aliceId}`, 'then the user, to read its cutoff with the session')
  const madeUp = [
    `${session.sessionId}.${'A'.repeat(43)}`,
    `${session.sessionId}.${'A'.repeat(65)}`,
    `${session.sessionId}.${'B'.repeat(22)}${secret.slice(22)}`,
    `${session.sessionId}.${secret.slice(0, 22)}${'C'.repeat(43)}`
  ]
  for (const token of madeUp) await t.rejects(refreshSession(kit.ctx, kit.call(), input(token)), INVALID, 'a made-up secret under a live session')
  for (const user of [String(kit.aliceId + 1), '0', '01', 'x', `${kit.aliceId}.1`, '']) {
    await t.rejects(refreshSession(kit.ctx, kit.call(), input(`${session.sessionId}.${secret}.${user}`)), INVALID, `the token's own secret under another user (${user}): refused`)
  }
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(session.refreshToken) }, 'the session goes on')
  t.same(reused, [])
  const other = await signIn(kit)
  const foreign = secretOf(other.refreshToken)
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(`${session.sessionId}.${foreign}.${kit.aliceId}`)), INVALID, 'another session\'s secret under this id')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(`${session.sessionId}.${foreign}`)), INVALID, 'and in the form before 0.4')
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(session.refreshToken) }, 'still goes on')

  const next = await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))
  await refreshSession(kit.ctx, kit.call(), input(next.refresh_token))
  kit.clock.advance(31_000)
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(session.refreshToken)), INVALID, 'a token it issued, two rotations old')
  t.equal(await storedSession(kit, session.sessionId), 'revoked', 'counts as a reuse: the session ended')
  t.same(reused.map(event => event.sessionId), [session.sessionId])
})

t.test('a refresh token from before 0.3 (43 random characters) still rotates into the new form', async (t) => {
  const kit = await refreshKit()
  const session = await signIn(kit)
  const legacy = 'L'.repeat(43)
  await kit.store.set(`session:${session.sessionId}`, encodeSession({ userId: kit.aliceId, currentHash: sha256Base64url(legacy) }), 60_000)
  const next = await refreshSession(kit.ctx, kit.call(), input(`${session.sessionId}.${legacy}`))
  t.equal(next.refresh_token.length, session.refreshToken.length, 'its successor has the new form')
  t.equal(next.refresh_token.split('.')[2], String(kit.aliceId), 'the user included')
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(next.refresh_token), previousHash: sha256Base64url(legacy) })
})

t.test('the previous token within the reuse interval gets the same successor; after it, the reuse ends the session', async (t) => {
  const kit = await refreshKit()
  const reused = collect(kit, 'refresh.reused')
  const session = await signIn(kit)
  const next = await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))
  kit.clock.advance(30_000)
  const retry = await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))
  t.equal(retry.refresh_token, next.refresh_token, 'a retry 30 s later: the same successor')
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(next.refresh_token) }, 'and no write')

  kit.clock.advance(1)
  await t.rejects(refreshSession(kit.ctx, kit.call('192.0.2.66'), input(session.refreshToken)), INVALID, 'past the interval: a reuse')
  t.same(reused, [{ userId: kit.aliceId, sessionId: session.sessionId, ip: '192.0.2.66' }])
  t.equal(await storedSession(kit, session.sessionId), 'revoked')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(next.refresh_token)), INVALID, 'the newest refresh token ends with it')
  await t.rejects(authenticateToken(kit.ctx, kit.call(), retry.jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'and its access tokens')
  t.equal(reused.length, 1, 'an ended session is no reuse')
})

t.test('its user gone: 24, and the session ends; its user database down: nothing changes', async (t) => {
  const kit = await refreshKit()
  const refreshed = collect(kit, 'token.refreshed')
  const reused = collect(kit, 'refresh.reused')
  const session = await signIn(kit)
  const findById = kit.users.findById.bind(kit.users)
  kit.users.findById = async () => { throw new Error('user database down') }
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(session.refreshToken)), { name: 'HostPortError', port: 'users' })
  kit.users.findById = findById
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(session.refreshToken), previousHash: undefined }, 'not rotated')
  kit.clock.advance(60_000)
  const next = await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))
  t.same(reused, [], 'the late retry rotates as a first use would')

  await kit.users.removeUser(kit.aliceId)
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(next.refresh_token)), { code: 'ERR_JWT_LOGIN_REFRESH_USER_GONE', errorCode: 24, statusCode: 401, wwwAuthenticate: undefined })
  t.equal(await storedSession(kit, session.sessionId), 'revoked')
  t.equal(refreshed.length, 1)
})

t.test('20 concurrent uses of one refresh token: one rotation, and every use gets its one successor', async (t) => {
  const kit = await refreshKit()
  const refreshed = collect(kit, 'token.refreshed')
  const reused = collect(kit, 'refresh.reused')
  const session = await signIn(kit)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))))
  const successors = new Set(answers.map(answer => answer.refresh_token))
  t.equal(successors.size, 1, 'one successor')
  const [successor] = successors as unknown as [string]
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(successor), previousHash: hashOf(session.refreshToken) }, 'the store holds the one rotation')
  t.equal(refreshed.length, 20)
  t.same(reused, [], 'no use was taken for theft')
  const later = await refreshSession(kit.ctx, kit.call(), input(successor))
  t.match(await storedSession(kit, session.sessionId), { currentHash: hashOf(later.refresh_token), previousHash: hashOf(successor) }, 'the successor is the current token')
})

t.test('refresh.reuseInterval 0: of 20 concurrent uses one rotates, the others are reuses and end the session', async (t) => {
  const kit = await refreshKit({ refresh: { enabled: true, reuseInterval: 0 } })
  const reused = collect(kit, 'refresh.reused')
  const session = await signIn(kit)
  const answers = await Promise.allSettled(Array.from({ length: 20 }, async () => await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))))
  const winners = answers.flatMap(answer => answer.status === 'fulfilled' ? [answer.value] : [])
  const refused = answers.flatMap(answer => answer.status === 'rejected' ? [answer.reason as { code: string }] : [])
  t.equal(winners.length, 1, 'exactly one rotation')
  t.equal(refused.length, 19)
  t.ok(refused.every(error => error.code === INVALID.code), 'the others: 401 / 51')
  t.ok(reused.length >= 1 && reused.every(event => event.sessionId === session.sessionId), 'reported as reuse')
  t.equal(await storedSession(kit, session.sessionId), 'revoked', 'the session ended')
  await t.rejects(refreshSession(kit.ctx, kit.call(), input(winners[0]?.refresh_token)), INVALID, 'the winner\'s successor too')
})

t.test('a session that keeps refreshing stays in its user\'s index, and its provider\'s logout keys with it, however long it lives', async (t) => {
  const kit = await refreshKit({ refresh: { enabled: true, lifetime: '30d' } })
  const DAY = 24 * 60 * 60 * 1000
  const user = await kit.users.findById(kit.aliceId)
  const origin = { method: 'provider' as const, provider: 'idp1', providerSubject: 'S'.repeat(43), providerSession: 'P'.repeat(43) }
  const first = await completeSignIn(kit.ctx, kit.call(), user, kit.clock.now, origin)
  let token = (first as { refresh_token: string }).refresh_token
  const sessionId = token.split('.')[0] as string
  // every 14 days for a year: the family lives 30 days from each rotation, the index must keep up
  for (let day = 14; day <= 364; day += 14) {
    kit.clock.advance(14 * DAY)
    token = (await refreshSession(kit.ctx, kit.call(), input(token))).refresh_token
    t.same((await kit.ctx.sessions.list(kit.aliceId)).map(session => session.id), [sessionId], `listed on day ${day}`)
  }
  t.equal(await kit.store.get(`oauth-logout:idp1:sub:${'S'.repeat(43)}`), String(kit.aliceId), 'the provider user still finds it')
  t.equal(await kit.store.get(`oauth-logout:idp1:sid:${'P'.repeat(43)}`), String(kit.aliceId), 'and so does the provider session')
})

t.test('a refreshed session missing from the index (written before it listed every session) joins it again', async (t) => {
  const kit = await refreshKit({ refresh: { enabled: true, lifetime: '30d' } })
  const session = await signIn(kit)
  await kit.store.delete(`sessions:user:${kit.aliceId}`)
  kit.clock.advance(20 * 24 * 60 * 60 * 1000)
  await refreshSession(kit.ctx, kit.call(), input(session.refreshToken))
  t.same((await kit.ctx.sessions.list(kit.aliceId)).map(listed => [listed.id, listed.origin]), [[session.sessionId, null]], 'listed again, without how it began')
})
