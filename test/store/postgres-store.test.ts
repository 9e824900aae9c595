/**
 * PostgresStore beyond the StateStore contract (which
 * test/conformance/state-store-postgres.test.ts checks): options, the table
 * and its migration, the sweep, what it logs, failing closed on a stalled or
 * unreachable database, and the plugin on it end to end. Everything lives in
 * one schema of this file's own, dropped at the end.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import type { StoreLogger } from '../../lib/index.js'
import { PostgresStore, postgresSchemaSql } from '../../lib/postgres.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorOf, loginTokens, post } from '../helpers/http.js'
import { closedPort } from '../helpers/net.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'
import { Recorder, stderrDuring, until } from '../helpers/log-recorder.js'

const schema = `jwt_login_test_${randomBytes(6).toString('hex')}`
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
t.teardown(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await admin.end()
})
await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)

interface Teardown { teardown: (fn: () => unknown) => void }
/** A pino-shaped logger that keeps its lines. */
/** A new table name in this file's schema (`schema.name`), and its quoted form for the admin's queries. */
function freshTable (): { table: string, quoted: string } {
  const name = `state_${randomBytes(4).toString('hex')}`
  return { table: `${schema}.${name}`, quoted: `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}` }
}

/** A migrated table of its own, so that a sweep sees only this test's rows. */
async function migratedTable (): Promise<{ table: string, quoted: string }> {
  const fresh = freshTable()
  await admin.query(postgresSchemaSql(fresh.table))
  return fresh
}

/** A pg pool the test owns, ended at teardown. */
function hostPool (t: Teardown, config: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 6, ...config })
  t.teardown(async () => { await pool.end() })
  return pool
}

/** A store the test closes at teardown. */
function store (t: Teardown, options: ConstructorParameters<typeof PostgresStore>[0]): PostgresStore {
  const made = new PostgresStore(options)
  t.teardown(async () => { await made.close() })
  return made
}

async function count (quoted: string): Promise<number> {
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${quoted}`)
  return rows[0].n
}

const shared = await migratedTable()

t.test('two stores with different prefixes on one table do not see each other', async (t) => {
  const pool = hostPool(t)
  const a = store(t, { pool, table: shared.table, prefix: 'app-a:' })
  const b = store(t, { pool, table: shared.table, prefix: 'app-b:' })
  await a.set('shared', 'from-a', 10_000)
  await a.increment('count', 10_000)
  t.equal(await b.get('shared'), null)
  t.same(await b.getMany(['shared']), [null])
  t.equal(await b.consume('shared'), null)
  t.equal(await b.compareAndSet('shared', 'from-a', 'x', 10_000), false)
  t.equal((await b.increment('count', 10_000)).count, 1)
  t.equal(await a.get('shared'), 'from-a')
  const { rows } = await admin.query(`SELECT value FROM ${shared.quoted} WHERE key = $1`, ['app-a:shared'])
  t.same(rows, [{ value: 'from-a' }], 'the key is written under the prefix')
  await b.delete('shared')
  t.equal(await a.get('shared'), 'from-a', 'delete in B leaves A alone')
})

t.test('the default table is jwt_login_state (found through search_path) and the default prefix jwt-login:', async (t) => {
  const pool = hostPool(t, { options: `-c search_path=${schema}` })
  const log = new Recorder()
  const defaults = store(t, { pool, log })
  await defaults.migrate()
  await defaults.set('k', 'v', 10_000)
  const { rows } = await admin.query(`SELECT key, value FROM ${pg.escapeIdentifier(schema)}.jwt_login_state`)
  t.same(rows, [{ key: 'jwt-login:k', value: 'v' }])
  const { rows: indexes } = await admin.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname', [schema, 'jwt_login_state'])
  t.same(indexes.map(row => row.indexname), ['jwt_login_state_expires_at_idx', 'jwt_login_state_pkey'])
  t.same(log.lines, [], 'a logged table: no warning')
})

t.test('postgresSchemaSql is what migrate() runs; the deployment page shows it for the default table', async (t) => {
  const page = await readFile(new URL('../../docs/deployment.md', import.meta.url), 'utf8')
  const section = page.split(/^## PostgreSQL$/m)[1] as string
  const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1]
  t.equal(block, `${postgresSchemaSql()}\n`)
  t.match(postgresSchemaSql('app.state'), /CREATE TABLE IF NOT EXISTS "app"."state" \(/)
  t.match(postgresSchemaSql('app.state'), /CREATE INDEX IF NOT EXISTS "state_expires_at_idx" ON "app"."state" \(expires_at\);/)
})

t.test('migrate() runs again, and five times at once on a new table', async (t) => {
  const { table, quoted } = freshTable()
  const pool = hostPool(t)
  const stores = Array.from({ length: 5 }, () => store(t, { pool, table }))
  await t.resolves(Promise.all(stores.map(async (one) => { await one.migrate() })), 'five at once')
  await t.resolves((stores[0] as PostgresStore).migrate(), 'and once more')
  await (stores[1] as PostgresStore).set('k', 'v', 10_000)
  t.equal(await count(quoted), 1)
})

t.test('a pool the host passed is not ended by close(); a pool the store created is', async (t) => {
  const pool = hostPool(t)
  const hosted = new PostgresStore({ pool, table: shared.table })
  t.equal(pool.listenerCount('error'), 0, 'no listener on a pool the host owns')
  await hosted.close()
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  t.equal(await hosted.get('still-works'), null)

  const owned = new PostgresStore({ connectionString: DATABASE_URL, table: shared.table })
  t.equal(await owned.get('warm-up'), null)
  await owned.close()
  await t.resolves(owned.close(), 'closing twice is fine')
  await t.rejects(owned.get('after-close'), 'the pool is ended')
})

t.test('exactly one of connectionString and pool; poolOptions only for the store\'s own pool', async (t) => {
  const pool = hostPool(t)
  t.throws(() => new PostgresStore(), { message: 'PostgresStore needs the option "connectionString" (the store creates and ends its pool) or "pool" (a pg Pool you own)' })
  t.throws(() => new PostgresStore({ pool, connectionString: DATABASE_URL }), { message: /give either the option "connectionString" .* or "pool" \(yours\), not both/ })
  t.throws(() => new PostgresStore({ pool, poolOptions: { max: 2 } }), { message: /"poolOptions" applies only to the pool the store creates/ })
})

t.test('the table option: a name or schema.name, validated, each part quoted so its case is kept', async (t) => {
  const pool = hostPool(t)
  const refused = ['', 'a.b.c', 'bad-name', 'x; DROP TABLE users', '"quoted"', '1table', `${schema}.`, `${'s'.repeat(64)}.state`, 'n'.repeat(49)]
  for (const table of refused) {
    t.throws(() => new PostgresStore({ pool, table }), { message: /^PostgresStore: the option "table" must be a name or schema\.name of letters, digits and underscores \(the name at most 48 characters\)/ }, JSON.stringify(table))
  }
  const mixed = store(t, { pool, table: `${schema}.Mixed_Case_${'n'.repeat(37)}` })
  await mixed.migrate()
  await mixed.set('k', 'v', 10_000)
  const { rows } = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE $2', [schema, 'Mixed_Case_%'])
  t.same(rows, [{ tablename: `Mixed_Case_${'n'.repeat(37)}` }], 'a 48-character name, its case kept')
})

t.test('sweep() deletes only expired rows, at most sweepBatch per statement, statement after statement while batches are full', async (t) => {
  const { table, quoted } = await migratedTable()
  const pool = hostPool(t)
  const sweeps: number[] = []
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<{ rowCount: number }>
  pool.query = (async (...args: unknown[]) => {
    const result = await query(...args)
    const { text } = args[0] as { text: string }
    if (text.startsWith('DELETE') && text.includes('LIMIT')) sweeps.push(result.rowCount)
    return result
  }) as unknown as typeof pool.query
  const swept = store(t, { pool, table, sweepBatch: 2 })
  for (let i = 0; i < 5; i++) await swept.set(`brief-${i}`, 'v', 1)
  await swept.set('live', 'v', 60_000)
  await swept.increment('counter', 60_000)
  // real time on the database's clock
  await sleep(30)
  t.equal(await swept.sweep(), 5, 'one sweep deletes the whole backlog')
  t.same(sweeps, [2, 2, 1], 'in statements of at most sweepBatch rows, until one finds fewer')
  t.equal(await swept.sweep(), 0)
  t.equal(await count(quoted), 2)
  t.same(await swept.getMany(['live', 'counter']), ['v', '1'], 'live rows stay')
})

t.test('sweepBatch and sweepIntervalMs must be whole numbers of at least 1', async (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => new PostgresStore({ connectionString: DATABASE_URL, sweepBatch: bad }), /the option "sweepBatch" must be a whole number of at least 1/)
    t.throws(() => new PostgresStore({ connectionString: DATABASE_URL, sweepIntervalMs: bad }), /the option "sweepIntervalMs" must be a whole number of at least 1/)
  }
})

t.test('a store closed during a drain\'s pause sends no further statement and logs nothing', async (t) => {
  const { table, quoted } = await migratedTable()
  const log = new Recorder()
  const swept = new PostgresStore({ connectionString: DATABASE_URL, table, sweepBatch: 1, log })
  for (let i = 0; i < 5; i++) await swept.set(`brief-${i}`, 'v', 1)
  await sleep(30)
  const sweeping = swept.sweep()
  // the first statement is answered, the drain pauses 100 ms: close meanwhile (the owned pool ends)
  await sleep(50)
  await swept.close()
  t.ok(await sweeping < 5, 'the drain stopped')
  t.ok(await count(quoted) > 0, 'rows are left for another instance or the next start')
  t.same(log.lines, [], 'no false error about an ended pool')
})

t.test('a sweep draining a backlog stops at close()', async (t) => {
  const { table, quoted } = await migratedTable()
  const swept = new PostgresStore({ pool: hostPool(t), table, sweepBatch: 1 })
  for (let i = 0; i < 5; i++) await swept.set(`brief-${i}`, 'v', 1)
  await sleep(30)
  const sweeping = swept.sweep()
  await swept.close()
  t.equal(await sweeping, 1, 'the statement under way finishes; no other follows')
  t.equal(await count(quoted), 4)
})

t.test('the sweep runs on its timer', async (t) => {
  const { table, quoted } = await migratedTable()
  const swept = store(t, { connectionString: DATABASE_URL, table, sweepIntervalMs: 20 })
  for (let i = 0; i < 3; i++) await swept.set(`brief-${i}`, 'v', 1)
  await swept.set('live', 'v', 60_000)
  await until('the expired rows are deleted', async () => await count(quoted) === 1)
  t.equal(await swept.get('live'), 'v')
})

t.test('a failing sweep is logged at most once per interval, not thrown; attachLogger keeps the first logger', async (t) => {
  const missing = freshTable().table
  const log = new Recorder()
  const failing = store(t, { connectionString: DATABASE_URL, table: missing, sweepIntervalMs: 10, log })
  failing.attachLogger(new Recorder())
  await t.rejects(failing.sweep(), { code: '42P01' }, 'sweep() itself rejects: the table does not exist')
  await until('the error line', () => log.lines.length > 0)
  // more sweeps fail meanwhile, within the same interval
  await sleep(100)
  t.equal(log.lines.length, 1, 'one line for the burst')
  t.match(log.lines[0], {
    level: 'error',
    message: 'jwt-login: the PostgreSQL store could not delete expired rows; they read as absent and wait for the next sweep',
    details: { err: { code: '42P01', message: /does not exist/ }, notLogged: 0 }
  })

  const attached = new Recorder()
  const later = store(t, { connectionString: DATABASE_URL, table: missing, sweepIntervalMs: 10 })
  later.attachLogger(attached)
  later.attachLogger(new Recorder())
  await until('the attached logger\'s line', () => attached.lines.length > 0)
  t.equal(attached.lines[0]?.details.err.code, '42P01')
})

t.test('without a logger, a failing sweep writes one line to stderr', async (t) => {
  const stderr = await stderrDuring(async () => {
    const failing = new PostgresStore({ connectionString: DATABASE_URL, table: freshTable().table, sweepIntervalMs: 10 })
    // room for the first connection and its failing statement on a busy machine; one line per 10 s at most
    await sleep(1000)
    await failing.close()
  })
  t.equal(stderr.match(/could not delete expired rows/g)?.length, 1)
})

t.test('the store\'s own pool: a lost idle connection is logged once for the burst, never the connection string', async (t) => {
  const application = `jwt-login-test-${randomBytes(4).toString('hex')}`
  const url = new URL(DATABASE_URL)
  // the test database trusts local connections: the password is never asked for, only carried
  url.password = 'never-log-this-password'
  url.searchParams.set('application_name', application)
  const log = new Recorder()
  const owned = store(t, { connectionString: url.href, table: shared.table, log })
  // three connections, idle in the pool after these
  await Promise.all([1, 2, 3].map(async (i) => await owned.get(`warm-${i}`)))
  const terminate = async (): Promise<number> => {
    const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [application])
    return rowCount as number
  }
  t.ok(await terminate() >= 1, 'the store\'s idle connections are ended by the server')
  await until('the error line', () => log.lines.length > 0)
  await sleep(200)
  t.equal(log.lines.length, 1, 'one line, however many connections went')
  t.match(log.lines[0], {
    level: 'error',
    message: 'jwt-login: the PostgreSQL store lost a connection to the database; requests that need it answer 503 until it is back',
    details: { err: { code: '57P01', message: /terminating connection/ }, notLogged: Number }
  })
  t.notMatch(JSON.stringify(log.lines), /never-log-this-password|postgres:\/\//, 'no password, no connection string')
  t.equal(await owned.get('after'), null, 'the pool connects again')
})

t.test('getMany is one query, and none for no keys', async (t) => {
  const pool = hostPool(t)
  let queries = 0
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
  pool.query = ((...args: unknown[]) => { queries++; return query(...args) }) as typeof pool.query
  const counted = store(t, { pool, table: shared.table, prefix: `many-${randomBytes(4).toString('hex')}:` })
  await counted.set('a', '1', 60_000)
  await counted.set('b', '2', 60_000)
  queries = 0
  t.same(await counted.getMany([]), [])
  t.equal(queries, 0)
  t.same(await counted.getMany(['b', 'absent', 'a', 'b']), ['2', null, '1', '2'])
  t.equal(queries, 1)
})

t.test('statements are prepared once per connection, named after their text; preparedStatements: false sends them plain', async (t) => {
  const pool = hostPool(t)
  const sent: Array<{ name?: string, text: string }> = []
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
  pool.query = ((...args: unknown[]) => { sent.push(args[0] as { name?: string, text: string }); return query(...args) }) as typeof pool.query
  const other = await migratedTable()
  // two stores on two tables share the pool: a name used for two texts would be refused by pg
  const first = store(t, { pool, table: shared.table, prefix: `prep-${randomBytes(4).toString('hex')}:` })
  const second = store(t, { pool, table: other.table })
  await first.set('k', '1', 60_000)
  await second.set('k', '2', 60_000)
  t.same([await first.getMany(['k']), await second.getMany(['k'])], [['1'], ['2']])
  t.ok(sent.every(statement => statement.name?.startsWith('jwt_login_') === true), 'every statement has a name')
  t.equal(new Set(sent.map(statement => statement.name)).size, 4, 'one name per text: set and getMany on each table')

  sent.length = 0
  const plain = store(t, { pool, table: other.table, preparedStatements: false })
  t.same(await plain.getMany(['k']), ['2'])
  t.same(sent.map(statement => statement.name), [undefined], 'no name: parsed per request, as a pooler without prepared statements needs')
})

/** Another session holds `quoted` (ACCESS EXCLUSIVE) until `release` or the test's end. */
async function lockTable (t: Teardown, quoted: string): Promise<{ release: () => Promise<void> }> {
  const locker = await admin.connect()
  await locker.query('BEGIN')
  await locker.query(`LOCK TABLE ${quoted} IN ACCESS EXCLUSIVE MODE`)
  let held = true
  const release = async (): Promise<void> => {
    if (!held) return
    held = false
    await locker.query('ROLLBACK').finally(() => { locker.release() })
  }
  t.teardown(release)
  return { release }
}

/** A store whose statements time out after 300 ms, sweeping every 10 ms, on a new table; its sessions carry `application`. */
async function stallingStore (t: Teardown, log: StoreLogger): Promise<{ stalled: PostgresStore, quoted: string, application: string }> {
  const { table, quoted } = await migratedTable()
  const application = `jwt-login-test-${randomBytes(4).toString('hex')}`
  const poolOptions = { statement_timeout: 300, query_timeout: 10_000, application_name: application }
  return { stalled: store(t, { connectionString: DATABASE_URL, table, log, sweepIntervalMs: 10, poolOptions }), quoted, application }
}

t.test('a stalled database fails closed: the statement times out, login answers 503 / 201', async (t) => {
  const { stalled, quoted } = await stallingStore(t, new Recorder())
  const lock = await lockTable(t, quoted)
  await t.rejects(stalled.get('k'), { code: '57014', message: /statement timeout/ }, 'the server cancels the statement (poolOptions override the defaults)')
  const { app } = await buildApp({}, { store: stalled, startDegraded: true })
  t.teardown(() => app.close())
  t.same(errorOf(await post(app, '/auth', { email: ALICE.email, password: ALICE.password })), [503, 201])
  await lock.release()
  t.equal(await stalled.get('k'), null, 'works again once the lock is gone')
})

t.test('sweeps do not pile up on a stalled database; the failed sweep is logged', async (t) => {
  const log = new Recorder()
  const { quoted, application } = await stallingStore(t, log)
  await lockTable(t, quoted)
  const waitingSweeps = async (): Promise<number> => {
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE 'DELETE%'", [application])
    return rows[0].n
  }
  await until('a sweep waits on the lock', async () => await waitingSweeps() > 0)
  // the timer ticks every 10 ms meanwhile; each sweep waits until its statement times out
  const samples: number[] = []
  for (let i = 0; i < 10; i++) {
    samples.push(await waitingSweeps())
    await sleep(20)
  }
  t.ok(samples.every(n => n <= 1) && samples.includes(1), `one sweep at a time (${samples.join(' ')})`)
  await until('the failed sweep\'s line', () => log.lines.length > 0)
  t.match(log.lines[0], { level: 'error', details: { err: { code: '57014' } } })
})

t.test('the default timeouts bound a statement that waits on a lock', async (t) => {
  const { table, quoted } = await migratedTable()
  const waiting = store(t, { connectionString: DATABASE_URL, table })
  await lockTable(t, quoted)
  await t.rejects(waiting.set('k', 'v', 1000), 'rejected within the defaults (2 s), not left waiting')
})

t.test('an unreachable database fails closed: login answers 503 / 201', async (t) => {
  const url = new URL(DATABASE_URL)
  url.port = String(await closedPort())
  const unreachable = store(t, { connectionString: url.href })
  await t.rejects(unreachable.get('k'), { code: 'ECONNREFUSED' })
  const { app } = await buildApp({}, { store: unreachable, startDegraded: true })
  t.teardown(() => app.close())
  t.same(errorOf(await post(app, '/auth', { email: ALICE.email, password: ALICE.password })), [503, 201])
})

t.test('migrate() warns about an UNLOGGED table, through the logger or on stderr', async (t) => {
  const { table, quoted } = freshTable()
  await admin.query(`CREATE UNLOGGED TABLE ${quoted} (key text PRIMARY KEY, value text NOT NULL, expires_at timestamptz NOT NULL)`)
  const log = new Recorder()
  await store(t, { connectionString: DATABASE_URL, table, log }).migrate()
  t.match(log.lines, [{ level: 'warn', details: { table }, message: /table is UNLOGGED: a database crash empties it/ }])
  const stderr = await stderrDuring(async () => { await store(t, { connectionString: DATABASE_URL, table }).migrate() })
  t.match(stderr, /table is UNLOGGED/)
})

t.test('the plugin on PostgresStore: login, validate, refresh, revoke', async (t) => {
  const prefix = `e2e-${randomBytes(4).toString('hex')}:`
  const shared2 = store(t, { connectionString: DATABASE_URL, table: shared.table, prefix })
  const { app } = await buildApp({ refresh: { enabled: true } }, { store: shared2 })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  t.equal((await post(app, '/auth/validate', { JWT: first.jwt })).statusCode, 200)
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${shared.quoted} WHERE key LIKE $1`, [`${prefix}%`])
  t.ok(rows[0].n > 0, 'the session is a row in the table')

  const refreshed = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(refreshed.statusCode, 200)
  const second = refreshed.json().data as { jwt: string, refresh_token: string }
  t.equal((await post(app, '/auth/validate', { JWT: second.jwt })).statusCode, 200)

  t.equal((await post(app, '/auth/revoke', { JWT: second.jwt })).statusCode, 200)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: second.jwt })), [401, 55], 'the revoked token is refused')
  t.same(errorOf(await post(app, '/auth/validate', { JWT: first.jwt })), [401, 55], 'so is the session\'s earlier one')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: second.refresh_token })), [401, 51], 'and its refresh token')
})
