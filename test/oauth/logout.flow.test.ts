/**
 * The back-channel logout flow without Fastify: sessions started with the
 * provider's `sub` and `sid` as a provider sign-in leaves them, tokens signed
 * with the real provider's key on the kit's clock, and the store's failures.
 */
import { randomUUID } from 'node:crypto'
import type { JWTPayload } from 'jose'
import t, { type Test } from 'tap'
import type { FirstFactor } from '../../lib/adapters/second-factor.js'
import { sha256Base64url } from '../../lib/core/crypto.js'
import { JwtLoginError } from '../../lib/core/errors.js'
import { backchannelLogout, LogoutRefused } from '../../lib/oauth/logout.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { providerLogoutKeys } from '../../lib/tokens/session-index.js'
import { ALICE } from '../helpers/app.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'
import { providers } from '../helpers/oauth.js'
import { CLIENTS, startIdp, startSlowServer } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const SUB = 'acct-alice'

async function kitFor (overrides: Parameters<typeof providers>[1] = {}): Promise<FlowKit> {
  const on = { backchannelLogout: true }
  return await flowKit({ oauth: { providers: providers(idp, { idp1: { ...on, ...overrides.idp1 }, idp2: { ...on, ...overrides.idp2 } }) } })
}

/** A session of alice as a provider sign-in starts it (its index entry, its `sub`/`sid` keys): answers its id. */
async function providerSession (kit: FlowKit, sid: string | undefined, provider = 'idp1', sub = SUB): Promise<string> {
  const origin: FirstFactor = { method: 'provider', provider, providerSubject: sha256Base64url(sub) }
  if (sid !== undefined) origin.providerSession = sha256Base64url(sid)
  const result = await completeSignIn(kit.ctx, kit.call(), await kit.users.findByEmail(ALICE.email), undefined, origin)
  return sessionOf(result)
}

function sessionOf (result: unknown): string {
  const { jwt } = result as { jwt: string }
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()).sid
}

const live = async (kit: FlowKit): Promise<string[]> => (await kit.ctx.sessions.list(kit.aliceId)).map(s => s.id).sort()

/** A logout token on the kit's clock, signed with the provider's key. */
async function logoutToken (kit: FlowKit, claims: JWTPayload = {}): Promise<string> {
  const iat = Math.floor(kit.clock() / 1000)
  return await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, iat, jti: randomUUID(), events: { [EVENT]: {} }, ...claims }, { typ: 'logout+jwt' })
}

const logOut = async (kit: FlowKit, token: string, provider = 'idp1'): Promise<{ ended: number }> => await backchannelLogout(kit.ctx, kit.call(), provider, token)

async function refusedWith (t: Test, run: Promise<unknown>, description: RegExp, what: string): Promise<void> {
  const error = await run.then(() => null, (thrown: unknown) => thrown)
  t.ok(error instanceof LogoutRefused, `${what}: refused`)
  t.match((error as LogoutRefused).description, description, what)
}

t.test('with sid: that provider session ends, when the token\'s sub (if any) is its user\'s; sessions of other providers and passwords stay', async (t) => {
  const kit = await kitFor()
  const ended = collect(kit, 'session.ended')
  const x = await providerSession(kit, 'sid-x')
  const y = await providerSession(kit, 'sid-y')
  const otherProvider = await providerSession(kit, 'sid-x', 'idp2')
  const password = sessionOf(await completeSignIn(kit.ctx, kit.call(), await kit.users.findByEmail(ALICE.email)))

  t.same(await logOut(kit, await logoutToken(kit, { sid: 'sid-x', sub: 'someone-else' })), { ended: 0 }, 'the sid of another provider user ends nothing')
  t.same(await logOut(kit, await logoutToken(kit, { sid: 'sid-unknown', sub: SUB })), { ended: 0 }, 'an unknown sid ends nothing, though the sub is known')
  t.same(await live(kit), [x, y, otherProvider, password].sort())

  t.same(await logOut(kit, await logoutToken(kit, { sid: 'sid-x' })), { ended: 1 }, 'sid alone')
  t.same(await live(kit), [y, otherProvider, password].sort(), 'idp2\'s session with the same sid stays: another provider')
  t.same(await logOut(kit, await logoutToken(kit, { sid: 'sid-y', sub: SUB })), { ended: 1 }, 'sid and its sub')
  t.same(await live(kit), [otherProvider, password].sort())
  t.same(ended, [
    { userId: kit.aliceId, sessionId: x, reason: 'provider_logout' },
    { userId: kit.aliceId, sessionId: y, reason: 'provider_logout' }
  ])
})

t.test('with sub alone: every session of that provider user at that provider; a sub-only session has no sid', async (t) => {
  const kit = await kitFor()
  const a = await providerSession(kit, undefined)
  const b = await providerSession(kit, 'sid-b')
  const otherUser = await providerSession(kit, 'sid-c', 'idp1', 'acct-someone')
  t.same(await live(kit), [a, b, otherUser].sort())
  t.same(await logOut(kit, await logoutToken(kit, { sub: SUB })), { ended: 2 })
  t.same(await live(kit), [otherUser], 'a session of another provider user (signed in to the same local account) stays')
})

t.test('a token for several audiences needs azp naming this client', async (t) => {
  const kit = await kitFor()
  await providerSession(kit, 'sid-a')
  const aud = [CLIENTS.idp1.client_id, CLIENTS.other.client_id]
  await refusedWith(t, logOut(kit, await logoutToken(kit, { sub: SUB, aud })), /"azp" claim/, 'no azp')
  await refusedWith(t, logOut(kit, await logoutToken(kit, { sub: SUB, aud, azp: CLIENTS.other.client_id })), /"azp" claim/, 'azp of another client')
  t.same(await logOut(kit, await logoutToken(kit, { sub: SUB, aud, azp: CLIENTS.idp1.client_id })), { ended: 1 })
  t.same(await logOut(kit, await logoutToken(kit, { sub: SUB, aud: [CLIENTS.idp1.client_id] })), { ended: 0 }, 'one audience in an array needs none')
})

t.test('the jti is remembered while the token would be taken (whole seconds, leeway), then forgotten', async (t) => {
  const kit = await kitFor()
  await providerSession(kit, 'sid-a')
  const token = await logoutToken(kit, { sub: SUB, jti: 'jti-1' })
  const key = `oauth-logout-jti:${sha256Base64url(`idp1\u0000${idp.issuer}\u0000jti-1`)}`
  const iat = Math.floor(kit.clock() / 1000)
  t.equal(await kit.store.get(key), null)
  t.same(await logOut(kit, token), { ended: 1 })
  // taken until iat + 120 s + the 5 s leeway, through that second's last millisecond
  kit.clock.now = (iat + 125) * 1000 + 999
  t.not(await kit.store.get(key), null, 'remembered in the last accepted millisecond')
  await refusedWith(t, logOut(kit, token), /used already/, 'a replay then')
  kit.clock.now = (iat + 126) * 1000
  t.equal(await kit.store.get(key), null, 'forgotten a millisecond later')
  await refusedWith(t, logOut(kit, token), /"iat" claim/, 'when the token is too old anyway')
})

t.test('a store failure after the jti was spent gives it back: the provider\'s retry is taken', async (t) => {
  const kit = await kitFor()
  const session = await providerSession(kit, 'sid-a')
  const get = kit.store.get.bind(kit.store)
  let fail = true
  kit.store.get = async (key) => {
    if (fail && key.startsWith('oauth-logout:')) { fail = false; throw new Error('store down') }
    return await get(key)
  }
  const token = await logoutToken(kit, { sid: 'sid-a', sub: SUB })
  await t.rejects(logOut(kit, token), /store down/)
  t.same(await live(kit), [session], 'nothing ended')
  t.same(await logOut(kit, token), { ended: 1 }, 'the same token, retried')
  t.same(await live(kit), [])
})

t.test('a give-back that fails is logged: the retry is then refused as a replay', async (t) => {
  const kit = await kitFor()
  await providerSession(kit, 'sid-a')
  const get = kit.store.get.bind(kit.store)
  const compareAndSet = kit.store.compareAndSet.bind(kit.store)
  let down = false
  kit.store.get = async (key) => {
    if (key.startsWith('oauth-logout:')) { down = true; throw new Error('store down') }
    return await get(key)
  }
  kit.store.compareAndSet = async (key, expected, value, ttlMs) => {
    if (down && key.startsWith('oauth-logout-jti:')) throw new Error('store still down')
    return await compareAndSet(key, expected, value, ttlMs)
  }
  const token = await logoutToken(kit, { sub: SUB })
  await t.rejects(logOut(kit, token), /store down/)
  t.match(kit.log, [{ level: 'error', fields: { provider: 'idp1', err: { message: 'store still down' } }, message: /could not be given back/ }])
  t.notOk(JSON.stringify(kit.log).includes(token), 'no token in the log')
  down = false
  kit.store.get = get
  kit.store.compareAndSet = compareAndSet
  await refusedWith(t, logOut(kit, token), /used already/, 'the retry')
})

t.test('a user id the store no longer reads as one ends nothing', async (t) => {
  const kit = await kitFor()
  const session = await providerSession(kit, 'sid-a')
  await kit.store.set(providerLogoutKeys.subject('idp1', sha256Base64url(SUB)), 'not-a-number', 60_000)
  t.same(await logOut(kit, await logoutToken(kit, { sub: SUB })), { ended: 0 })
  t.same(await live(kit), [session])
})

t.test('the provider\'s keys unreadable, or no jwks_uri: the provider\'s failure (502), not a refusal, and the jti is not spent', async (t) => {
  const kit = await kitFor()
  await providerSession(kit, 'sid-a')
  const token = await logoutToken(kit, { sub: SUB })
  idp.setJwks({ keys: 'not a list' } as never)
  t.teardown(() => { idp.setJwks(null) })
  const error = await logOut(kit, token).then(() => null, (thrown: unknown) => thrown)
  t.ok(error instanceof JwtLoginError)
  t.equal((error as JwtLoginError).code, 'ERR_JWT_LOGIN_PROVIDER_ERROR')
  idp.setJwks(null)
  t.same(await logOut(kit, token), { ended: 1 }, 'the same token once the keys are back: its jti was not spent')

  const withoutKeys = await startSlowServer(0, (base) => JSON.stringify({ issuer: base, token_endpoint: `${base}/token` }))
  t.teardown(() => withoutKeys.close())
  const noJwks = await kitFor({ idp1: { issuer: withoutKeys.url } })
  const missing = await logOut(noJwks, token).then(() => null, (thrown: unknown) => thrown)
  t.equal((missing as JwtLoginError).code, 'ERR_JWT_LOGIN_PROVIDER_ERROR')
})
