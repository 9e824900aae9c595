import { createHash, randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { ALICE, testClock } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { buildOAuthApp, collect, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, startIdp } from '../helpers/oidc-provider.js'
import { redisStore } from '../helpers/redis-store.js'

// Defect 1 of the attack report: one provider ID token presented 20 times gave 20 sessions, still
// signed in after sign-out and password reset, and a token carrying a nonce was taken without it.

const idp = await startIdp()
t.teardown(() => idp.close())

type Clock = ReturnType<typeof testClock>

function claims (clock: Clock, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(clock() / 1000)
  return { iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: ACCOUNTS.alice.id, email: ALICE.email, email_verified: true, iat: now, exp: now + 600, jti: randomUUID(), ...overrides }
}

const stores: Array<[string, (t: Test) => StateStore]> = [
  ['memory', () => new MemoryStore()],
  ['redis', (t) => redisStore(t, 'id-token-replay').store]
]

for (const [kind, makeStore] of stores) {
  t.test(`${kind}: an ID token signs in once, however often and however concurrently it is presented`, async (t) => {
    const clock = testClock(Date.now())
    const { app } = await buildOAuthApp(providers(idp), { refresh: { enabled: true } }, { clock, store: makeStore(t) })
    t.teardown(() => app.close())
    const succeeded = collect(app, 'oauth.succeeded')
    const failed = collect(app, 'oauth.failed')
    const idToken = await idp.sign(claims(clock))

    const answers = await Promise.all(Array.from({ length: 20 }, async () => await postToken(app, { provider: 'idp1', id_token: idToken })))
    t.equal(answers.filter(res => res.statusCode === 200).length, 1, 'one session')
    t.same([...new Set(answers.filter(res => res.statusCode !== 200).map(errorOf).map(String))], ['401,210'], 'every other use: 401 / 210')
    t.equal(succeeded.length, 1)
    t.equal(failed.filter(f => f.reason === 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED').length, 19, 'each replay is audited')

    // signed out: the token still signs no one in
    const session = answers.find(res => res.statusCode === 200)?.json().data
    const revoked = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/revoke', headers: { authorization: `Bearer ${String(session.jwt)}` } })
    t.equal(revoked.statusCode, 200)
    t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken })), [401, 210], 'a replay after sign-out')

    // another token of the same user is another sign-in
    t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock)) })).statusCode, 200)
  })

  t.test(`${kind}: a sign-in that fails before it answers gives its ID token back`, async (t) => {
    const clock = testClock(Date.now())
    const { app, users } = await buildOAuthApp(providers(idp), {}, { clock, store: makeStore(t) })
    t.teardown(() => app.close())
    const findByEmail = users.findByEmail.bind(users)
    let fail = true
    users.findByEmail = async (email) => {
      if (fail) { fail = false; throw new Error('the user database is down') }
      return await findByEmail(email)
    }
    const idToken = await idp.sign(claims(clock))
    t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken })), [503, 201])
    t.equal((await postToken(app, { provider: 'idp1', id_token: idToken })).statusCode, 200, 'the retry signs in')
    t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken })), [401, 210], 'and then it is spent')
  })
}

t.test('an ID token issued before the user\'s cutoff (a password reset) signs no one in', async (t) => {
  const clock = testClock(Date.now())
  const store = new MemoryStore()
  const { app, users } = await buildOAuthApp(providers(idp), {}, { clock, store })
  t.teardown(() => app.close())
  const alice = await users.findByEmail(ALICE.email)
  const early = await idp.sign(claims(clock))
  const signedIn = await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock)) })
  clock.advance(2000)
  await store.set(stateKeys.userCutoff(alice?.ID as number), String(clock()), 60_000)
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: early })), [401, 73], 'a token from before the cutoff')
  const validated = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', headers: { authorization: `Bearer ${String(signedIn.json().data.jwt)}` } })
  t.same(errorOf(validated), [401, 55], 'and the session it started before ended with the cutoff')
  clock.advance(1000)
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock)) })).statusCode, 200, 'a token issued after the cutoff signs in')
})

t.test('a session from an ID token starts when the token was issued: a cutoff between issue and use ends it', async (t) => {
  const clock = testClock(Date.now())
  const store = new MemoryStore()
  const { app, users } = await buildOAuthApp(providers(idp), {}, { clock, store })
  t.teardown(() => app.close())
  const alice = await users.findByEmail(ALICE.email)
  const idToken = await idp.sign(claims(clock))
  clock.advance(5000)
  const res = await postToken(app, { provider: 'idp1', id_token: idToken })
  t.equal(res.statusCode, 200)
  await store.set(stateKeys.userCutoff(alice?.ID as number), String(clock() - 3000), 60_000)
  const validated = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', headers: { authorization: `Bearer ${String(res.json().data.jwt)}` } })
  t.same(errorOf(validated), [401, 55], 'the session started when the token was issued, before the cutoff')
})

t.test('nonces: a token that carries one needs it (or its preimage) beside it; requireNonce needs a server nonce whose hash the token carries', async (t) => {
  const clock = testClock(Date.now())
  const { app } = await buildOAuthApp(providers(idp, { idp2: { acceptIdToken: true, requireNonce: true, redirectUris: [] } }), {}, { clock })
  t.teardown(() => app.close())
  const withNonce = async (): Promise<string> => await idp.sign(claims(clock, { nonce: 'client-made-nonce' }))
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await withNonce() })), [401, 73], 'a carried nonce not presented')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await withNonce(), nonce: 'another' })), [401, 73], 'another nonce presented')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock)), nonce: 'client-made-nonce' })), [401, 73], 'a nonce presented beside a token without one')
  t.equal((await postToken(app, { provider: 'idp1', id_token: await withNonce(), nonce: 'client-made-nonce' })).statusCode, 200, 'the same nonce')
  const hashed = await idp.sign(claims(clock, { nonce: createHash('sha256').update('kept-by-the-client').digest('hex') }))
  t.equal((await postToken(app, { provider: 'idp1', id_token: hashed, nonce: 'kept-by-the-client' })).statusCode, 200, 'the preimage of the carried nonce (SHA-256, hex)')
  const b64 = await idp.sign(claims(clock, { nonce: createHash('sha256').update('kept-by-the-client').digest('base64url') }))
  t.equal((await postToken(app, { provider: 'idp1', id_token: b64, nonce: 'kept-by-the-client' })).statusCode, 200, 'or base64url')

  const idp2 = (extra: Record<string, unknown>): Record<string, unknown> => claims(clock, { aud: CLIENTS.idp2.client_id, ...extra })
  const issued = await app.inject({ method: 'GET', url: '/jwt-login/v1/oauth/nonce' })
  t.equal(issued.statusCode, 200)
  const { nonce, nonce_sha256: hash, expires_in: expiresIn } = issued.json().data
  t.equal(expiresIn, 600)
  t.match(nonce, /^n1\.[0-9a-z]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/)
  t.equal(hash, createHash('sha256').update(nonce as string).digest('hex'))
  t.equal(issued.headers['cache-control'], 'no-store')

  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({})) })), [401, 73], 'requireNonce: no nonce')
  const clientMade = createHash('sha256').update('client-made').digest('hex')
  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({ nonce: clientMade })), nonce: 'client-made' })), [401, 73], 'requireNonce: a nonce this server did not issue')
  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({ nonce })), nonce })), [401, 73], 'requireNonce: a token that carries the nonce itself: whoever holds the token could present it')
  const forged = `${(nonce as string).slice(0, -4)}AAAA`
  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({ nonce: createHash('sha256').update(forged).digest('hex') })), nonce: forged })), [401, 73], 'requireNonce: a nonce with a wrong signature')
  t.equal((await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({ nonce: hash })), nonce })).statusCode, 200, 'requireNonce: the hash of a nonce this server issued, and the nonce')

  clock.advance(10 * 60_000 + 1)
  t.same(errorOf(await postToken(app, { provider: 'idp2', id_token: await idp.sign(idp2({ nonce: hash })), nonce })), [401, 73], 'requireNonce: an expired nonce')
})

t.test('the provider\'s email must be the email of the user found, compared by jwt-login\'s rule', async (t) => {
  const clock = testClock(Date.now())
  const { app, users } = await buildOAuthApp(providers(idp), {}, { clock })
  t.teardown(() => app.close())
  await users.addUser({ login: 'kate', email: 'kate@example.com', password: 'kate password 123', displayName: 'Kate' })
  const failed = collect(app, 'oauth.failed')
  // the host folds case with toLowerCase, which maps the Kelvin sign (U+212A) to k
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock, { email: '\u212Aate@example.com' })) })), [403, 211], 'the Kelvin sign is not K')
  t.equal(failed.at(-1)?.reason, 'ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH')
  const signedIn = await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims(clock, { email: 'KATE@Example.COM' })) })
  t.equal(signedIn.statusCode, 200, 'ASCII case does not matter')
  t.equal(signedIn.json().data.user.user_email, 'kate@example.com')
})

t.test('another spelling of the same signature is the same ID token', async (t) => {
  const clock = testClock(Date.now())
  const { app } = await buildOAuthApp(providers(idp), {}, { clock })
  t.teardown(() => app.close())
  const idToken = await idp.sign(claims(clock))
  // an RS256 signature of 256 bytes leaves the low 4 bits of its last base64url character unused
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(idToken.slice(-1))
  const respelled = `${idToken.slice(0, -1)}${alphabet[last ^ 1] as string}`
  t.not(respelled, idToken)
  t.equal((await postToken(app, { provider: 'idp1', id_token: idToken })).statusCode, 200)
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: respelled })), [401, 210], 'verified, and spent already')
})

t.test('a session from an ID token issued before the user\'s other sessions never ends itself', async (t) => {
  const clock = testClock(Date.now())
  const { app } = await buildOAuthApp(providers(idp), { sessions: { maxPerUser: 1 } }, { clock })
  t.teardown(() => app.close())
  const idToken = await idp.sign(claims(clock))
  clock.advance(60_000)
  const password = (await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })).json().data.jwt
  const provider = (await postToken(app, { provider: 'idp1', id_token: idToken })).json().data.jwt
  const validate = async (jwt: string): Promise<number> => (await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', headers: { authorization: `Bearer ${jwt}` } })).statusCode
  t.equal(await validate(provider), 200, 'the new session lives, though it started (when its token was issued) before the other')
  t.equal(await validate(password), 401, 'the session that joined first ended')
})
