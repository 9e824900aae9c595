// Issue 43's rule, as a test: every span and span event of a full run of the flows is walked, and none may carry a secret, an email or a token.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { context, trace, type Span } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { registerOtel } from '../helpers/otel.js'
import jwtLogin, { type SettingsInput } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { mailCode } from '../helpers/account.js'
import { afterAnswers, codeOf, RecordingMailBox } from '../helpers/email-sign-in.js'
import { ALICE, codeIn, HS_SECRET, testClock, totpAt } from '../helpers/fixtures.js'
import { claimsOf, PREFIX } from '../helpers/http.js'
import { authenticator, PASSKEY_SETTINGS } from '../helpers/passkeys.js'
import { BOB } from '../helpers/two-factor.js'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'

const otel = registerOtel()
const tracer = trace.getTracer('host')

const NEWBIE = { email: 'newbie@example.org', password: 'a long enough new password', login: 'newbie_login' }
const CAROL = { email: 'carol@example.net', password: 'carol has her own passphrase', login: 'carol_login' }
const SCOPES = ['orders:read']
/** The client's address and browser: personal data, never in a span. */
const CLIENT_IP = '198.51.100.23'
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) JaneRoesLaptop/1.0'
/** The host's note on a lock: free text that names a person. */
const LOCK_NOTE = 'Locked after a call from Jane Roe, +1 555 0100'

const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/
const JWT = /eyJ[\w-]+\.[\w-]+/
const ARGON2 = '$argon2'

/** The fields of an answer that hold a secret (a token, a code, a key, a credential's id). */
const SECRET_FIELDS = new Set(['jwt', 'refresh_token', 'device_token', 'csrf_token', 'secret', 'otpauth_uri', 'backup_codes', 'key', 'code', 'challenge', 'id', 'session_id', 'sid'])

/** What the run saw that no span may carry. */
class Secrets {
  readonly values = new Set<string>()

  /** Keeps each string (at least 4 characters long, so "1" or "abc" stand for no secret). */
  add (...values: unknown[]): void {
    for (const value of values) {
      if (Array.isArray(value)) this.add(...value)
      else if (typeof value === 'string' && value.length >= 4) this.values.add(value)
    }
  }

  /** Every secret field of an answer's JSON, at any depth, and every email and JWT in it. */
  fromAnswer (res: LightMyRequestResponse): void {
    const visit = (value: unknown, key: string): void => {
      if (typeof value === 'string') {
        if (SECRET_FIELDS.has(key) || EMAIL.test(value) || JWT.test(value)) this.add(value)
      } else if (Array.isArray(value)) {
        for (const item of value) visit(item, key)
      } else if (typeof value === 'object' && value !== null) {
        for (const [field, item] of Object.entries(value)) visit(item, field)
      }
    }
    if (res.body !== '') visit(res.json(), '')
    for (const cookie of [res.headers['set-cookie'] ?? []].flat()) this.add(cookie.split(';')[0]?.split('=').slice(1).join('='))
  }
}

/** What the walk of the finished spans found. */
interface Walk {
  spans: number
  events: number
  flows: Set<string>
  problems: string[]
}

/** Walks every finished span: its name, every attribute, every event's name and attributes. */
function walk (secrets: Secrets, { userIds }: { userIds: boolean }): Walk {
  const found: Walk = { spans: 0, events: 0, flows: new Set(), problems: [] }
  const check = (where: string, value: unknown): void => {
    const text = String(value)
    for (const secret of secrets.values) if (text.includes(secret)) found.problems.push(`${where}: a secret (${secret.slice(0, 12)}…)`)
    if (EMAIL.test(text)) found.problems.push(`${where}: an email (${text})`)
    if (JWT.test(text)) found.problems.push(`${where}: a JWT`)
    if (text.includes(ARGON2)) found.problems.push(`${where}: a password hash`)
  }
  const attributes = (where: string, values: Record<string, unknown> = {}): void => {
    for (const [key, value] of Object.entries(values)) {
      check(`${where} ${key}`, value)
      check(`${where} (key)`, key)
      if (!userIds && (key === 'user.id' || key === 'jwt_login.actor_id')) found.problems.push(`${where}: ${key} without telemetry.userIds`)
    }
  }
  for (const span of otel.finished()) {
    found.spans++
    if (span.name.startsWith('jwt-login.')) found.flows.add(span.name)
    check(`span ${span.name}`, span.name)
    attributes(`span ${span.name}`, span.attributes)
    check(`span ${span.name} status`, span.status.message ?? '')
    for (const event of span.events) {
      found.events++
      check(`event ${event.name} of ${span.name}`, event.name)
      attributes(`event ${event.name} of ${span.name}`, event.attributes)
    }
  }
  return found
}

interface Kit {
  app: FastifyInstance
  users: MemoryUserAdapter
  mail: RecordingMailBox
  clock: ReturnType<typeof testClock>
  secrets: Secrets
  /** A request to the plugin; its answer's secrets are kept; it throws unless the status is `expected`. */
  call: (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options?: { jwt?: string, body?: Record<string, unknown>, expected?: number, headers?: Record<string, string> }) => Promise<Record<string, any>>
  /** The next mail sent (after the work queued after the answers ran); its text's secrets kept. */
  mailed: () => Promise<string>
}

/**
 * A host with every feature on: registration and delete, the account's
 * routes, two-factor with trusted devices, passkeys, password reset,
 * sign-in by email, API keys, refresh and sessions. Each request runs in a
 * host span of its own (as a host's HTTP instrumentation would make), so
 * the gates' store calls and events are traced too.
 */
async function buildKit (t: Test, settings: Partial<SettingsInput> = {}): Promise<Kit> {
  const clock = testClock()
  const users = new MemoryUserAdapter()
  await users.addUser({ ...ALICE, emailVerified: true })
  await users.addUser({ ...BOB, emailVerified: true })
  await users.addUser({ ...CAROL, emailVerified: true })
  const mail = new RecordingMailBox()
  const secrets = new Secrets()
  secrets.add(HS_SECRET, CLIENT_IP, USER_AGENT, 'JaneRoesLaptop')
  for (const who of [ALICE, BOB, CAROL, NEWBIE]) secrets.add(who.email, who.password, who.login)
  const app = Fastify()
  const spans = new WeakMap<object, Span>()
  app.addHook('onRequest', (request, _reply, done) => {
    const span = tracer.startSpan('host.request')
    spans.set(request, span)
    context.with(trace.setSpan(context.active(), span), done)
  })
  app.addHook('onResponse', async (request) => { spans.get(request)?.end() })
  await app.register(jwtLogin, {
    users,
    clock,
    mailer: mail,
    twoFactor: { port: new MemoryTwoFactorStore() },
    passkeys: { port: new MemoryPasskeyStore() },
    settings: {
      tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
      refresh: { enabled: true },
      sessions: { enabled: true },
      resetPassword: { enabled: true, mail: { retries: 0 } },
      account: { enabled: true },
      users: { register: { enabled: true, verifyEmail: true }, delete: { enabled: true } },
      twoFactor: { rememberDevice: { enabled: true } },
      passkeys: PASSKEY_SETTINGS,
      emailSignIn: { enabled: true },
      apiKeys: { enabled: true, scopes: SCOPES },
      ...settings
    }
  })
  app.get('/orders', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true, scopes: ['orders:read'] }) }, async (request) => ({ user: request.jwtLogin?.user.ID }))
  await app.ready()
  t.teardown(() => app.close())
  const call: Kit['call'] = async (method, path, { jwt, body, expected = 200, headers = {} } = {}) => {
    const res = await app.inject({
      method,
      url: path === '/orders' ? path : `${PREFIX}${path}`,
      headers: { 'user-agent': USER_AGENT, ...(jwt === undefined ? {} : { authorization: `Bearer ${jwt}` }), ...headers },
      remoteAddress: CLIENT_IP,
      ...(body === undefined ? {} : { payload: body })
    })
    secrets.fromAnswer(res)
    if (res.statusCode !== expected) throw new Error(`${method} ${path}: ${res.statusCode}, not ${expected}: ${res.body}`)
    return res.body === '' ? {} : res.json().data ?? res.json()
  }
  let taken = 0
  const mailed: Kit['mailed'] = async () => {
    await afterAnswers()
    const message = mail.sent[taken++]
    if (message === undefined) throw new Error('no mail was sent')
    for (const match of message.text.matchAll(/code(?: is)?:?\s+([A-Za-z0-9-]{6,})/g)) secrets.add(match[1])
    for (const match of message.text.matchAll(/https?:\/\/\S+/g)) secrets.add(match[0], match[0].split('#')[1])
    return message.text
  }
  return { app, users, mail, clock, secrets, call, mailed }
}

/** A TOTP code of a step no code was used in yet (the clock moves 30 s first); kept as a secret. */
async function freshTotp (kit: Kit, secret: string): Promise<string> {
  kit.clock.advance(30_000)
  const code = await totpAt(secret, kit.clock.now)
  kit.secrets.add(code)
  return code
}

/** Every flow of the plugin but the providers', in a long sequence; answers one secret of each kind it saw. */
async function fullRun (kit: Kit): Promise<Record<string, unknown>> {
  const { call, mailed, secrets } = kit
  // registration, with the mailed code that verifies the address; a sign-in; the account
  await call('POST', '/users', { body: NEWBIE })
  const newbieJwt = (await call('POST', '/auth', { body: { email: NEWBIE.email, password: NEWBIE.password } })).jwt as string
  await call('POST', '/account/email/verify', { jwt: newbieJwt, body: { code: 'WRONGCODE' }, expected: 400 })
  await call('POST', '/account/email/verify', { jwt: newbieJwt, body: { code: mailCode({ text: await mailed() } as never) } })
  await call('GET', '/account', { jwt: newbieJwt })

  // password sign-ins: a wrong one, by email and by login, then a right one
  await call('POST', '/auth', { body: { email: ALICE.email, password: 'a wrong password of alice' }, expected: 401 })
  secrets.add('a wrong password of alice')
  await call('POST', '/auth', { body: { login: ALICE.login, password: ALICE.password } })
  const alice = await call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password } })
  secrets.add(claimsOf(alice.jwt).sid)

  // TOTP: enrolment and its confirmation, then a sign-in that asks for it; a wrong code, the right one, a trusted device, a backup code
  const started = await call('POST', '/account/2fa/totp', { jwt: alice.jwt })
  const totpSecret = started.secret as string
  await call('POST', '/account/2fa/totp/confirm', { jwt: alice.jwt, body: { code: '000000' }, expected: 400 })
  const confirmed = await call('POST', '/account/2fa/totp/confirm', { jwt: alice.jwt, body: { code: await freshTotp(kit, totpSecret) } })
  const backupCodes = confirmed.backup_codes as string[]
  const interim = (await call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password } })).jwt as string
  await call('POST', '/auth/2fa', { body: { JWT: interim, code: '999999' }, expected: 401 })
  const strong = await call('POST', '/auth/2fa', { body: { JWT: interim, code: await freshTotp(kit, totpSecret), remember_device: true } })
  const device = await call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password, device_token: strong.device_token } })
  secrets.add(device.jwt)
  const second = (await call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password } })).jwt as string
  await call('POST', '/auth/2fa', { body: { JWT: second, code: backupCodes[0] } })
  await call('POST', '/account/2fa/backup-codes', { jwt: strong.jwt })
  await call('GET', '/account', { jwt: strong.jwt })

  // passkeys: enrolment, the list and a rename, a passwordless sign-in, a passkey as the second factor, a step-up
  const phone = authenticator()
  const creation = await call('POST', '/passkeys/register/options', { jwt: strong.jwt }) as PublicKeyCredentialCreationOptionsJSON
  const credential = phone.register(creation)
  secrets.add(credential.id, credential.rawId, creation.challenge, creation.user.id)
  await call('POST', '/passkeys/register', { jwt: strong.jwt, body: { credential, name: 'Phone' } })
  await call('GET', '/passkeys', { jwt: strong.jwt })
  await call('PATCH', `/passkeys/${credential.id}`, { jwt: strong.jwt, body: { name: 'My phone' } })
  const request = await call('POST', '/auth/passkey/options') as PublicKeyCredentialRequestOptionsJSON
  const passwordless = await call('POST', '/auth/passkey', { body: { credential: phone.authenticate(request) } })
  const third = (await call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password } })).jwt as string
  const second2fa = await call('POST', '/auth/2fa/passkey/options', { jwt: third }) as PublicKeyCredentialRequestOptionsJSON
  await call('POST', '/auth/2fa', { jwt: third, body: { passkey: phone.authenticate(second2fa) } })
  await call('POST', '/auth/step-up', { jwt: passwordless.jwt, body: { password: ALICE.password } })
  const stepOptions = await call('POST', '/auth/step-up/options', { jwt: passwordless.jwt }) as PublicKeyCredentialRequestOptionsJSON
  await call('POST', '/auth/step-up', { jwt: passwordless.jwt, body: { passkey: phone.authenticate(stepOptions) } })
  await call('PUT', '/account/2fa', { jwt: strong.jwt, body: { method: 'passkey' } })
  await call('DELETE', '/account/2fa', { jwt: strong.jwt })

  // refresh: rotated, retried, a reuse; validate both ways; the sessions; revoke
  const bob = await call('POST', '/auth', { body: { email: BOB.email, password: BOB.password } })
  const rotated = await call('POST', '/auth/refresh', { body: { refresh_token: bob.refresh_token } })
  await call('POST', '/auth/refresh', { body: { refresh_token: bob.refresh_token } })
  const again = await call('POST', '/auth/refresh', { body: { refresh_token: rotated.refresh_token } })
  await call('POST', '/auth/refresh', { body: { refresh_token: bob.refresh_token }, expected: 401 })
  await call('POST', '/auth/refresh', { body: { refresh_token: again.refresh_token }, expected: 401 })
  const bobAgain = await call('POST', '/auth', { body: { email: BOB.email, password: BOB.password } })
  const bobOther = await call('POST', '/auth', { body: { email: BOB.email, password: BOB.password } })
  await call('GET', `/auth/validate?JWT=${encodeURIComponent(bobAgain.jwt as string)}`)
  await call('GET', '/auth/validate', { jwt: bobAgain.jwt })
  await call('POST', '/auth/validate', { body: { JWT: bobAgain.jwt } })
  await call('POST', '/auth/validate', { body: { JWT: 'eyJhbGciOiJIUzI1NiJ9.e30.bm90LWEtc2lnbmF0dXJl' }, expected: 401 })
  secrets.add('eyJhbGciOiJIUzI1NiJ9.e30.bm90LWEtc2lnbmF0dXJl')
  const sessions = await call('GET', '/sessions', { jwt: bobAgain.jwt })
  secrets.add(...(sessions.sessions as Array<{ id: string }>).map(session => session.id))
  await call('DELETE', `/sessions/${encodeURIComponent(claimsOf(bobOther.jwt).sid as string)}`, { jwt: bobAgain.jwt })
  await call('DELETE', '/sessions', { jwt: bobAgain.jwt })
  kit.clock.advance(1000) // tokens of the second that ended every session would be refused
  const bobLast = await call('POST', '/auth', { body: { email: BOB.email, password: BOB.password } })
  await call('POST', '/auth/revoke', { body: { JWT: bobLast.jwt } })
  await call('POST', '/auth/validate', { body: { JWT: bobLast.jwt }, expected: 401 })

  // password reset: the mailed code, a wrong one, the right one
  await call('POST', '/user/reset_password', { body: { email: BOB.email } })
  const resetCode = codeIn(await mailed())
  const resetPassword = 'bob chose a brand new passphrase'
  secrets.add(resetPassword)
  await call('PUT', '/user/reset_password', { body: { email: BOB.email, code: 'WRONG-CODE-1', new_password: resetPassword }, expected: 400 })
  await call('PUT', '/user/reset_password', { body: { email: BOB.email, code: resetCode, new_password: resetPassword } })
  await call('POST', '/user/reset_password', { body: { email: 'nobody@example.com' } })

  // sign-in by email: a code asked for, a wrong one, the right one
  await call('POST', '/auth/email', { body: { email: CAROL.email } })
  const emailCode = codeOf({ text: await mailed() } as never)
  await call('POST', '/auth/email/verify', { body: { email: CAROL.email, code: String((Number(emailCode) + 1) % 1e6).padStart(emailCode.length, '0') }, expected: 401 })
  const carol = await call('POST', '/auth/email/verify', { body: { email: CAROL.email, code: emailCode } })

  // the account: a new address asked for, confirmed, and reverted from the notice; the password changed
  const newAddress = 'carol@new.example.org'
  secrets.add(newAddress)
  await call('POST', '/account/email', { jwt: carol.jwt, body: { new_email: newAddress } })
  await call('POST', '/account/email/confirm', { jwt: carol.jwt, body: { code: mailCode({ text: await mailed() } as never) } })
  await call('POST', '/account/email/revert', { body: { email: CAROL.email, code: mailCode({ text: await mailed() } as never) } })
  kit.clock.advance(1000) // the revert ended every session of that second
  const carolAgain = await call('POST', '/auth', { body: { email: CAROL.email, password: CAROL.password } })
  const carolPassword = 'carol moved on to a longer one'
  secrets.add(carolPassword)
  await call('PUT', '/account/password', { jwt: carolAgain.jwt, body: { current_password: 'not her password', new_password: carolPassword }, expected: 401 })
  await call('PUT', '/account/password', { jwt: carolAgain.jwt, body: { current_password: CAROL.password, new_password: carolPassword } })
  await call('POST', '/account/email/verification', { body: { email: CAROL.email } })
  await call('GET', '/account/identities', { jwt: carolAgain.jwt })

  // API keys: made, listed, used on a host route (and a wrong one), deleted
  const made = await call('POST', '/account/api-keys', { jwt: carolAgain.jwt, body: { name: 'ci', scopes: SCOPES } })
  await call('GET', '/account/api-keys', { jwt: carolAgain.jwt })
  await call('GET', '/orders', { headers: { 'x-api-key': made.key } })
  const wrongKey = `${(made.key as string).slice(0, -6)}AAAAAA`
  secrets.add(wrongKey)
  await call('GET', '/orders', { headers: { 'x-api-key': wrongKey }, expected: 401 })
  await call('DELETE', `/account/api-keys/${encodeURIComponent(made.id as string)}`, { jwt: carolAgain.jwt })

  // a lock and its unlock by the host, in a span of its own: its note stays out
  await tracer.startActiveSpan('host.support', async (span) => {
    await kit.app.jwtLogin.lockUser(3, { reason: LOCK_NOTE })
    await call('POST', '/auth', { body: { email: CAROL.email, password: carolPassword }, expected: 403 })
    await kit.app.jwtLogin.unlockUser(3, { reason: LOCK_NOTE })
    span.end()
  })
  secrets.add(LOCK_NOTE, 'Jane Roe', '555 0100')

  // the newbie deletes their account
  const fresh = await call('POST', '/auth', { body: { email: NEWBIE.email, password: NEWBIE.password } })
  await call('DELETE', '/users', { jwt: fresh.jwt })
  await afterAnswers()
  return {
    access: alice.jwt,
    refresh: bob.refresh_token,
    interim,
    device: strong.device_token,
    totpSecret,
    backupCode: backupCodes[1],
    credential: credential.id,
    reset: resetCode,
    emailCode,
    apiKey: made.key,
    keyId: made.id
  }
}

const EXPECTED_FLOWS = [
  'sign_in', 'second_factor', 'refresh', 'validate', 'revoke', 'reset.request', 'reset.complete', 'passkey', 'step_up', 'sessions',
  'email_sign_in.request', 'email_sign_in.verify', 'register', 'account', 'account.delete', 'account.email_verification',
  'account.password', 'account.email_change', 'account.second_factor', 'account.identities', 'account.api_keys', 'account.passkeys'
].map(name => `jwt-login.${name}`)

t.test('a full run of the flows: no span, attribute or event carries a secret, an email, a token or a user ID', async (t) => {
  const kit = await buildKit(t)
  otel.spans.reset()
  const seen = await fullRun(kit)
  for (const [kind, secret] of Object.entries(seen)) t.ok(typeof secret === 'string' && kit.secrets.values.has(secret), `the ${kind} is looked for`)
  const found = walk(kit.secrets, { userIds: false })
  t.same(found.problems, [], 'nothing secret or personal in any span')
  t.ok(found.spans > 500, `a large run: ${found.spans} spans`)
  t.ok(found.events > 80, `and ${found.events} events`)
  t.ok(kit.secrets.values.size > 60, `${kit.secrets.values.size} secrets looked for`)
  t.same(EXPECTED_FLOWS.filter(name => !found.flows.has(name)), [], 'every flow but the providers\' ran')

  const events = otel.finished().flatMap(span => span.events)
  const locked = events.filter(event => event.name === 'user.locked')
  t.equal(locked.length, 1, 'the lock is an event of the host span')
  t.same(locked[0]?.attributes, {}, 'without the host\'s note')
  t.same(events.filter(event => event.name === 'user.unlocked').map(event => event.attributes), [{}])
  const names = new Set(events.map(event => event.name))
  for (const name of ['login.succeeded', 'login.failed', 'session.started', 'two_factor.code_accepted', 'refresh.reused', 'token.refreshed', 'api_key.created']) {
    t.ok(names.has(name), `${name} was seen`)
  }
})

t.test('the walk finds what it looks for', async (t) => {
  otel.spans.reset()
  const secrets = new Secrets()
  secrets.add('a-secret-value')
  for (const [attributes, events] of [
    [{ 'jwt_login.reason': 'has a-secret-value in it' }, {}],
    [{}, { 'jwt_login.reason': 'mail to someone@example.com' }],
    [{ token: 'eyJhbGciOiJIUzI1NiJ9.e30.x' }, {}],
    [{ hash: '$argon2id$v=19$m=65536' }, {}],
    [{}, { 'user.id': '7' }],
    [{ 'jwt_login.actor_id': '9' }, {}]
  ] as const) {
    const span = tracer.startSpan('probe', { attributes })
    span.addEvent('probe.event', events)
    span.end()
  }
  tracer.startSpan('a-secret-value').end()
  const found = walk(secrets, { userIds: false })
  t.equal(found.spans, 7)
  t.equal(found.events, 6)
  t.ok(found.problems.some(problem => problem.includes('a secret')))
  t.ok(found.problems.some(problem => problem.includes('an email')))
  t.ok(found.problems.some(problem => problem.includes('a JWT')))
  t.ok(found.problems.some(problem => problem.includes('a password hash')))
  t.ok(found.problems.some(problem => problem.includes('user.id without')))
  t.ok(found.problems.some(problem => problem.includes('jwt_login.actor_id without')))
  t.ok(found.problems.some(problem => problem.startsWith('span a-secret-value')), 'a span name too')
  t.same(walk(secrets, { userIds: true }).problems.filter(problem => problem.includes('without')), [], 'user.id is allowed with userIds')
})

t.test('with telemetry.userIds: user.id on the flow span and its events, and still no secret', async (t) => {
  const kit = await buildKit(t, { telemetry: { userIds: true } })
  otel.spans.reset()
  await kit.call('POST', '/auth', { body: { email: ALICE.email, password: ALICE.password } })
  await kit.call('POST', '/auth', { body: { email: ALICE.email, password: 'wrong, and kept out' }, expected: 401 })
  kit.secrets.add('wrong, and kept out')
  await tracer.startActiveSpan('host.support', async (span) => {
    await kit.app.jwtLogin.lockUser(1, { reason: LOCK_NOTE })
    span.end()
  })
  await afterAnswers()
  const found = walk(kit.secrets, { userIds: true })
  t.same(found.problems, [])
  const [signIn, refused] = otel.finished().filter(span => span.name === 'jwt-login.sign_in') as [ReadableSpan, ReadableSpan]
  t.equal(signIn.attributes['user.id'], '1', 'the user of the sign-in')
  t.same(signIn.events.map(event => [event.name, event.attributes?.['user.id']]).sort(), [['login.succeeded', '1'], ['session.started', '1']])
  t.equal(refused.attributes['jwt_login.outcome'], 'refused')
  const locked = otel.finished().flatMap(span => span.events).find(event => event.name === 'user.locked')
  t.same(locked?.attributes, { 'user.id': '1' }, 'the lock names its user, never the note')
})
