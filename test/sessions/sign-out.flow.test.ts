// signOut and revokeToken called directly, on a context built as the plugin builds it: no Fastify, no HTTP.
import t, { type Test } from 'tap'
import { authenticateToken } from '../../lib/sessions/authenticate.js'
import { refreshSession } from '../../lib/sessions/refresh.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { revokeToken, signOut } from '../../lib/sessions/sign-out.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

const REVOKED = { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55, statusCode: 401 }
const INVALID = { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID', errorCode: 51, statusCode: 401 }
const SIGNED_OUT = 'Token was revoked.'

type Kit = FlowKit & { port: MemoryTwoFactorStore }

/** A kit with refresh on whose two-factor port can put alice's second factor on. */
async function signOutKit (): Promise<Kit> {
  const port = new MemoryTwoFactorStore()
  return { ...await flowKit({ refresh: { enabled: true } }, { twoFactor: { port } }), port }
}

/** A new session of alice: its access token, its refresh token, its id and the access token's `jti`. */
async function signIn (kit: FlowKit): Promise<{ jwt: string, refreshToken: string, sessionId: string, jti: string }> {
  const result = await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))
  if (!('refresh_token' in result) || result.refresh_token === undefined) throw new Error('no refresh token: is refresh on?')
  const { sid, jti } = (await authenticateToken(kit.ctx, kit.call(), result.jwt)).verified.payload
  return { jwt: result.jwt, refreshToken: result.refresh_token, sessionId: sid, jti }
}

/** Checks that a session has ended: its entry says so, and its access token, its refresh token and a sign-out with either are refused. */
async function assertEnded (t: Test, kit: FlowKit, session: { jwt: string, refreshToken: string, sessionId: string }): Promise<void> {
  t.equal(await kit.store.get(stateKeys.session(session.sessionId)), 'revoked', 'the session\'s entry is a revocation')
  await t.rejects(authenticateToken(kit.ctx, kit.call(), session.jwt), REVOKED, 'its access token is revoked')
  await t.rejects(refreshSession(kit.ctx, kit.call(), { refreshToken: session.refreshToken, jwt: undefined }), INVALID, 'its refresh token is spent')
  await t.rejects(signOut(kit.ctx, kit.call(), { token: session.jwt, refreshToken: undefined }), REVOKED, 'signing out again by access token is 55')
  await t.rejects(signOut(kit.ctx, kit.call(), { token: undefined, refreshToken: session.refreshToken }), INVALID, 'and by refresh token 51')
}

t.test('by access token: the session ends, with token.revoked', async (t) => {
  const kit = await signOutKit()
  const revoked = collect(kit, 'token.revoked')
  const failed = collect(kit, 'validation.failed')
  const session = await signIn(kit)
  const other = await signIn(kit)
  t.same(await signOut(kit.ctx, kit.call('192.0.2.5'), { token: session.jwt, refreshToken: undefined }), { message: SIGNED_OUT, sessionId: session.sessionId })
  t.same(revoked, [{ userId: kit.aliceId, sessionId: session.sessionId, jti: session.jti, ip: '192.0.2.5' }])
  await assertEnded(t, kit, session)
  t.same(failed.map(event => event.errorCode), [55], 'the refused access-token sign-out is reported as a refused token')
  t.equal((await authenticateToken(kit.ctx, kit.call(), other.jwt)).verified.payload.sid, other.sessionId, 'another session lives on')
  t.equal(revoked.length, 1)
})

t.test('by refresh token: the session ends, its access tokens with it', async (t) => {
  const kit = await signOutKit()
  const revoked = collect(kit, 'token.revoked')
  const session = await signIn(kit)
  t.same(await signOut(kit.ctx, kit.call('192.0.2.6'), { token: undefined, refreshToken: session.refreshToken }), { message: SIGNED_OUT, sessionId: session.sessionId })
  t.same(revoked, [{ userId: kit.aliceId, sessionId: session.sessionId, ip: '192.0.2.6' }], 'no jti: no access token was presented')
  await assertEnded(t, kit, session)
})

t.test('a refresh token given ends its session, whatever access token comes with it', async (t) => {
  const kit = await signOutKit()
  const kept = await signIn(kit)
  const ended = await signIn(kit)
  t.equal((await signOut(kit.ctx, kit.call(), { token: kept.jwt, refreshToken: ended.refreshToken })).sessionId, ended.sessionId)
  await assertEnded(t, kit, ended)
  t.equal((await authenticateToken(kit.ctx, kit.call(), kept.jwt)).verified.payload.sid, kept.sessionId, 'the access token\'s session lives on')
})

t.test('the previous refresh token may still sign out, any time after the rotation', async (t) => {
  const kit = await signOutKit()
  const session = await signIn(kit)
  const next = await refreshSession(kit.ctx, kit.call(), { refreshToken: session.refreshToken, jwt: undefined })
  kit.clock.advance(10 * 60_000)
  t.equal((await signOut(kit.ctx, kit.call(), { token: undefined, refreshToken: session.refreshToken })).sessionId, session.sessionId)
  await assertEnded(t, kit, { ...session, jwt: next.jwt, refreshToken: next.refresh_token })
})

t.test('neither token: 400 / 53; revokeToken refuses an interim token and a malformed refresh token changes nothing', async (t) => {
  const kit = await signOutKit()
  await t.rejects(signOut(kit.ctx, kit.call(), { token: undefined, refreshToken: undefined }), { code: 'ERR_JWT_LOGIN_JWT_MISSING', errorCode: 53, statusCode: 400 })
  kit.port.enable(kit.aliceId, 'totp')
  const interim = (await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))).jwt
  kit.port.disable(kit.aliceId)
  await t.rejects(revokeToken(kit.ctx, kit.call(), interim), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_USED', errorCode: 110 })
  const session = await signIn(kit)
  await t.rejects(signOut(kit.ctx, kit.call(), { token: session.jwt, refreshToken: `${session.sessionId}.short` }), INVALID)
  t.not(await kit.store.get(stateKeys.session(session.sessionId)), 'revoked', 'the session lives on')
})

for (const by of ['access token', 'refresh token'] as const) {
  t.test(`20 concurrent sign-outs of one session by its ${by}: it ends, every answer names it, every later use is refused`, async (t) => {
    const kit = await signOutKit()
    const revoked = collect(kit, 'token.revoked')
    const session = await signIn(kit)
    const other = await signIn(kit)
    const input = by === 'access token' ? { token: session.jwt, refreshToken: undefined } : { token: undefined, refreshToken: session.refreshToken }
    const answers = await Promise.allSettled(Array.from({ length: 20 }, async () => await signOut(kit.ctx, kit.call(), input)))
    const ended = answers.flatMap(answer => answer.status === 'fulfilled' ? [answer.value] : [])
    const refused = answers.flatMap(answer => answer.status === 'rejected' ? [answer.reason as { code: string }] : [])
    const late = by === 'access token' ? REVOKED : INVALID
    t.ok(ended.length >= 1, `${ended.length} answered the sign-out`)
    t.ok(ended.every(answer => answer.sessionId === session.sessionId && answer.message === SIGNED_OUT), 'each answering the one session')
    t.ok(refused.every(error => error.code === late.code), `the others: ${late.errorCode}, as a late one would be`)
    t.equal(revoked.length, ended.length, 'a token.revoked for each sign-out answered')
    t.ok(revoked.every(event => event.sessionId === session.sessionId), 'all of that session')
    await assertEnded(t, kit, session)
    t.equal((await authenticateToken(kit.ctx, kit.call(), other.jwt)).verified.payload.sid, other.sessionId, 'no other session ended')
  })
}
