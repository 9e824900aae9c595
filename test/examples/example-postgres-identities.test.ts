// The PostgreSQL example's linked identities beyond the port's contract (test/conformance/user-adapter-postgres.test.ts holds that): what only the tables can be asked.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { migrate, qualified } from '../../examples/postgres/migrate.js'
import { PostgresUserAdapter, type PostgresUser } from '../../examples/postgres/users.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

// One schema of our own on the shared database, dropped with everything in it at the end.
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
const schema = `jwt_login_example_${randomBytes(6).toString('hex')}`
t.teardown(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await pool.end()
})
await migrate(pool, schema)

const PASSWORD = 'a password of the sign-up'
const users = new PostgresUserAdapter(pool, schema)
const usersTable = qualified(schema, 'users')

/** The host deletes a user with a plain DELETE (the example has no deleteUser): the links must go by the cascade. */
async function removeUser (user: PostgresUser): Promise<void> {
  await pool.query(`DELETE FROM ${usersTable} WHERE id = $1`, [user.id])
}

async function user (): Promise<PostgresUser> {
  const login = `user-${randomBytes(6).toString('hex')}`
  return await users.addUser({ login, email: `${login}@example.com`, password: PASSWORD })
}

t.test('a user the host deletes with a plain DELETE loses their links by the cascade, and their accounts can be linked again', async (t) => {
  const [gone, stays, heir] = [await user(), await user(), await user()]
  await users.linkIdentity(gone, 'github', 'gone-gh', { display: null, linkedAt: 1 })
  await users.linkIdentity(gone, 'discord', 'gone-dc', { display: null, linkedAt: 2 })
  await users.linkIdentity(stays, 'github', 'stays-gh', { display: null, linkedAt: 3 })
  await removeUser(gone)
  t.equal(await users.findByIdentity('github', 'gone-gh'), null)
  t.equal(await users.findByIdentity('discord', 'gone-dc'), null)
  t.equal((await users.findByIdentity('github', 'stays-gh'))?.id, stays.id, 'another user\'s link stays')
  t.equal(await users.linkIdentity(heir, 'github', 'gone-gh', { display: null, linkedAt: 4 }), true)
  t.equal((await users.findByIdentity('github', 'gone-gh'))?.id, heir.id)
})

t.test('migrate runs again and keeps the links and has_password', async (t) => {
  const alice = await user()
  const provided = await users.createUser({ login: 'provided', email: 'provided@example.com', displayName: 'P', role: 'subscriber' })
  await users.linkIdentity(alice, 'github', '583231', { display: 'octocat', linkedAt: 1_714_557_600_123 })
  await migrate(pool, schema)
  t.strictSame(await users.listIdentities(alice), [{ provider: 'github', subject: '583231', display: 'octocat', linkedAt: 1_714_557_600_123 }])
  t.equal(await users.hasPassword(provided), false)
})

t.test('a table made before has_password gets it, true for the users it had', async (t) => {
  const old = await user()
  await pool.query(`ALTER TABLE ${usersTable} DROP COLUMN has_password`)
  await migrate(pool, schema)
  t.equal(await users.hasPassword(old), true)
  const provided = await users.createUser({ login: 'provided-later', email: 'provided-later@example.com', displayName: 'P', role: 'subscriber' })
  t.equal(await users.hasPassword(provided), false, 'and createUser writes it again')
})

t.test('hasPassword reads the row: a record kept from before setPassword answers true, a deleted user false', async (t) => {
  const provided = await users.createUser({ login: 'kept', email: 'kept@example.com', displayName: 'K', role: 'subscriber' })
  t.equal(provided.has_password, false, 'the record says so too')
  const kept = { ...provided }
  await users.setPassword(provided, 'a password set later')
  t.equal(provided.has_password, true, 'the record passed to setPassword follows')
  t.equal(kept.has_password, false, 'a copy does not')
  t.equal(await users.hasPassword(kept), true, 'but the row answers')
  t.equal(await users.verifyPassword(provided, 'a password set later'), true, 'the record passed holds the new hash')
  await removeUser(provided)
  t.equal(await users.hasPassword(kept), false)
})

t.test('a link to a user deleted meanwhile is refused by the foreign key, not as a taken identity', async (t) => {
  const gone = await user()
  await removeUser(gone)
  await t.rejects(users.linkIdentity(gone, 'github', 'gone', { display: null, linkedAt: Date.now() }), { code: '23503' }, 'foreign_key_violation: the plugin answers 503')
  t.equal(await users.findByIdentity('github', 'gone'), null)
})

t.test('a subject with a NUL character is an error of the database, not a taken identity', async (t) => {
  await t.rejects(users.linkIdentity(await user(), 'github', 'nul\u0000subject', { display: null, linkedAt: Date.now() }), { code: '22021' })
})
