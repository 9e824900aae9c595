// authenticateToken, validateToken and refuseInterimToken called directly, on a context built as the plugin builds it: no Fastify, no HTTP.
import t from 'tap'
import { authenticateToken, refuseInterimToken, validateToken } from '../../lib/sessions/authenticate.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { MemoryTwoFactorStore, type MemoryUser } from '../../lib/testing.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

/** A kit whose two-factor port can put alice's second factor on. */
async function twoFactorKit (): Promise<FlowKit & { port: MemoryTwoFactorStore }> {
  const port = new MemoryTwoFactorStore()
  return { ...await flowKit({}, { twoFactor: { port } }), port }
}

/** A sign-in of alice: her final token, or her interim token while her second factor is on. */
async function signIn (kit: FlowKit): Promise<string> {
  return (await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))).jwt
}

/** Alice's interim token: a challenge started with her second factor on, which is then turned off again. */
async function interimToken (kit: FlowKit & { port: MemoryTwoFactorStore }): Promise<string> {
  kit.port.enable(kit.aliceId, 'totp')
  const token = await signIn(kit)
  kit.port.disable(kit.aliceId)
  return token
}

/** Makes every write to the store fail, so whatever still answers read only. */
function readOnly (kit: FlowKit): void {
  const refuse = async (): Promise<never> => { throw new Error('a write to the store') }
  Object.assign(kit.store, { set: refuse, compareAndSet: refuse, increment: refuse, consume: refuse, delete: refuse })
}

t.test('a valid token: its claims, its user', async (t) => {
  const kit = await flowKit()
  const token = await signIn(kit)
  const { verified, user, publicUser } = await authenticateToken(kit.ctx, kit.call(), token)
  t.equal(verified.payload.sub, String(kit.aliceId))
  t.equal(verified.payload.typ, 'access')
  t.same(user, await kit.users.findById(kit.aliceId), 'the adapter\'s user')
  t.same(publicUser, kit.users.toPublicUser(user as MemoryUser), 'and the user as the API shows it')

  kit.clock.advance(60_000)
  const answer = await validateToken(kit.ctx, kit.call(), token)
  t.same(answer.user, publicUser)
  t.same(answer.roles, publicUser.roles)
  t.same(answer.jwt, [{ token, header: verified.header, payload: verified.payload, expire_in: 15 * 60 - 60 }], 'the seconds it has left')
})

t.test('refused: expired, revoked (its session, or its user\'s cutoff), its user gone; validate reports each', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'validation.failed')
  const call = kit.call('192.0.2.3')

  const expiring = await signIn(kit)
  kit.clock.advance(15 * 60_000)
  t.equal([(await validateToken(kit.ctx, call, expiring)).jwt].flat()[0]?.expire_in, 0, 'at its expiry, within the leeway')
  kit.clock.advance(6000)
  await t.rejects(validateToken(kit.ctx, call, expiring), { code: 'ERR_JWT_LOGIN_TOKEN_EXPIRED', errorCode: 14, statusCode: 401 }, 'past its lifetime and the leeway')

  const ended = await signIn(kit)
  const claims = (await authenticateToken(kit.ctx, call, ended)).verified.payload
  await kit.ctx.tokens.revoke(kit.settings, claims)
  await t.rejects(validateToken(kit.ctx, call, ended), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55, statusCode: 401 }, 'its session ended')

  const older = await signIn(kit)
  kit.clock.advance(1000)
  await kit.ctx.tokens.revokeUserTokens(kit.settings, kit.aliceId)
  await t.rejects(authenticateToken(kit.ctx, call, older), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'started before its user\'s cutoff')

  kit.clock.advance(1000)
  const orphan = await signIn(kit)
  await validateToken(kit.ctx, call, orphan)
  await kit.users.removeUser(kit.aliceId)
  await t.rejects(validateToken(kit.ctx, call, orphan), { code: 'ERR_JWT_LOGIN_TOKEN_USER_GONE', errorCode: 24, statusCode: 401 }, 'its user removed')

  await t.rejects(validateToken(kit.ctx, call, 'not a token'), { code: 'ERR_JWT_LOGIN_TOKEN_MALFORMED', errorCode: 2 })
  t.same(failed, [14, 55, 24, 2].map(errorCode => ({ ip: '192.0.2.3', errorCode })), 'one validation.failed for each 401 of validate, without the token')
})

t.test('a store that fails is no 401: no validation.failed', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'validation.failed')
  const token = await signIn(kit)
  const down = async (): Promise<never> => { throw new Error('store down') }
  Object.assign(kit.store, { get: down, getMany: down })
  await t.rejects(validateToken(kit.ctx, kit.call(), token), { message: 'store down' })
  t.same(failed, [])
})

t.test('an interim token is refused where a final one belongs, and accepted as what it is', async (t) => {
  const kit = await twoFactorKit()
  const failed = collect(kit, 'validation.failed')
  const interim = await interimToken(kit)
  const final = await signIn(kit)
  const USED = { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_USED', errorCode: 110, statusCode: 401 }

  await t.rejects(authenticateToken(kit.ctx, kit.call(), interim), USED)
  await t.rejects(validateToken(kit.ctx, kit.call(), interim), USED)
  t.same(failed, [{ ip: '203.0.113.7', errorCode: 110 }])
  t.equal((await authenticateToken(kit.ctx, kit.call(), interim, 'interim')).verified.payload.typ, 'interim', 'where an interim token belongs, it passes')
  await t.rejects(authenticateToken(kit.ctx, kit.call(), final, 'interim'), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', errorCode: 106 }, 'and a final token does not pass there')

  t.throws(() => { refuseInterimToken(kit.ctx, kit.call(), interim) }, USED, 'refuseInterimToken: an interim token is 110')
  for (const value of [undefined, '', 'no dots', 'a.b.c', final]) {
    t.doesNotThrow(() => { refuseInterimToken(kit.ctx, kit.call(), value) }, `left to the route's own checks: ${String(value).slice(0, 12)}`)
  }
  kit.clock.advance(5 * 60_000 + 6000)
  t.doesNotThrow(() => { refuseInterimToken(kit.ctx, kit.call(), interim) }, 'an expired interim token is no longer one')
})

t.test('20 concurrent validations read only: all answer, and a revoked token is refused (and reported) 20 times', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'validation.failed')
  const token = await signIn(kit)
  const revoked = await signIn(kit)
  await kit.ctx.tokens.revoke(kit.settings, (await authenticateToken(kit.ctx, kit.call(), revoked)).verified.payload)
  readOnly(kit)

  const answers = await Promise.all(Array.from({ length: 20 }, async () => await validateToken(kit.ctx, kit.call(), token)))
  t.ok(answers.every(answer => answer.user.ID === kit.aliceId && [answer.jwt].flat()[0]?.token === token), 'every validation answers the token\'s user')
  const refusals = await Promise.allSettled(Array.from({ length: 20 }, async () => await validateToken(kit.ctx, kit.call(), revoked)))
  t.ok(refusals.every(refusal => refusal.status === 'rejected' && (refusal.reason as { errorCode: number }).errorCode === 55), 'every one refused 55')
  t.equal(failed.length, 20, 'each refusal reported once')
})
