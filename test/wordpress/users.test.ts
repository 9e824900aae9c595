import { readFileSync } from 'node:fs'
import mysql, { type ExecuteValues, type Pool, type PoolConnection, type RowDataPacket } from 'mysql2/promise'
import { serialize } from 'php-serialize'
import t from 'tap'
import { UserExistsError } from '../../lib/index.js'
import { hashWordPressPassword, verifyWordPressHash, wordPressHashFormat, wordPressSlash } from '../../lib/wordpress/hashes.js'
import { MAX_CAPABILITIES_BYTES } from '../../lib/wordpress/roles.js'
import { noPasswordMark } from '../../lib/wordpress/user-sql.js'
import { nicenameOf, WordPressUserAdapter, type WordPressUser, type WordPressUserAdapterOptions } from '../../lib/wordpress/users.js'
import { createWordPressDb, MYSQL_URL, type WordPressDb } from '../helpers/wordpress-db.js'

/** A real hash of `password` written by PHP and WordPress's own code, and a password it does not match. */
interface HashFixture { name: string, rules: string, password: string, hash: string, format: string, wrong: string }

/** The hashes WordPress 6.8 accepts at sign-in, of the four forms a WordPress database holds. */
const fixtures = (JSON.parse(readFileSync(new URL('../fixtures/wordpress-hashes.json', import.meta.url), 'utf8')) as { hashes: HashFixture[] }).hashes
  .filter((entry) => entry.rules === '6.8' && ['wordpress', 'bcrypt', 'phpass', 'md5'].includes(entry.format))

/** Hashes WordPress's code made of passwords with characters it slashes (see test/wordpress/user-passwords.test.ts). */
const slashedFixtures = (JSON.parse(readFileSync(new URL('../fixtures/wordpress-hashes.json', import.meta.url), 'utf8')) as { slashed: Array<{ name: string, password: string, hash: string }> }).slashed

/** The first fixture of `format` (an ASCII password). */
function fixture (format: string): HashFixture {
  const found = fixtures.find((entry) => entry.format === format)
  if (found === undefined) throw new Error(`no fixture of the format ${format}`)
  return found
}

interface Teardown { teardown: (fn: () => Promise<void>) => void }

/** An adapter on the host pool of `db`. */
function adapterOn (db: WordPressDb, options: Omit<WordPressUserAdapterOptions, 'pool' | 'uri'> = {}): WordPressUserAdapter {
  return new WordPressUserAdapter({ pool: db.pool, tablePrefix: db.prefix, ...options })
}

/** An adapter with its own pool on `db`, closed when `t` ends (closing twice is harmless to the test). */
function ownPoolAdapter (t: Teardown, db: WordPressDb, options: Omit<WordPressUserAdapterOptions, 'pool' | 'uri'> = {}): WordPressUserAdapter {
  const adapter = new WordPressUserAdapter({ uri: db.uri, tablePrefix: db.prefix, ...options })
  t.teardown(async () => { await adapter.close().catch(() => {}) })
  return adapter
}

/** The user found by ID, which must exist. */
async function mustFind (adapter: WordPressUserAdapter, id: number): Promise<WordPressUser> {
  const user = await adapter.findById(id)
  if (user === null) throw new Error(`user ${id} not found`)
  return user
}

/** A fault to inject into the connections `getConnection` hands out. */
interface Fault {
  /** A statement matching this throws before it reaches the server. */
  statement?: RegExp
  /** The rollback rolls back, then throws. */
  rollback?: boolean
}

/** `pool` whose pooled connections fail as `fault` says; everything else is the real pool. */
function faultyPool (pool: Pool, fault: Fault): Pool {
  const wrapConnection = (connection: PoolConnection): PoolConnection => new Proxy(connection, {
    get (target, key) {
      if (key === 'execute') {
        return async (sql: string, values: ExecuteValues) => {
          if (fault.statement?.test(sql) === true) throw new Error('injected statement fault')
          return await target.execute(sql, values)
        }
      }
      if (key === 'rollback' && fault.rollback === true) {
        return async () => {
          await target.rollback()
          throw new Error('injected rollback fault')
        }
      }
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  return new Proxy(pool, {
    get (target, key) {
      if (key === 'getConnection') return async () => wrapConnection(await target.getConnection())
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

/** How many rows wp_users holds. */
async function countUsers (db: WordPressDb): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS count FROM wp_users')
  return Number(rows[0]?.count)
}

const CAPABILITIES_ERROR = /^WordPress user \d+: the meta wp_capabilities /

t.test('every hash form WordPress wrote: found by email, login and ID, and verified', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  for (const format of ['wordpress', 'bcrypt', 'phpass', 'md5']) {
    const { password, hash, wrong } = fixture(format)
    t.equal(wordPressHashFormat(hash), format, `the ${format} fixture is of its form`)
    const id = await db.insertUser({ login: `user-${format}`, email: `User.${format}@Example.com`, pass: hash, displayName: `User ${format}`, roles: ['author'] })
    const byEmail = await adapter.findByEmail(`uSER.${format}@example.COM`)
    t.same(byEmail, { ID: id, user_login: `user-${format}`, user_email: `User.${format}@Example.com`, display_name: `User ${format}`, user_pass: hash, roles: ['author'], email_verified: true, no_password_mark: null }, `${format}: found by an email in another case`)
    t.equal(typeof byEmail?.ID, 'number', `${format}: the ID is a number`)
    t.same(await adapter.findByLogin(`user-${format}`), byEmail, `${format}: found by login`)
    t.same(await adapter.findById(id), byEmail, `${format}: found by ID`)
    const user = await mustFind(adapter, id)
    t.equal(await adapter.verifyPassword(user, password), true, `${format}: the right password verifies`)
    t.equal(await adapter.verifyPassword(user, wrong), false, `${format}: a wrong password does not`)
    t.equal((await db.readUser(id))?.user_pass, hash, `${format}: without upgradeOnSignIn the hash stays`)
    t.same(adapter.toPublicUser(user), { ID: id, user_login: `user-${format}`, user_email: `User.${format}@Example.com`, display_name: `User ${format}`, roles: ['author'], email_verified: true }, `${format}: the public user has no hash`)
  }
  // every other fixture: non-ASCII, spaced, 72 bytes and longer, short passwords
  for (const [index, entry] of fixtures.entries()) {
    const id = await db.insertUser({ login: `fixture-${index}`, email: `fixture-${index}@example.com`, pass: entry.hash })
    const user = await mustFind(adapter, id)
    t.equal(await adapter.verifyPassword(user, entry.password), true, `${entry.name}: the right password verifies`)
    t.equal(await adapter.verifyPassword(user, entry.wrong), false, `${entry.name}: a wrong password does not`)
  }
})

t.test('absent users are null', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = ownPoolAdapter(t, db)
  t.equal(await adapter.findByEmail('nobody@example.com'), null)
  t.equal(await adapter.findByLogin('nobody'), null)
  t.equal(await adapter.findById(4711), null)
  await adapter.close()
  // with the pool ended, a query would reject: these resolve without one
  for (const id of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    t.equal(await adapter.findById(id), null, `findById(${id}) is null without a query`)
  }
  await t.rejects(adapter.findById(1), 'a real ID queries the ended pool and rejects')
})

t.test('of several users with one email or login, the lowest ID wins', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const { hash } = fixture('phpass')
  const first = await db.insertUser({ id: 7, login: 'twin', email: 'Twin@example.com', pass: hash })
  await db.insertUser({ id: 3, login: 'other', email: 'other@example.com', pass: hash })
  await db.insertUser({ id: 9, login: 'TWIN', email: 'twin@EXAMPLE.com', pass: hash, roles: ['editor'] })
  t.equal((await adapter.findByEmail('twin@example.com'))?.ID, first)
  t.equal((await adapter.findByLogin('twin'))?.ID, first)
  // a second capabilities row (WordPress does not prevent one): the first row is the one WordPress reads
  await db.pool.execute('INSERT INTO wp_usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)', [first, 'wp_capabilities', serialize({ administrator: true })])
  t.same((await adapter.findById(first))?.roles, ['subscriber'])
})

t.test('roles from the capabilities meta', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const { hash } = fixture('bcrypt')
  const rolesOf = async (rawCapabilities: string | null): Promise<string[] | undefined> => {
    const id = await db.insertUser({ login: `roles-${Math.random()}`, email: 'roles@example.com', pass: hash, rawCapabilities })
    return (await adapter.findById(id))?.roles
  }
  t.same(await rolesOf(serialize({ editor: true, author: true, shop_manager: true })), ['editor', 'author', 'shop_manager'], 'several roles')
  t.same(
    await rolesOf('a:8:{s:6:"editor";b:1;s:6:"author";b:0;s:11:"contributor";i:0;s:1:"a";s:1:"1";s:1:"b";s:1:"0";s:1:"c";s:0:"";s:1:"d";N;s:1:"e";d:0.5;}'),
    ['editor', 'a', 'e'],
    'a role with a false flag (as PHP reads it) is not one of the user\'s'
  )
  t.same(await rolesOf('a:1:{s:5:"rôle";i:1;}'), ['rôle'], 'string lengths count bytes, as PHP writes them')
  t.same(await rolesOf(null), [], 'no capabilities meta: no role')
  t.same(await rolesOf('a:0:{}'), [], 'an empty array: no role')

  const malformed: Array<[string, string]> = [
    ['a:1:{s:5:"admin"', 'a truncated array'],
    ['O:8:"stdClass":0:{}', 'an object'],
    ['C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}', 'a Serializable object'],
    ['a:1:{s:5:"admin";O:8:"stdClass":0:{}}', 'an object as a flag'],
    ['s:5:"admin";', 'a string'],
    ['i:1;', 'an integer'],
    ['N;', 'null'],
    ['not serialised', 'plain text'],
    ['a:1:{s:5:"admin";a:1:{s:4:"read";b:1;}}', 'a nested array'],
    ['a:1:{i:0;s:5:"admin";}', 'a list'],
    ['a:2:{s:5:"admin";b:1;i:5;b:1;}', 'an integer key'],
    [`a:1:{s:${MAX_CAPABILITIES_BYTES}:"${'x'.repeat(MAX_CAPABILITIES_BYTES)}";b:1;}`, 'over 4 KB']
  ]
  for (const [value, what] of malformed) {
    const id = await db.insertUser({ login: `bad-${Math.random()}`, email: 'bad@example.com', pass: hash, rawCapabilities: value })
    const error = await adapter.findById(id).then(() => null, (error: unknown) => error as Error)
    t.match(error?.message, CAPABILITIES_ERROR, `${what}: findById rejects, naming the meta key`)
    t.match(error?.message, new RegExp(`^WordPress user ${id}:`), `${what}: the message names the user ID`)
    t.notMatch(error?.message, /admin|stdClass|xxxx/, `${what}: the message does not quote the value`)
  }
})

/** A sign-in as the flow makes it: the password verified, then (with upgradeOnSignIn) the hash upgraded. */
async function signIn (adapter: WordPressUserAdapter, user: WordPressUser, password: string): Promise<boolean> {
  if (!await adapter.verifyPassword(user, password)) return false
  await adapter.rehashPassword?.(user, password)
  return true
}

t.test('upgradeOnSignIn: rehashPassword rewrites an old hash in the configured form; verifyPassword changes nothing', async (t) => {
  const db = await createWordPressDb(t)
  const { password, hash } = fixture('phpass')
  const adapter = adapterOn(db, { upgradeOnSignIn: true })
  const id = await db.insertUser({ login: 'old', email: 'old@example.com', pass: hash })
  const user = await mustFind(adapter, id)
  t.equal(await adapter.verifyPassword(user, password), true)
  t.equal((await db.readUser(id))?.user_pass, hash, 'verifying writes nothing')
  t.equal(await adapter.rehashPassword?.(user, password), true, 'it says it wrote')
  const stored = (await db.readUser(id))?.user_pass ?? ''
  t.equal(wordPressHashFormat(stored), 'wordpress', 'the row now holds a $wp$ hash')
  t.match(stored, /^\$wp\$2y\$/)
  t.equal(user.user_pass, stored, 'the user in memory holds it too')
  t.equal(await verifyWordPressHash(password, stored), true, 'the new hash verifies the password')
  t.equal(await signIn(adapter, await mustFind(adapter, id), password), true, 'the next sign-in verifies')
  t.equal((await db.readUser(id))?.user_pass, stored, 'a hash in the configured form is not rewritten')
  t.equal(await adapter.rehashPassword?.(await mustFind(adapter, id), password), false, 'and it says it wrote nothing')
  const raced = await mustFind(adapter, id)
  raced.user_pass = hash
  t.equal(await adapter.rehashPassword?.(raced, password), false, 'a row that no longer holds the hash read is left alone, and it says so')
  t.equal((await db.readUser(id))?.user_pass, stored)
  t.equal(await signIn(adapter, await mustFind(adapter, id), fixture('phpass').wrong), false, 'a wrong password still fails')

  for (const [hashes, format, from] of [['bcrypt', 'bcrypt', 'md5'], ['argon2id', 'argon2', 'wordpress']] as const) {
    const other = adapterOn(db, { upgradeOnSignIn: true, hashes })
    const old = fixture(from)
    const otherId = await db.insertUser({ login: `to-${hashes}`, email: `${hashes}@example.com`, pass: old.hash })
    t.equal(await signIn(other, await mustFind(other, otherId), old.password), true)
    const rewritten = (await db.readUser(otherId))?.user_pass ?? ''
    t.equal(wordPressHashFormat(rewritten), format, `hashes '${hashes}': a ${from} hash becomes ${format}`)
    t.equal(await verifyWordPressHash(old.password, rewritten), true)
  }

  const unknown = await db.insertUser({ login: 'locked', email: 'locked@example.com', pass: '*' })
  t.equal(await adapter.rehashPassword?.(await mustFind(adapter, unknown), 'anything'), false)
  t.equal((await db.readUser(unknown))?.user_pass, '*', 'a hash no password matches is never rewritten')
})

t.test('without upgradeOnSignIn the adapter has no rehashPassword', async (t) => {
  const db = await createWordPressDb(t)
  t.equal(adapterOn(db).rehashPassword, undefined)
  t.equal(adapterOn(db, { upgradeOnSignIn: false }).rehashPassword, undefined)
  t.equal(typeof adapterOn(db, { upgradeOnSignIn: true }).rehashPassword, 'function')
})

t.test('a plain bcrypt hash is not rehashed from a password bcrypt reads only in part', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db, { upgradeOnSignIn: true, hashes: 'argon2id' })
  // bcrypt reads 72 bytes: a longer password that shares them signs in, but is not the password the hash was made of
  const long = fixtures.find(entry => entry.format === 'bcrypt' && Buffer.byteLength(entry.password) > 72) as HashFixture
  const longId = await db.insertUser({ login: 'long', email: 'long@example.com', pass: long.hash })
  t.equal(await signIn(adapter, await mustFind(adapter, longId), long.password), true, 'the long password signs in')
  t.equal((await db.readUser(longId))?.user_pass, long.hash, 'and the hash stays: an argon2id of it would refuse the password as first set')
  const nul = await db.insertUser({ login: 'nul', email: 'nul@example.com', pass: fixture('bcrypt').hash })
  const withNul = `${fixture('bcrypt').password}\0tail`
  t.equal(await signIn(adapter, await mustFind(adapter, nul), withNul), true, 'bcrypt stops at the NUL')
  t.equal((await db.readUser(nul))?.user_pass, fixture('bcrypt').hash, 'a password with a NUL is not rehashed from either')
  // 70 bytes typed, 72 once slashed: within what bcrypt reads either way
  const quoted = `'${'q'.repeat(68)}'`
  const quotedId = await db.insertUser({ login: 'quoted', email: 'quoted@example.com', pass: await hashWordPressPassword(wordPressSlash(quoted), 'bcrypt') })
  t.equal(await signIn(adapter, await mustFind(adapter, quotedId), quoted), true)
  t.equal(wordPressHashFormat((await db.readUser(quotedId))?.user_pass ?? ''), 'argon2', 'slashed, it fits in 72 bytes: rehashed')
  const over = `'${'q'.repeat(69)}'`
  const overId = await db.insertUser({ login: 'over', email: 'over@example.com', pass: await hashWordPressPassword(over, 'bcrypt') })
  t.equal(await signIn(adapter, await mustFind(adapter, overId), over), true, 'a hash of the typed password (WP-CLI) signs in')
  t.equal(wordPressHashFormat((await db.readUser(overId))?.user_pass ?? ''), 'bcrypt', '73 bytes once slashed: either form may be what bcrypt read in part, so not rehashed')
  const exact = fixture('bcrypt')
  const exactId = await db.insertUser({ login: 'exact', email: 'exact@example.com', pass: exact.hash })
  t.equal(await signIn(adapter, await mustFind(adapter, exactId), exact.password), true)
  t.equal(wordPressHashFormat((await db.readUser(exactId))?.user_pass ?? ''), 'argon2', 'a short password without a NUL is rehashed')
})

t.test('an upgrade loses to a concurrent password change; a failed one throws and leaves the old hash', async (t) => {
  const db = await createWordPressDb(t)
  const { password, hash } = fixture('phpass')
  const changed = fixture('bcrypt').hash
  const adapter = adapterOn(db, { upgradeOnSignIn: true })
  const id = await db.insertUser({ login: 'racer', email: 'racer@example.com', pass: hash })
  const user = await mustFind(adapter, id)
  // a reset lands between the find and the sign-in
  await db.pool.execute('UPDATE wp_users SET user_pass = ? WHERE ID = ?', [changed, id])
  t.equal(await signIn(adapter, user, password), true, 'the sign-in checked the hash it read')
  t.equal((await db.readUser(id))?.user_pass, changed, 'the concurrent change is not overwritten')
  t.equal(user.user_pass, hash, 'the user in memory keeps the hash it was read with')

  const own = ownPoolAdapter(t, db, { upgradeOnSignIn: true })
  const again = await db.insertUser({ login: 'stranded', email: 'stranded@example.com', pass: hash })
  const stranded = await mustFind(own, again)
  await own.close()
  t.equal(await own.verifyPassword(stranded, password), true, 'verifying needs no database')
  await t.rejects(own.rehashPassword?.(stranded, password) ?? Promise.resolve(false), 'the upgrade on the ended pool throws')
  t.equal(stranded.user_pass, hash, 'the user in memory keeps the old hash')
  t.equal((await db.readUser(again))?.user_pass, hash, 'the old hash stays for the next sign-in to upgrade')
})

t.test('a database user without UPDATE: the upgrade throws, the row stays, reading works', async (t) => {
  const db = await createWordPressDb(t)
  const admin = await mysql.createConnection(MYSQL_URL)
  const name = `jwt_ro_${db.database.slice(-12)}`
  await admin.query(`CREATE USER '${name}'@'%' IDENTIFIED BY 'ro-secret'`)
  await admin.query(`GRANT SELECT ON \`${db.database}\`.* TO '${name}'@'%'`)
  t.teardown(async () => {
    await admin.query(`DROP USER IF EXISTS '${name}'@'%'`)
    await admin.end()
  })
  const { password, hash } = fixture('phpass')
  const id = await db.insertUser({ login: 'reader', email: 'reader@example.com', pass: hash })
  const url = new URL(db.uri)
  url.username = name
  url.password = 'ro-secret'
  const reader = new WordPressUserAdapter({ uri: url.toString(), upgradeOnSignIn: true })
  t.teardown(async () => { await reader.close() })
  const user = await mustFind(reader, id)
  t.equal(await reader.verifyPassword(user, password), true, 'the password verifies')
  await t.rejects(reader.rehashPassword?.(user, password) ?? Promise.resolve(false), { code: 'ER_TABLEACCESS_DENIED_ERROR' }, 'the UPDATE is denied')
  t.equal((await db.readUser(id))?.user_pass, hash, 'the row keeps its hash')
  t.equal(user.user_pass, hash)
})

t.test('passwords with characters WordPress slashes: set, created and verified as WordPress\'s forms do', async (t) => {
  const db = await createWordPressDb(t)
  const typed = 'it\'s "q"\\x'
  for (const hashes of ['wordpress', 'bcrypt'] as const) {
    const adapter = adapterOn(db, { hashes })
    const created = await adapter.createUser({ email: `slash-${hashes}@example.com`, login: `slash-${hashes}`, displayName: 'S', role: 'subscriber', password: typed })
    const stored = (await db.readUser(created.ID))?.user_pass ?? ''
    t.equal(await verifyWordPressHash(wordPressSlash(typed), stored), true, `${hashes}: createUser stores a hash wp-login.php accepts for the typed password`)
    t.equal(await adapter.verifyPassword(await mustFind(adapter, created.ID), typed), true, `${hashes}: and jwt-login signs it in`)
    const reset = `O'Brien "${hashes}"`
    await adapter.setPassword(created, reset)
    const after = (await db.readUser(created.ID))?.user_pass ?? ''
    t.equal(await verifyWordPressHash(wordPressSlash(reset), after), true, `${hashes}: setPassword (the reset) likewise`)
    t.equal(await verifyWordPressHash(reset, after), false, `${hashes}: not of the typed password`)
    t.equal(await adapter.verifyPassword(await mustFind(adapter, created.ID), reset), true)
    t.equal(await adapter.verifyPassword(await mustFind(adapter, created.ID), typed), false, 'the old password is gone')
  }
  // hashes WordPress's forms wrote (slashed) and WP-CLI wrote (as given) both sign in with the typed password
  const adapter = adapterOn(db)
  const byForm = await db.insertUser({ login: 'by-form', email: 'by-form@example.com', pass: await hashWordPressPassword(wordPressSlash(typed)) })
  const byCli = await db.insertUser({ login: 'by-cli', email: 'by-cli@example.com', pass: await hashWordPressPassword(typed) })
  t.equal(await adapter.verifyPassword(await mustFind(adapter, byForm), typed), true, 'a hash of WordPress\'s forms')
  t.equal(await adapter.verifyPassword(await mustFind(adapter, byCli), typed), true, 'a hash of WP-CLI')
  t.equal(await adapter.verifyPassword(await mustFind(adapter, byCli), 'its "q"\\x'), false, 'a wrong password')

  const argon = adapterOn(db, { hashes: 'argon2id' })
  const gone = await argon.createUser({ email: 'argon@example.com', login: 'argon', displayName: 'A', role: 'subscriber', password: typed })
  t.equal(await verifyWordPressHash(typed, (await db.readUser(gone.ID))?.user_pass ?? ''), true, 'argon2id: of the typed password')
  t.equal(await argon.verifyPassword(await mustFind(argon, gone.ID), wordPressSlash(typed)), false, 'argon2id is checked as typed only')

  // an upgrade from a WordPress form to argon2id hashes what the user typed; into a WordPress form, the slashed password
  const upgrading = adapterOn(db, { hashes: 'argon2id', upgradeOnSignIn: true })
  const slashedUser = await mustFind(upgrading, byForm)
  t.equal(await signIn(upgrading, slashedUser, typed), true)
  t.equal(wordPressHashFormat(slashedUser.user_pass), 'argon2')
  t.equal(await verifyWordPressHash(typed, slashedUser.user_pass), true, 'argon2id of the typed password')
  const slashedPhpass = slashedFixtures.find((entry) => entry.name === 'the issue\'s, phpass, slashed') as { password: string, hash: string }
  t.equal(slashedPhpass.password, typed, 'WordPress\'s phpass hash of the issue\'s password, slashed (fixture)')
  const phpassId = await db.insertUser({ login: 'phpass-quoted', email: 'phpass-quoted@example.com', pass: slashedPhpass.hash })
  const toWordPress = adapterOn(db, { upgradeOnSignIn: true })
  const phpassUser = await mustFind(toWordPress, phpassId)
  t.equal(await signIn(toWordPress, phpassUser, typed), true)
  t.equal(wordPressHashFormat(phpassUser.user_pass), 'wordpress')
  t.equal(await verifyWordPressHash(wordPressSlash(typed), phpassUser.user_pass), true, 'into the 6.8 form: of the slashed password, which wp-login.php checks')
})

t.test('passwordFingerprint reads the user only: no query', async (t) => {
  // a pool any query on would throw: the fingerprint is the record's own hash
  const adapter = new WordPressUserAdapter({ pool: new Proxy({}, { get: () => { throw new Error('no query expected') } }) as unknown as Pool })
  const user: WordPressUser = { ID: 7, user_login: 'u', user_email: 'u@example.com', display_name: 'U', user_pass: fixture('wordpress').hash, roles: [], email_verified: true }
  t.equal(adapter.passwordFingerprint(user), fixture('wordpress').hash)
  t.not(adapter.passwordFingerprint({ ...user, user_pass: fixture('bcrypt').hash }), adapter.passwordFingerprint(user), 'another hash, another fingerprint')
  t.equal(adapter.passwordFingerprint({ ...user, no_password_mark: noPasswordMark(user.user_pass) }), null, 'null while the no-password mark matches the hash')
  t.equal(adapter.passwordFingerprint({ ...user, no_password_mark: noPasswordMark('an earlier hash') }), user.user_pass, 'the hash once a password replaced the marked one')
})

t.test('passwordFingerprint: the whole stored hash, changed by every new password', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db, { upgradeOnSignIn: true })
  const { password, hash } = fixture('phpass')
  const id = await db.insertUser({ login: 'printed', email: 'printed@example.com', pass: hash })
  const user = await mustFind(adapter, id)
  t.equal(adapter.passwordFingerprint(user), hash)
  await signIn(adapter, user, password)
  const upgraded = adapter.passwordFingerprint(user)
  t.not(upgraded, hash, 'jwt-login\'s own upgrade changes it')
  t.equal(adapter.passwordFingerprint(await mustFind(adapter, id)), upgraded, 'as the row reads back')
  await adapter.setPassword(user, password)
  t.not(adapter.passwordFingerprint(user), upgraded, 'the same password set again: a new salt, a new fingerprint')
  await db.pool.execute('UPDATE wp_users SET user_pass = \'\' WHERE ID = ?', [id])
  t.equal(adapter.passwordFingerprint(await mustFind(adapter, id)), '', 'an empty hash is a value too, not null')

  // a user createUser made without a password: null until a password is set, by jwt-login or by WordPress
  const created = await adapter.createUser({ login: 'nopass', email: 'nopass@example.com', displayName: 'No Pass', role: 'subscriber' })
  t.equal(adapter.passwordFingerprint(created), null, 'as created')
  const found = await mustFind(adapter, created.ID)
  t.equal(adapter.passwordFingerprint(found), null, 'as read back')
  await db.pool.execute('UPDATE wp_users SET user_pass = ? WHERE ID = ?', [fixture('phpass').hash, created.ID])
  t.equal(adapter.passwordFingerprint(await mustFind(adapter, created.ID)), fixture('phpass').hash, 'a password WordPress set')
})

t.test('setPassword writes a $wp$ hash and clears the activation key', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const id = await db.insertUser({ login: 'resetter', email: 'resetter@example.com', pass: fixture('md5').hash, activationKey: '1700000000:$P$Bsomething' })
  const user = await mustFind(adapter, id)
  await adapter.setPassword(user, 'a new password')
  const row = await db.readUser(id)
  t.match(row?.user_pass, /^\$wp\$2y\$/)
  t.equal(await verifyWordPressHash('a new password', row?.user_pass ?? ''), true)
  t.equal(row?.user_activation_key, '', 'a pending reset link is void')
  t.equal(user.user_pass, row?.user_pass)
  t.equal(await adapter.verifyPassword(await mustFind(adapter, id), 'a new password'), true)

  await adapterOn(db, { hashes: 'bcrypt' }).setPassword(user, 'another one')
  t.equal(wordPressHashFormat((await db.readUser(id))?.user_pass ?? ''), 'bcrypt', 'hashes \'bcrypt\' writes plain bcrypt')

  await db.pool.execute('DELETE FROM wp_users WHERE ID = ?', [id])
  await t.rejects(adapter.setPassword(user, 'too late'), { message: `WordPress user ${id} no longer exists; the password was not changed` })
})

t.test('createUser writes the row and the meta WordPress writes', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const created = await adapter.createUser({ email: 'New.User@example.com', login: 'New User.1', displayName: 'New User', role: 'editor', password: 'chosen password' })
  t.match(created, { user_login: 'New User.1', user_email: 'New.User@example.com', display_name: 'New User', roles: ['editor'] })
  t.equal(typeof created.ID, 'number')
  const row = await db.readUser(created.ID)
  t.match(row, {
    user_login: 'New User.1',
    user_nicename: 'new-user-1',
    user_email: 'New.User@example.com',
    user_url: '',
    user_activation_key: '',
    user_status: 0,
    display_name: 'New User'
  })
  t.match(row?.user_pass, /^\$wp\$2y\$/)
  const [[age]] = await db.pool.query<RowDataPacket[]>('SELECT TIMESTAMPDIFF(SECOND, user_registered, UTC_TIMESTAMP()) AS seconds FROM wp_users WHERE ID = ?', [created.ID])
  t.ok(Number(age?.seconds) >= 0 && Number(age?.seconds) < 10, 'user_registered is UTC now')
  t.same(await db.metaKeys(created.ID), [
    'nickname', 'first_name', 'last_name', 'description', 'rich_editing', 'syntax_highlighting', 'comment_shortcuts',
    'admin_color', 'use_ssl', 'show_admin_bar_front', 'locale', 'wp_capabilities', 'wp_user_level'
  ])
  const expected: Record<string, string> = {
    nickname: 'New User.1',
    first_name: '',
    last_name: '',
    description: '',
    rich_editing: 'true',
    syntax_highlighting: 'true',
    comment_shortcuts: 'false',
    admin_color: 'fresh',
    use_ssl: '0',
    show_admin_bar_front: 'true',
    locale: '',
    wp_capabilities: 'a:1:{s:6:"editor";b:1;}',
    wp_user_level: '7'
  }
  for (const [key, value] of Object.entries(expected)) t.equal(await db.readMeta(created.ID, key), value, `meta ${key}`)
  const found = await adapter.findByEmail('new.user@EXAMPLE.com')
  t.same(found, { ...created, ID: created.ID })
  t.same(found?.roles, ['editor'], 'the role reads back')
  t.equal(await adapter.verifyPassword(found as WordPressUser, 'chosen password'), true, 'the password given verifies')

  for (const [role, level] of [['administrator', '10'], ['author', '2'], ['contributor', '1'], ['subscriber', '0'], ['shop_manager', '0']] as const) {
    const user = await adapter.createUser({ email: `${role}@example.com`, login: role, displayName: role, role })
    t.equal(await db.readMeta(user.ID, 'wp_user_level'), level, `${role}: user level ${level}`)
  }
})

t.test('createUser without a password: no password verifies', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const created = await adapter.createUser({ email: 'provider@example.com', login: 'provider', displayName: 'Provider', role: 'subscriber' })
  const found = await mustFind(adapter, created.ID)
  t.equal(wordPressHashFormat(found.user_pass), 'wordpress')
  for (const guess of ['', 'provider', 'provider@example.com', 'password', 'undefined']) {
    t.equal(await adapter.verifyPassword(found, guess), false, `"${guess}" does not verify`)
  }
})

t.test('createUser refuses a taken email or login and makes nicenames unique', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  await db.insertUser({ login: 'taken', email: 'taken@example.com', pass: fixture('phpass').hash })
  const duplicate = { name: 'UserExistsError', code: 'ERR_JWT_LOGIN_USER_EXISTS', message: 'a user with this email or login exists' }
  await t.rejects(adapter.createUser({ email: 'TAKEN@example.com', login: 'fresh', displayName: 'x', role: 'subscriber' }), duplicate, 'an email in another case: UserExistsError')
  await t.rejects(adapter.createUser({ email: 'fresh@example.com', login: 'taken', displayName: 'x', role: 'subscriber' }), duplicate, 'a login: UserExistsError')
  t.equal(await countUsers(db), 1, 'nothing was inserted')

  const one = await adapter.createUser({ email: 'jd1@example.com', login: 'John Doe', displayName: 'JD', role: 'subscriber' })
  const two = await adapter.createUser({ email: 'jd2@example.com', login: 'john.doe', displayName: 'JD', role: 'subscriber' })
  const three = await adapter.createUser({ email: 'jd3@example.com', login: 'john@doe', displayName: 'JD', role: 'subscriber' })
  t.equal((await db.readUser(one.ID))?.user_nicename, 'john-doe')
  t.equal((await db.readUser(two.ID))?.user_nicename, 'john-doe-2')
  t.equal((await db.readUser(three.ID))?.user_nicename, 'johndoe', 'WordPress drops the @')

  const long = 'L'.repeat(60)
  const first = await adapter.createUser({ email: 'long1@example.com', login: long, displayName: 'L', role: 'subscriber' })
  const second = await adapter.createUser({ email: 'long2@example.com', login: `${'l'.repeat(59)}.`, displayName: 'L', role: 'subscriber' })
  t.equal((await db.readUser(first.ID))?.user_nicename, 'l'.repeat(50))
  t.equal((await db.readUser(second.ID))?.user_nicename, `${'l'.repeat(48)}-2`, 'a suffixed nicename stays within 50 characters')
})

t.test('two concurrent createUser of one email: exactly one succeeds, the other throws UserExistsError', async (t) => {
  const db = await createWordPressDb(t)
  // two adapters with two pools, as two instances of the host would have
  const adapters = [adapterOn(db), ownPoolAdapter(t, db)]
  for (let round = 0; round < 3; round++) {
    const email = `race${round}@example.com`
    const results = await Promise.allSettled(adapters.map(async (adapter, i) =>
      await adapter.createUser({ email, login: `racer-${round}-${i}`, displayName: 'Racer', role: 'subscriber', password: 'pw' })))
    t.equal(results.filter((result) => result.status === 'fulfilled').length, 1, `round ${round}: one succeeds`)
    const rejected = results.find((result) => result.status === 'rejected')
    const reason: unknown = (rejected as PromiseRejectedResult | undefined)?.reason
    t.ok(reason instanceof UserExistsError, `round ${round}: the other throws UserExistsError`)
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT ID FROM wp_users WHERE user_email = ?', [email])
    t.equal(rows.length, 1, `round ${round}: one row`)
  }
})

t.test('createUser rolls back on any failure', async (t) => {
  const db = await createWordPressDb(t)
  const metaFails = new WordPressUserAdapter({ pool: faultyPool(db.pool, { statement: /INSERT INTO `wp_usermeta`/ }) })
  await t.rejects(metaFails.createUser({ email: 'a@example.com', login: 'a', displayName: 'A', role: 'subscriber' }), { message: 'injected statement fault' })
  t.equal(await countUsers(db), 0, 'the user row inserted before the failing meta is rolled back')

  const rollbackFails = new WordPressUserAdapter({ pool: faultyPool(db.pool, { statement: /INSERT INTO `wp_usermeta`/, rollback: true }) })
  await t.rejects(rollbackFails.createUser({ email: 'a@example.com', login: 'a', displayName: 'A', role: 'subscriber' }), { message: 'injected statement fault' }, 'a failing rollback does not hide the first error')
  t.equal(await countUsers(db), 0)

  // the lock was released each time: a working adapter creates at once
  const created = await adapterOn(db).createUser({ email: 'a@example.com', login: 'a', displayName: 'A', role: 'subscriber' })
  t.equal(await countUsers(db), 1)
  t.equal(created.user_login, 'a')

  // an unlock that fails after the commit: the connection holding the lock is closed, not pooled
  const unlockFails = new WordPressUserAdapter({ pool: faultyPool(db.pool, { statement: /RELEASE_LOCK/ }) })
  await t.rejects(unlockFails.createUser({ email: 'unlock@example.com', login: 'unlock', displayName: 'U', role: 'subscriber' }), { message: 'injected statement fault' }, 'a failed unlock fails the call')
  const next = adapterOn(db)
  const started = Date.now()
  await next.createUser({ email: 'after-unlock@example.com', login: 'after-unlock', displayName: 'A', role: 'subscriber' })
  t.ok(Date.now() - started < 5000, 'the connection that kept the lock was closed, not pooled: the next createUser does not wait for it')
})

t.test('createUser throws when another holds the lock for more than 10 s', async (t) => {
  const db = await createWordPressDb(t)
  const holder = await mysql.createConnection(db.uri)
  t.teardown(async () => { await holder.end() })
  await holder.query('SELECT GET_LOCK(?, 0)', [`${db.database}.wp_jwt_login_create_user`])
  const started = Date.now()
  await t.rejects(
    adapterOn(db).createUser({ email: 'late@example.com', login: 'late', displayName: 'Late', role: 'subscriber' }),
    { message: 'WordPressUserAdapter: createUser timed out waiting for another createUser, setEmail, setEmailVerified or linkIdentity on this database' }
  )
  t.ok(Date.now() - started >= 9000, 'it waited for the lock')
  t.equal(await db.readUser(1), undefined, 'nothing was created')
})

t.test('deleteUser removes the row and the meta', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const keep = await adapter.createUser({ email: 'keep@example.com', login: 'keep', displayName: 'Keep', role: 'author' })
  const gone = await adapter.createUser({ email: 'gone@example.com', login: 'gone', displayName: 'Gone', role: 'editor' })

  const fails = new WordPressUserAdapter({ pool: faultyPool(db.pool, { statement: /DELETE FROM `wp_users`/ }) })
  await t.rejects(fails.deleteUser(gone), { message: 'injected statement fault' })
  t.equal((await db.metaKeys(gone.ID)).length, 14, 'a failed delete rolls the meta deletion back (WordPress\'s, and the mark of no password)')

  await adapter.deleteUser(gone)
  t.equal(await db.readUser(gone.ID), undefined, 'the row is gone')
  t.same(await db.metaKeys(gone.ID), [], 'the meta is gone')
  t.equal(await adapter.findById(gone.ID), null)
  t.equal((await db.metaKeys(keep.ID)).length, 14, 'another user keeps theirs')
  await t.resolves(adapter.deleteUser(gone), 'deleting a user already gone resolves')
})

/** Every value of the user's email-verified meta, in the order written. */
async function verifiedRows (db: WordPressDb, id: number): Promise<string[]> {
  const [rows] = await db.pool.execute<RowDataPacket[]>(
    `SELECT meta_value FROM \`${db.prefix}usermeta\` WHERE user_id = ? AND meta_key = 'jwt_login_email_verified' ORDER BY umeta_id`, [id]
  )
  return rows.map((row) => row.meta_value as string)
}

t.test('email_verified: the jwt_login_email_verified meta, and true for a user WordPress made', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const registered = await adapter.createUser({ email: 'reg@example.com', login: 'reg', displayName: 'Reg', role: 'subscriber', password: 'pw', emailVerified: false })
  t.equal(adapter.toPublicUser(registered).email_verified, false, 'createUser answers the user unverified')
  t.same(await verifiedRows(db, registered.ID), ['0'])
  t.equal((await db.metaKeys(registered.ID)).length, 14, 'the meta WordPress writes, and the email-verified meta')
  const found = await mustFind(adapter, registered.ID)
  t.equal(adapter.toPublicUser(found).email_verified, false, 'it reads back unverified')
  t.equal(adapter.toPublicUser((await adapter.findByEmail('REG@example.com')) as WordPressUser).email_verified, false, 'by email too')
  t.equal(adapter.toPublicUser((await adapter.findByLogin('reg')) as WordPressUser).email_verified, false, 'and by login')

  await adapter.setEmailVerified(found, true)
  t.equal(found.email_verified, true, 'the user in memory is verified')
  t.same(await verifiedRows(db, registered.ID), ['1'], 'one row, replaced')
  t.equal(adapter.toPublicUser(await mustFind(adapter, registered.ID)).email_verified, true, 'it reads back verified')
  await adapter.setEmailVerified(found, false)
  t.same(await verifiedRows(db, registered.ID), ['0'])
  t.equal(adapter.toPublicUser(await mustFind(adapter, registered.ID)).email_verified, false)

  const vouched = await adapter.createUser({ email: 'idp@example.com', login: 'idp', displayName: 'Idp', role: 'subscriber', emailVerified: true })
  t.equal(vouched.email_verified, true)
  t.same(await verifiedRows(db, vouched.ID), ['1'], 'a provider that vouches for the email: \'1\'')
  const unsaid = await adapter.createUser({ email: 'unsaid@example.com', login: 'unsaid', displayName: 'U', role: 'subscriber' })
  t.equal(unsaid.email_verified, true, 'emailVerified not given: no row, verified')
  t.same(await verifiedRows(db, unsaid.ID), [])

  const wordpressMade = await db.insertUser({ login: 'wp-made', email: 'wp-made@example.com', pass: fixture('phpass').hash })
  const old = await mustFind(adapter, wordpressMade)
  t.equal(adapter.toPublicUser(old).email_verified, true, 'a user WordPress made (no meta row) counts as verified')

  // rows jwt-login did not write: the first counts, and only '1' is verified
  const insertRow = async (id: number, value: string): Promise<void> => {
    await db.pool.execute('INSERT INTO wp_usermeta (user_id, meta_key, meta_value) VALUES (?, \'jwt_login_email_verified\', ?)', [id, value])
  }
  await insertRow(wordpressMade, '')
  t.equal((await mustFind(adapter, wordpressMade)).email_verified, false, 'the \'\' PHP writes for false is not verified')
  await insertRow(wordpressMade, '1')
  t.equal((await mustFind(adapter, wordpressMade)).email_verified, false, 'of two rows, the first is read')
  t.same((await mustFind(adapter, wordpressMade)).roles, ['subscriber'], 'the capabilities still read with two email-verified rows')
  await adapter.setEmailVerified(old, true)
  t.same(await verifiedRows(db, wordpressMade), ['1'], 'setEmailVerified leaves one row')

  await adapter.deleteUser(registered)
  await t.rejects(adapter.setEmailVerified(registered, true), { message: `WordPress user ${registered.ID} no longer exists; nothing was changed` })
  t.same(await verifiedRows(db, registered.ID), [], 'no row for a user who is gone')
})

t.test('setEmail: the new address found in any case, the old one by nobody, verified', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const user = await adapter.createUser({ email: 'old@example.com', login: 'mover', displayName: 'Mover', role: 'author', password: 'pw', emailVerified: false })
  await db.pool.execute('UPDATE wp_users SET user_activation_key = ? WHERE ID = ?', ['1700000000:$P$Bpending', user.ID])
  await adapter.setEmail(user, 'New.Address@Example.com')
  t.equal(user.user_email, 'New.Address@Example.com', 'the user in memory has the new email')
  t.equal(user.email_verified, true, 'and it is verified')
  const found = await adapter.findByEmail('new.address@EXAMPLE.com')
  t.equal(found?.ID, user.ID, 'found by the new email in another case')
  t.equal(found?.user_email, 'New.Address@Example.com', 'stored as given')
  t.equal(adapter.toPublicUser(found as WordPressUser).email_verified, true, 'verified')
  t.equal(await adapter.findByEmail('old@example.com'), null, 'the old email finds nobody')
  t.same(await verifiedRows(db, user.ID), ['1'])
  t.equal((await db.readUser(user.ID))?.user_activation_key, '', 'a pending reset link is void, as WordPress voids it')

  await adapter.setEmail(user, 'new.address@example.com')
  t.equal((await db.readUser(user.ID))?.user_email, 'new.address@example.com', 'the user\'s own email in another case is no conflict')

  const long = `${'x'.repeat(89)}@example.com`
  await t.rejects(adapter.setEmail(user, long), { message: 'WordPressUserAdapter: WordPress stores emails of at most 100 characters' })
  t.equal((await db.readUser(user.ID))?.user_email, 'new.address@example.com', 'a longer email changes nothing')
  await adapter.setEmail(user, long.slice(1))
  t.equal((await db.readUser(user.ID))?.user_email, long.slice(1), '100 characters are stored')

  await db.pool.execute('DELETE FROM wp_users WHERE ID = ?', [user.ID])
  await t.rejects(adapter.setEmail(user, 'gone@example.com'), { message: `WordPress user ${user.ID} no longer exists; nothing was changed` })
  t.equal(await adapter.findByEmail('gone@example.com'), null)
})

t.test('setEmail to another user\'s email: UserExistsError and nothing changed', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const holder = await db.insertUser({ login: 'holder', email: 'Taken@Example.com', pass: fixture('phpass').hash })
  const user = await adapter.createUser({ email: 'mine@example.com', login: 'mine', displayName: 'Mine', role: 'subscriber', emailVerified: false })
  await db.pool.execute('UPDATE wp_users SET user_activation_key = ? WHERE ID = ?', ['1700000000:$P$Bpending', user.ID])
  const duplicate = { name: 'UserExistsError', code: 'ERR_JWT_LOGIN_USER_EXISTS' }
  await t.rejects(adapter.setEmail(user, 'taken@example.COM'), duplicate)
  t.match(await db.readUser(user.ID), { user_email: 'mine@example.com', user_activation_key: '1700000000:$P$Bpending' }, 'the row is unchanged')
  t.same(await verifiedRows(db, user.ID), ['0'], 'still unverified')
  t.match(user, { user_email: 'mine@example.com', email_verified: false }, 'the user in memory is unchanged')
  t.equal((await adapter.findByEmail('taken@example.com'))?.ID, holder, 'the email is still the other user\'s')

  // a failure after the update rolls the new email back
  const failing = new WordPressUserAdapter({ pool: faultyPool(db.pool, { statement: /INSERT INTO `wp_usermeta`/ }) })
  await t.rejects(failing.setEmail(user, 'free@example.com'), { message: 'injected statement fault' })
  t.equal((await db.readUser(user.ID))?.user_email, 'mine@example.com', 'the update is rolled back')
  t.same(await verifiedRows(db, user.ID), ['0'], 'and the deletion of the meta')
})

t.test('two parallel setEmail of two users to one new email: exactly one succeeds', async (t) => {
  const db = await createWordPressDb(t)
  // two adapters with two pools, as two instances of the host would have
  const adapters = [adapterOn(db), ownPoolAdapter(t, db)]
  const users = await Promise.all([0, 1].map(async (i) =>
    await adapterOn(db).createUser({ email: `racer${i}@example.com`, login: `racer${i}`, displayName: 'Racer', role: 'subscriber' })))
  for (let round = 0; round < 3; round++) {
    const email = `Wanted${round}@example.com`
    const results = await Promise.allSettled(adapters.map(async (adapter, i) =>
      await adapter.setEmail(users[i] as WordPressUser, i === 0 ? email : email.toLowerCase())))
    t.equal(results.filter((result) => result.status === 'fulfilled').length, 1, `round ${round}: one succeeds`)
    const reason: unknown = (results.find((result) => result.status === 'rejected') as PromiseRejectedResult | undefined)?.reason
    t.ok(reason instanceof UserExistsError, `round ${round}: the other throws UserExistsError`)
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT ID FROM wp_users WHERE user_email = ?', [email])
    t.equal(rows.length, 1, `round ${round}: one user has the email`)
  }
})

t.test('another table prefix', async (t) => {
  const db = await createWordPressDb(t, { prefix: 'wpx7_' })
  const adapter = adapterOn(db)
  const { password, hash } = fixture('wordpress')
  const id = await db.insertUser({ login: 'prefixed', email: 'prefixed@example.com', pass: hash, roles: ['editor', 'author'] })
  const user = await adapter.findByEmail('PREFIXED@example.com')
  t.same(user?.roles, ['editor', 'author'])
  t.equal(user?.ID, id)
  t.equal(await adapter.verifyPassword(user as WordPressUser, password), true)
  const created = await adapter.createUser({ email: 'made@example.com', login: 'made', displayName: 'Made', role: 'administrator' })
  t.equal(await db.readMeta(created.ID, 'wpx7_capabilities'), 'a:1:{s:13:"administrator";b:1;}')
  t.equal(await db.readMeta(created.ID, 'wpx7_user_level'), '10')
  t.equal(await db.readMeta(created.ID, 'wp_capabilities'), null)
  await adapter.setPassword(created, 'new one')
  t.equal(await adapter.verifyPassword(await mustFind(adapter, created.ID), 'new one'), true)
  await adapter.setEmailVerified(created, false)
  t.equal((await mustFind(adapter, created.ID)).email_verified, false)
  await adapter.setEmail(created, 'moved@example.com')
  t.match(await adapter.findByEmail('MOVED@example.com'), { ID: created.ID, email_verified: true })
  await t.rejects(adapter.setEmail(created, 'prefixed@example.com'), UserExistsError)
  await adapter.deleteUser(created)
  t.equal(await db.readUser(created.ID), undefined)

  const bad = await db.insertUser({ login: 'bad', email: 'bad@example.com', pass: hash, rawCapabilities: 'i:1;' })
  await t.rejects(adapter.findById(bad), { message: new RegExp(`^WordPress user ${bad}: the meta wpx7_capabilities `) })
})

t.test('a prefix too long for a lock name of its own still serialises createUser', async (t) => {
  const db = await createWordPressDb(t, { prefix: `wp_${'x'.repeat(50)}_` })
  const adapter = adapterOn(db)
  const results = await Promise.allSettled([1, 2].map(async (i) =>
    await adapter.createUser({ email: 'same@example.com', login: `same${i}`, displayName: 'Same', role: 'subscriber' })))
  t.same(results.map((result) => result.status).sort(), ['fulfilled', 'rejected'])
})

t.test('the options are checked at construction', async (t) => {
  const db = await createWordPressDb(t)
  for (const tablePrefix of ['wp_; DROP', '', 'wp-', 'wp_`', 'wp_\n']) {
    t.throws(() => new WordPressUserAdapter({ pool: db.pool, tablePrefix }), { message: 'WordPressUserAdapter: the option "tablePrefix" may hold only letters, digits and underscores' }, JSON.stringify(tablePrefix))
  }
  t.throws(() => new WordPressUserAdapter({ pool: db.pool, uri: db.uri }), { message: 'WordPressUserAdapter: give exactly one of the options "pool" and "uri"' })
  t.throws(() => new WordPressUserAdapter({}), { message: 'WordPressUserAdapter: give exactly one of the options "pool" and "uri"' })
  t.throws(() => new WordPressUserAdapter({ pool: db.pool, hashes: 'md5' as never }), { message: 'WordPressUserAdapter: the option "hashes" must be "wordpress", "bcrypt" or "argon2id"' })
})

t.test('a pool from uri is the adapter\'s to close; a host\'s pool is not', async (t) => {
  const db = await createWordPressDb(t)
  const id = await db.insertUser({ login: 'pooled', email: 'pooled@example.com', pass: fixture('md5').hash })
  const own = new WordPressUserAdapter({ uri: db.uri })
  t.equal((await own.findById(id))?.user_login, 'pooled')
  await own.close()
  await t.rejects(own.findById(id), 'its pool is ended')

  const hosted = adapterOn(db)
  await hosted.close()
  t.equal((await hosted.findById(id))?.user_login, 'pooled', 'the host\'s pool stays open')
})

t.test('an ID past 2^53 is refused, not rounded', async (t) => {
  const db = await createWordPressDb(t)
  await db.insertUser({ id: '9007199254740993', login: 'huge', email: 'huge@example.com', pass: fixture('md5').hash })
  const message = 'a WordPress user ID is beyond the integers JavaScript holds exactly'
  await t.rejects(adapterOn(db).findByLogin('huge'), { message }, 'a host pool without supportBigNumbers')
  await t.rejects(ownPoolAdapter(t, db).findByEmail('huge@example.com'), { message }, 'the adapter\'s own pool')
})

t.test('nicenameOf follows WordPress', async (t) => {
  t.equal(nicenameOf('Admin'), 'admin')
  t.equal(nicenameOf('jane.doe@example.com'), 'jane-doeexample-com', 'as sanitize_title makes it')
  t.equal(nicenameOf('under_score-dash'), 'under_score-dash')
  t.equal(nicenameOf('x'.repeat(60)).length, 50)
})
