import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { RedisStore } from '../../lib/redis.js'
import { ALICE, buildApp } from '../helpers/app.js'

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

t.test('a header that is not a JSON object, or has no kid, is refused before any key is tried', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  const [, payload, signature] = (login.json().data.jwt as string).split('.')
  const cases: Array<[string, unknown, number]> = [
    ['null header', null, 22],
    ['array header', ['HS256'], 22],
    ['string header', 'HS256', 22],
    ['no kid', { alg: 'HS256', typ: 'JWT' }, 9],
    ['numeric kid', { alg: 'HS256', typ: 'JWT', kid: 1 }, 9]
  ]
  for (const [name, header, errorCode] of cases) {
    const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: `${b64(header)}.${payload as string}.${signature as string}` } })
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().data.errorCode, errorCode, name)
  }
})

t.test('RedisStore connects to redis://127.0.0.1:6379 when given no URL', async (t) => {
  const prefix = `jwt-login-test-default-${process.pid}:`
  const store = new RedisStore({ prefix })
  t.teardown(() => store.close())
  await store.set('k', 'v', 5000)
  t.equal(await store.consume('k'), 'v')
  t.equal(await store.get('k'), null)
})

t.test('EdDSA takes Ed448 keys as well as Ed25519', async (t) => {
  const { privateKey } = generateKeyPairSync('ed448')
  const { app } = await buildApp({ tokens: { algorithm: 'EdDSA', keys: [{ kid: 'ed448', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] } })
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  const validate = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: login.json().data.jwt } })
  t.equal(validate.statusCode, 200)
  t.equal(validate.json().data.jwt[0].header.alg, 'EdDSA')
})
