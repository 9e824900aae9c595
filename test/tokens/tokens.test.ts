import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { createVerifier } from 'fast-jwt'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { JwtLoginSettingsError, type SettingsInput } from '../../lib/index.js'
import { ALICE, HS_SECRET, buildApp, testClock } from '../helpers/app.js'

type Algorithm = NonNullable<SettingsInput['tokens']['algorithm']>
type KeyInput = SettingsInput['tokens']['keys'][number]

interface Pem { privateKey: string, publicKey: string }

const SPKI = { type: 'spki', format: 'pem' } as const
const PKCS8 = { type: 'pkcs8', format: 'pem' } as const

function rsa (modulusLength = 2048): Pem {
  return generateKeyPairSync('rsa', { modulusLength, publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
}
function ec (namedCurve: 'prime256v1' | 'secp384r1'): Pem {
  return generateKeyPairSync('ec', { namedCurve, publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
}
function ed25519 (): Pem {
  return generateKeyPairSync('ed25519', { publicKeyEncoding: SPKI, privateKeyEncoding: PKCS8 })
}

const RSA = rsa()
const RSA_2 = rsa()
const P256 = ec('prime256v1')
const P384 = ec('secp384r1')
const ED = ed25519()

const ASYMMETRIC: Array<[Algorithm, Pem]> = [
  ['RS256', RSA], ['RS384', RSA], ['RS512', RSA], ['PS256', RSA],
  ['ES256', P256], ['ES384', P384], ['EdDSA', ED]
]
const HMAC: Array<[Algorithm, string]> = [
  ['HS256', 'a'.repeat(32)], ['HS384', 'b'.repeat(48)], ['HS512', 'c'.repeat(64)]
]

function tokens (algorithm: Algorithm, keys: KeyInput[]): Partial<SettingsInput> {
  return { tokens: { algorithm, keys } }
}

async function login (app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data.jwt as string
}

async function validate (app: FastifyInstance, jwt: string): Promise<{ statusCode: number, body: any }> {
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: jwt } })
  return { statusCode: res.statusCode, body: res.json() }
}

function header (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString())
}

const signingAlgorithms: Array<[Algorithm, KeyInput]> = [
  ...HMAC.map(([alg, secret]): [Algorithm, KeyInput] => [alg, { kid: 'k1', secret }]),
  ...ASYMMETRIC.map(([alg, pem]): [Algorithm, KeyInput] => [alg, { kid: 'k1', privateKey: pem.privateKey }])
]

for (const [algorithm, key] of signingAlgorithms) {
  t.test(`${algorithm}: POST /auth signs, /auth/validate verifies`, async (t) => {
    const clock = testClock()
    const { app } = await buildApp(tokens(algorithm, [key]), { clock })
    t.teardown(() => app.close())
    const jwt = await login(app)
    t.same(header(jwt), { alg: algorithm, typ: 'JWT', kid: 'k1' })
    const res = await validate(app, jwt)
    t.equal(res.statusCode, 200)
    const payload = res.body.data.jwt[0].payload
    t.equal(payload.sub, '1')
    t.equal(payload.iss, 'jwt-login')
    t.equal(payload.aud, 'jwt-login')
    t.equal(payload.typ, 'access')
    t.equal(payload.iat, Math.floor(clock.now / 1000))
    t.equal(payload.exp, payload.iat + 15 * 60)
    t.equal(res.body.data.jwt[0].expire_in, 15 * 60)
    t.equal(res.body.data.user.user_email, ALICE.email)
  })
}

t.test('JWKS: published for asymmetric key sets', async (t) => {
  for (const [algorithm, pem] of ASYMMETRIC) {
    const { app } = await buildApp(tokens(algorithm, [
      { kid: 'current', privateKey: pem.privateKey },
      { kid: 'previous', publicKey: pem.publicKey }
    ]))
    const res = await app.inject({ method: 'GET', url: '/jwt-login/v1/jwks' })
    t.equal(res.statusCode, 200, algorithm)
    const { keys } = res.json()
    t.same(keys.map((k: { kid: string, alg: string, use: string }) => [k.kid, k.alg, k.use]), [['current', algorithm, 'sig'], ['previous', algorithm, 'sig']], algorithm)
    for (const key of keys) {
      t.notOk('d' in key, `${algorithm}: no private part in the JWKS`)
    }
    t.same(app.jwtLogin.jwks(), res.json(), `${algorithm}: the decorator answers the same`)
    // the published key verifies a token the plugin signed
    const jwt = await login(app)
    const publicPem = createPublicKey({ key: keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
    const claims = createVerifier({ key: publicPem, algorithms: [algorithm] })(jwt)
    t.equal(claims.sub, '1', `${algorithm}: a client verifies with the JWKS`)
    await app.close()
  }
})

t.test('JWKS: absent (404) for HMAC', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/jwt-login/v1/jwks' })
  t.equal(res.statusCode, 404)
  t.equal(app.jwtLogin.jwks(), null)
})

t.test('key rotation: a token of the old key still validates after a new key is put first', async (t) => {
  const clock = testClock()
  const old = await buildApp(tokens('RS256', [{ kid: 'old', privateKey: RSA.privateKey }]), { clock })
  const oldToken = await login(old.app)
  await old.app.close()

  const rotated = await buildApp(tokens('RS256', [
    { kid: 'new', privateKey: RSA_2.privateKey },
    { kid: 'old', publicKey: RSA.publicKey }
  ]), { clock })
  t.teardown(() => rotated.app.close())
  t.equal((await validate(rotated.app, oldToken)).statusCode, 200, 'the old token is still good')
  const newToken = await login(rotated.app)
  t.equal(header(newToken).kid, 'new', 'the first key signs')
  t.equal((await validate(rotated.app, newToken)).statusCode, 200)
})

t.test('key rotation with HMAC secrets', async (t) => {
  const clock = testClock()
  const old = await buildApp(tokens('HS256', [{ kid: 'old', secret: HS_SECRET }]), { clock })
  const oldToken = await login(old.app)
  await old.app.close()
  const rotated = await buildApp(tokens('HS256', [{ kid: 'new', secret: 'n'.repeat(40) }, { kid: 'old', secret: HS_SECRET }]), { clock })
  t.teardown(() => rotated.app.close())
  t.equal((await validate(rotated.app, oldToken)).statusCode, 200)
  t.equal(header(await login(rotated.app)).kid, 'new')
})

t.test('a token with an unknown kid is 401 / 9', async (t) => {
  const clock = testClock()
  const other = await buildApp(tokens('HS256', [{ kid: 'elsewhere', secret: HS_SECRET }]), { clock })
  const foreign = await login(other.app)
  await other.app.close()
  const { app } = await buildApp({}, { clock })
  t.teardown(() => app.close())
  const res = await validate(app, foreign)
  t.equal(res.statusCode, 401)
  t.equal(res.body.data.errorCode, 9)
})

async function refusal (settings: Partial<SettingsInput>): Promise<JwtLoginSettingsError> {
  const error = await buildApp(settings).then(() => null, (e: unknown) => e)
  if (!(error instanceof JwtLoginSettingsError)) throw new Error(`expected a settings error, got ${String(error)}`)
  return error
}

t.test('start-up refusals name the settings path', async (t) => {
  const cases: Array<[string, Partial<SettingsInput>, string]> = [
    ['HS256 secret of 31 bytes', tokens('HS256', [{ kid: 'k', secret: 'x'.repeat(31) }]), 'tokens/keys/0/secret'],
    ['HS384 secret of 47 bytes', tokens('HS384', [{ kid: 'k', secret: 'x'.repeat(47) }]), 'tokens/keys/0/secret'],
    ['HS384 secret of 32 bytes', tokens('HS384', [{ kid: 'k', secret: 'x'.repeat(32) }]), 'tokens/keys/0/secret'],
    ['HS512 secret of 63 bytes', tokens('HS512', [{ kid: 'k', secret: 'x'.repeat(63) }]), 'tokens/keys/0/secret'],
    ['short second HMAC key', tokens('HS256', [{ kid: 'a', secret: HS_SECRET }, { kid: 'b', secret: 'short' }]), 'tokens/keys/1/secret'],
    ['HMAC key without a secret', tokens('HS256', [{ kid: 'k' }]), 'tokens/keys/0/secret'],
    ['a private key under the default HS256', tokens('HS256', [{ kid: 'k', privateKey: RSA.privateKey }]), 'tokens/keys/0/privateKey'],
    ['a secret for RS256', tokens('RS256', [{ kid: 'k', secret: HS_SECRET }]), 'tokens/keys/0/secret'],
    ['first key without a private key', tokens('RS256', [{ kid: 'k', publicKey: RSA.publicKey }]), 'tokens/keys/0/privateKey'],
    ['an RSA key for ES256', tokens('ES256', [{ kid: 'k', privateKey: RSA.privateKey }]), 'tokens/keys/0/privateKey'],
    ['a P-384 key for ES256', tokens('ES256', [{ kid: 'k', privateKey: P384.privateKey }]), 'tokens/keys/0/privateKey'],
    ['an Ed25519 key for RS256', tokens('RS256', [{ kid: 'k', privateKey: ED.privateKey }]), 'tokens/keys/0/privateKey'],
    ['a 1024-bit RSA key', tokens('RS256', [{ kid: 'k', privateKey: rsa(1024).privateKey }]), 'tokens/keys/0/privateKey'],
    ['a second public key of the wrong type', tokens('RS256', [{ kid: 'a', privateKey: RSA.privateKey }, { kid: 'b', publicKey: P256.publicKey }]), 'tokens/keys/1/publicKey'],
    ['an unreadable private PEM', tokens('RS256', [{ kid: 'k', privateKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' }]), 'tokens/keys/0'],
    ['an unreadable public PEM', tokens('RS256', [{ kid: 'a', privateKey: RSA.privateKey }, { kid: 'b', publicKey: 'garbage' }]), 'tokens/keys/1'],
    ['a duplicate kid', tokens('RS256', [{ kid: 'same', privateKey: RSA.privateKey }, { kid: 'same', publicKey: RSA_2.publicKey }]), 'tokens/keys/1/kid'],
    ['an empty key list', tokens('HS256', []), 'tokens/keys']
  ]
  for (const [name, settings, path] of cases) {
    const error = await refusal(settings)
    t.equal(error.path, path, name)
    t.equal(error.code, 'ERR_JWT_LOGIN_INVALID_SETTINGS', name)
    t.match(error.message, `invalid setting ${path}`, name)
  }
})

t.test('a key pair whose public key is given with the private key is accepted', async (t) => {
  const { app } = await buildApp(tokens('ES256', [{ kid: 'k1', privateKey: P256.privateKey, publicKey: P256.publicKey }]))
  t.teardown(() => app.close())
  t.equal((await validate(app, await login(app))).statusCode, 200)
})
