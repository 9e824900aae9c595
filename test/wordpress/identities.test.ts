import { createHash } from 'node:crypto'
import type { RowDataPacket } from 'mysql2/promise'
import t from 'tap'
import { IdentityTakenError, type LinkedIdentity } from '../../lib/index.js'
import { WordPressUserAdapter, type WordPressUser } from '../../lib/wordpress/users.js'
import { createWordPressDb, type WordPressDb } from '../helpers/wordpress-db.js'

interface Teardown { teardown: (fn: () => Promise<void>) => void }

/** A phpass hash as WordPress stores one, for users WordPress made (the password does not matter here). */
const WORDPRESS_HASH = '$P$BJ5g6Im7iXGqMGtQjWbnnGX7T1aVmt/'

/** What linkIdentity throws for a taken provider account or a taken provider of the user. */
const TAKEN = { name: 'IdentityTakenError', code: 'ERR_JWT_LOGIN_IDENTITY_TAKEN' }

/** An adapter on the host pool of `db`. */
function adapterOn (db: WordPressDb): WordPressUserAdapter {
  return new WordPressUserAdapter({ pool: db.pool, tablePrefix: db.prefix })
}

/** An adapter with its own pool on `db`, as another instance of the host would have, closed when `t` ends. */
function ownPoolAdapter (t: Teardown, db: WordPressDb): WordPressUserAdapter {
  const adapter = new WordPressUserAdapter({ uri: db.uri, tablePrefix: db.prefix })
  t.teardown(async () => { await adapter.close() })
  return adapter
}

/** A user the adapter creates, with a password unless `password` is null. */
async function create (adapter: WordPressUserAdapter, login: string, password: string | null = 'a password'): Promise<WordPressUser> {
  return await adapter.createUser({ email: `${login}@example.com`, login, displayName: login, role: 'subscriber', ...(password === null ? {} : { password }) })
}

/** The user found by ID, which must exist. */
async function mustFind (adapter: WordPressUserAdapter, id: number): Promise<WordPressUser> {
  const user = await adapter.findById(id)
  if (user === null) throw new Error(`user ${id} not found`)
  return user
}

/** The meta key a link of `subject` at `provider` is stored under, as the adapter documents it (worked out here on its own). */
function linkKey (provider: string, subject: string): string {
  return `jwt_login_identity_${provider}_${createHash('sha256').update(subject, 'utf8').digest('hex')}`
}

/** Every meta row of `id` whose key starts as a link's does, in the order written. */
async function linkRows (db: WordPressDb, id: number): Promise<Array<{ key: string, value: string }>> {
  const [rows] = await db.pool.execute<RowDataPacket[]>(
    `SELECT meta_key, meta_value FROM \`${db.prefix}usermeta\` WHERE user_id = ? AND meta_key LIKE 'jwt\\_login\\_identity\\_%' ORDER BY umeta_id`, [id]
  )
  return rows.map((row) => ({ key: row.meta_key as string, value: row.meta_value as string }))
}

/** How many meta rows, of any user, have the key `key` (as WordPress's meta queries find them: by meta_key alone). */
async function rowsWithKey (db: WordPressDb, key: string): Promise<number> {
  const [rows] = await db.pool.execute<RowDataPacket[]>(`SELECT COUNT(*) AS count FROM \`${db.prefix}usermeta\` WHERE meta_key = ?`, [key])
  return Number(rows[0]?.count)
}

t.test('link, find, list oldest first with the details; the same link again resolves and keeps the first', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const user = await create(adapter, 'linker')
  const other = await mustFind(adapter, await db.insertUser({ login: 'wp-made', email: 'wp-made@example.com', pass: WORDPRESS_HASH }))
  t.equal(await adapter.findByIdentity('gh', '12345'), null, 'nobody is linked yet')
  t.same(await adapter.listIdentities(user), [], 'no links yet')

  await adapter.linkIdentity(user, 'gh', '12345', { display: 'octocat', linkedAt: 1_700_000_000_000 })
  await adapter.linkIdentity(user, 'discord', 'Zx-81', { display: null, linkedAt: 1_700_000_001_000 })
  await adapter.linkIdentity(user, 'accounts', 'jörg@example.com', { display: 'Jörg "O\'Brien" \\ 😀', linkedAt: 1_700_000_002_000 })
  t.same(await adapter.findByIdentity('gh', '12345'), await mustFind(adapter, user.ID), 'found by the link: the user as findById reads it')
  t.equal((await adapter.findByIdentity('discord', 'Zx-81'))?.ID, user.ID)
  t.equal((await adapter.findByIdentity('accounts', 'jörg@example.com'))?.ID, user.ID, 'a subject beyond ASCII')
  const expected: LinkedIdentity[] = [
    { provider: 'gh', subject: '12345', display: 'octocat', linkedAt: 1_700_000_000_000 },
    { provider: 'discord', subject: 'Zx-81', display: null, linkedAt: 1_700_000_001_000 },
    { provider: 'accounts', subject: 'jörg@example.com', display: 'Jörg "O\'Brien" \\ 😀', linkedAt: 1_700_000_002_000 }
  ]
  t.same(await adapter.listIdentities(user), expected, 'oldest first (not by name), with the details as given')
  t.same(await adapter.listIdentities(other), [], 'another user has none')

  t.equal(await adapter.linkIdentity(user, 'gh', '12345', { display: 'renamed', linkedAt: 1_800_000_000_000 }), false, 'the same link again resolves, saying it linked nothing')
  t.same(await adapter.listIdentities(user), expected, 'and keeps the first link and its details')
  t.equal((await linkRows(db, user.ID)).length, 3, 'no row was added')

  // the subject and the provider name are compared exactly, not as the columns' collation compares text
  for (const [provider, subject] of [['gh', '1234'], ['gh', '12345 '], ['GH', '12345'], ['discord', 'zx-81'], ['discord', 'Zx-81 '], ['accounts', 'jorg@example.com'], ['accounts', 'JÖRG@example.com']]) {
    t.equal(await adapter.findByIdentity(provider as string, subject as string), null, `${provider} ${JSON.stringify(subject)} finds nobody`)
  }
})

t.test('a provider account of another user, or a second account of a provider: IdentityTakenError, nothing written', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const first = await create(adapter, 'first')
  const second = await mustFind(adapter, await db.insertUser({ login: 'second', email: 'second@example.com', pass: WORDPRESS_HASH }))
  await adapter.linkIdentity(first, 'gh', 'one', { display: 'one', linkedAt: 1 })

  await t.rejects(adapter.linkIdentity(second, 'gh', 'one', { display: 'one', linkedAt: 2 }), TAKEN, 'the account is the first user\'s')
  await t.rejects(adapter.linkIdentity(second, 'gh', 'one', { display: 'one', linkedAt: 2 }), IdentityTakenError, 'an IdentityTakenError')
  t.same(await linkRows(db, second.ID), [], 'nothing was written for the second user')
  t.equal((await adapter.findByIdentity('gh', 'one'))?.ID, first.ID, 'the account stays the first user\'s')

  await t.rejects(adapter.linkIdentity(first, 'gh', 'two', { display: 'two', linkedAt: 3 }), TAKEN, 'the first user has an account of gh already')
  t.equal(await adapter.findByIdentity('gh', 'two'), null)
  t.same((await adapter.listIdentities(first)).map((link) => link.subject), ['one'], 'the first user\'s links are unchanged')

  await adapter.linkIdentity(second, 'gh', 'two', { display: 'two', linkedAt: 4 })
  t.equal((await adapter.findByIdentity('gh', 'two'))?.ID, second.ID, 'the second account of gh is free for another user')

  // provider names differ by case: two providers, whose keys the meta_key collation alone would mistake for one
  await adapter.linkIdentity(first, 'GH', 'two', { display: null, linkedAt: 5 })
  t.equal((await adapter.findByIdentity('GH', 'two'))?.ID, first.ID, '"GH" is another provider than "gh"')
  t.equal((await adapter.findByIdentity('gh', 'two'))?.ID, second.ID)
  await t.rejects(adapter.linkIdentity(first, 'GH', 'three', { display: null, linkedAt: 6 }), TAKEN, 'and has one account per user too')
  // a provider name with underscores and dashes is read back whole from the key
  await adapter.linkIdentity(first, 'gh_two-x', 'one', { display: null, linkedAt: 7 })
  await t.rejects(adapter.linkIdentity(first, 'gh_two-x', 'other', { display: null, linkedAt: 8 }), TAKEN)
  t.same((await adapter.listIdentities(first)).map((link) => link.provider), ['gh', 'GH', 'gh_two-x'])
})

t.test('unlink: true, then false; the account is then free for another user', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const holder = await create(adapter, 'holder')
  const next = await create(adapter, 'next')
  await adapter.linkIdentity(holder, 'gh', '42', { display: 'h', linkedAt: 1 })
  await adapter.linkIdentity(holder, 'discord', '42', { display: 'd', linkedAt: 2 })

  t.equal(await adapter.unlinkIdentity(next, 'gh', '42'), false, 'another user cannot unlink it')
  t.equal(await adapter.unlinkIdentity(holder, 'gh', '43'), false, 'another subject is not linked')
  t.equal(await adapter.unlinkIdentity(holder, 'GH', '42'), false, 'nor is another provider')
  t.equal((await adapter.findByIdentity('gh', '42'))?.ID, holder.ID, 'the link stays')

  t.equal(await adapter.unlinkIdentity(holder, 'gh', '42'), true, 'unlinked')
  t.equal(await adapter.unlinkIdentity(holder, 'gh', '42'), false, 'a second unlink finds none')
  t.equal(await adapter.findByIdentity('gh', '42'), null)
  t.same(await adapter.listIdentities(holder), [{ provider: 'discord', subject: '42', display: 'd', linkedAt: 2 }], 'the other link stays')
  t.same((await linkRows(db, holder.ID)).map((row) => row.key), [linkKey('discord', '42')], 'its row is gone')

  await adapter.linkIdentity(next, 'gh', '42', { display: 'n', linkedAt: 3 })
  t.equal((await adapter.findByIdentity('gh', '42'))?.ID, next.ID, 'linked to another user')
  await adapter.linkIdentity(holder, 'gh', '44', { display: null, linkedAt: 4 })
  t.equal((await adapter.findByIdentity('gh', '44'))?.ID, holder.ID, 'and the first user may link another account of gh')
})

t.test('deleteUser removes the links; a row left by a user deleted otherwise holds nothing', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const gone = await create(adapter, 'gone')
  const heir = await create(adapter, 'heir')
  await adapter.linkIdentity(gone, 'gh', '7', { display: null, linkedAt: 1 })
  await adapter.linkIdentity(gone, 'discord', '7', { display: null, linkedAt: 1 })
  await adapter.deleteUser(gone)
  t.same(await linkRows(db, gone.ID), [], 'the link rows are deleted with the user')
  t.equal(await adapter.findByIdentity('gh', '7'), null)
  await adapter.linkIdentity(heir, 'gh', '7', { display: null, linkedAt: 2 })
  t.equal((await adapter.findByIdentity('gh', '7'))?.ID, heir.ID, 'the account is free again')

  // a user row deleted by other means than WordPress's wp_delete_user leaves its meta behind
  const ghost = await create(adapter, 'ghost')
  await adapter.linkIdentity(ghost, 'discord', '8', { display: null, linkedAt: 3 })
  await db.pool.execute(`DELETE FROM \`${db.prefix}users\` WHERE ID = ?`, [ghost.ID])
  t.equal(await adapter.findByIdentity('discord', '8'), null, 'a link of a user who is gone finds nobody')
  await adapter.linkIdentity(heir, 'discord', '8', { display: null, linkedAt: 4 })
  t.equal((await adapter.findByIdentity('discord', '8'))?.ID, heir.ID, 'and does not keep the account from another user')
  await t.rejects(adapter.linkIdentity(ghost, 'gh', '9', { display: null, linkedAt: 5 }), { message: `WordPress user ${ghost.ID} no longer exists; nothing was linked` })
  t.equal(await rowsWithKey(db, linkKey('gh', '9')), 0, 'no row for a user who is gone')
})

t.test('hasPassword: false for a user created without one, until any password is set', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const withPassword = await create(adapter, 'with-password')
  t.equal(await adapter.hasPassword(withPassword), true, 'created with a password')
  t.equal(await db.readMeta(withPassword.ID, 'jwt_login_no_password'), null, 'without a mark')
  const wordpressMade = await mustFind(adapter, await db.insertUser({ login: 'wp-made', email: 'wp-made@example.com', pass: WORDPRESS_HASH }))
  t.equal(await adapter.hasPassword(wordpressMade), true, 'a user WordPress made has one')

  const viaProvider = await create(adapter, 'via-provider', null)
  t.equal(await adapter.hasPassword(viaProvider), false, 'created without a password')
  const stored = (await db.readUser(viaProvider.ID))?.user_pass ?? ''
  t.equal(await db.readMeta(viaProvider.ID, 'jwt_login_no_password'), createHash('sha256').update(stored).digest('hex'), 'the mark is the SHA-256 of the stored hash, not the hash')
  t.equal(await adapter.hasPassword(await mustFind(adapter, viaProvider.ID)), false, 'read again')
  await adapter.setPassword(viaProvider, 'chosen now')
  t.equal(await adapter.hasPassword(viaProvider), true, 'after setPassword')

  // WordPress's own reset or profile page writes another hash, and the mark no longer matches it
  const resetInWordPress = await create(adapter, 'reset-in-wordpress', null)
  await db.pool.execute(`UPDATE \`${db.prefix}users\` SET user_pass = ? WHERE ID = ?`, [WORDPRESS_HASH, resetInWordPress.ID])
  t.equal(await adapter.hasPassword(resetInWordPress), true, 'after a password set by WordPress, though the user in memory holds the old hash')

  await adapter.deleteUser(viaProvider)
  await t.rejects(adapter.hasPassword(viaProvider), { message: `WordPress user ${viaProvider.ID} no longer exists` })
})

t.test('20 concurrent links of one account to 20 users: one wins', async (t) => {
  const db = await createWordPressDb(t)
  // two pools, as two instances of the host would have
  const adapters = [adapterOn(db), ownPoolAdapter(t, db)]
  const users = await Promise.all(Array.from({ length: 20 }, async (_, i) => await create(adapters[0] as WordPressUserAdapter, `racer${i}`)))
  const results = await Promise.allSettled(users.map(async (user, i) =>
    await adapters[i % 2]?.linkIdentity(user, 'gh', 'contested', { display: `racer${i}`, linkedAt: i })))
  const won = results.flatMap((result, i) => result.status === 'fulfilled' ? [users[i] as WordPressUser] : [])
  t.equal(won.length, 1, 'one link succeeds')
  t.ok(results.every((result) => result.status === 'fulfilled' || (result.reason as { code?: string }).code === TAKEN.code), 'every other throws IdentityTakenError')
  t.equal(await rowsWithKey(db, linkKey('gh', 'contested')), 1, 'one row holds the account')
  t.equal((await adapters[1]?.findByIdentity('gh', 'contested'))?.ID, won[0]?.ID, 'the winner is found by it')

  // 20 accounts of one provider linked at once to one user: one wins, and the user has one account of gh
  const user = users[0] as WordPressUser
  const accounts = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) =>
    await adapters[i % 2]?.linkIdentity(user, 'discord', `account-${i}`, { display: null, linkedAt: i })))
  t.equal(accounts.filter((result) => result.status === 'fulfilled').length, 1, 'one account is linked')
  t.equal((await adapters[0]?.listIdentities(user))?.filter((link) => link.provider === 'discord').length, 1, 'the user has one account of discord')
})

t.test('as WordPress stores them: one meta row per link, found by an equality on its key', async (t) => {
  const db = await createWordPressDb(t, { prefix: 'wpx7_' })
  const adapter = adapterOn(db)
  const user = await create(adapter, 'stored')
  await adapter.linkIdentity(user, 'gh', '583231', { display: 'octocat', linkedAt: 1_700_000_000_123 })
  const long = 'sub|'.repeat(2500)
  const provider = `p${'-_'.repeat(31)}9`
  t.equal(provider.length, 64, 'the longest provider name')
  await adapter.linkIdentity(user, provider, long, { display: null, linkedAt: 1_700_000_000_456 })
  const rows = await linkRows(db, user.ID)
  t.same(rows.map((row) => row.key), [linkKey('gh', '583231'), linkKey(provider, long)], 'the keys: the provider name and the SHA-256 of the subject')
  t.ok(rows.every((row) => row.key.length <= 191), 'every key within the 191 characters of the meta_key index')
  t.same(JSON.parse(rows[0]?.value ?? ''), { provider: 'gh', subject: '583231', display: 'octocat', linked_at: 1_700_000_000_123 }, 'the value: JSON that WordPress\'s maybe_unserialize leaves as it is')
  t.same(JSON.parse(rows[1]?.value ?? ''), { provider, subject: long, display: null, linked_at: 1_700_000_000_456 }, 'a subject of 10,000 characters, whole')
  t.equal(await rowsWithKey(db, linkKey('gh', '583231')), 1, 'a meta query by key alone (as get_users with meta_key makes) finds the link')
  t.equal((await adapter.findByIdentity(provider, long))?.ID, user.ID)
  t.equal(await rowsWithKey(db, 'wp_capabilities'), 0, 'only the tables of the adapter\'s prefix are used')
})

t.test('a damaged link row: listing throws naming the user and the key; rows of other keys are left alone', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const user = await create(adapter, 'damaged')
  await adapter.linkIdentity(user, 'gh', '1', { display: null, linkedAt: 1 })
  const insert = async (key: string, value: string | null): Promise<void> => {
    await db.pool.execute(`INSERT INTO \`${db.prefix}usermeta\` (user_id, meta_key, meta_value) VALUES (?, ?, ?)`, [user.ID, key, value])
  }
  // keys that only look like a link's, to the LIKE or to the collation: not links
  await insert('jwt_login_identity_note', 'anything')
  await insert(linkKey('google', 'x').toUpperCase(), 'anything')
  await insert('jwtXloginXidentityXgoogle', 'anything')
  t.same(await adapter.listIdentities(user), [{ provider: 'gh', subject: '1', display: null, linkedAt: 1 }], 'rows of other keys are not links')
  await adapter.linkIdentity(user, 'google', 'x', { display: null, linkedAt: 2 })
  t.equal((await adapter.findByIdentity('google', 'x'))?.ID, user.ID, 'nor do they stop a link')
  t.equal(await adapter.unlinkIdentity(user, 'google', 'x'), true)
  t.equal(await rowsWithKey(db, linkKey('google', 'x')), 1, 'unlinking deletes the link\'s row, not a row whose key is of another case')

  const damaged: Array<[string | null, string]> = [
    ['not json', 'plain text'],
    ['null', 'a JSON null'],
    ['"gh"', 'a JSON string'],
    [JSON.stringify({ provider: 'discord', subject: '2', display: null }), 'no linked_at'],
    [JSON.stringify({ provider: 'discord', subject: '2', display: 5, linked_at: 1 }), 'a display that is no string'],
    [JSON.stringify({ provider: 'discord', subject: '2', linked_at: 1 }), 'no display'],
    [JSON.stringify({ provider: 'discord', subject: 2, display: null, linked_at: 1 }), 'a subject that is no string'],
    [JSON.stringify({ subject: '2', display: null, linked_at: 1 }), 'no provider'],
    [JSON.stringify({ provider: 'discord', subject: '3', display: null, linked_at: 1 }), 'the link of another subject than its key\'s'],
    [JSON.stringify({ provider: 'Discord', subject: '2', display: null, linked_at: 1 }), 'the link of another provider than its key\'s'],
    [null, 'a NULL value']
  ]
  const key = linkKey('discord', '2')
  for (const [value, what] of damaged) {
    await db.pool.execute(`DELETE FROM \`${db.prefix}usermeta\` WHERE meta_key = ?`, [key])
    await insert(key, value)
    await t.rejects(adapter.listIdentities(user), { message: `WordPress user ${user.ID}: the meta ${key} does not hold the link of its key` }, what)
  }
})

t.test('a provider name jwt-login never gives, or a subject that is not well-formed Unicode, is never linked', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = adapterOn(db)
  const user = await create(adapter, 'careful')
  const refused = { message: /^WordPressUserAdapter: a provider name of letters, digits/ }
  for (const [provider, subject] of [['', '1'], ['a:b', '1'], ['gh%', '1'], ['x'.repeat(65), '1'], ['gh', '\ud800'], ['gh', 'a\udc00b']]) {
    const what = `${JSON.stringify(provider)} ${JSON.stringify(subject)}`
    await t.rejects(adapter.linkIdentity(user, provider as string, subject as string, { display: null, linkedAt: 1 }), refused, `${what}: linkIdentity throws`)
    t.equal(await adapter.findByIdentity(provider as string, subject as string), null, `${what}: findByIdentity is null`)
    t.equal(await adapter.unlinkIdentity(user, provider as string, subject as string), false, `${what}: unlinkIdentity is false`)
  }
  t.same(await linkRows(db, user.ID), [], 'nothing was written')
  // the subject whose UTF-8 a lone surrogate would have shared
  await adapter.linkIdentity(user, 'gh', '\ufffd', { display: null, linkedAt: 2 })
  t.equal(await adapter.findByIdentity('gh', '\ud800'), null, 'a lone surrogate does not find the link of U+FFFD')
})
