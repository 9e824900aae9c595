import { randomBytes } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import t from 'tap'
import { buildPostgresApp, type PostgresApp } from '../../examples/postgres/app.js'
import { migrate, qualified } from '../../examples/postgres/migrate.js'
import { UNIQUE_VIOLATION } from '../../examples/postgres/users.js'
import { USER_EXISTS_CODE, type SettingsInput } from '../../lib/index.js'
import { HS_SECRET, testClock } from '../helpers/app.js'
import { errorCode } from '../helpers/http.js'
import { postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, startIdp } from '../helpers/oidc-provider.js'
import { codeIn, NEW_PASSWORD, RESET_URL, smtpMailer } from '../helpers/reset.js'
import { startSmtp } from '../helpers/smtp.js'
import { totpAt } from '../helpers/two-factor.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

const AUTH = '/jwt-login/v1/auth'
const ALICE = { login: 'alice', email: 'Alice@Example.com', password: 'correct horse battery staple', displayName: 'Alice Example', roles: ['editor'] }

// One schema of our own on the shared database, dropped with everything in it at the end.
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
const schema = `jwt_login_example_${randomBytes(6).toString('hex')}`
t.teardown(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await pool.end()
})
await migrate(pool, schema)
const smtp = await startSmtp()
t.teardown(() => smtp.close())
const idp = await startIdp()
t.teardown(() => idp.close())

/** The example's app on this file's schema, with every route these tests use switched on. */
async function build (tt: Tap, options: { clock?: () => number } = {}): Promise<PostgresApp> {
  const settings: SettingsInput = {
    tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
    refresh: { enabled: true },
    resetPassword: { enabled: true, mail: { retryDelay: '10ms' } },
    oauth: { providers: { idp1: providers(idp, { idp1: { autoRegister: true, defaultRole: 'author' } }).idp1 } }
  }
  const built = await buildPostgresApp(pool, schema, { settings, mailer: smtpMailer(smtp.port), ...options })
  tt.teardown(() => built.app.close())
  return built
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

async function login (app: FastifyInstance, body: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: AUTH, payload: body })
}

async function usersWithEmail (email: string): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${qualified(schema, 'users')} WHERE lower(email) = lower($1)`, [email])
  return rows[0].n
}

const { users: seedUsers } = await build(t)
const alice = await seedUsers.addUser(ALICE)

t.test('migrate runs again without harm', async (t) => {
  await migrate(pool, schema)
  t.equal(await usersWithEmail(ALICE.email), 1)
})

t.test('login by email in any case and by login; validate answers the public user', async (t) => {
  const { app } = await build(t)
  const byEmail = await login(app, { email: 'ALICE@example.COM', password: ALICE.password })
  t.equal(byEmail.statusCode, 200, byEmail.body)
  const byLogin = await login(app, { username: 'alice', password: ALICE.password })
  t.equal(byLogin.statusCode, 200)

  const validated = await app.inject({ method: 'POST', url: `${AUTH}/validate`, payload: { JWT: byEmail.json().data.jwt } })
  t.same(validated.json().data.user, { ID: alice.id, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.displayName, roles: ['editor'], email_verified: true })
  t.notOk(validated.body.includes('argon2'), 'never the hash')

  t.equal(errorCode(await login(app, { email: ALICE.email, password: 'a wrong password' })), 48)
  t.equal(errorCode(await login(app, { email: 'nobody@example.com', password: ALICE.password })), 48)
  t.equal(errorCode(await login(app, { username: 'Alice', password: ALICE.password })), 48, 'logins compare exactly')
})

t.test('an email differing only in case is refused by the unique index; createUser reports it as UserExistsError', async (t) => {
  const { users } = await build(t)
  await t.rejects(users.addUser({ login: 'alice2', email: 'ALICE@EXAMPLE.COM', password: 'another long password' }), { code: UNIQUE_VIOLATION }, 'the host\'s own sign-up sees the database\'s error')
  const duplicate = { name: 'UserExistsError', code: USER_EXISTS_CODE }
  await t.rejects(users.createUser({ login: 'alice3', email: 'alice@example.com', displayName: 'Alice', role: 'subscriber' }), duplicate, 'the email in another case')
  await t.rejects(users.createUser({ login: 'alice', email: 'fresh@example.com', displayName: 'Alice', role: 'subscriber' }), duplicate, 'the login')
  t.equal(await usersWithEmail(ALICE.email), 1)
  await t.rejects(users.createUser({ login: 'nul\u0000login', email: 'nul@example.com', displayName: 'N', role: 'subscriber' }), { code: '22021' }, 'any other error stays the database\'s (503)')
})

t.test('email_verified: createUser stores emailVerified (true when not given), setEmailVerified changes it', async (t) => {
  const { users } = await build(t)
  const registered = await users.createUser({ login: 'frank', email: 'frank@example.com', displayName: 'Frank', role: 'subscriber', password: 'frank long password', emailVerified: false })
  t.equal(users.toPublicUser(registered).email_verified, false, 'POST /users: unverified')
  t.equal((await users.findByEmail('FRANK@example.com'))?.email_verified, false, 'and so in the row')
  const vouched = await users.createUser({ login: 'grace', email: 'grace@example.com', displayName: 'Grace', role: 'subscriber', emailVerified: true })
  t.equal(users.toPublicUser(vouched).email_verified, true, 'a provider that vouches for the email: verified')
  const unsaid = await users.createUser({ login: 'heidi', email: 'heidi@example.com', displayName: 'Heidi', role: 'subscriber' })
  t.equal(unsaid.email_verified, true, 'not given: verified, as the column\'s default')
  t.equal(users.toPublicUser(alice).email_verified, true, 'the host\'s own sign-up: verified')

  await users.setEmailVerified(registered, true)
  t.equal(registered.email_verified, true, 'the record in memory follows')
  t.equal(users.toPublicUser(await users.findById(registered.id) as NonNullable<typeof registered>).email_verified, true, 'the row is verified')
  await users.setEmailVerified(registered, false)
  t.equal((await users.findById(registered.id))?.email_verified, false, 'and back')
})

t.test('setEmail: the new address verified and found in any case; another user\'s (any case) is UserExistsError', async (t) => {
  const { users } = await build(t)
  const ivan = await users.createUser({ login: 'ivan', email: 'ivan@example.com', displayName: 'Ivan', role: 'subscriber', emailVerified: false })
  await users.setEmail(ivan, 'Ivan.New@Example.com')
  t.match(ivan, { email: 'Ivan.New@Example.com', email_verified: true }, 'the record in memory follows')
  const found = await users.findByEmail('ivan.new@EXAMPLE.com')
  t.equal(found?.id, ivan.id, 'found by the new email in another case')
  t.equal(users.toPublicUser(found as NonNullable<typeof found>).email_verified, true, 'verified')
  t.equal(await users.findByEmail('ivan@example.com'), null, 'the old email finds nobody')
  await users.setEmail(ivan, 'ivan.new@example.com')
  t.equal((await users.findById(ivan.id))?.email, 'ivan.new@example.com', 'the user\'s own email in another case is no conflict')

  await users.setEmailVerified(ivan, false)
  await t.rejects(users.setEmail(ivan, 'ALICE@example.COM'), { name: 'UserExistsError', code: USER_EXISTS_CODE }, 'another user\'s email in another case')
  t.match(await users.findById(ivan.id), { email: 'ivan.new@example.com', email_verified: false }, 'nothing changed')
  t.match(ivan, { email: 'ivan.new@example.com', email_verified: false }, 'nor in memory')
  t.equal((await users.findByEmail(ALICE.email))?.id, alice.id, 'the email is still alice\'s')
  await t.rejects(users.setEmail(ivan, 'nul\u0000@example.com'), { code: '22021' }, 'any other error stays the database\'s (503)')

  // two users racing for one new address: the unique index lets one have it
  const judy = await users.createUser({ login: 'judy', email: 'judy@example.com', displayName: 'Judy', role: 'subscriber' })
  const results = await Promise.allSettled([users.setEmail(ivan, 'Wanted@example.com'), users.setEmail(judy, 'wanted@EXAMPLE.com')])
  t.same(results.map((result) => result.status).sort(), ['fulfilled', 'rejected'], 'exactly one succeeds')
  t.match((results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason, { code: USER_EXISTS_CODE })
  t.equal(await usersWithEmail('wanted@example.com'), 1)
})

t.test('four parallel POST /users of one email: one 200 whose password signs in, three 409 / 38, one row', async (t) => {
  const { app } = await buildPostgresApp(pool, schema, {
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, users: { register: { enabled: true, perIp: { max: 100 } } } }
  })
  t.teardown(() => app.close())
  const email = 'four@example.com'
  const answers = await Promise.all(Array.from({ length: 4 }, async (_, i) =>
    await app.inject({ method: 'POST', url: '/jwt-login/v1/users', payload: { email, password: NEW_PASSWORD, user_login: `four-${i}` } })))
  t.same(answers.map(res => errorCode(res)).sort(), [38, 38, 38, undefined].sort(), JSON.stringify(answers.map(res => res.statusCode)))
  t.same(answers.map(res => res.statusCode).sort(), [200, 409, 409, 409])
  t.equal(await usersWithEmail(email), 1, 'one row')
  t.equal((await login(app, { email, password: NEW_PASSWORD })).statusCode, 200, 'the password chosen at POST /users is the one stored')
})

t.test('ten parallel first OpenID sign-ins of one new email: all 200, one row', async (t) => {
  const { app } = await build(t)
  const email = 'race@example.com'
  const now = Math.floor(Date.now() / 1000)
  // ID tokens signed by the provider's key, each its own (a jti), all verified before the first insert
  const tokens = await Promise.all(Array.from({ length: 10 }, async (_, n) =>
    await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: 'acct-race', email, email_verified: true, iat: now, exp: now + 600, jti: `race-${n}` })))
  const answers = await Promise.all(tokens.map(async (token) => await postToken(app, { provider: 'idp1', id_token: token })))
  t.same(answers.map(res => res.statusCode), Array(10).fill(200), JSON.stringify(answers.map(res => errorCode(res))))
  t.equal(new Set(answers.map(res => res.json().data.user.ID)).size, 1, 'one user in every answer')
  t.equal(await usersWithEmail(email), 1)
})

t.test('a stored hash argon2 cannot read refuses the password, no 500', async (t) => {
  const { app, users } = await build(t)
  const mallory = await users.addUser({ login: 'mallory', email: 'mallory@example.com', password: 'mallory password 1' })
  await pool.query(`UPDATE ${qualified(schema, 'users')} SET password_hash = 'not-an-argon2-hash' WHERE id = $1`, [mallory.id])
  t.equal(errorCode(await login(app, { email: 'mallory@example.com', password: 'mallory password 1' })), 48)
})

t.test('a token of a deleted user is refused: findById answers null', async (t) => {
  const { app, users } = await build(t)
  const gone = await users.addUser({ login: 'gone', email: 'gone@example.com', password: 'soon to be deleted' })
  const { jwt } = (await login(app, { email: 'gone@example.com', password: 'soon to be deleted' })).json().data
  await pool.query(`DELETE FROM ${qualified(schema, 'users')} WHERE id = $1`, [gone.id])
  const res = await app.inject({ method: 'POST', url: `${AUTH}/validate`, payload: { JWT: jwt } })
  t.equal(res.statusCode, 401)
  t.equal(errorCode(res), 24)
})

t.test('password reset by mailed code stores a new hash through setPassword', async (t) => {
  const { app, users } = await build(t)
  const dave = await users.addUser({ login: 'dave', email: 'dave@example.com', password: 'dave old password' })
  const requested = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'DAVE@example.com' } })
  t.equal(requested.statusCode, 200)
  const mail = await smtp.nextMessage()
  t.equal(mail.to, 'dave@example.com')

  const reset = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: 'dave@example.com', code: codeIn(mail.text), new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200, reset.body)
  const stored = await users.findById(dave.id)
  t.not(stored?.password_hash, dave.password_hash, 'a new hash in the row')
  t.match(stored?.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'argon2id with the plugin parameters')
  t.equal((await login(app, { email: 'dave@example.com', password: NEW_PASSWORD })).statusCode, 200)
  t.equal(errorCode(await login(app, { email: 'dave@example.com', password: 'dave old password' })), 48)
})

t.test('OpenID sign-in registers a new user through createUser, and matches an existing email in any case', async (t) => {
  const { app, users } = await build(t)
  const { code } = await idp.code({ account: ACCOUNTS.bob })
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200, res.body)
  const bob = await users.findByEmail(ACCOUNTS.bob.email)
  t.match(bob, { login: 'bob', email: ACCOUNTS.bob.email, display_name: ACCOUNTS.bob.name, roles: ['author'] })
  t.equal(res.json().data.user.ID, bob?.id)
  t.equal(errorCode(await login(app, { email: ACCOUNTS.bob.email, password: '' })), 47, 'an empty password is no password')
  t.equal(await users.verifyPassword(bob as NonNullable<typeof bob>, ''), false, 'no usable password')

  // carol signed up herself in lower case; the provider says Carol.Smith+news@Example.com
  const carol = await users.addUser({ login: 'carol', email: ACCOUNTS.carol.email.toLowerCase(), password: 'carol long password' })
  const again = await idp.code({ account: ACCOUNTS.carol })
  const signedIn = await postToken(app, { provider: 'idp1', code: again.code })
  t.equal(signedIn.json().data.user.ID, carol.id, 'the existing account, not a new one')
  t.equal(await usersWithEmail(ACCOUNTS.carol.email), 1)
})

t.test('TOTP two-factor through the PostgreSQL port: enroll, sign in, backup codes, switch off', async (t) => {
  const clock = testClock(Date.now())
  const { app, users, twoFactor } = await build(t, { clock })
  const erin = await users.addUser({ login: 'erin', email: 'erin@example.com', password: 'erin long password' })
  const enrollment = app.jwtLogin.twoFactor
  if (enrollment === null) throw new Error('two-factor is on')

  // enrollment: the secret reaches the table through setTotpSecret once the first code is right
  const { secret } = enrollment.createTotpSecret(erin.email)
  t.equal(await enrollment.confirmTotp(erin.id, secret, await totpAt(secret, clock.now)), true)
  t.equal(await twoFactor.getTotpSecret(erin.id), secret)
  await twoFactor.setMethod(erin.id, 'totp')

  clock.advance(30_000) // the enrollment code is spent: sign in with the next one
  const first = await login(app, { email: erin.email, password: 'erin long password' })
  t.same(Object.keys(first.json().data).sort(), ['jwt', 'two_factor_required'])
  const submit = async (code: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${AUTH}/2fa`, payload: { JWT: (await login(app, { email: erin.email, password: 'erin long password' })).json().data.jwt, code } })
  const done = await app.inject({ method: 'POST', url: `${AUTH}/2fa`, payload: { JWT: first.json().data.jwt, code: await totpAt(secret, clock.now) } })
  t.equal(done.statusCode, 200, done.body)
  t.same(Object.keys(done.json().data).sort(), ['jwt', 'refresh_token'])

  // backup codes: only hashes in the table, each code works once
  const codes = await enrollment.regenerateBackupCodes(erin.id)
  const count = async (): Promise<number> => (await pool.query(`SELECT count(*)::int AS n FROM ${qualified(schema, 'backup_codes')} WHERE user_id = $1 AND used_by IS NULL`, [erin.id])).rows[0].n
  t.equal(await count(), 10)
  t.equal(await twoFactor.countBackupCodes(erin.id), 10, 'the port counts them too')
  t.equal((await submit(codes[0] as string)).statusCode, 200)
  t.equal(await count(), 9)
  t.equal(await twoFactor.countBackupCodes(erin.id), 9)
  t.equal(errorCode(await submit(codes[0] as string)), 109, 'a used backup code fails')
  await enrollment.regenerateBackupCodes(erin.id)
  t.equal(await count(), 10, 'regenerating replaces the set')
  t.equal(errorCode(await submit(codes[1] as string)), 109, 'the old set is gone')

  await twoFactor.setMethod(erin.id, null)
  const plain = await login(app, { email: erin.email, password: 'erin long password' })
  t.same(Object.keys(plain.json().data).sort(), ['jwt', 'refresh_token'], 'switched off: the password alone signs in')
  t.equal(await twoFactor.methodOf(alice.id), null, 'no row: two-factor off')
  t.equal(await twoFactor.getTotpSecret(alice.id), null)
})
