import { randomUUID } from 'node:crypto'
import { randomNonce } from 'openid-client'
import t from 'tap'
import { ALICE, testClock } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, newSigningKey, startIdp } from '../helpers/oidc-provider.js'
import { SignJWT } from 'jose'

const idp = await startIdp()
t.teardown(() => idp.close())

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** ID-token claims for alice at the test provider, valid for 10 minutes from `nowMs`. */
function claims (overrides: Record<string, unknown> = {}, nowMs = Date.now()): Record<string, unknown> {
  const now = Math.floor(nowMs / 1000)
  // a jti of its own, so two tokens minted in one second are two tokens (each signs in once)
  return { iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: ACCOUNTS.alice.id, email: ALICE.email, email_verified: true, iat: now, exp: now + 600, jti: randomUUID(), ...overrides }
}

t.test('an ID token minted by the provider signs the user in', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const succeeded = collect(app, 'oauth.succeeded')
  const nonce = randomNonce()
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce })
  const res = await postToken(app, { provider: 'idp1', id_token: idToken, nonce })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.user.user_email, ALICE.email)
  t.equal(succeeded[0]?.flow, 'id_token')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken })), [401, 73], 'a token that carries a nonce needs the same nonce beside it')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken, nonce })), [401, 210], 'and signs in once')
  t.notOk(JSON.stringify(succeeded).includes(idToken), 'no token in the event')
})

t.test('an ID token longer than 4096 characters (Entra ID with group claims) is read, up to the schema\'s 16,384', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const groups = Array.from({ length: 120 }, () => randomUUID())
  const long = await idp.sign(claims({ groups }))
  t.ok(long.length > 5000 && long.length < 16384, `a signed token of ${long.length} characters`)
  t.equal((await postToken(app, { provider: 'idp1', id_token: long })).statusCode, 200, 'it signs in')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: 'x'.repeat(5000) })), [401, 73], 'a long token that is no ID token answers the ID-token error, not 400 / 203')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: 'x'.repeat(16385) })), [400, 203], 'past 16,384 characters it is a malformed request')
})

t.test('with both a code and an ID token, the code is used', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const succeeded = collect(app, 'oauth.succeeded')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  const res = await postToken(app, { provider: 'idp1', code, id_token: 'ignored' })
  t.equal(res.statusCode, 200)
  t.equal(succeeded[0]?.flow, 'code')
})

t.test('a provider that does not accept ID tokens answers 71 without a code', async (t) => {
  const { app } = await buildOAuthApp(providers(idp, { idp1: { acceptIdToken: false } }))
  t.teardown(() => app.close())
  const idToken = await idp.idToken({ account: ACCOUNTS.alice, nonce: 'n' })
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: idToken })), [400, 71])
})

t.test('invalid ID tokens answer 401 / 73', async (t) => {
  const { app } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const other = await newSigningKey(idp.key.kid)
  const hmac = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(CLIENTS.idp1.client_secret))
  const signedPart = (await idp.sign(claims())).split('.').slice(0, 2).join('.')
  const cases: Array<[string, string, string?]> = [
    ['wrong nonce', await idp.idToken({ account: ACCOUNTS.alice, nonce: 'nonce-a' }), 'nonce-b'],
    ['a nonce asked but none in the token', await idp.sign(claims()), 'nonce-a'],
    ['issued to another client', await idp.idToken({ client: CLIENTS.other, account: ACCOUNTS.alice, nonce: 'n' })],
    ['from another issuer', await idp.sign(claims({ iss: 'https://other-issuer.example' }))],
    ['expired', await idp.sign(claims({ iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }))],
    ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`],
    ['unsigned', signedPart],
    ['re-signed by another key with the same kid', await idp.sign(claims(), { key: other })],
    ['signed with the client secret (HS256)', hmac],
    ['an unknown key id', await idp.sign(claims(), { key: other, kid: 'no-such-kid' })],
    ['an access token, not an ID token', await idp.sign(claims(), { typ: 'at+jwt' })],
    ['several audiences, azp another client', await idp.sign(claims({ aud: [CLIENTS.idp1.client_id, 'x'], azp: 'x' }))],
    ['several audiences, no azp', await idp.sign(claims({ aud: [CLIENTS.idp1.client_id, 'x'] }))],
    ['no sub', await idp.sign(claims({ sub: undefined }))],
    ['not a JWT', 'garbage']
  ]
  for (const [name, token, nonce] of cases) {
    const payload: Record<string, string> = { provider: 'idp1', id_token: token }
    if (nonce !== undefined) payload.nonce = nonce
    t.same(errorOf(await postToken(app, payload)), [401, 73], name)
  }
  t.ok(failed.every(f => f.reason === 'ERR_JWT_LOGIN_ID_TOKEN_INVALID' && f.provider === 'idp1'))
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({ aud: [CLIENTS.idp1.client_id, 'x'], azp: CLIENTS.idp1.client_id })) })).statusCode, 200, 'several audiences with azp our client')
})

t.test('a key rotation at the provider is picked up; discovery and keys are cached', async (t) => {
  const clock = testClock(Date.now())
  const { app } = await buildOAuthApp(providers(idp), {}, { clock })
  t.teardown(() => app.close())
  t.teardown(() => { idp.setJwks(null) })
  const count = (path: string): number => idp.requests.filter(p => p === path).length
  const discoveryPath = '/.well-known/openid-configuration'
  const rotated = await newSigningKey('idp-key-2')
  idp.setJwks({ keys: [idp.key.publicJwk] })

  const discoveries = count(discoveryPath)
  const keyReads = count('/jwks')
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({}, clock())) })).statusCode, 200)
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({}, clock())) })).statusCode, 200)
  t.equal(count(discoveryPath), discoveries + 1, 'one discovery for two sign-ins')
  t.equal(count('/jwks'), keyReads + 1, 'one key read for two sign-ins')

  idp.setJwks({ keys: [rotated.publicJwk] })
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({}, clock()), { key: rotated }) })), [401, 73], 'within the cooldown the keys are not read again')
  t.equal(count('/jwks'), keyReads + 1)

  clock.advance(31_000)
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({}, clock()), { key: rotated }) })).statusCode, 200, 'after the cooldown an unknown kid reads the keys again')
  t.equal(count('/jwks'), keyReads + 2)

  clock.advance(61 * 60_000)
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({}, clock()), { key: rotated }) })).statusCode, 200)
  t.equal(count(discoveryPath), discoveries + 2, 'the discovery document is read again after an hour')
  t.equal(count('/jwks'), keyReads + 3, 'the keys are read again after an hour')
})
