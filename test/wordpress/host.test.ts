// A jwt-login host whose users are a WordPressUserAdapter on a real WordPress database (MariaDB), driven through the routes:
// password sign-in on every hash form WordPress wrote, a malformed capabilities meta, password reset, registration,
// OpenID auto-registration, account deletion and the hash upgrade on sign-in.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import mysql, { type RowDataPacket } from 'mysql2/promise'
import { serialize } from 'php-serialize'
import t, { type Test } from 'tap'
import jwtLogin, { type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { verifyWordPressHash, wordPressHashFormat, WordPressUserAdapter, type WordPressUserAdapterOptions } from '../../lib/wordpress.js'
import { HS_SECRET } from '../helpers/app.js'
import { codeIn } from '../helpers/fixtures.js'
import { claimsOf, errorOf, PREFIX } from '../helpers/http.js'
import { MailBox } from '../helpers/mail-box.js'
import { providers, TOKEN_URL } from '../helpers/oauth.js'
import { CLIENTS, startIdp, type TestIdp } from '../helpers/oidc-provider.js'
import { createWordPressDb, MYSQL_URL, type WordPressDb } from '../helpers/wordpress-db.js'
import { wordPressHashes, type FixtureHash } from '../helpers/wordpress-hashes.js'

/** The four hash forms a WordPress database holds. */
const FORMS = ['wordpress', 'bcrypt', 'phpass', 'md5']

/** The hashes WordPress 6.8 accepts at sign-in, of those four forms. */
const fixtures = wordPressHashes.hashes
  .filter((entry) => entry.rules === '6.8' && FORMS.includes(entry.format))

/** The first fixture of `format` (an ASCII password). */
function fixture (format: string): FixtureHash {
  const found = fixtures.find((entry) => entry.format === format)
  if (found === undefined) throw new Error(`no fixture of the format ${format}`)
  return found
}

const KEYS = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
const RESET_URL = `${PREFIX}/user/reset_password`
const NEW_PASSWORD = 'a brand new passphrase'

interface Host {
  app: FastifyInstance
  db: WordPressDb
  users: WordPressUserAdapter
  /** Every line the host's logger wrote. */
  lines: string[]
  /** POST /auth with this body, from `remoteAddress` when given. */
  signIn: (body: Record<string, unknown>, remoteAddress?: string) => Promise<LightMyRequestResponse>
  /** POST /auth/validate with the token in the body. */
  validate: (jwt: string) => Promise<LightMyRequestResponse>
}

/**
 * A fresh WordPress database, an adapter with its own pool on it, and a host
 * logging into `lines` with the plugin over that adapter; the app and the
 * adapter are closed when `t` ends.
 */
async function buildHost (
  t: Test,
  settings: Partial<SettingsInput> = {},
  adapter: Omit<WordPressUserAdapterOptions, 'pool' | 'uri'> = {},
  options: Partial<JwtLoginOptions> = {}
): Promise<Host> {
  const db = await createWordPressDb(t)
  const users = new WordPressUserAdapter({ uri: db.uri, tablePrefix: db.prefix, ...adapter })
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(async () => {
    await app.close()
    await users.close()
  })
  await app.register(jwtLogin, { users, settings: { ...KEYS, ...settings }, ...options })
  await app.ready()
  return {
    app,
    db,
    users,
    lines,
    signIn: async (body, remoteAddress) => await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: body, ...(remoteAddress === undefined ? {} : { remoteAddress }) }),
    validate: async (jwt) => await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, payload: { JWT: jwt } })
  }
}

/** The `jwt` of a 200 answer; fails the test (and answers '') otherwise. */
function jwtOf (t: Test, res: LightMyRequestResponse, what: string): string {
  if (!t.equal(res.statusCode, 200, what, { body: res.body })) return ''
  const jwt = res.json().data.jwt as unknown
  t.type(jwt, 'string', `${what}: a jwt`)
  return typeof jwt === 'string' ? jwt : ''
}

/** The stored hash of the user's row; throws when the row is gone. */
async function storedPass (db: WordPressDb, id: number): Promise<string> {
  const row = await db.readUser(id)
  if (row === undefined) throw new Error(`user ${id} has no row`)
  return row.user_pass
}

t.test('each hash form WordPress wrote signs in by email (in another case) and by login; validate answers the ID and the roles of wp_capabilities', async (t) => {
  const host = await buildHost(t)
  const answers: LightMyRequestResponse[] = []
  const signIn = async (body: Record<string, unknown>, remoteAddress?: string): Promise<LightMyRequestResponse> => {
    const res = await host.signIn(body, remoteAddress)
    answers.push(res)
    return res
  }

  for (const format of FORMS) {
    const { password, hash, wrong } = fixture(format)
    t.equal(wordPressHashFormat(hash), format, `the ${format} fixture is of its form`)
    const login = `user-${format}`
    const id = await host.db.insertUser({ login, email: `User.${format}@Example.com`, pass: hash, displayName: `User ${format}`, roles: ['editor', 'author'] })

    const byEmail = jwtOf(t, await signIn({ email: `uSER.${format}@example.COM`, password }), `${format}: the right password signs in by an email in another case`)
    t.equal(claimsOf(byEmail).sub, String(id), `${format}: the token is the WordPress user's`)
    const validated = await host.validate(byEmail)
    t.equal(validated.statusCode, 200, `${format}: the token validates`, { body: validated.body })
    const { data } = validated.json()
    t.equal(data.user.ID, id, `${format}: validate answers the user's ID`)
    t.strictSame(data.roles, ['editor', 'author'], `${format}: and the roles of wp_capabilities`)
    t.strictSame(data.user, { ID: id, user_login: login, user_email: `User.${format}@Example.com`, display_name: `User ${format}`, roles: ['editor', 'author'], email_verified: true }, `${format}: the public user, no hash (a user WordPress made: verified)`)
    t.notOk(validated.body.includes(hash), `${format}: the hash is in no answer`)

    jwtOf(t, await signIn({ username: login, password }), `${format}: the right password signs in by username`)
    t.same(errorOf(await signIn({ email: `user.${format}@example.com`, password: wrong })), [401, 48], `${format}: a wrong password by email is 401 / 48`)
    t.same(errorOf(await signIn({ username: login, password: wrong })), [401, 48], `${format}: a wrong password by username is 401 / 48`)
    t.equal(await storedPass(host.db, id), hash, `${format}: without upgradeOnSignIn the stored hash stays`)
  }

  // every other fixture of the four forms (non-ASCII, spaced, 72 bytes and over, one character), each from its own address
  for (const [index, entry] of fixtures.entries()) {
    const email = `fixture-${index}@example.com`
    await host.db.insertUser({ login: `fixture-${index}`, email, pass: entry.hash })
    const address = `198.51.100.${index + 1}`
    jwtOf(t, await signIn({ email, password: entry.password }, address), `${entry.name}: the right password signs in`)
    t.same(errorOf(await signIn({ email, password: entry.wrong }, address)), [401, 48], `${entry.name}: a wrong one is 401 / 48`)
  }

  t.same(answers.filter((res) => res.statusCode >= 500).map((res) => res.body), [], 'no sign-in answered a 5xx')
})

t.test('a malformed wp_capabilities value: 503 / 201, and the log names the meta key and the user, not the value', async (t) => {
  const host = await buildHost(t)
  const { password, hash } = fixture('phpass')
  const raw = 'a:2:{s:13:"administrator";b:1;s:17:"xyzzy-secret-role";b:1;'
  const id = await host.db.insertUser({ login: 'broken-caps', email: 'broken@example.com', pass: hash, rawCapabilities: raw })

  for (const body of [{ email: 'broken@example.com', password }, { username: 'broken-caps', password }]) {
    const res = await host.signIn(body)
    t.same(errorOf(res), [503, 201], `${Object.keys(body)[0] as string}: the dependency is unavailable, not a crash`)
    t.notOk(res.body.includes('xyzzy'), 'the answer holds nothing of the value')
  }

  const failures = host.lines.filter((line) => line.includes('jwt-login: dependency failed'))
  t.equal(failures.length, 2, 'one log line per failed request')
  for (const line of failures) {
    const entry = JSON.parse(line)
    t.equal(entry.level, 50, 'logged as an error')
    t.match(entry.err.message, new RegExp(`WordPress user ${id}: the meta wp_capabilities `), 'the line names the user ID and the meta key')
  }
  const log = host.lines.join('')
  t.notOk(log.includes('xyzzy'), 'no line holds the raw value')
  t.notOk(log.includes('administrator'), 'nor any part of it')
  t.notOk(log.includes(password), 'nor the password')
  t.notOk(log.includes(hash), 'nor the hash')
})

t.test('password reset writes a WordPress hash, clears the activation key, and only the new password signs in', async (t) => {
  for (const [hashes, prefix, format] of [['wordpress', '$wp$2y$', 'wordpress'], ['bcrypt', '$2y$', 'bcrypt']] as const) {
    await t.test(`hashes: '${hashes}'`, async (t) => {
      const mailbox = new MailBox()
      const host = await buildHost(t, { resetPassword: { enabled: true, mail: { retryDelay: '10ms' } } }, { hashes }, { mailer: mailbox })
      const { password, hash } = fixture('phpass')
      const email = 'resetting@example.com'
      const id = await host.db.insertUser({ login: 'resetting', email, pass: hash, displayName: 'Re Setting', activationKey: `1700000000:${fixture('phpass').hash}` })

      const requested = await host.app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'Resetting@Example.com' } })
      t.equal(requested.statusCode, 200, 'the request is answered', { body: requested.body })
      const mail = await mailbox.next()
      t.equal(mail.to, email, 'the code goes to the stored address')
      t.match(mail.text, 'Hello Re Setting,', 'the display name of the row')
      const completed = await host.app.inject({ method: 'PUT', url: RESET_URL, payload: { email, code: codeIn(mail.text), new_password: NEW_PASSWORD } })
      t.equal(completed.statusCode, 200, 'the reset completes', { body: completed.body })

      const row = await host.db.readUser(id)
      t.ok(row?.user_pass.startsWith(prefix), `the row holds a ${prefix} hash`)
      t.equal(wordPressHashFormat(row?.user_pass ?? ''), format, `of the form ${format}`)
      t.equal(await verifyWordPressHash(NEW_PASSWORD, row?.user_pass ?? ''), true, 'which WordPress\'s rules accept for the new password')
      t.equal(row?.user_activation_key, '', 'the pending activation key is cleared')

      t.same(errorOf(await host.signIn({ email, password })), [401, 48], 'the old password is refused')
      jwtOf(t, await host.signIn({ email, password: NEW_PASSWORD }), 'the new password signs in')
      jwtOf(t, await host.signIn({ username: 'resetting', password: NEW_PASSWORD }), 'by username too')
    })
  }
})

t.test('POST /users with an author code creates a WordPress author whose token and password work', async (t) => {
  const host = await buildHost(t, {
    users: { register: { enabled: true, signIn: true } },
    authCodes: { codes: [{ code: 'author-invite-code', role: 'author' }] }
  })
  const email = 'new.author@example.org'
  const res = await host.app.inject({
    method: 'POST',
    url: `${PREFIX}/users`,
    payload: { email, password: NEW_PASSWORD, user_login: 'newauthor', display_name: 'New Author', AUTH_KEY: 'author-invite-code' }
  })
  t.equal(res.statusCode, 200, 'registered', { body: res.body })
  const { data } = res.json()
  const id = data.id as number
  t.strictSame(data.roles, ['author'], 'the role of the code')

  const row = await host.db.readUser(id)
  t.match(row, { user_login: 'newauthor', user_email: email, user_nicename: 'newauthor', display_name: 'New Author', user_activation_key: '' }, 'the row exists as WordPress writes one')
  t.equal(wordPressHashFormat(row?.user_pass ?? ''), 'wordpress', 'with a WordPress hash of the password')
  t.equal(await host.db.readMeta(id, 'wp_capabilities'), serialize({ author: true }), 'wp_capabilities as WordPress writes it')
  t.equal(await host.db.readMeta(id, 'wp_user_level'), '2', 'and the author\'s user level')
  t.strictSame((await host.users.findByEmail(email))?.roles, ['author'], 'the adapter reads the role back')

  const validated = await host.validate(data.jwt)
  t.equal(validated.statusCode, 200, 'the answer\'s jwt validates', { body: validated.body })
  t.equal(validated.json().data.user.ID, id)
  t.strictSame(validated.json().data.roles, ['author'], 'with the role author')

  jwtOf(t, await host.signIn({ email, password: NEW_PASSWORD }), 'the registered password signs in by email')
  jwtOf(t, await host.signIn({ username: 'newauthor', password: NEW_PASSWORD }), 'and by login')
  t.same(errorOf(await host.app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: { email, password: NEW_PASSWORD } })), [409, 38], 'a second registration of the email is refused')
})

t.test('four parallel POST /users of one email on WordPress: one 200, three 409 / 38, one row', async (t) => {
  const host = await buildHost(t, { users: { register: { enabled: true, perIp: { max: 100 } } } })
  const email = 'four@example.org'
  const answers = await Promise.all(Array.from({ length: 4 }, async (_, i) =>
    await host.app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: { email, password: NEW_PASSWORD, user_login: `four-${i}` } })))
  t.same(answers.map(res => errorOf(res)).sort(), [[200, null], [409, 38], [409, 38], [409, 38]])
  const [rows] = await host.db.pool.query<RowDataPacket[]>(`SELECT ID FROM \`${host.db.prefix}users\` WHERE user_email = ?`, [email])
  t.equal(rows.length, 1, 'one row')
  t.notOk(host.lines.join('').includes('dependency failed'), 'a duplicate is no failure of the adapter')
})

t.test('OpenID auto-registration creates a WordPress contributor once; later sign-ins find the same user', async (t) => {
  const idp: TestIdp = await startIdp()
  t.teardown(() => idp.close())
  const host = await buildHost(t, { oauth: { providers: { idp1: providers(idp, { idp1: { autoRegister: true, defaultRole: 'contributor' } }).idp1 } } })
  const idToken = async (email: string, name: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000)
    return await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: `acct-${email}`, email, email_verified: true, name, iat: now, exp: now + 600, jti: randomUUID() })
  }
  const countRows = async (email: string): Promise<number> => {
    const [rows] = await host.db.pool.execute<RowDataPacket[]>('SELECT COUNT(*) AS count FROM wp_users WHERE user_email = ?', [email])
    return Number(rows[0]?.count)
  }

  const email = 'dana@example.com'
  const first = await host.app.inject({ method: 'POST', url: TOKEN_URL, payload: { provider: 'idp1', id_token: await idToken(email, 'Dana Scully') } })
  t.equal(first.statusCode, 200, 'the first sign-in registers', { body: first.body })
  const id = first.json().data.user.ID as number
  const user = await host.users.findByEmail(email)
  t.equal(user?.ID, id, 'the answer names the new WordPress user')
  t.match(user, { user_login: 'dana', display_name: 'Dana Scully', roles: ['contributor'] }, 'login from the email, the name claim, the default role')
  t.equal(await host.db.readMeta(id, 'wp_capabilities'), serialize({ contributor: true }), 'wp_capabilities is contributor')
  t.equal(await host.db.readMeta(id, 'wp_user_level'), '1', 'wp_user_level is 1')
  t.equal(wordPressHashFormat((await host.db.readUser(id))?.user_pass ?? ''), 'wordpress', 'a WordPress hash of a password nobody knows')
  const validated = await host.validate(first.json().data.jwt)
  t.strictSame(validated.json().data.roles, ['contributor'], 'the token validates with the role')

  const again = await host.app.inject({ method: 'POST', url: TOKEN_URL, payload: { provider: 'idp1', id_token: await idToken(email, 'Dana Scully') } })
  t.equal(again.statusCode, 200, 'a new ID token signs in again', { body: again.body })
  t.equal(again.json().data.user.ID, id, 'the same user')
  t.equal(await countRows(email), 1, 'no duplicate row')

  // a user WordPress already had signs in as themselves
  const existing = await host.db.insertUser({ login: 'fox', email: 'fox@example.com', pass: fixture('phpass').hash, roles: ['editor'] })
  const matched = await host.app.inject({ method: 'POST', url: TOKEN_URL, payload: { provider: 'idp1', id_token: await idToken('Fox@Example.com', 'Fox Mulder') } })
  t.equal(matched.statusCode, 200, 'an existing WordPress user signs in', { body: matched.body })
  t.equal(matched.json().data.user.ID, existing, 'as the row WordPress had')
  t.equal(await countRows('fox@example.com'), 1, 'nothing registered')
  t.equal(await host.db.readMeta(existing, 'wp_capabilities'), serialize({ editor: true }), 'the role stays')
})

t.test('DELETE /users removes the row and all its meta; the token then fails', async (t) => {
  const host = await buildHost(t, { users: { delete: { enabled: true } } })
  const { password, hash } = fixture('wordpress')
  const id = await host.db.insertUser({ login: 'leaving', email: 'leaving@example.com', pass: hash, roles: ['author'] })
  const stays = await host.db.insertUser({ login: 'staying', email: 'staying@example.com', pass: hash, roles: ['editor'] })
  for (const [key, value] of [['nickname', 'leaving'], ['wp_user_level', '2'], ['session_tokens', 'a:0:{}']] as const) {
    await host.db.pool.execute('INSERT INTO wp_usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)', [id, key, value])
  }
  t.equal((await host.db.metaKeys(id)).length, 4, 'the user has meta before')

  const jwt = jwtOf(t, await host.signIn({ email: 'leaving@example.com', password }), 'signed in')
  const res = await host.app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: { authorization: `Bearer ${jwt}` } })
  t.equal(res.statusCode, 200, 'deleted', { body: res.body })
  t.equal(await host.db.readUser(id), undefined, 'the row is gone')
  t.strictSame(await host.db.metaKeys(id), [], 'and every meta of theirs')
  t.equal(await host.users.findById(id), null, 'the adapter finds no one')
  t.same(errorOf(await host.validate(jwt)), [401, 55], 'the token is refused')
  t.same(errorOf(await host.signIn({ email: 'leaving@example.com', password })), [401, 48], 'the password no longer signs in')

  t.ok(await host.db.readUser(stays), 'another user stays')
  t.equal(await host.db.readMeta(stays, 'wp_capabilities'), serialize({ editor: true }), 'with their meta')
})

t.test('upgradeOnSignIn with argon2id: an old hash is rewritten at sign-in, and the next sign-in works', async (t) => {
  const host = await buildHost(t, {}, { upgradeOnSignIn: true, hashes: 'argon2id' })
  for (const format of ['phpass', 'md5']) {
    const { password, hash, wrong } = fixture(format)
    const email = `old-${format}@example.com`
    const id = await host.db.insertUser({ login: `old-${format}`, email, pass: hash })
    t.same(errorOf(await host.signIn({ email, password: wrong })), [401, 48], `${format}: a wrong password is refused`)
    t.equal(await storedPass(host.db, id), hash, `${format}: and upgrades nothing`)

    jwtOf(t, await host.signIn({ email, password }), `${format}: the right password signs in`)
    const upgraded = await storedPass(host.db, id)
    t.ok(upgraded.startsWith('$argon2id$'), `${format}: the row now holds an argon2id hash`)
    t.equal(wordPressHashFormat(upgraded), 'argon2', `${format}: a form WordPress 6.8 reads`)
    t.equal(await verifyWordPressHash(password, upgraded), true, `${format}: of the same password`)

    jwtOf(t, await host.signIn({ email, password }), `${format}: the next sign-in with the same password works`)
    t.equal(await storedPass(host.db, id), upgraded, `${format}: and rewrites nothing again`)
    t.same(errorOf(await host.signIn({ email, password: wrong })), [401, 48], `${format}: a wrong password is still refused`)
  }
})

t.test('upgradeOnSignIn on a database user without UPDATE: the sign-in answers 200, warns once and emits password.rehash_failed', async (t) => {
  const db = await createWordPressDb(t)
  const admin = await mysql.createConnection(MYSQL_URL)
  const name = `jwt_ro_${db.database.slice(-12)}`
  const secret = `ro-${randomUUID()}`
  await admin.query(`CREATE USER '${name}'@'%' IDENTIFIED BY '${secret}'`)
  await admin.query(`GRANT SELECT ON \`${db.database}\`.* TO '${name}'@'%'`)
  t.teardown(async () => {
    await admin.query(`DROP USER IF EXISTS '${name}'@'%'`)
    await admin.end()
  })
  const uri = new URL(db.uri)
  uri.username = name
  uri.password = secret
  const users = new WordPressUserAdapter({ uri: uri.toString(), upgradeOnSignIn: true, hashes: 'argon2id' })
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(async () => {
    await app.close()
    await users.close()
  })
  await app.register(jwtLogin, { users, settings: KEYS })
  const failures: unknown[] = []
  app.jwtLogin.events.on('password.rehash_failed', (payload) => { failures.push(payload) })
  const { password, hash } = fixture('phpass')
  const id = await db.insertUser({ login: 'read-only', email: 'read-only@example.com', pass: hash })

  const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: 'read-only@example.com', password }, remoteAddress: '198.51.100.9' })
  jwtOf(t, res, 'the right password signs in')
  t.equal(await storedPass(db, id), hash, 'the row keeps its hash')
  t.same(failures, [{ userId: id, ip: '198.51.100.9' }], 'password.rehash_failed')
  const warnings = lines.map((line) => JSON.parse(line) as { level: number, msg: string }).filter((line) => line.level === 40)
  t.equal(warnings.length, 1, 'one warning')
  t.match(warnings[0]?.msg, /password hash could not be upgraded/)
  const logged = lines.join('\n')
  t.match(logged, /users\.rehashPassword failed: Error \(ER_TABLEACCESS_DENIED_ERROR\)/, 'the database\'s refusal, by its code')
  t.notOk(logged.includes(password), 'never the password')
  t.notOk(logged.includes(hash), 'never the hash')
})

t.test('a password WordPress changes ends jwt-login\'s sessions at their refresh; an upgrade jwt-login makes at sign-in does not', async (t) => {
  const host = await buildHost(t, { refresh: { enabled: true } }, { upgradeOnSignIn: true, hashes: 'argon2id' })
  const { password, hash } = fixture('phpass')
  const id = await host.db.insertUser({ login: 'moved', email: 'moved@example.com', pass: hash })
  const signedIn = await host.signIn({ email: 'moved@example.com', password })
  jwtOf(t, signedIn, 'the phpass password signs in, and is upgraded')
  t.ok((await storedPass(host.db, id)).startsWith('$argon2id$'), 'the row holds the upgrade')
  const refreshed = await host.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: signedIn.json().data.refresh_token } })
  t.equal(refreshed.statusCode, 200, 'the session started after the upgrade: its refresh works')

  // WordPress's profile page (or wp_set_password) writes a new user_pass
  const other = fixture('bcrypt')
  await host.db.pool.execute(`UPDATE ${host.db.prefix}users SET user_pass = ? WHERE ID = ?`, [other.hash, id])
  host.app.jwtLogin.forgetUser(id)
  const ended = await host.app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: refreshed.json().data.refresh_token } })
  t.same(errorOf(ended), [401, 51], 'the refresh after WordPress changed the password is refused')
  t.same(errorOf(await host.validate(refreshed.json().data.jwt)), [401, 55], 'and the session\'s access token with it')
  t.notOk(host.lines.some(line => line.includes(other.hash) || line.includes(hash)), 'no hash in the log')
})
