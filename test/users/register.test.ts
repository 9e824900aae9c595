// POST /users (register) through the routes: the switch, the answer and the sign-in it allows, every refusal, the auth code and its role, the per-IP count, signIn, the adapter's createUser, the events and the log.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { REFRESH_COOKIE } from '../../lib/http/browser.js'
import jwtLogin, {
  JwtLoginSettingsError, MemoryStore, type JwtLoginOptions, type NewUser, type PublicUser, type SettingsInput
} from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, PREFIX } from '../helpers/http.js'
import { adapterWithout, assertNotLogged, collect, KEYS, loggingHost, registrationError } from '../helpers/users.js'

const CREATED = 'User was successfully created.'
const NEWBIE = { email: 'newbie@example.org', password: 'a long enough new password' }
/** The fields of a public user: never a hash; `email_verified` is false until the address is proven. */
const PUBLIC_FIELDS = ['ID', 'display_name', 'email_verified', 'roles', 'user_email', 'user_login']

/** `users.register` on, with these settings of its own. */
const on = (register: Record<string, unknown> = {}): Partial<SettingsInput> => ({ users: { register: { enabled: true, ...register } } })

interface Kit {
  app: FastifyInstance
  users: MemoryUserAdapter
  clock: ReturnType<typeof testClock>
  /** Every line the host's logger wrote, at trace level. */
  lines: string[]
  register: (payload: unknown, remoteAddress?: string) => Promise<LightMyRequestResponse>
  signIn: (body: Record<string, unknown>) => Promise<LightMyRequestResponse>
}

/** A host logging at trace level into `lines`, alice seeded, the plugin with these settings over the HS256 key. */
async function buildKit (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}, users = new MemoryUserAdapter()): Promise<Kit> {
  await users.addUser(ALICE)
  const { app, clock, lines } = await loggingHost(t, users, settings, options)
  return {
    app,
    users,
    clock,
    lines,
    register: async (payload, remoteAddress) => await app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: payload as Record<string, unknown>, ...(remoteAddress === undefined ? {} : { remoteAddress }) }),
    signIn: async (body) => await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: body })
  }
}

t.test('off by default: 403 / 31, user.register_failed with the reason, and no user is created', async (t) => {
  const kit = await buildKit(t)
  const failed = collect(kit.app, 'user.register_failed')
  t.equal(kit.app.jwtLogin.settings.users.register.enabled, false, 'the default')
  t.same(errorOf(await kit.register(NEWBIE)), [403, 31])
  t.same(errorOf(await kit.register({})), [403, 31], 'the switch is checked before the fields')
  t.strictSame(failed, [
    { ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_REGISTER_DISABLED', errorCode: 31 },
    { ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_REGISTER_DISABLED', errorCode: 31 }
  ])
  t.equal(await kit.users.findByEmail(NEWBIE.email), null)
  assertNotLogged(t, kit.lines, [NEWBIE.password, NEWBIE.email])
})

t.test('on: email and password create a subscriber whose login and name are the email; the answer holds public fields only; the password signs in', async (t) => {
  const kit = await buildKit(t, on())
  const registered = collect(kit.app, 'user.registered')
  const failed = collect(kit.app, 'user.register_failed')
  const res = await kit.register(NEWBIE, '192.0.2.10')
  t.equal(res.statusCode, 200, res.body)
  const { data } = res.json()
  t.strictSame(Object.keys(data).sort(), ['display_name', 'email', 'id', 'login', 'message', 'roles', 'user'], 'no jwt without signIn')
  t.equal(data.message, CREATED)
  t.equal(data.id, 2, 'alice is 1')
  t.strictSame(data.user, { ID: 2, user_login: NEWBIE.email, user_email: NEWBIE.email, display_name: NEWBIE.email, roles: ['subscriber'], email_verified: false })
  t.strictSame(Object.keys(data.user).sort(), PUBLIC_FIELDS)
  t.strictSame(data.roles, ['subscriber'])
  t.notOk(res.body.includes('$argon2'), 'no hash in the answer')
  t.notOk(res.body.includes(NEWBIE.password), 'nor the password')
  t.strictSame(registered, [{ userId: 2, ip: '192.0.2.10' }])
  t.strictSame(failed, [])

  const stored = await kit.users.findByEmail(NEWBIE.email)
  t.ok(stored !== null && await kit.users.verifyPassword(stored, NEWBIE.password), 'stored with the password')
  t.equal((await kit.signIn(NEWBIE)).statusCode, 200, 'signs in by email with the password')
  t.equal((await kit.signIn({ username: NEWBIE.email, password: NEWBIE.password })).statusCode, 200, 'and by login, which is the email')
  t.same(errorOf(await kit.signIn({ ...NEWBIE, password: 'another long password' })), [401, 48], 'not with another password')
  assertNotLogged(t, kit.lines, [NEWBIE.password, NEWBIE.email])
})

t.test('user_login and display_name are used; display_name defaults to the login', async (t) => {
  const kit = await buildKit(t, on())
  const named = await kit.register({ ...NEWBIE, user_login: 'newbie', display_name: 'New Bie' })
  t.equal(named.statusCode, 200, named.body)
  t.strictSame(named.json().data.user, { ID: 2, user_login: 'newbie', user_email: NEWBIE.email, display_name: 'New Bie', roles: ['subscriber'], email_verified: false })
  t.equal((await kit.signIn({ username: 'newbie', password: NEWBIE.password })).statusCode, 200, 'signs in by the login')

  const unnamed = await kit.register({ email: 'other@example.org', password: NEWBIE.password, user_login: 'other' })
  t.equal(unnamed.statusCode, 200, unnamed.body)
  t.equal(unnamed.json().data.user.display_name, 'other', 'the name shown is the login')

  const mixedCase = await kit.register({ email: 'Mixed.Case@Example.org', password: NEWBIE.password })
  t.equal(mixedCase.statusCode, 200, mixedCase.body)
  t.match(mixedCase.json().data.user, { user_login: 'Mixed.Case@Example.org', user_email: 'mixed.case@example.org' }, 'the login is the email as sent; the memory adapter stores the email lower-cased')
})

t.test('the SDK\'s RegisterUserInterface body, every field present and most of them null, registers', async (t) => {
  const kit = await buildKit(t, on())
  const sdkBody = {
    email: NEWBIE.email,
    password: NEWBIE.password,
    user_login: null,
    user_nicename: null,
    user_url: null,
    display_name: null,
    nickname: null,
    first_name: null,
    last_name: null,
    description: null,
    rich_editing: null,
    syntax_highlighting: null,
    comment_shortcuts: null,
    admin_color: null,
    use_ssl: null,
    user_registered: null,
    user_activation_key: null,
    spam: null,
    show_admin_bar_front: null,
    locale: null,
    user_meta: null
  }
  const res = await kit.register(sdkBody)
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json().data.user, { user_login: NEWBIE.email, display_name: NEWBIE.email }, 'null user_login and display_name read as absent')

  const withExtras = await kit.register({ ...sdkBody, email: 'extras@example.org', first_name: 'Ex', use_ssl: true, user_meta: { plan: 'gold' } })
  t.equal(withExtras.statusCode, 200, 'the other profile fields are accepted and ignored, filled in or not')
  t.strictSame(Object.keys(withExtras.json().data.user).sort(), PUBLIC_FIELDS)
})

t.test('a missing email or password is 400 / 35, null and empty included; a field that is no string is 400 / 203', async (t) => {
  const kit = await buildKit(t, on())
  const failed = collect(kit.app, 'user.register_failed')
  const missing: Record<string, unknown> = {
    'no body fields': {},
    'no password': { email: NEWBIE.email },
    'no email': { password: NEWBIE.password },
    'null email': { email: null, password: NEWBIE.password },
    'null password': { email: NEWBIE.email, password: null },
    'empty email': { email: '', password: NEWBIE.password },
    'empty password': { email: NEWBIE.email, password: '' },
    'only a user_login': { user_login: 'newbie', password: NEWBIE.password }
  }
  for (const [name, body] of Object.entries(missing)) t.same(errorOf(await kit.register(body)), [400, 35], name)
  t.ok(failed.length === Object.keys(missing).length && failed.every(event => event.reason === 'ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING' && event.errorCode === 35), 'one user.register_failed each')

  t.same(errorOf(await kit.register({ email: 42, password: NEWBIE.password })), [400, 203], 'a number is a malformed request')
  t.same(errorOf(await kit.register({ email: NEWBIE.email, password: 'has a \u0000 NUL in it' })), [400, 203], 'a NUL is a malformed request')
  t.equal(await kit.users.findByEmail(NEWBIE.email), null, 'nothing created')
})

t.test('a malformed email, or a login (or an email as the login) over 60 characters, is 400 / 36', async (t) => {
  // every attempt counts per IP: more than the default 10 here
  const kit = await buildKit(t, on({ perIp: { max: 100 } }))
  const failed = collect(kit.app, 'user.register_failed')
  for (const email of ['not-an-email', 'two@@example.org', 'nodomain@', '@example.org', 'no-dot@localhost', 'space in@example.org', `${'a'.repeat(250)}@example.org`]) {
    t.same(errorOf(await kit.register({ email, password: NEWBIE.password })), [400, 36], JSON.stringify(email.slice(0, 30)))
  }
  t.same(errorOf(await kit.register({ ...NEWBIE, user_login: 'x'.repeat(61) })), [400, 36], 'a login of 61 characters')
  const longEmail = `${'e'.repeat(50)}@example.org`
  t.same(errorOf(await kit.register({ email: longEmail, password: NEWBIE.password })), [400, 36], 'an email of 62 characters, as the login')
  t.equal(failed.at(-1)?.reason, 'ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID')

  const sixty = await kit.register({ ...NEWBIE, user_login: 'x'.repeat(60) })
  t.equal(sixty.statusCode, 200, 'a login of 60 characters')
  const emoji = await kit.register({ email: 'emoji@example.org', password: NEWBIE.password, user_login: '😀'.repeat(60) })
  t.same(errorOf(emoji), [400, 229], 'sixty characters are counted as characters, not UTF-16 units: within the length, refused as a login WordPress would change')
  const withLogin = await kit.register({ email: longEmail, password: NEWBIE.password, user_login: 'long-email' })
  t.equal(withLogin.statusCode, 200, 'a long email is fine with a short login')
})

t.test('allowedDomains: only those domains, matched case-insensitively and exactly; another is 403 / 37', async (t) => {
  const kit = await buildKit(t, on({ allowedDomains: ['Example.ORG', 'corp.example.net'] }))
  const failed = collect(kit.app, 'user.register_failed')
  t.equal((await kit.register({ email: 'one@example.org', password: NEWBIE.password })).statusCode, 200)
  t.equal((await kit.register({ email: 'two@EXAMPLE.org', password: NEWBIE.password })).statusCode, 200, 'the email\'s case does not matter')
  t.equal((await kit.register({ email: 'three@corp.example.net', password: NEWBIE.password })).statusCode, 200, 'the second domain')
  for (const email of ['four@example.com', 'five@sub.example.org', 'six@example.org.evil.com', 'seven@example.net']) {
    t.same(errorOf(await kit.register({ email, password: NEWBIE.password })), [403, 37], email)
  }
  t.strictSame(failed.map(event => event.errorCode), [37, 37, 37, 37])
  t.equal(await kit.users.findByEmail('four@example.com'), null)
})

t.test('a password outside resetPassword.password\'s lengths is 400 / 204', async (t) => {
  const kit = await buildKit(t, { ...on(), resetPassword: { password: { minLength: 12, maxLength: 20 } } })
  t.same(errorOf(await kit.register({ email: 'short@example.org', password: 'elevenchars' })), [400, 204], '11 characters')
  t.same(errorOf(await kit.register({ email: 'long@example.org', password: 'x'.repeat(21) })), [400, 204], '21 characters')
  t.equal((await kit.register({ email: 'twelve@example.org', password: 'twelve chars' })).statusCode, 200, '12')
  t.equal((await kit.register({ email: 'twenty@example.org', password: 'y'.repeat(20) })).statusCode, 200, '20')
  t.equal(await kit.users.findByEmail('short@example.org'), null)

  const defaults = await buildKit(t, on())
  t.same(errorOf(await defaults.register({ email: 'short@example.org', password: 'seven77' })), [400, 204], 'the default minimum is 8')
  t.equal((await defaults.register({ email: 'eight@example.org', password: 'eight888' })).statusCode, 200)
})

t.test('the host\'s passwordPolicy: refusing is 400 / 204; it receives the password and the user to be, ID 0', async (t) => {
  const seen: Array<[string, PublicUser]> = []
  const passwordPolicy = (password: string, user: PublicUser): boolean => {
    seen.push([password, user])
    return !password.includes('password')
  }
  const kit = await buildKit(t, on({ defaultRole: 'customer' }), { passwordPolicy })
  const failed = collect(kit.app, 'user.register_failed')
  t.same(errorOf(await kit.register({ ...NEWBIE, user_login: 'newbie', display_name: 'New Bie' })), [400, 204])
  t.strictSame(seen, [[NEWBIE.password, { ID: 0, user_login: 'newbie', user_email: NEWBIE.email, display_name: 'New Bie', roles: ['customer'] }]])
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_PASSWORD_POLICY', errorCode: 204 }])
  t.equal(await kit.users.findByEmail(NEWBIE.email), null, 'nothing created')

  const res = await kit.register({ email: NEWBIE.email, password: 'correct horse battery' })
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(seen[1], ['correct horse battery', { ID: 0, user_login: NEWBIE.email, user_email: NEWBIE.email, display_name: NEWBIE.email, roles: ['customer'] }], 'the login and name default to the email')
  t.strictSame(res.json().data.roles, ['customer'], 'defaultRole')

  const truthy = await buildKit(t, on(), { passwordPolicy: (() => 'yes') as unknown as JwtLoginOptions['passwordPolicy'] })
  t.same(errorOf(await truthy.register(NEWBIE)), [400, 204], 'only `true` accepts')
})

t.test('a passwordPolicy that throws: 503 / 201, nothing created, and the log line has neither the password nor the email', async (t) => {
  const passwordPolicy = (password: string, user: PublicUser): boolean => {
    throw new Error(`policy service down while checking ${password} for ${user.user_email}`)
  }
  const kit = await buildKit(t, on(), { passwordPolicy })
  t.same(errorOf(await kit.register(NEWBIE)), [503, 201])
  t.equal(await kit.users.findByEmail(NEWBIE.email), null)
  t.match(kit.lines.join(''), 'passwordPolicy failed: Error', 'the failure is logged')
  assertNotLogged(t, kit.lines, [NEWBIE.password, NEWBIE.email])
})

t.test('an email or a login that has an account is 409 / 38, the email in any case', async (t) => {
  const kit = await buildKit(t, on())
  const failed = collect(kit.app, 'user.register_failed')
  const taken: Record<string, Record<string, unknown>> = {
    'alice\'s email': { email: ALICE.email, password: NEWBIE.password },
    'alice\'s email, upper case': { email: ALICE.email.toUpperCase(), password: NEWBIE.password },
    'alice\'s login with a new email': { email: NEWBIE.email, password: NEWBIE.password, user_login: ALICE.login },
    'a new login with alice\'s email': { email: ALICE.email, password: NEWBIE.password, user_login: 'newbie' }
  }
  for (const [name, body] of Object.entries(taken)) t.same(errorOf(await kit.register(body)), [409, 38], name)
  t.ok(failed.length === 4 && failed.every(event => event.reason === 'ERR_JWT_LOGIN_USER_EXISTS' && event.errorCode === 38), 'one user.register_failed each')
  t.equal(await kit.users.findByEmail(NEWBIE.email), null, 'nothing created')
  t.equal(await kit.users.findById(2), null)
  t.equal((await kit.signIn({ email: ALICE.email, password: ALICE.password })).statusCode, 200, 'alice keeps her password')

  t.equal((await kit.register(NEWBIE)).statusCode, 200)
  t.same(errorOf(await kit.register({ ...NEWBIE, password: 'someone else entirely' })), [409, 38], 'the user just registered')
  t.same(errorOf(await kit.register({ email: 'Newbie@Example.ORG', password: NEWBIE.password, user_login: 'another' })), [409, 38], 'in another case')
})

t.test('requireAuthCode: without the code 400 / 94, a wrong one 401 / 27 (both user.register_failed), the right one in the body 200', async (t) => {
  const kit = await buildKit(t, { ...on({ requireAuthCode: true }), authCodes: { codes: [{ code: 'let-me-in' }] } })
  const failed = collect(kit.app, 'user.register_failed')
  t.same(errorOf(await kit.register(NEWBIE)), [400, 94])
  t.same(errorOf(await kit.register({ ...NEWBIE, AUTH_KEY: 'wrong' })), [401, 27])
  t.same(errorOf(await kit.app.inject({ method: 'POST', url: `${PREFIX}/users?AUTH_KEY=let-me-in`, payload: NEWBIE })), [400, 94], 'not from the query: a credential route takes it in the body')
  t.strictSame(failed, [
    { ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_AUTH_CODE_MISSING', errorCode: 94 },
    { ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', errorCode: 27 },
    { ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_AUTH_CODE_MISSING', errorCode: 94 }
  ])
  t.equal(await kit.users.findByEmail(NEWBIE.email), null)
  const res = await kit.register({ ...NEWBIE, AUTH_KEY: 'let-me-in' })
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(res.json().data.roles, ['subscriber'], 'a code without a role: the default role')
  assertNotLogged(t, kit.lines, ['let-me-in'])
})

t.test('an auth code with a role gives that role, required or not; an expired or a wrong one is refused with 401 / 27 even when not required', async (t) => {
  const clock = testClock()
  const codes = [
    { code: 'editor-code', role: 'editor' },
    { code: 'expired-author', role: 'author', expiresAt: new Date(clock.now - 1000).toISOString() },
    { code: 'plain-code' }
  ]
  const kit = await buildKit(t, { ...on(), authCodes: { codes, parameter: 'INVITE' } }, { clock })
  const roleOf = async (email: string, fields: Record<string, unknown>): Promise<unknown> => {
    const res = await kit.register({ email, password: NEWBIE.password, ...fields })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    return res.json().data.roles
  }
  t.strictSame(await roleOf('editor@example.org', { INVITE: 'editor-code' }), ['editor'], 'not required, yet the code\'s role')
  t.strictSame((await kit.users.findByEmail('editor@example.org'))?.roles, ['editor'], 'stored with it')
  t.strictSame(await roleOf('plain@example.org', { INVITE: 'plain-code' }), ['subscriber'], 'a code without a role')
  t.strictSame(await roleOf('other-name@example.org', { AUTH_KEY: 'editor-code' }), ['subscriber'], 'only authCodes.parameter is read')
  t.strictSame(await roleOf('blank@example.org', { INVITE: '' }), ['subscriber'], 'an empty code is no code (the field rule), and none is required')
  const failed = collect(kit.app, 'user.register_failed')
  t.same(errorOf(await kit.register({ email: 'expired@example.org', password: NEWBIE.password, INVITE: 'expired-author' })), [401, 27], 'not required: an expired code is refused')
  t.same(errorOf(await kit.register({ email: 'wrong@example.org', password: NEWBIE.password, INVITE: 'no-such-code' })), [401, 27], 'not required: a wrong code is refused')
  t.same(errorOf(await kit.register({ email: 'null@example.org', password: NEWBIE.password, INVITE: 42 })), [400, 203], 'a code that is no string is a malformed request')
  t.strictSame(failed.map(event => event.errorCode), [27, 27, 203], 'each refusal is a user.register_failed')
  for (const email of ['expired@example.org', 'wrong@example.org', 'null@example.org']) t.equal(await kit.users.findByEmail(email), null, `${email}: not created`)

  const required = await buildKit(t, { ...on({ requireAuthCode: true, defaultRole: 'customer' }), authCodes: { codes } }, { clock })
  t.same(errorOf(await required.register({ ...NEWBIE, AUTH_KEY: 'expired-author' })), [401, 27], 'required: an expired code is refused')
  const res = await required.register({ ...NEWBIE, AUTH_KEY: 'editor-code' })
  t.strictSame(res.json().data.roles, ['editor'])
  const plain = await required.register({ email: 'plain@example.org', password: NEWBIE.password, AUTH_KEY: 'plain-code' })
  t.strictSame(plain.json().data.roles, ['customer'], 'a code without a role: users.register.defaultRole')
})

t.test('perIp: past max attempts in the window, 429 / 200 with Retry-After; refused attempts count too, other addresses do not share the count', async (t) => {
  const kit = await buildKit(t, on({ perIp: { max: 5, window: '1h' } }))
  const failed = collect(kit.app, 'user.register_failed')
  const ip = '198.51.100.7'
  t.equal((await kit.register({ email: 'one@example.org', password: NEWBIE.password }, ip)).statusCode, 200)
  t.same(errorOf(await kit.register({ email: ALICE.email, password: NEWBIE.password }, ip)), [409, 38], 'a taken email counts')
  t.same(errorOf(await kit.register({ email: 'two@example.org', password: 'short' }, ip)), [400, 204], 'a short password counts...')
  t.same(errorOf(await kit.register({ email: 'two@example.org' }, ip)), [400, 35], '...and so does a missing field: the count comes before the fields')
  t.equal((await kit.register({ email: 'three@example.org', password: NEWBIE.password }, ip)).statusCode, 200, 'the fifth attempt counted')

  const limited = await kit.register({ email: 'four@example.org', password: NEWBIE.password }, ip)
  t.same(errorOf(limited), [429, 200])
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${String(limited.headers['retry-after'])}`)
  t.same(failed.at(-1), { ip, reason: 'ERR_JWT_LOGIN_RATE_LIMITED', errorCode: 200 })
  t.equal(await kit.users.findByEmail('four@example.org'), null, 'not created')
  t.same(errorOf(await kit.register({ email: ALICE.email, password: NEWBIE.password }, ip)), [429, 200], 'the count comes before the lookup')

  t.equal((await kit.register({ email: 'four@example.org', password: NEWBIE.password }, '198.51.100.8')).statusCode, 200, 'another address has its own count')
})

t.test('signIn: the answer holds the new user\'s jwt, which validates; with refresh on, a refresh token that works', async (t) => {
  const kit = await buildKit(t, on({ signIn: true }))
  const started = collect(kit.app, 'session.started')
  const res = await kit.register(NEWBIE)
  t.equal(res.statusCode, 200, res.body)
  const { data } = res.json()
  t.strictSame(Object.keys(data).sort(), ['display_name', 'email', 'id', 'jwt', 'login', 'message', 'roles', 'user'], 'refresh off: no refresh_token')
  t.equal(claimsOf(data.jwt).sub, '2', 'the new user\'s token')
  const validated = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: data.jwt } })
  t.equal(validated.statusCode, 200, validated.body)
  t.equal(validated.json().data.user.user_email, NEWBIE.email)
  t.match(started, [{ userId: 2, method: 'password', ip: '127.0.0.1' }], 'a session started')

  const refreshing = await buildKit(t, { ...on({ signIn: true }), refresh: { enabled: true } })
  const withRefresh = await refreshing.register(NEWBIE)
  t.equal(withRefresh.statusCode, 200, withRefresh.body)
  const tokens = withRefresh.json().data
  t.type(tokens.refresh_token, 'string')
  t.notOk('csrf_token' in tokens, 'no csrf_token outside cookie mode')
  const refreshed = await refreshing.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: tokens.refresh_token } })
  t.equal(refreshed.statusCode, 200, refreshed.body)
  t.equal(claimsOf(refreshed.json().data.jwt).sub, '2')
  assertNotLogged(t, [...kit.lines, ...refreshing.lines], [NEWBIE.password, NEWBIE.email, data.jwt, tokens.refresh_token])
})

/** A memory store whose compareAndSet fails while `failing` is on: the store is down for writes. */
class FailingWrites extends MemoryStore {
  failing = false

  override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    if (this.failing) throw new Error('store unavailable')
    return await super.compareAndSet(key, expected, value, ttlMs)
  }
}

t.test('signIn failing after the user was created: 503 / 227; the user exists, a retry is 409 / 38, and POST /auth signs in', async (t) => {
  const clock = testClock()
  const store = new FailingWrites({ clock })
  const kit = await buildKit(t, on({ signIn: true }), { store, clock })
  const registered = collect(kit.app, 'user.registered')
  const failed = collect(kit.app, 'user.register_failed')
  const started = collect(kit.app, 'session.started')
  store.failing = true
  const res = await kit.register(NEWBIE)
  store.failing = false
  t.same(errorOf(res), [503, 227])
  t.notOk(res.body.includes('eyJ'), 'no token in the answer')
  t.ok(await kit.users.findByEmail(NEWBIE.email), 'the user was created')
  t.strictSame(registered, [{ userId: 2, ip: '127.0.0.1' }], 'user.registered...')
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED', errorCode: 227 }], '...and user.register_failed, both')
  t.strictSame(started, [], 'no session started')
  t.match(kit.lines.join(''), '"msg":"jwt-login: dependency failed"', 'the failure is logged')
  assertNotLogged(t, kit.lines, [NEWBIE.password, NEWBIE.email])

  t.same(errorOf(await kit.register(NEWBIE)), [409, 38], 'the retry finds the user')
  t.equal((await kit.signIn(NEWBIE)).statusCode, 200, 'the password signs in')
})

t.test('signIn in cookie mode: the refresh token goes into the cookie, the body has the jwt and the csrf_token', async (t) => {
  const kit = await buildKit(t, { ...on({ signIn: true }), refresh: { enabled: true, cookie: { enabled: true } } })
  const res = await kit.register(NEWBIE)
  t.equal(res.statusCode, 200, res.body)
  const { data } = res.json()
  t.strictSame(Object.keys(data).sort(), ['csrf_token', 'display_name', 'email', 'id', 'jwt', 'login', 'message', 'roles', 'user'], 'no refresh_token in the body')
  t.match(data.csrf_token, /^[A-Za-z0-9_-]{43}$/)
  const header = res.headers['set-cookie']
  const cookie = (Array.isArray(header) ? header : [header]).find(line => line?.startsWith(`${REFRESH_COOKIE}=`))
  t.ok(cookie !== undefined, 'the refresh cookie is set')
  const value = (cookie as string).slice(REFRESH_COOKIE.length + 1, (cookie as string).indexOf(';'))
  t.equal(value.slice(0, value.indexOf('.')), claimsOf(data.jwt).sid, 'the session of the jwt')
  t.match(cookie, /HttpOnly/)
  const refreshed = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: {}, headers: { cookie: `${REFRESH_COOKIE}=${value}`, 'x-csrf-token': data.csrf_token } })
  t.equal(refreshed.statusCode, 200, refreshed.body)

  t.same(errorOf(await kit.app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: { email: 'x@example.org', password: NEWBIE.password }, headers: { origin: 'https://evil.example' } })), [403, 208],
    'a foreign origin may not have the cookie set')
  t.equal(await kit.users.findByEmail('x@example.org'), null)
})

t.test('register without signIn in cookie mode sets no cookie', async (t) => {
  const kit = await buildKit(t, { ...on(), refresh: { enabled: true, cookie: { enabled: true } } })
  const res = await kit.register(NEWBIE)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers['set-cookie'], undefined)
  t.strictSame(Object.keys(res.json().data).sort(), ['display_name', 'email', 'id', 'login', 'message', 'roles', 'user'])
})

t.test('authentication.enabled false does not switch register off, but nothing signs in: no token even with signIn', async (t) => {
  const kit = await buildKit(t, { ...on({ signIn: true }), authentication: { enabled: false } })
  t.same(errorOf(await kit.signIn({ email: ALICE.email, password: ALICE.password })), [403, 45], '/auth is off')
  const res = await kit.register(NEWBIE)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.jwt, undefined, 'no jwt while sign-in is switched off')
  t.ok(await kit.users.findByEmail(NEWBIE.email), 'the user is registered')
  t.same(errorOf(await kit.signIn(NEWBIE)), [403, 45], 'and signs in once authentication is on again')
})

t.test('an adapter without createUser: registration is refused at users/register/enabled, and so is a reload that switches it on', async (t) => {
  const users = new MemoryUserAdapter()
  const error = await registrationError(on(), adapterWithout(users, 'createUser'))
  t.ok(error instanceof JwtLoginSettingsError, 'a JwtLoginSettingsError')
  t.equal((error as JwtLoginSettingsError).path, 'users/register/enabled')
  t.match((error as Error).message, /createUser/)
  t.equal(await registrationError({}, adapterWithout(users, 'createUser')), null, 'off, the method is not needed')

  let next: Partial<SettingsInput> = KEYS
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: adapterWithout(users, 'createUser'), settings: async () => structuredClone(next) as SettingsInput, settingsTtl: '1h' })
  await app.ready()
  next = { ...KEYS, ...on() }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'users/register/enabled' })
  t.same(errorOf(await app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: NEWBIE })), [403, 31], 'the last good settings stay: still off')
})

t.test('an adapter that lost createUser after registration: 503 / 201, nothing created', async (t) => {
  const users = new MemoryUserAdapter()
  const kit = await buildKit(t, on(), {}, users)
  Object.assign(users, { createUser: undefined })
  t.same(errorOf(await kit.register(NEWBIE)), [503, 201])
  t.equal(await users.findByEmail(NEWBIE.email), null)
  assertNotLogged(t, kit.lines, [NEWBIE.password, NEWBIE.email])
})

/** A memory adapter whose createUser fails as a database would, quoting the row it was given, until `failing` is off. */
class FailingCreate extends MemoryUserAdapter {
  failing = true
  readonly received: NewUser[] = []

  override async createUser (input: NewUser): Promise<MemoryUser> {
    if (!this.failing) return await super.createUser(input)
    this.received.push(input)
    throw Object.assign(new Error(`connection lost inserting (${input.login}, ${input.email}, ${input.password ?? ''}) / ${input.email.toUpperCase()}`), { code: 'ECONNRESET' })
  }
}

t.test('createUser throwing: 503 / 201, user.register_failed, a log line with neither the password nor the email; the retry looks up again and creates', async (t) => {
  const users = new FailingCreate()
  const kit = await buildKit(t, on(), {}, users)
  const failed = collect(kit.app, 'user.register_failed')
  const registered = collect(kit.app, 'user.registered')
  const body = { email: 'Secret.Person@Example.org', password: 'Pa55word-that-is-secret', user_login: 'secret-login-77', display_name: 'Secret Display' }
  const res = await kit.register(body)
  t.same(errorOf(res), [503, 201])
  t.strictSame(users.received, [{ email: body.email, login: body.user_login, displayName: body.display_name, role: 'subscriber', password: body.password, emailVerified: false }], 'createUser got the new user')
  t.strictSame(failed, [{ ip: '127.0.0.1', reason: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 }])
  t.strictSame(registered, [])
  const log = kit.lines.join('')
  t.match(log, '"msg":"jwt-login: dependency failed"', 'the failure is logged')
  t.match(log, 'users.createUser failed: Error (ECONNRESET)', 'naming the port, the method, the class and the code')
  assertNotLogged(t, kit.lines, [body.password, body.email, body.user_login])
  t.notOk(res.body.includes(body.password) || res.body.toLowerCase().includes(body.email.toLowerCase()), 'nor in the answer')

  users.failing = false
  const retry = await kit.register(body)
  t.equal(retry.statusCode, 200, retry.body)
  t.strictSame(registered, [{ userId: 2, ip: '127.0.0.1' }])
})

t.test('ten concurrent registrations of one email: exactly one is created, the others are 409 / 38', async (t) => {
  const kit = await buildKit(t, on({ perIp: { max: 100 } }))
  const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) => await kit.register({ email: 'race@example.org', password: NEWBIE.password, user_login: `racer-${i}` })))
  const outcomes = answers.map(res => errorOf(res))
  const created = answers.filter(res => res.statusCode === 200)
  t.equal(created.length, 1, `one 200 of ${JSON.stringify(outcomes)}`)
  // every lookup runs before the first insert, so the losers meet the memory adapter's own check
  // inside createUser, which reports the duplicate (UserExistsError): a conflict, not an outage
  t.ok(outcomes.every(([status, code]) => status === 200 || (status === 409 && code === 38)), 'the others 409 / 38')
  t.notOk(kit.lines.join('').includes('dependency failed'), 'nothing logged as a failure')
  const user = await kit.users.findByEmail('race@example.org')
  t.equal(user?.ID, (created[0] as LightMyRequestResponse).json().data.id, 'the user stored is the one answered')
  assertNotLogged(t, kit.lines, [NEWBIE.password, 'race@example.org'])
})
