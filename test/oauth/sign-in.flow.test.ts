// oauthSignIn and oauthNonce called as flows, against a real OpenID provider on loopback: a context built as the plugin builds it, no Fastify.
import { createHash, randomUUID } from 'node:crypto'
import { randomNonce } from 'openid-client'
import t from 'tap'
import type { SettingsInput } from '../../lib/index.js'
import { oauthSignIn, type OAuthInput, type OAuthSignInResult } from '../../lib/oauth/flow.js'
import { oauthNonce } from '../../lib/oauth/nonce.js'
import type { JwtLoginEventMap, JwtLoginEventName } from '../../lib/services/events.js'
import { authenticateToken } from '../../lib/sessions/authenticate.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import { ALICE } from '../helpers/fixtures.js'
import { flowKit, type FlowKit } from '../helpers/flows.js'
import { ACCOUNTS, CLIENTS, REDIRECT_URI, startIdp, type TestClient } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

type Provider = NonNullable<NonNullable<SettingsInput['oauth']>['providers']>[string]
type Overrides = { idp1?: Partial<Provider>, idp2?: Partial<Provider> }

/**
 * idp1 (code or ID token, client_secret_basic) and idp2 (code only,
 * client_secret_post) at the test provider, as helpers/oauth.ts configures
 * them (that module loads Fastify with the app it builds).
 */
function providers (overrides: Overrides): Record<'idp1' | 'idp2', Provider> {
  const at = (client: TestClient, settings: Partial<Provider>): Provider =>
    ({ enabled: true, issuer: idp.issuer, clientId: client.client_id, clientSecret: client.client_secret, redirectUris: [REDIRECT_URI], ...settings }) as Provider
  return {
    idp1: at(CLIENTS.idp1, { acceptIdToken: true, ...overrides.idp1 }),
    idp2: at(CLIENTS.idp2, { clientAuthMethod: 'client_secret_post', ...overrides.idp2 })
  }
}

interface OAuthKit extends FlowKit {
  /** ID-token claims for alice at the test provider, issued now on the kit's clock, valid 10 minutes. */
  claims: (overrides?: Record<string, unknown>) => Record<string, unknown>
  /** The payloads of one audit event, from now on. */
  collect: <E extends JwtLoginEventName>(event: E) => Array<JwtLoginEventMap[E]>
}

/**
 * idp1 (code or ID token) and idp2 (code only) at the test provider; the
 * clock starts at the real time, since the provider signs on it.
 */
async function oauthKit (overrides: Overrides = {}, ports: Parameters<typeof flowKit>[1] = {}, settings: Partial<SettingsInput> = {}): Promise<OAuthKit> {
  const kit = await flowKit({ oauth: { providers: providers(overrides) }, ...settings }, ports)
  kit.clock.now = Date.now()
  return {
    ...kit,
    claims: (overrides = {}) => {
      const now = Math.floor(kit.clock() / 1000)
      // a jti of its own, so two tokens minted in one second are two tokens
      return { iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: ACCOUNTS.alice.id, email: ALICE.email, email_verified: true, iat: now, exp: now + 600, jti: randomUUID(), ...overrides }
    },
    collect: (event) => {
      const seen: Array<JwtLoginEventMap[typeof event]> = []
      kit.ctx.events.on(event, (payload) => { seen.push(payload) })
      return seen
    }
  }
}

/** `/oauth/token` as the route reads it: idp1 unless told, every other field absent unless given. */
function input (fields: Partial<OAuthInput>): OAuthInput {
  return { provider: 'idp1', code: undefined, idToken: undefined, nonce: undefined, codeVerifier: undefined, redirectUri: undefined, ...fields }
}

/** The answer of a sign-in that needs no second factor. */
function final (result: OAuthSignInResult): Exclude<OAuthSignInResult, { two_factor_required: true }> {
  if ('two_factor_required' in result) throw new Error('a challenge, not a session')
  return result
}

t.test('an ID token the provider minted signs alice in, once: the answer carries the user', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, aliceId } = kit
  const succeeded = kit.collect('oauth.succeeded')
  const failed = kit.collect('oauth.failed')
  const nonce = randomNonce()
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce })

  const result = await oauthSignIn(ctx, call(), input({ idToken, nonce }))
  t.match(result, { jwt: String, user: { ID: aliceId, user_login: ALICE.login, user_email: ALICE.email, display_name: ALICE.displayName } })
  t.equal((await authenticateToken(ctx, call(), result.jwt)).publicUser.ID, aliceId, 'a session of alice\'s')
  t.same(succeeded, [{ userId: aliceId, ip: '203.0.113.7', provider: 'idp1', flow: 'id_token' }])

  await t.rejects(oauthSignIn(ctx, call(), input({ idToken, nonce })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', errorCode: 210, statusCode: 401 })
  t.same(failed, [{ ip: '203.0.113.7', provider: 'idp1', reason: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', errorCode: 210 }], 'the replay is audited, without the token')
})

t.test('20 concurrent sign-ins with one ID token: exactly one session, the others 210', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, store, aliceId } = kit
  const succeeded = kit.collect('oauth.succeeded')
  const failed = kit.collect('oauth.failed')
  const idToken = await idp.sign(kit.claims())

  const settled = await Promise.allSettled(Array.from({ length: 20 }, async () => await oauthSignIn(ctx, call(), input({ idToken }))))
  const answers = settled.flatMap(s => s.status === 'fulfilled' ? [s.value] : [])
  t.equal(answers.length, 1, 'one session')
  t.same(settled.flatMap(s => s.status === 'rejected' ? [(s.reason as { code: string }).code] : []), Array.from({ length: 19 }, () => 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED'), 'every other: 210')
  t.equal(succeeded.length, 1)
  t.equal(failed.length, 19, 'each replay is audited')

  const { verified } = await authenticateToken(ctx, call(), (answers[0] as { jwt: string }).jwt)
  const index = JSON.parse(await store.get(sessionIndexKey(aliceId)) as string) as Array<[string, number, number]>
  t.same(index.map(([sessionId]) => sessionId), [verified.payload.sid], 'alice\'s index holds the winner\'s session alone')
})

t.test('the provider is named by the settings: 69 unknown, 70 off, 71 without what it accepts, 203 for a redirect URI it does not list', async (t) => {
  const kit = await oauthKit({ idp2: { enabled: false } })
  const { ctx, call } = kit
  const failed = kit.collect('oauth.failed')
  for (const provider of [undefined, 'nope', 'toString']) {
    await t.rejects(oauthSignIn(ctx, call(), input({ provider, idToken: 'x' })), { code: 'ERR_JWT_LOGIN_PROVIDER_UNKNOWN', errorCode: 69, statusCode: 400 }, String(provider))
  }
  t.same(failed.map(f => f.provider), [null, null, null], 'an unknown provider is audited as none')
  await t.rejects(oauthSignIn(ctx, call(), input({ provider: 'idp2', code: 'x' })), { code: 'ERR_JWT_LOGIN_PROVIDER_DISABLED', errorCode: 70 })
  t.equal(failed.at(-1)?.provider, 'idp2')
  await t.rejects(oauthSignIn(ctx, call(), input({})), { code: 'ERR_JWT_LOGIN_PROVIDER_CODE_MISSING', errorCode: 71 })
  await t.rejects(oauthSignIn(ctx, call(), input({ code: 'x', redirectUri: 'https://elsewhere.example/callback' })), { code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203 })
})

t.test('a provider code is spent before the exchange: its second use is 72 without asking the provider', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, aliceId } = kit
  const succeeded = kit.collect('oauth.succeeded')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.equal(final(await oauthSignIn(ctx, call(), input({ code }))).user.ID, aliceId)
  t.same(succeeded.map(s => s.flow), ['code'])
  const asked = idp.requests.length
  await t.rejects(oauthSignIn(ctx, call(), input({ code })), { code: 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID', errorCode: 72 })
  t.equal(idp.requests.length, asked, 'the provider was not asked again')
})

t.test('the email the provider vouches for: unverified 111, unknown 74, registered when the provider registers users', async (t) => {
  const kit = await oauthKit({ idp2: { acceptIdToken: true, autoRegister: true, redirectUris: [] } })
  const { ctx, call } = kit
  const registered = kit.collect('oauth.user_registered')
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken: await idp.sign(kit.claims({ email_verified: false })) })), { code: 'ERR_JWT_LOGIN_EMAIL_UNVERIFIED', errorCode: 111 })
  t.equal(final(await oauthSignIn(ctx, call(), input({ idToken: await idp.sign(kit.claims({ email_verified: 'true' })) }))).user.user_email, ALICE.email, 'the string "true" is verified (Apple)')
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken: await idp.sign(kit.claims({ sub: 'newbie', email: 'newbie@example.com' })) })), { code: 'ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND', errorCode: 74 })

  const idp2 = (sub: string, email: string): Record<string, unknown> => kit.claims({ aud: CLIENTS.idp2.client_id, sub, email, name: 'New Bie' })
  const first = final(await oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2('newbie', 'newbie@example.com')) })))
  t.match(first, { user: { user_login: 'newbie', user_email: 'newbie@example.com', display_name: 'New Bie' } })
  const second = final(await oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2('newbie-2', 'Newbie+news@other.example')) })))
  t.equal(second.user.user_login, 'newbie2', 'a login from the local part, made unique')
  t.same(registered.map(r => [r.provider, r.userId]), [['idp2', first.user.ID], ['idp2', second.user.ID]])
})

t.test('a sign-in that fails after the ID token was spent gives it back: the retry signs in, then it is spent', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, users } = kit
  const failed = kit.collect('oauth.failed')
  const findByEmail = users.findByEmail.bind(users)
  users.findByEmail = async () => { throw new Error('the user database is down') }
  const idToken = await idp.sign(kit.claims())
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201, statusCode: 503 })
  t.same(failed, [{ ip: '203.0.113.7', provider: 'idp1', reason: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 }])
  users.findByEmail = findByEmail
  // a millisecond later or at once (see below), the given-back mark is claimed like an absent one
  kit.clock.advance(1)
  t.type((await oauthSignIn(ctx, call(), input({ idToken }))).jwt, 'string', 'the retry signs in')
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED' }, 'and then it is spent')
})

t.test('a retry at once after the give-back, before its mark expires, signs in; of two at once, one', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, users } = kit
  const findByEmail = users.findByEmail.bind(users)
  users.findByEmail = async () => { throw new Error('the user database is down') }
  const idToken = await idp.sign(kit.claims())
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE' })
  users.findByEmail = findByEmail
  // the clock stands still: the given-back mark is there, and is claimed like an absent one
  const answers = await Promise.allSettled([oauthSignIn(ctx, call(), input({ idToken })), oauthSignIn(ctx, call(), input({ idToken }))])
  t.equal(answers.filter(answer => answer.status === 'fulfilled').length, 1, 'one retry signs in')
  t.match(answers.find(answer => answer.status === 'rejected'), { reason: { code: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED' } }, 'the other finds it spent')
})

t.test('a spend whose answer the store lost is given back: the retry signs in', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, store } = kit
  const compareAndSet = store.compareAndSet.bind(store)
  store.compareAndSet = async (key, expected, value, ttlMs) => {
    const done = await compareAndSet(key, expected, value, ttlMs)
    // the first write of the spend runs, and its answer is lost
    if (key.startsWith('oauth-id-token:') && expected === null) throw new Error('the connection dropped')
    return done
  }
  const idToken = await idp.sign(kit.claims())
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 })
  store.compareAndSet = compareAndSet
  kit.clock.advance(1)
  t.type((await oauthSignIn(ctx, call(), input({ idToken }))).jwt, 'string', 'the token was given back')
})

t.test('a spend that cannot be given back is logged without the token; the token stays spent', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, store, log } = kit
  const compareAndSet = store.compareAndSet.bind(store)
  // the spend runs and its answer is lost, and the give-back fails too
  store.compareAndSet = async (key, expected, value, ttlMs) => {
    if (key.startsWith('oauth-id-token:') && expected !== null) throw new Error('the connection is gone')
    const done = await compareAndSet(key, expected, value, ttlMs)
    if (key.startsWith('oauth-id-token:')) throw new Error('the connection dropped')
    return done
  }
  const idToken = await idp.sign(kit.claims())
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 })
  t.match(log, [{ level: 'error', message: 'jwt-login: a spent ID token could not be given back after a failure; it cannot sign in again', fields: { provider: 'idp1', err: { message: 'the connection is gone' } } }])
  t.notOk(JSON.stringify(log).includes(idToken.split('.')[1] as string), 'no part of the token in the line')
  store.compareAndSet = compareAndSet
  kit.clock.advance(1)
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', errorCode: 210 }, 'fails closed: the token stays spent')
})

t.test('an ID token from before the user\'s cutoff signs no one in; a session from one starts when it was issued', async (t) => {
  const kit = await oauthKit()
  const { ctx, call, clock, settings, aliceId } = kit
  const early = await idp.sign(kit.claims())
  clock.advance(5000)
  const late = await idp.sign(kit.claims())
  clock.advance(5000)
  const session = await oauthSignIn(ctx, call(), input({ idToken: early }))
  // a cutoff after the early token was issued, though before it was used
  await ctx.tokens.revokeUserTokens(settings, aliceId, clock.now - 8000)
  await t.rejects(authenticateToken(ctx, call(), session.jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'its session started when the token was issued')
  await ctx.tokens.revokeUserTokens(settings, aliceId, clock.now - 1000)
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken: late })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_INVALID', errorCode: 73 }, 'a token issued before the cutoff')
})

t.test('a user with two-factor on gets the challenge, not a token', async (t) => {
  const port = new MemoryTwoFactorStore()
  const kit = await oauthKit({}, { twoFactor: { port } })
  const { ctx, call, aliceId } = kit
  port.enable(aliceId, 'backup_codes')
  const succeeded = kit.collect('oauth.succeeded')
  const idToken = await idp.sign(kit.claims())
  const result = await oauthSignIn(ctx, call(), input({ idToken }))
  t.match(result, { two_factor_required: true, jwt: String })
  t.equal(ctx.tokens.verify(kit.settings, result.jwt, 'interim').payload.sub, String(aliceId), 'an interim token')
  t.same(succeeded, [], 'not a provider sign-in yet')
  await t.rejects(oauthSignIn(ctx, call(), input({ idToken })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED' }, 'the ID token is spent on the challenge')
})

t.test('oauthNonce answers a server nonce the flow accepts, beside a token that carries its SHA-256, until it expires', async (t) => {
  const kit = await oauthKit({ idp2: { acceptIdToken: true, requireNonce: true, redirectUris: [] } })
  const { ctx, call, clock, aliceId } = kit
  const idp2 = (nonce: string): Record<string, unknown> => kit.claims({ aud: CLIENTS.idp2.client_id, nonce })
  const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex')

  const { nonce, nonce_sha256: hash, expires_in: expiresIn } = oauthNonce(ctx, call())
  t.match(nonce, /^n1\.[0-9a-z]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/)
  t.equal(hash, sha256(nonce))
  t.equal(expiresIn, 600)
  t.not(oauthNonce(ctx, call()).nonce, nonce, 'a new nonce each time')

  t.equal(final(await oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2(hash)), nonce }))).user.ID, aliceId, 'accepted')
  await t.rejects(oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2(nonce)), nonce })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_INVALID' }, 'a token that carries the nonce itself')
  await t.rejects(oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2(sha256('client-made'))), nonce: 'client-made' })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_INVALID' }, 'a nonce this server did not issue')
  clock.advance(10 * 60_000 + 1)
  await t.rejects(oauthSignIn(ctx, call(), input({ provider: 'idp2', idToken: await idp.sign(idp2(hash)), nonce })), { code: 'ERR_JWT_LOGIN_ID_TOKEN_INVALID', errorCode: 73 }, 'an expired nonce')
})
