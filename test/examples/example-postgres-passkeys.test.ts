// The PostgreSQL example's passkey store beyond the port's contract (test/conformance/passkey-port.test.ts runs the suite): migrate again, the cascade from users, the table's checks.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { migrate, qualified } from '../../examples/postgres/migrate.js'
import { PostgresPasskeyStore } from '../../examples/postgres/passkeys.js'
import { passkeyOf } from '../../lib/conformance/passkey-samples.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

// One schema of our own on the shared database, dropped with everything in it at the end.
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 })
const schema = `jwt_login_example_${randomBytes(6).toString('hex')}`
t.teardown(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await pool.end()
})
await migrate(pool, schema)

/**
 * A row of `users` with a login of its own. Straight SQL: the adapter's
 * addUser would spend an argon2 hash on a password nobody uses here.
 */
async function addUser (): Promise<number> {
  const login = `user-${randomBytes(6).toString('hex')}`
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO ${qualified(schema, 'users')} (login, email, display_name, password_hash) VALUES ($1, $2, $1, 'not a hash') RETURNING id`,
    [login, `${login}@example.com`]
  )
  return (rows[0] as { id: number }).id
}

t.test('migrate runs again and keeps the credentials', async (t) => {
  const store = new PostgresPasskeyStore(pool, schema)
  const passkey = passkeyOf(await addUser())
  await store.create(passkey)
  await migrate(pool, schema)
  t.strictSame(await store.findById(passkey.id), passkey)
})

t.test('deleting a user deletes their passkeys, and only theirs', async (t) => {
  const store = new PostgresPasskeyStore(pool, schema)
  const [gone, stays] = [await addUser(), await addUser()]
  const theirs = [passkeyOf(gone), passkeyOf(gone, { name: 'second' })]
  const kept = passkeyOf(stays)
  for (const passkey of [...theirs, kept]) t.equal(await store.create(passkey), true)

  await pool.query(`DELETE FROM ${qualified(schema, 'users')} WHERE id = $1`, [gone])
  t.strictSame(await store.listByUser(gone), [])
  for (const passkey of theirs) t.equal(await store.findById(passkey.id), null, `${passkey.name} is gone`)
  t.strictSame(await store.findById(kept.id), kept, 'another user\'s stays')
})

t.test('a credential of a user who does not exist is refused by the foreign key', async (t) => {
  const store = new PostgresPasskeyStore(pool, schema)
  await t.rejects(store.create(passkeyOf(2 ** 31 - 1)), { code: '23503' }, 'foreign_key_violation: the plugin answers 503')
})

t.test('the table refuses a device type the port does not know', async (t) => {
  const store = new PostgresPasskeyStore(pool, schema)
  const odd = { ...passkeyOf(await addUser()), deviceType: 'tripleDevice' } as unknown as Parameters<typeof store.create>[0]
  await t.rejects(store.create(odd), { code: '23514' }, 'check_violation')
})
