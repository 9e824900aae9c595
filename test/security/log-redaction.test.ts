/**
 * Defect 2 of the attack report, "Secrets reach the log": a host port whose
 * error echoes its arguments had that text (and its stack) logged, and a 404
 * under the prefix logged its URL with the query. Every log line here is
 * captured at trace level and searched for every value a port received or a
 * request carried, in any letter case and URL-encoded.
 */
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, {
  JwtLoginError, MemoryStore, type JwtLoginEventMap, type JwtLoginOptions, type Mailer, type MailMessage, type NewProviderUser,
  type PublicUser, type SettingsInput, type TwoFactorMethod
} from '../../lib/index.js'
import { guardPorts, HostPortError, loggedError } from '../../lib/adapters/guard.js'
import { CSRF_HEADER, REFRESH_COOKIE } from '../../lib/http/browser.js'
import { MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { HS_SECRET } from '../helpers/app.js'
import { PREFIX, totpAt } from '../helpers/two-factor.js'
import { codeIn, RESET_URL } from '../helpers/reset.js'
import { postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'

const unique = (): string => randomBytes(6).toString('hex')

/** A user whose every field is a value no log line may hold. */
function secretPerson (): { login: string, email: string, password: string, displayName: string } {
  const id = unique()
  return { login: `login-${id}`, email: `Secret.Person+${id}@example.com`, password: `S3cret-pass-${id}`, displayName: `Display Name ${id}` }
}

/**
 * An error that echoes `args` in every place a logger may print: its message
 * (and so its stack), a custom property, its `code`... and its `cause`.
 */
function echoing (what: string, args: unknown[]): Error {
  const text = args.map(arg => typeof arg === 'string' ? arg : JSON.stringify(arg)).join(', ')
  const error = new Error(`${what} refused ${text} / ${text.toLowerCase()} / ${text.toUpperCase()}`, { cause: new Error(`because of ${text}`) })
  return Object.assign(error, { code: 'EHOST', detail: text, args })
}

/** What every throwing double keeps: the arguments of the calls that threw. */
class Received {
  readonly values: unknown[] = []
  readonly calls: string[] = []
  readonly failing = new Set<string>()

  /** Throws an echoing error when `method` is set to fail. */
  check (method: string, args: unknown[]): void {
    if (!this.failing.has(method)) return
    this.calls.push(method)
    this.values.push(...args)
    throw echoing(method, args)
  }
}

class EchoingUsers extends MemoryUserAdapter {
  readonly received = new Received()

  override async findByEmail (email: string): Promise<MemoryUser | null> {
    this.received.check('findByEmail', [email])
    return await super.findByEmail(email)
  }

  override async findByLogin (login: string): Promise<MemoryUser | null> {
    this.received.check('findByLogin', [login])
    return await super.findByLogin(login)
  }

  override async findById (id: number): Promise<MemoryUser | null> {
    this.received.check('findById', [id])
    return await super.findById(id)
  }

  override async verifyPassword (user: MemoryUser, password: string): Promise<boolean> {
    this.received.check('verifyPassword', [user, password])
    return await super.verifyPassword(user, password)
  }

  override async getPasswordHash (user: MemoryUser): Promise<string | null> {
    this.received.check('getPasswordHash', [user])
    return await super.getPasswordHash(user)
  }

  override async setPassword (user: MemoryUser, password: string): Promise<void> {
    this.received.check('setPassword', [user, password])
    await super.setPassword(user, password)
  }

  override async createUser (input: NewProviderUser): Promise<MemoryUser> {
    this.received.check('createUser', [input])
    return await super.createUser(input)
  }

  override toPublicUser (user: MemoryUser): PublicUser {
    this.received.check('toPublicUser', [user])
    return super.toPublicUser(user)
  }
}

class EchoingTwoFactor extends MemoryTwoFactorStore {
  readonly received = new Received()

  override async methodOf (userId: number, user?: unknown): Promise<TwoFactorMethod | null> {
    this.received.check('methodOf', [userId, user])
    return await super.methodOf(userId)
  }

  override async getTotpSecret (userId: number): Promise<string | null> {
    this.received.check('getTotpSecret', [userId])
    return await super.getTotpSecret(userId)
  }

  override async setTotpSecret (userId: number, secret: string): Promise<void> {
    this.received.check('setTotpSecret', [userId, secret])
    await super.setTotpSecret(userId, secret)
  }

  override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    this.received.check('consumeBackupCode', [userId, codeHash, claim])
    return await super.consumeBackupCode(userId, codeHash, claim)
  }

  override async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    this.received.check('replaceBackupCodes', [userId, codeHashes])
    await super.replaceBackupCodes(userId, codeHashes)
  }
}

/** Keeps every message; `failing` makes `send` throw, echoing the message. */
class EchoingMailer implements Mailer {
  readonly received = new Received()
  readonly sent: MailMessage[] = []

  async send (message: MailMessage): Promise<void> {
    this.sent.push(message)
    this.received.check('send', [message])
  }
}

interface Host {
  app: FastifyInstance
  users: EchoingUsers
  person: ReturnType<typeof secretPerson>
  userId: number
  /** Every line the host's logger wrote, at any level. */
  log: () => string
}

/** A host logging at trace level into memory, with one secret person among its users. */
async function host (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<Host> {
  const lines: string[] = []
  const users = new EchoingUsers()
  const person = secretPerson()
  const { ID } = await users.addUser(person)
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings }, ...options })
  await app.ready()
  t.teardown(() => app.close())
  return { app, users, person, userId: ID, log: () => lines.join('') }
}

/** Every string (four characters or more) in `values`, however deep. */
function stringsOf (values: unknown[]): string[] {
  const found: string[] = []
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length >= 4) found.push(value)
    } else if (typeof value === 'object' && value !== null) {
      Object.values(value).forEach(visit)
    }
  }
  values.forEach(visit)
  return found
}

/** None of `values` in the log, in any letter case, nor URL-encoded. */
function assertNotLogged (t: Test, log: string, values: unknown[], name: string): void {
  const strings = stringsOf(values)
  t.ok(strings.length > 0, `${name}: there are values to look for`)
  const lower = log.toLowerCase()
  const leaked = strings.filter(value => lower.includes(value.toLowerCase()) || lower.includes(encodeURIComponent(value).toLowerCase()))
  t.same(leaked, [], `${name}: no value the call or the request had is in the log`)
}

function errorOf (res: LightMyRequestResponse): [number, number] {
  return [res.statusCode, res.json().data.errorCode]
}

async function nextEvent<E extends keyof JwtLoginEventMap> (app: FastifyInstance, name: E): Promise<JwtLoginEventMap[E]> {
  return await new Promise((resolve) => { app.jwtLogin.events.once(name, resolve) })
}

async function signIn (app: FastifyInstance, payload: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload })
}

t.test('every user adapter method that throws is logged without the values it received', async (t) => {
  const cases: Array<{ method: string, settings?: Partial<SettingsInput>, request: (h: Host, sent: unknown[]) => Promise<LightMyRequestResponse> }> = [
    { method: 'findByEmail', request: async (h) => await signIn(h.app, { email: h.person.email, password: h.person.password }) },
    { method: 'findByLogin', request: async (h) => await signIn(h.app, { username: h.person.login, password: h.person.password }) },
    { method: 'verifyPassword', request: async (h) => await signIn(h.app, { email: h.person.email, password: h.person.password }) },
    { method: 'toPublicUser', request: async (h) => await signIn(h.app, { email: h.person.email, password: h.person.password }) },
    {
      method: 'getPasswordHash',
      settings: { login: { allowPasswordHash: true } },
      request: async (h) => await signIn(h.app, { email: h.person.email, password_hash: `$argon2id$not-the-hash-${unique()}` })
    },
    {
      method: 'findById',
      request: async (h, sent) => {
        h.users.received.failing.delete('findById')
        const { jwt } = (await signIn(h.app, { email: h.person.email, password: h.person.password })).json().data
        h.users.received.failing.add('findById')
        sent.push(jwt)
        // the token travels in the body and in the header: neither may reach the log
        return await h.app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: jwt }, headers: { authorization: `Bearer ${jwt as string}` } })
      }
    }
  ]
  for (const { method, settings, request } of cases) {
    const h = await host(t, settings)
    h.users.received.failing.add(method)
    const sent: unknown[] = []
    const res = await request(h, sent)
    t.same(errorOf(res), [503, 201], `${method}: an unavailable dependency, as before`)
    t.same(h.users.received.calls, [method], `${method}: the adapter threw`)
    const log = h.log()
    t.match(log, '"msg":"jwt-login: dependency failed"', `${method}: the failure is logged`)
    t.match(log, `users.${method} failed: Error (EHOST)`, `${method}: with the port, the method, the class and the code`)
    t.notMatch(log, /"stack":"[^"]/, `${method}: and no stack`)
    t.match(log, '"type":"HostPortError"', `${method}: the error's type is the guard's`)
    t.notMatch(log, 'because of', `${method}: nor the cause`)
    assertNotLogged(t, log, [h.person, ...h.users.received.values, ...sent], method)
  }
})

t.test('users.setPassword and the password policy: the new password, the code and the email stay out of the log', async (t) => {
  for (const port of ['setPassword', 'passwordPolicy'] as const) {
    const mailer = new EchoingMailer()
    const policyCalls = new Received()
    const h = await host(t, { resetPassword: { enabled: true, mail: { retries: 0 } } }, {
      mailer,
      passwordPolicy: async (password, user) => {
        policyCalls.check('passwordPolicy', [password, user])
        return true
      }
    })
    const sent = nextEvent(h.app, 'reset.code_sent')
    await h.app.inject({ method: 'POST', url: RESET_URL, payload: { email: h.person.email } })
    await sent
    const code = codeIn((mailer.sent[0] as MailMessage).text)
    const newPassword = `N3w-pass-${unique()}`
    if (port === 'setPassword') h.users.received.failing.add('setPassword')
    else policyCalls.failing.add('passwordPolicy')
    const res = await h.app.inject({ method: 'PUT', url: RESET_URL, payload: { email: h.person.email, code, new_password: newPassword } })
    t.equal(res.statusCode, 503, `${port}: 503, the code stays usable`)
    const received = port === 'setPassword' ? h.users.received : policyCalls
    t.same(received.calls, [port])
    const log = h.log()
    t.match(log, port === 'setPassword' ? 'users.setPassword failed: Error (EHOST)' : 'passwordPolicy failed: Error (EHOST)')
    assertNotLogged(t, log, [h.person, newPassword, code, ...received.values], port)
  }
})

t.test('a reset mail the mailer refuses: neither the address, the code nor the message is logged', async (t) => {
  const mailer = new EchoingMailer()
  mailer.received.failing.add('send')
  const h = await host(t, { resetPassword: { enabled: true, mail: { retries: 0 } } }, { mailer })
  const failed = nextEvent(h.app, 'reset.code_failed')
  const res = await h.app.inject({ method: 'POST', url: RESET_URL, payload: { email: h.person.email.toUpperCase() } })
  t.equal(res.statusCode, 200, 'the answer does not change')
  await failed
  const message = mailer.sent[0] as MailMessage
  const log = h.log()
  t.match(log, 'jwt-login: the reset mail could not be sent; its code was withdrawn')
  t.match(log, 'mailer.send failed: Error (EHOST)')
  assertNotLogged(t, log, [h.person, message, codeIn(message.text)], 'mailer.send')
})

t.test('a provider sign-in whose createUser throws: the new user\'s email, login and name stay out of the log', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const lines: string[] = []
  const users = new EchoingUsers()
  users.received.failing.add('createUser')
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(jwtLogin, {
    users,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, oauth: { providers: providers(idp, { idp1: { autoRegister: true } }) } }
  })
  await app.ready()
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.carol })
  const res = await postToken(app, { provider: 'idp1', code })
  t.same(errorOf(res), [503, 201])
  t.same(users.received.calls, ['createUser'])
  const log = lines.join('')
  t.match(log, 'users.createUser failed: Error (EHOST)')
  assertNotLogged(t, log, [ACCOUNTS.carol.email, ACCOUNTS.carol.name, code, ...users.received.values], 'createUser')
})

interface TwoFactorHost extends Host {
  port: EchoingTwoFactor
  mailer: EchoingMailer
  secret: string
}

async function twoFactorHost (t: Test, method: TwoFactorMethod, options: Partial<JwtLoginOptions> = {}): Promise<TwoFactorHost> {
  const port = new EchoingTwoFactor()
  const mailer = new EchoingMailer()
  const h = await host(t, {}, { twoFactor: { port, mailer }, ...options })
  const { secret } = createTotpSecret('jwt-login test', h.person.email)
  await port.setTotpSecret(h.userId, secret)
  port.enable(h.userId, method)
  return { ...h, port, mailer, secret }
}

async function interim (h: Host): Promise<string> {
  return (await signIn(h.app, { email: h.person.email, password: h.person.password })).json().data.jwt as string
}

t.test('every two-factor port method that throws is logged without the values it received', async (t) => {
  t.test('methodOf', async (t) => {
    const h = await twoFactorHost(t, 'totp')
    h.port.received.failing.add('methodOf')
    t.same(errorOf(await signIn(h.app, { email: h.person.email, password: h.person.password })), [503, 201])
    t.match(h.log(), 'twoFactor.port.methodOf failed: Error (EHOST)')
    assertNotLogged(t, h.log(), [h.person, ...h.port.received.values], 'methodOf')
  })

  t.test('getTotpSecret, and what the request carried is cut out too', async (t) => {
    const h = await twoFactorHost(t, 'totp')
    const jwt = await interim(h)
    const code = await totpAt(h.secret, Date.now())
    // a port that quotes what it cannot have been given: the request's own values are the second net
    h.port.getTotpSecret = async () => { throw new Error(`no secret while checking ${code} of ${jwt}`) }
    t.same(errorOf(await h.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: jwt, code } })), [503, 201])
    t.match(h.log(), 'twoFactor.port.getTotpSecret failed: Error: no secret while checking [redacted] of [redacted]')
    assertNotLogged(t, h.log(), [h.person, h.secret, jwt, code], 'getTotpSecret')
  })

  t.test('consumeBackupCode', async (t) => {
    const h = await twoFactorHost(t, 'totp')
    const [backupCode] = await h.app.jwtLogin.twoFactor?.regenerateBackupCodes(h.userId) as string[]
    const jwt = await interim(h)
    h.port.received.failing.add('consumeBackupCode')
    t.same(errorOf(await h.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: jwt, code: backupCode } })), [503, 201])
    t.same(h.port.received.calls, ['consumeBackupCode'])
    t.match(h.log(), 'twoFactor.port.consumeBackupCode failed: Error (EHOST)')
    assertNotLogged(t, h.log(), [h.person, backupCode, jwt, ...h.port.received.values], 'consumeBackupCode')
  })

  t.test('the mailer of email codes', async (t) => {
    const h = await twoFactorHost(t, 'email')
    h.mailer.received.failing.add('send')
    const failed = nextEvent(h.app, 'two_factor.code_failed')
    const res = await signIn(h.app, { email: h.person.email, password: h.person.password })
    t.equal(res.statusCode, 200, 'the challenge is answered as before')
    await failed
    const message = h.mailer.sent[0] as MailMessage
    const code = /code is (\d{6})/.exec(message.text)?.[1] as string
    t.match(h.log(), 'twoFactor.mailer.send failed: Error (EHOST)')
    assertNotLogged(t, h.log(), [h.person, message, code], 'twoFactor.mailer.send')
  })

  t.test('the enrollment helpers reject with a HostPortError that holds none of the values', async (t) => {
    const h = await twoFactorHost(t, 'totp')
    h.port.received.failing.add('setTotpSecret')
    h.port.received.failing.add('replaceBackupCodes')
    const { secret } = createTotpSecret('jwt-login test', h.person.email)
    const confirming = await h.app.jwtLogin.twoFactor?.confirmTotp(h.userId, secret, await totpAt(secret, Date.now())).catch((error: unknown) => error)
    const regenerating = await h.app.jwtLogin.twoFactor?.regenerateBackupCodes(h.userId).catch((error: unknown) => error)
    for (const [name, error] of [['setTotpSecret', confirming], ['replaceBackupCodes', regenerating]] as const) {
      t.type(error, HostPortError, `${name}: a HostPortError`)
      t.match(error, { name: 'HostPortError', port: 'twoFactor.port', method: name, originalType: 'Error', code: 'EHOST' })
      t.equal((error as Error).cause, undefined, `${name}: no cause`)
      t.notOk(Object.keys(error as object).includes('args'), `${name}: none of the original's fields`)
      assertNotLogged(t, `${(error as Error).message}\n${(error as Error).stack as string}`, h.port.received.values.filter(v => typeof v !== 'number'), name)
    }
    assertNotLogged(t, h.log(), [secret, ...h.port.received.values], 'nothing of them in the log either')
  })
})

t.test('a host second-factor gate that throws: the user, the request and the settings it was given stay out of the log', async (t) => {
  const gate = new Received()
  gate.failing.add('secondFactor')
  const authCode = `auth-code-${unique()}`
  const h = await host(t, { authCodes: { codes: [{ code: authCode }] } }, {
    secondFactor: async (user, publicUser, call) => {
      gate.check('secondFactor', [user, publicUser, call])
      return null
    }
  })
  t.same(errorOf(await signIn(h.app, { email: h.person.email, password: h.person.password })), [503, 201])
  t.match(h.log(), 'secondFactor failed: Error (EHOST)')
  // the user, its public view, and the secrets among the settings (not the IP or the site name, which the log shows anyway)
  assertNotLogged(t, h.log(), [h.person, gate.values[0], gate.values[1], HS_SECRET, authCode], 'secondFactor')
})

t.test('a JwtLoginError from a host port keeps its answer, not what the port attached to it', async (t) => {
  const h = await host(t, {}, {
    secondFactor: async (_user, publicUser) => {
      throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', { cause: echoing('gate', [publicUser]) })
    }
  })
  t.same(errorOf(await signIn(h.app, { email: h.person.email, password: h.person.password })), [403, 206])
  assertNotLogged(t, h.log(), [h.person], 'gate')
})

t.test('404s under the prefix, in both URL forms, log no value of the query', async (t) => {
  const h = await host(t)
  const password = `S3cret-pass-${unique()}`
  const email = `Secret.Person+${unique()}@example.com`
  const query = `password=${encodeURIComponent(password)}&email=${encodeURIComponent(email)}`
  const requests: Array<[string, 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', string]> = [
    ['wrong method', 'DELETE', `${PREFIX}/auth?${query}`],
    ['wrong method', 'PATCH', `${PREFIX}/user/reset_password?${query}`],
    ['trailing slash', 'POST', `${PREFIX}/auth/?${query}`],
    ['typo', 'POST', `${PREFIX}/atuh?${query}`],
    ['the prefix alone', 'GET', `${PREFIX}?${query}`],
    ['wrong method, query form', 'GET', `/?rest_route=${PREFIX}/auth&${query}`],
    ['trailing slash, query form', 'POST', `/?rest_route=${PREFIX}/auth/&${query}`],
    ['typo, query form', 'PUT', `/?rest_route=${PREFIX}/atuh&${query}`],
    ['trailing slash, /index.php query form', 'POST', `/index.php?rest_route=${PREFIX}/auth/&${query}`],
    ['other letter case, /index.php query form', 'POST', `/index.php?rest_route=${PREFIX}/AUTH&${query}`]
  ]
  for (const [name, method, url] of requests) {
    const res = await h.app.inject({ method, url })
    t.same(errorOf(res), [404, 207], `${name} (${method} ${url.split('?')[0] as string}): 404 / 207`)
  }
  const log = h.log()
  t.match(log, '"msg":"incoming request"', 'the requests are logged')
  t.match(log, `"url":"${PREFIX}/atuh?password=[redacted]&email=[redacted]"`, 'with the parameter names only')
  assertNotLogged(t, log, [password, email], '404s')
})

t.test('a port method that throws at once, instead of answering a rejected promise, fails as a rejection does', async (t) => {
  const email = `${unique()}@example.com`
  const users = Object.assign(new MemoryUserAdapter(), { findByEmail: (sent: string) => { throw echoing('findByEmail', [sent]) } })
  const error = await guardPorts({ users }).users.findByEmail(email).catch((e: unknown) => e)
  t.ok(error instanceof HostPortError, 'the guard\'s error')
  t.match((error as HostPortError).message, 'users.findByEmail failed: Error (EHOST)')
  t.notMatch((error as HostPortError).message, email, 'without the value it received')
})

t.test('the guards keep the ports as they are', async (t) => {
  t.test('toPublicUser stays synchronous, `this` is the adapter, an optional method comes and goes with the adapter\'s', async (t) => {
    class Adapter extends MemoryUserAdapter {
      readonly #calls: string[] = []
      get calls (): string[] { return this.#calls }
      override async findById (id: number): Promise<MemoryUser | null> {
        this.#calls.push(`findById:${id}`)
        return await super.findById(id)
      }
    }
    const users = new Adapter()
    const alice = await users.addUser(secretPerson())
    const guarded = guardPorts({ users }).users
    t.same(guarded.toPublicUser(alice), users.toPublicUser(alice), 'no promise')
    t.equal(await guarded.findById(alice.ID), alice)
    t.same(users.calls, [`findById:${alice.ID}`], 'the private field of the class was reached')
    t.type(guarded.createUser, 'function')
    Object.defineProperty(users, 'createUser', { value: undefined })
    t.equal(guarded.createUser, undefined, 'gone from the adapter, gone from the guard')
    t.notOk('addUser' in guarded, 'nothing else of the adapter shows')
    const twoFactor = guardPorts({ users, twoFactor: { port: new MemoryTwoFactorStore(), issuer: 'Example' } }).twoFactor
    t.match(twoFactor, { issuer: 'Example', mailer: undefined }, 'a two-factor option without a mailer keeps none')
  })

  t.test('passwordFingerprint comes and goes with the adapter\'s, sync or not; a throw or a rejection is redacted', async (t) => {
    const users = new MemoryUserAdapter()
    const alice = await users.addUser(secretPerson())
    const guarded = guardPorts({ users }).users
    const fingerprint = (value: ((user: MemoryUser) => unknown) | undefined): void => { Object.defineProperty(users, 'passwordFingerprint', { value, configurable: true }) }
    fingerprint(undefined)
    t.equal(guarded.passwordFingerprint, undefined, 'absent while the adapter lacks it')
    fingerprint((user) => user.passwordHash)
    t.equal(await guarded.passwordFingerprint?.(alice), alice.passwordHash, 'a value')
    fingerprint(async (user) => user.passwordHash)
    t.equal(await guarded.passwordFingerprint?.(alice), alice.passwordHash, 'or a promise of one')
    const refusal = { name: 'HostPortError', message: 'users.passwordFingerprint failed: Error: no fingerprint for [redacted]' }
    fingerprint((user) => { throw new Error(`no fingerprint for ${user.user_email}`) })
    await t.rejects(async () => await guarded.passwordFingerprint?.(alice), refusal, 'a throw')
    fingerprint(async (user) => { throw new Error(`no fingerprint for ${user.user_email}`) })
    await t.rejects(async () => await guarded.passwordFingerprint?.(alice), refusal, 'a rejection')
  })

  t.test('what a port may throw besides an Error', async (t) => {
    const email = `Secret.Person+${unique()}@example.com`
    const users = new MemoryUserAdapter()
    const failing = (thrown: unknown): Partial<MemoryUserAdapter> => ({ findByEmail: async () => { throw thrown } })
    const cases: Array<[string, unknown, string]> = [
      ['a string', `no user ${email}`, 'users.findByEmail failed: string: no user [redacted]'],
      ['an object with a message and a number code', { message: `no user ${email.toLowerCase()}`, code: 42 }, 'users.findByEmail failed: Object (42): no user [redacted]'],
      ['an object without a prototype', Object.assign(Object.create(null), { code: email }), 'users.findByEmail failed: Object ([redacted])'],
      ['null', null, 'users.findByEmail failed: null'],
      ['a number', 7, 'users.findByEmail failed: number']
    ]
    for (const [name, thrown, message] of cases) {
      const guarded = guardPorts({ users: Object.assign(users, failing(thrown)) }).users
      const error = await guarded.findByEmail(email).catch((error: unknown) => error)
      t.type(error, HostPortError, name)
      t.equal((error as Error).message, message, name)
    }
  })

  t.test('values it cannot look through withhold the message; a cycle is looked through once', async (t) => {
    const WITHHELD = '[message withheld: too many values to cut out of it]'
    const password = `S3cret-pass-${unique()}`
    const deep: Record<string, unknown> = { password }
    let nested = deep
    for (let depth = 0; depth < 10; depth++) nested = (nested.next = {}) as Record<string, unknown>
    const many = Array.from({ length: 2001 }, (_, index) => `value-${index}`)
    const unreadable = Object.defineProperty({}, 'password', { enumerable: true, get: () => { throw new Error('no') } })
    const cycle: Record<string, unknown> = { password }
    cycle.self = cycle
    t.equal(loggedError(new Error(`bad ${password}`), [deep]).message, WITHHELD, 'too deep')
    t.equal(loggedError(new Error(`bad ${password}`), [many]).message, WITHHELD, 'too many')
    t.equal(loggedError(new Error(`bad ${password}`), [unreadable]).message, WITHHELD, 'a getter that throws')
    t.equal(loggedError(new Error(`bad ${password}`), [cycle]).message, 'bad [redacted]', 'a cycle')
    t.same({ ...loggedError(new TypeError(`bad ${encodeURIComponent(password.toUpperCase())}`), [password]) }, { type: 'TypeError', message: 'bad [redacted]' }, 'URL-encoded, in another case')
    t.same({ ...loggedError(new Error('down'), ['', 1]) }, { type: 'Error', message: 'down' }, 'nothing to cut out')
    t.same({ ...loggedError(new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error(`store refused ${password}`) }), [password]) }, { type: 'Error', message: 'store refused [redacted]' }, 'a jwt-login error is told by the failure it wraps')
    t.same({ ...loggedError(new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')) }, { type: 'JwtLoginError', code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', message: 'A dependency is unavailable; nothing was changed.' }, 'or by itself when it wraps none')
  })
})

t.test('the request\'s own values as the second net: secret fields always, other fields only when long enough to matter', async (t) => {
  const h = await twoFactorHost(t, 'totp')
  const jwt = await interim(h)
  // a port whose error quotes the code and the letter `e` (which the request also sent, as `q`; `n` is no string to cut)
  h.port.getTotpSecret = async () => { throw new Error('connection refused while checking 123456 with e') }
  const res = await h.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: jwt, code: '123456', q: 'e', n: 5 } })
  t.same(errorOf(res), [503, 201])
  t.match(h.log(), 'twoFactor.port.getTotpSecret failed: Error: connection refused while checking [redacted] with e', 'the code is cut; a one-letter field of no meaning does not shred the line')
})

/** A memory store whose reads, once `failWith` is set, throw an error quoting it. */
class QuotingStore extends MemoryStore {
  failWith: string | null = null

  override async get (key: string): Promise<string | null> {
    if (this.failWith !== null) throw new Error(this.failWith)
    return await super.get(key)
  }

  override async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    if (this.failWith !== null) throw new Error(this.failWith)
    return await super.getMany(keys)
  }
}

t.test('cookie mode: a store error quoting the bare Bearer token and the refresh cookie logs neither', async (t) => {
  const store = new QuotingStore()
  const h = await host(t, { refresh: { enabled: true, cookie: { enabled: true } } }, { store })
  const res = await signIn(h.app, { email: h.person.email, password: h.person.password })
  const { jwt, csrf_token: csrf } = res.json().data as { jwt: string, csrf_token: string }
  const line = [res.headers['set-cookie']].flat().find(header => header?.startsWith(`${REFRESH_COOKIE}=`)) as string
  const cookie = line.slice(REFRESH_COOKIE.length + 1, line.indexOf(';'))
  t.ok(cookie.length > 0 && jwt.length > 0, 'signed in with a refresh cookie')
  store.failWith = `store refused token ${jwt} for cookie ${cookie}`
  const headers = { cookie: `${REFRESH_COOKIE}=${cookie}`, [CSRF_HEADER]: csrf, authorization: `Bearer ${jwt}` }
  // refresh takes the cookie (its gate reads no Bearer token); revoke takes both, the token from the header
  for (const route of ['/auth/refresh', '/auth/revoke']) {
    const failed = await h.app.inject({ method: 'POST', url: `${PREFIX}${route}`, headers, payload: {} })
    t.same(errorOf(failed), [503, 201], `${route}: an unavailable store`)
  }
  const log = h.log()
  t.equal(log.split('store refused token [redacted] for cookie [redacted]').length - 1, 2, 'both failures are logged, both values cut')
  assertNotLogged(t, log, [jwt, cookie], 'cookie mode')
})

t.test('a failure before the plugin\'s first hook (a host hook) still cuts the Authorization header and its bare token', async (t) => {
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization as string
    throw new Error(`proxy refused ${header.slice(header.indexOf(' ') + 1)} of ${header}`)
  })
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  t.teardown(() => app.close())
  const token = `abc.${unique()}.ghi`
  const basic = Buffer.from(`user:${unique()}`).toString('base64')
  for (const header of [`Bearer ${token}`, `Basic ${basic}`]) {
    const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: { authorization: header } })
    t.same(errorOf(res), [503, 201], `${header.split(' ')[0] as string}: a dependency failed, with no request state taken`)
  }
  const log = lines.join('')
  t.match(log, 'proxy refused [redacted] of [redacted]', 'the bare token is cut, and the header whole')
  t.match(log, `proxy refused ${basic} of [redacted]`, 'another scheme: the header whole is cut')
  assertNotLogged(t, log, [token], 'no state')
})

t.test('the auth-code parameter is cut by the name in the request\'s own settings, not by the name a reload gave since', async (t) => {
  const keys = [{ kid: 'k1', secret: HS_SECRET }]
  let input: SettingsInput = { tokens: { keys } }
  const late: { app?: FastifyInstance } = {}
  // a code shorter than the 6 characters from which any field is cut: only its parameter's name has it cut
  const code = 'Zq7xK'
  const h = await host(t, {}, {
    settings: async () => input,
    secondFactor: async () => {
      // the settings change while the request runs: its snapshot still names AUTH_KEY
      input = { tokens: { keys }, authCodes: { parameter: 'OTHER_KEY' } }
      await (late.app as FastifyInstance).jwtLogin.reloadSettings()
      throw new Error(`gate refused the auth code ${code}`)
    }
  })
  late.app = h.app
  t.same(errorOf(await signIn(h.app, { email: h.person.email, password: h.person.password, AUTH_KEY: code })), [503, 201])
  t.equal(h.app.jwtLogin.settings.authCodes.parameter, 'OTHER_KEY', 'the reload took effect during the request')
  t.match(h.log(), 'gate refused the auth code [redacted]', 'the short code is cut: AUTH_KEY is the parameter of the request\'s snapshot')
  assertNotLogged(t, h.log(), [code], 'auth code')
})

t.test('no value of the query in any log line, for every method on every URL form the plugin serves, CORS on and off', async (t) => {
  const ALIAS = '/wp-json/simple-jwt-login/v1'
  const password = `S3cret-pass-${unique()}`
  const jwt = `eyJ.${unique()}.sig`
  const email = `Secret.Person+${unique()}@example.com`
  const query = `password=${encodeURIComponent(password)}&JWT=${encodeURIComponent(jwt)}&email=${encodeURIComponent(email)}`
  // PURGE: a method Node parses and Fastify does not route
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PURGE'] as const
  const forms: Array<[string, string, boolean]> = [
    ['the prefix', `${PREFIX}/auth?${query}`, false],
    ['an unknown path under the prefix', `${PREFIX}/nope/x?${query}`, false],
    ['the alias', `${ALIAS}/auth?${query}`, false],
    ['the alias alone', `${ALIAS}?${query}`, false],
    ['?rest_route= of the prefix', `/?rest_route=${PREFIX}/auth&${query}`, true],
    ['?rest_route= of the alias', `/?rest_route=/simple-jwt-login/v1/auth&${query}`, true],
    ['?rest_route= of another namespace', `/?rest_route=/other/v1/x&${query}`, true],
    ['/ without rest_route', `/?${query}`, true],
    ['the alias in another case, a trailing slash', `/wp-json/SIMPLE-jwt-login/v1/Auth/?${query}`, false],
    ['the alias under /index.php', `/index.php/wp-json/simple-jwt-login/V1/auth?${query}`, false],
    ['an unknown path under the alias in another case', `/wp-json/Simple-JWT-Login/v1/nope/x/?${query}`, false],
    ['/index.php?rest_route= of the prefix', `/index.php?rest_route=${PREFIX}/auth&${query}`, true],
    ['/index.php?rest_route= of the alias, in another case', `/index.php?rest_route=/SIMPLE-jwt-login/v1/auth/&${query}`, true],
    ['/index.php?rest_route= of another namespace', `/index.php?rest_route=/other/v1/x&${query}`, true],
    ['/index.php without rest_route', `/index.php?${query}`, true]
  ]
  const configs: Array<[string, Partial<SettingsInput>, Partial<JwtLoginOptions>]> = [
    ['CORS off', {}, { aliases: [ALIAS] }],
    ['CORS on', { cors: { enabled: true, origins: ['https://app.example.com'] } }, { aliases: [ALIAS] }],
    ['restRoute off', {}, { aliases: [ALIAS], restRoute: false }]
  ]
  for (const [config, settings, options] of configs) {
    const h = await host(t, settings, options)
    for (const [form, url, onRoot] of forms) {
      // `/` and `/index.php` are no paths of the plugin's with restRoute off
      if (onRoot && options.restRoute === false) continue
      for (const method of methods) {
        // a method Fastify does not route, on `/` or `/index.php`: the host's 404 takes it before any route (docs/security.md)
        if (onRoot && method === 'PURGE') continue
        const res = await h.app.inject({ method, url, headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } })
        t.ok(res.statusCode < 500, `${config}, ${method} ${form}: ${res.statusCode}, no 5xx`)
      }
    }
    const log = h.log()
    t.match(log, '"msg":"incoming request"', `${config}: the requests are logged`)
    t.match(log, '"method":"PURGE"', `${config}: the unrouted method too`)
    assertNotLogged(t, log, [password, jwt, email], config)
  }
})
