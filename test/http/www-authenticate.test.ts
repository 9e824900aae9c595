import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { createSigner } from 'fast-jwt'
import t, { type Test } from 'tap'
import { errorDefinitions } from '../../lib/index.js'
import { ALICE, buildApp, HS_SECRET, testClock } from '../helpers/app.js'
import { errorCode, loginTokens, post, PREFIX } from '../helpers/http.js'
import { buildTwoFactorApp } from '../helpers/two-factor.js'

const INVALID_TOKEN = 'Bearer error="invalid_token"'
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

function assertAnswer (t: Test, res: LightMyRequestResponse, status: number, code: number, challenge: string | undefined, name: string): void {
  t.equal(res.statusCode, status, `${name}: status`)
  t.equal(errorCode(res), code, `${name}: errorCode`)
  t.equal(res.headers['www-authenticate'], challenge, `${name}: WWW-Authenticate`)
}

t.test('the error table: a challenge on exactly the answers about a presented JWT', async (t) => {
  const withChallenge = Object.entries(errorDefinitions)
    .filter(([, definition]) => 'wwwAuthenticate' in definition)
    .map(([code, definition]) => [code, definition.errorCode, definition.statusCode, (definition as { wwwAuthenticate: string }).wwwAuthenticate])
  t.same(withChallenge, [
    ['ERR_JWT_LOGIN_TOKEN_MALFORMED', 2, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_ALGORITHM', 8, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN', 9, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_SIGNATURE', 11, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID', 11, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID', 12, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_EXPIRED', 14, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_TOKEN_DECODE', 22, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED', 2, 401, 'Bearer error="invalid_request"'],
    ['ERR_JWT_LOGIN_TOKEN_USER_GONE', 24, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_BEARER_MISSING', 53, 401, 'Bearer'],
    ['ERR_JWT_LOGIN_TOKEN_REVOKED', 55, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', 106, 401, INVALID_TOKEN],
    ['ERR_JWT_LOGIN_INTERIM_TOKEN_USED', 110, 401, INVALID_TOKEN],
    // RFC 9470: the token is good, its authentication too old (`authenticateWith({ maxAge })`, passkey enrolment)
    ['ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED', 220, 401, 'Bearer error="insufficient_user_authentication"'],
    // an API key on a host route: refused as a bearer credential is, or short of a scope (RFC 6750 §3.1)
    ['ERR_JWT_LOGIN_API_KEY_INVALID', 254, 401, 'Bearer error="invalid_token"'],
    ['ERR_JWT_LOGIN_API_KEY_SCOPE', 255, 403, 'Bearer error="insufficient_scope"']
  ])
})

t.test('validate and revoke: every bad token answers 401 with error="invalid_token"', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp({}, { clock })
  t.teardown(() => app.close())
  const iat = Math.floor(clock.now / 1000)
  const claims = { sub: '1', iat, exp: iat + 900, iss: 'jwt-login', aud: 'jwt-login', typ: 'access', sid: 's', jti: randomUUID() }
  const { jwt } = await loginTokens(app)
  const cases: Array<[string, string, number]> = [
    ['not three segments', 'not-a-jwt', 2],
    ['alg none', `${b64({ alg: 'none', typ: 'JWT', kid: 'k1' })}.${b64(claims)}.`, 8],
    ['unknown kid', createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k9' })(claims), 9],
    ['bad signature', createSigner({ key: `${HS_SECRET}-other`, algorithm: 'HS256', kid: 'k1' })(claims), 11],
    ['wrong audience', createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })({ ...claims, aud: 'other' }), 11],
    ['not yet valid', createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })({ ...claims, iat: iat + 3600, exp: iat + 7200 }), 12],
    ['expired', createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })({ ...claims, iat: iat - 7200, exp: iat - 3600 }), 14],
    ['not JSON', 'abc.def.ghi', 22]
  ]
  for (const [name, token, code] of cases) {
    assertAnswer(t, await post(app, '/auth/validate', { JWT: token }), 401, code, INVALID_TOKEN, `validate: ${name}`)
    assertAnswer(t, await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: { authorization: `Bearer ${token}` } }), 401, code, INVALID_TOKEN, `GET validate (Bearer): ${name}`)
    assertAnswer(t, await post(app, '/auth/revoke', { JWT: token }), 401, code, INVALID_TOKEN, `revoke: ${name}`)
  }

  t.equal((await post(app, '/auth/revoke', { JWT: jwt })).statusCode, 200)
  assertAnswer(t, await post(app, '/auth/validate', { JWT: jwt }), 401, 55, INVALID_TOKEN, 'revoked')
  const other = (await loginTokens(app)).jwt
  await users.removeUser(1)
  assertAnswer(t, await post(app, '/auth/validate', { JWT: other }), 401, 24, INVALID_TOKEN, 'user gone')

  // not about a token: no challenge
  assertAnswer(t, await post(app, '/auth/validate', {}), 400, 53, undefined, 'validate without a token (400, as the error table says)')
  assertAnswer(t, await post(app, '/auth/validate', {}, { authorization: 'Basic abc' }), 400, 203, undefined, 'a malformed header on a plugin route')
})

t.test('two-factor: a bad or wrong-kind interim token is invalid_token; a missing one or a wrong code is not', async (t) => {
  const { app, interim, submit, login } = await buildTwoFactorApp({ settings: { refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const token = await interim()
  const final = (await login(ALICE)).json().data
  assertAnswer(t, await submit({ JWT: 'a.b.c', code: '123456' }), 401, 106, INVALID_TOKEN, 'a broken interim token')
  assertAnswer(t, await submit({ JWT: final.jwt, code: '123456' }), 401, 106, INVALID_TOKEN, 'a final token as the interim one')
  assertAnswer(t, await submit({ code: '123456' }, { authorization: `Bearer ${final.jwt as string}x` }), 401, 106, INVALID_TOKEN, 'in the Bearer header')
  assertAnswer(t, await submit({ code: '123456' }), 400, 23, undefined, 'no interim token')
  assertAnswer(t, await submit({ JWT: token, code: 'not-a-backup-code' }), 401, 109, undefined, 'a wrong code')

  // an interim token where a final one belongs
  assertAnswer(t, await post(app, '/auth/validate', { JWT: token }), 401, 110, INVALID_TOKEN, 'interim token on validate')
  assertAnswer(t, await post(app, '/auth/refresh', { refresh_token: token }), 401, 110, INVALID_TOKEN, 'interim token on refresh')
  assertAnswer(t, await post(app, '/auth/refresh', { JWT: token }), 401, 110, INVALID_TOKEN, 'interim token as JWT on refresh')
})

t.test('no challenge where the 401 is not about a Bearer token', async (t) => {
  const { app, users } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  assertAnswer(t, await post(app, '/auth', { email: ALICE.email, password: 'wrong password' }), 401, 48, undefined, 'wrong credentials')
  assertAnswer(t, await post(app, '/auth/refresh', { refresh_token: 'no-such-token' }), 401, 51, undefined, 'a bad refresh token')
  assertAnswer(t, await post(app, '/auth/refresh', {}), 400, 51, undefined, 'no refresh token')
  const { refresh_token: refreshToken } = await loginTokens(app)
  await users.removeUser(1)
  const gone = await post(app, '/auth/refresh', { refresh_token: refreshToken })
  assertAnswer(t, gone, 401, 24, undefined, 'the refresh token\'s user is gone')
  t.equal(gone.json().data.message, 'The user of this refresh token no longer exists.')

  const gated = await buildApp({ authCodes: { codes: [{ code: 'gate' }], requireFor: { validate: true } } })
  t.teardown(() => gated.app.close())
  assertAnswer(t, await post(gated.app, '/auth/validate', { JWT: 'a.b.c', AUTH_KEY: 'wrong' }), 401, 27, undefined, 'a wrong auth code')
})
