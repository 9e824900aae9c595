import { generateKeyPairSync } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { CodeHasher } from '../../lib/services/code-hash.js'
import { hmacSha256, keyFromSigningKey } from '../../lib/core/crypto.js'
import jwtLogin, { MemoryStore, type SettingsInput } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { EmailCodeProvider } from '../../lib/two-factor/methods/email-code.js'
import type { RedisStore } from '../../lib/redis.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { claimsOf, errorCode, post } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'
import { codeIn, RESET_URL } from '../helpers/reset.js'
import { MailBox } from '../helpers/mail-box.js'
import { en } from '../../lib/i18n/catalogues/en.js'

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]
type KeyInput = NonNullable<NonNullable<SettingsInput['tokens']>['keys']>[number]

const PASSWORD = 'a long enough password for the fleet'
const USERS = {
  alice: 'alice@example.com', // refresh and access tokens
  bob: 'bob@example.com', // email 2FA
  carol: 'carol@example.com', // reset codes issued on A
  dave: 'dave@example.com', // reset codes issued on B
  erin: 'erin@example.com' // a reset code issued before the rotation, used after it
}

/** The state every instance shares: one Redis store, one user database, one 2FA store, one mail outbox. */
interface Shared {
  store: RedisStore
  users: MemoryUserAdapter
  port: MemoryTwoFactorStore
  mailer: MailBox
  algorithm: 'HS256' | 'ES256'
}

/**
 * One instance of the fleet: its own settings source (the key list it is
 * given), and a restart to take a new key list, as keys change only with a
 * restart.
 */
class Instance {
  keys: KeyInput[]
  app: FastifyInstance | null = null
  readonly #shared: Shared

  constructor (shared: Shared, keys: KeyInput[]) {
    this.#shared = shared
    this.keys = keys
  }

  async start (): Promise<void> {
    const { store, users, port, mailer, algorithm } = this.#shared
    const app = Fastify()
    await app.register(jwtLogin, {
      users,
      store,
      mailer,
      twoFactor: { port, mailer },
      settings: async () => ({
        tokens: { algorithm, keys: this.keys },
        refresh: { enabled: true },
        resetPassword: { enabled: true, limits: { perEmail: { max: 100 }, perIp: { max: 100 } } },
        limits: { loginPerIp: { max: 1000 }, requestsPerIp: { max: 1000 } }
      })
    })
    await app.ready()
    this.app = app
  }

  /** A rotation step on this instance: the new key list, then a restart (rolling: one instance at a time). */
  async restartWith (keys: KeyInput[]): Promise<void> {
    this.keys = keys
    await this.app?.close()
    await this.start()
  }

  get server (): FastifyInstance {
    return this.app as FastifyInstance
  }
}

/** What one instance issued in one phase, to be used on the other instance in the next. */
interface Issued {
  resetUser: string
  resetCode: string
  interim: string
  emailCode: string
  jwt: string
  refreshToken: string
  signedBy: string
}

async function login (app: FastifyInstance, email: string): Promise<Record<string, any>> {
  const res = await post(app, '/auth', { email, password: PASSWORD })
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data
}

async function requestReset (app: FastifyInstance, mailer: MailBox, email: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: RESET_URL, payload: { email } })
  if (res.statusCode !== 200) throw new Error(`reset request failed: ${res.body}`)
  const mail = await mailer.next()
  if (mail.to !== email) throw new Error(`a mail to ${mail.to}, not ${email}`)
  return codeIn(mail.text)
}

async function issue (app: FastifyInstance, mailer: MailBox, resetUser: string): Promise<Issued> {
  const resetCode = await requestReset(app, mailer, resetUser)
  const challenge = await login(app, USERS.bob)
  if (challenge.two_factor_required !== true) throw new Error('bob has two-factor on')
  const emailCode = (/\b(\d{6})\b/.exec((await mailer.next()).text) as RegExpExecArray)[1] as string
  const tokens = await login(app, USERS.alice)
  const { kid } = JSON.parse(Buffer.from(tokens.jwt.split('.')[0], 'base64url').toString('utf8'))
  return { resetUser, resetCode, interim: challenge.jwt, emailCode, jwt: tokens.jwt, refreshToken: tokens.refresh_token, signedBy: kid }
}

/** Uses everything `issued` holds on `app`; each must work. */
async function use (t: TapTest, app: FastifyInstance, issued: Issued, where: string): Promise<void> {
  const validated = await post(app, '/auth/validate', { JWT: issued.jwt })
  t.equal(validated.statusCode, 200, `${where}: the access token (signed by ${issued.signedBy}) validates`)
  const reset = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: issued.resetUser, code: issued.resetCode, new_password: PASSWORD } })
  t.equal(reset.statusCode, 200, `${where}: the reset code works`)
  const second = await post(app, '/auth/2fa', { JWT: issued.interim, code: issued.emailCode })
  t.equal(second.statusCode, 200, `${where}: the email 2FA code works`)
  const refreshed = await post(app, '/auth/refresh', { refresh_token: issued.refreshToken })
  t.equal(refreshed.statusCode, 200, `${where}: the refresh token works`)
  t.equal(claimsOf(refreshed.json().data.jwt).sid, claimsOf(issued.jwt).sid, `${where}: in the same session`)
}

async function fleet (t: TapTest, algorithm: Shared['algorithm'], keys: { old: [KeyInput, KeyInput] }): Promise<{ a: Instance, b: Instance, shared: Shared }> {
  const { store } = redisStore(t, `key-rotation-${algorithm}`)
  const users = new MemoryUserAdapter()
  const port = new MemoryTwoFactorStore()
  for (const email of Object.values(USERS)) await users.addUser({ login: email.split('@')[0] as string, email, password: PASSWORD })
  port.enable(2, 'email')
  const shared: Shared = { store, users, port, mailer: new MailBox(), algorithm }
  // each instance is given the same keys, possibly written differently (one PEM form each)
  const a = new Instance(shared, [keys.old[0]])
  const b = new Instance(shared, [keys.old[1]])
  await a.start()
  await b.start()
  t.teardown(async () => { await a.app?.close(); await b.app?.close() })
  return { a, b, shared }
}

/**
 * The documented rolling rotation, one instance at a time. In every phase
 * each instance issues a reset code, an email 2FA code and a refresh token;
 * after the next instance's step the other instance uses them.
 */
async function walkRotation (t: TapTest, algorithm: Shared['algorithm'], old: [KeyInput, KeyInput], next: [KeyInput, KeyInput]): Promise<void> {
  const { a, b, shared } = await fleet(t, algorithm, { old })
  const { mailer } = shared
  const beforeRotation = await issue(a.server, mailer, USERS.erin)
  const steps: Array<{ name: string, instance: Instance, keys: KeyInput[] }> = [
    { name: 'step 1 (new key second) on A', instance: a, keys: [old[0], next[0]] },
    { name: 'step 1 on B', instance: b, keys: [old[1], next[1]] },
    { name: 'step 2 (new key first) on A', instance: a, keys: [next[0], old[0]] },
    { name: 'step 2 on B', instance: b, keys: [next[1], old[1]] },
    { name: 'step 3 (old key retired) on A', instance: a, keys: [next[0]] },
    { name: 'step 3 on B', instance: b, keys: [next[1]] }
  ]
  for (const step of steps) {
    const fromA = await issue(a.server, mailer, USERS.carol)
    const fromB = await issue(b.server, mailer, USERS.dave)
    await step.instance.restartWith(step.keys)
    await use(t, b.server, fromA, `${step.name}: issued on A, used on B`)
    await use(t, a.server, fromB, `${step.name}: issued on B, used on A`)
    if (algorithm === 'ES256') {
      const jwks = await step.instance.server.inject({ method: 'GET', url: '/jwt-login/v1/jwks' })
      t.same(jwks.json().keys.map((key: { kid: string }) => key.kid), step.keys.map(key => key.kid), `${step.name}: /jwks lists the keys in force`)
    }
  }

  // the limits: what only the retired key signed or keyed no longer works
  t.equal(beforeRotation.signedBy, 'old')
  for (const instance of [a, b]) {
    const validated = await post(instance.server, '/auth/validate', { JWT: beforeRotation.jwt })
    t.equal(validated.statusCode, 401, 'an access token signed by the retired key is refused')
    t.equal(errorCode(validated), 9, 'its kid is unknown')
  }
  const reset = await a.server.inject({ method: 'PUT', url: RESET_URL, payload: { email: USERS.erin, code: beforeRotation.resetCode, new_password: PASSWORD } })
  t.equal(reset.statusCode, 400, 'a reset code keyed only by the retired key is refused (it would have expired by step 3)')
  // a refresh token is no JWT: the session issued before the rotation goes on, under the new key
  const refreshed = await post(b.server, '/auth/refresh', { refresh_token: beforeRotation.refreshToken })
  t.equal(refreshed.statusCode, 200, 'a refresh token issued before the rotation still refreshes after it')
  const jwt = refreshed.json().data.jwt as string
  t.equal(JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString('utf8')).kid, 'new')
  t.equal((await post(a.server, '/auth/validate', { JWT: jwt })).statusCode, 200, 'and its new access token validates everywhere')
}

t.test('HS256: a rolling rotation keeps reset codes, email 2FA codes and refresh tokens working on every instance', async (t) => {
  const old = { kid: 'old', secret: 'the old secret of the fleet, 32 bytes or more' }
  const next = { kid: 'new', secret: 'the new secret of the fleet, 32 bytes or more' }
  await walkRotation(t, 'HS256', [old, old], [next, next])
})

t.test('ES256 with /jwks: the same, though each instance holds the keys in another PEM form', async (t) => {
  const pair = (kid: string): [KeyInput, KeyInput] => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    return [
      { kid, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
      { kid, privateKey: privateKey.export({ type: 'sec1', format: 'pem' }).toString().replace(/\n/g, '\r\n') }
    ]
  }
  await walkRotation(t, 'ES256', pair('old'), pair('new'))
})

const K1 = { kid: 'k1', secret: 'the first secret, at least 32 bytes long' }
const K2 = { kid: 'k2', secret: 'the second secret, at least 32 bytes long' }
const K3 = { kid: 'k3', secret: 'a third secret, never used to hash a code' }
const tokensOf = (keys: KeyInput[]): ReturnType<typeof resolveSettings>['tokens'] => resolveSettings({ tokens: { keys } }).tokens

t.test('CodeHasher: a hash per key with a secret; any configured key it was hashed under checks it', async (t) => {
  const hasher = new CodeHasher('test use')
  const hashed = hasher.hash(tokensOf([K1, K2]), 'id:CODE')
  t.same(hashed.macs?.map(([kid]) => kid), ['k1', 'k2'])
  t.equal(hashed.hash, hmacSha256(keyFromSigningKey(K1, 'test use'), 'id:CODE').toString('base64url'), 'hash is the first key\'s, as earlier versions wrote it')
  t.equal(hasher.matches(tokensOf([K2, K1]), hashed, 'id:CODE'), true, 'the keys reordered (promoted)')
  t.equal(hasher.matches(tokensOf([K2]), hashed, 'id:CODE'), true, 'the first key retired')
  t.equal(hasher.matches(tokensOf([K3, K2]), hashed, 'id:CODE'), true, 'a key added later')
  t.equal(hasher.matches(tokensOf([K3]), hashed, 'id:CODE'), false, 'none of its keys left')
  t.equal(hasher.matches(tokensOf([K1, K2]), hashed, 'id:OTHER'), false, 'another code')
  t.equal(hasher.matches(tokensOf([K1, K2]), null, 'id:CODE'), false, 'no stored code: the decoy never matches')
  t.equal(new CodeHasher('another use').matches(tokensOf([K1, K2]), hashed, 'id:CODE'), false, 'each use has its own keys')
})

t.test('CodeHasher: a record of an earlier version (one hash under the then first key) still checks under any key order', async (t) => {
  const hasher = new CodeHasher('test use')
  const legacy = { hash: hmacSha256(keyFromSigningKey(K1, 'test use'), 'id:CODE').toString('base64url') }
  t.equal(hasher.matches(tokensOf([K2, K1]), legacy, 'id:CODE'), true)
  t.equal(hasher.matches(tokensOf([K2]), legacy, 'id:CODE'), false)
})

t.test('CodeHasher: a public key is no secret and keys nothing; a private key counts whatever its PEM form', async (t) => {
  const one = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const two = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const signer = { kid: 'a', privateKey: one.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
  const verifier = { kid: 'b', publicKey: two.publicKey.export({ type: 'spki', format: 'pem' }).toString() }
  const hasher = new CodeHasher('test use')
  const tokens = resolveSettings({ tokens: { algorithm: 'ES256', keys: [signer, verifier] } }).tokens
  const hashed = hasher.hash(tokens, 'id:CODE')
  t.same(hashed.macs?.map(([kid]) => kid), ['a'], 'only the key with a private key')
  t.equal(hasher.matches(tokens, hashed, 'id:CODE'), true)
  const sec1 = { kid: 'a', privateKey: one.privateKey.export({ type: 'sec1', format: 'pem' }).toString() }
  t.equal(hasher.matches(resolveSettings({ tokens: { algorithm: 'ES256', keys: [sec1] } }).tokens, hashed, 'id:CODE'), true)
})

t.test('email codes: one stored by an earlier version (a bare hash) still checks; a new one is stored as keyed hashes only', async (t) => {
  const store = new MemoryStore()
  t.teardown(() => store.close())
  const mailer = new MailBox()
  const provider = new EmailCodeProvider(store, mailer)
  const legacyHash = hmacSha256(keyFromSigningKey(K1, 'two-factor email code'), 'challenge-1:123456').toString('base64url')
  await store.set('2fa:email:challenge-1', legacyHash, 60_000)
  t.equal(await provider.check(tokensOf([K2, K1]), 'challenge-1', '123456'), true)
  t.equal(await provider.check(tokensOf([K2, K1]), 'challenge-1', '654321'), false)

  await (await provider.issue(tokensOf([K1, K2]), 'challenge-2', 'bob@example.com', 60_000, en.mails.emailCode, 'jwt-login'))()
  const code = (/\b(\d{6})\b/.exec((await mailer.next()).text) as RegExpExecArray)[1] as string
  const stored = await store.get('2fa:email:challenge-2') as string
  t.notOk(stored.includes(code), 'the code itself is not stored')
  t.same(Object.keys(JSON.parse(stored)), ['hash', 'macs'])
  t.equal(await provider.check(tokensOf([K2]), 'challenge-2', code), true, 'it checks once the key that was first is retired')
})
