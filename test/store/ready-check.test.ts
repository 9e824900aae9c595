/**
 * Issue 24: ready means ready. At `ready()` the plugin reads one key that
 * cannot exist from the state store; a store that cannot serve (a
 * PostgreSQL table never migrated, a user without rights on it, a server
 * that is down) makes `ready()` reject with the problem and its fix, unless
 * the host passes `startDegraded`. Real PostgreSQL (this file's own schema
 * and role, dropped at the end) and a real Redis client at a closed port.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import jwtLogin, { JwtLoginSettingsError, MemoryStore, type JwtLoginOptions, type StateStore } from '../../lib/index.js'
import { PostgresStore } from '../../lib/postgres.js'
import { RedisStore } from '../../lib/redis.js'
import { storeProblem } from '../../lib/store/guard.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { errorOf, login } from '../helpers/http.js'
import { stderrDuring } from '../helpers/log-recorder.js'
import { closedPort } from '../helpers/net.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'
import { REDIS_URL, deleteKeys } from '../helpers/redis-store.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }
const schema = `jwt_login_ready_${randomBytes(6).toString('hex')}`
const role = `jwt_login_ready_${randomBytes(6).toString('hex')}`
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
t.teardown(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`)
  await admin.end()
})
await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)

/** A table name in this file's schema that no one has created yet. */
function freshTable (): string {
  return `${schema}.state_${randomBytes(4).toString('hex')}`
}

/** A connection string on the test database as `user`. */
function urlAs (user: string): string {
  const url = new URL(DATABASE_URL)
  url.username = user
  url.password = ''
  return url.toString()
}

/** The app with the plugin on `store`, readied; answers the error `ready()` rejected with, or the app. */
async function readied (t: Test, options: Partial<JwtLoginOptions>, fastify: FastifyServerOptions = {}): Promise<FastifyInstance | JwtLoginSettingsError> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify(fastify)
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users, settings: { tokens: TOKENS }, ...options })
  try {
    await app.ready()
    return app
  } catch (error) {
    if (error instanceof JwtLoginSettingsError) return error
    throw error
  }
}

/** A store the test closes at teardown. */
function closing<S extends StateStore> (t: Test, store: S): S {
  t.teardown(async () => { await store.close?.() })
  return store
}

t.test('a PostgresStore whose migrate() was never called: ready() names the missing table and the fix', async (t) => {
  const table = freshTable()
  const store = closing(t, new PostgresStore({ connectionString: DATABASE_URL, table }))
  const error = await readied(t, { store })
  t.ok(error instanceof JwtLoginSettingsError, 'ready() rejects')
  t.equal((error as JwtLoginSettingsError).path, 'store')
  t.match((error as JwtLoginSettingsError).message, /^jwt-login: invalid option store: the state store failed its check at ready\(\): its table does not exist: call `await store\.migrate\(\)` before `ready\(\)` \(or run postgresSchemaSql\(\.\.\.\) in your migrations\)/)
  t.match((error as JwtLoginSettingsError).message, /\(DatabaseError 42P01 relation ".*state_[0-9a-f]+" does not exist\); or pass startDegraded: true to start anyway$/)

  await store.migrate()
  const app = await readied(t, { store })
  t.notOk(app instanceof Error, 'after migrate() the app starts')
  t.equal((await login(app as FastifyInstance)).statusCode, 200)
})

t.test('a database user without rights on the table: ready() says to grant them', async (t) => {
  const table = freshTable()
  await new PostgresStore({ pool: admin, table }).migrate()
  await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN`)
  await admin.query(`GRANT USAGE ON SCHEMA ${pg.escapeIdentifier(schema)} TO ${pg.escapeIdentifier(role)}`)
  const store = closing(t, new PostgresStore({ connectionString: urlAs(role), table }))
  const error = await readied(t, { store })
  t.match(error, { name: 'JwtLoginSettingsError', path: 'store' })
  t.match((error as Error).message, 'the database user may not use its table: grant it SELECT, INSERT, UPDATE and DELETE on the table (GRANT SELECT, INSERT, UPDATE, DELETE ON <table> TO <user>) (DatabaseError 42501 permission denied for table')
})

t.test('a server that is down: ready() says to check the URL, within the store\'s own deadline', async (t) => {
  const redis = closing(t, new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log: { error: () => {}, warn: () => {} } }))
  let started = performance.now()
  const refused = await readied(t, { store: redis })
  t.ok(performance.now() - started < 2500, 'no longer than the store\'s 2 s deadline')
  t.match(refused, { path: 'store', message: /its server cannot be reached: check the URL \(host and port\) and that the server runs \(MaxRetriesPerRequestError/ })

  const postgres = closing(t, new PostgresStore({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/test`, log: { error: () => {}, warn: () => {} } }))
  started = performance.now()
  t.match(await readied(t, { store: postgres }), { path: 'store', message: /its server cannot be reached: check the URL \(host and port\) and that the server runs \(Error ECONNREFUSED connect ECONNREFUSED 127\.0\.0\.1:\d+\)/ })
  t.ok(performance.now() - started < 2500)
})

t.test('a login the server refuses, and a database that does not exist, are named', async (t) => {
  const nobody = closing(t, new PostgresStore({ connectionString: urlAs(`no_such_role_${randomBytes(4).toString('hex')}`), table: freshTable() }))
  t.match(await readied(t, { store: nobody }), { path: 'store', message: /the server refused the login: check the user and password of the URL \(DatabaseError 28000 role "no_such_role_\w+" does not exist\)/ })
  const url = new URL(DATABASE_URL)
  url.pathname = `/no_such_database_${randomBytes(4).toString('hex')}`
  const nowhere = closing(t, new PostgresStore({ connectionString: url.toString() }))
  t.match(await readied(t, { store: nowhere }), { path: 'store', message: /the database does not exist: check the database name in the URL \(DatabaseError 3D000/ })
})

t.test('the check reads one random key under the store\'s prefix, and writes nothing', async (t) => {
  const prefix = `jwt-login-test:ready:${randomUUID()}:`
  t.teardown(async () => { await deleteKeys(prefix) })
  const backing = closing(t, new RedisStore({ url: REDIS_URL, prefix }))
  const calls: string[] = []
  const store = new Proxy(backing, {
    get (target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.push(`${String(name)} ${String(args[0])}`)
        return (value as (...args: unknown[]) => unknown).apply(target, args)
      }
    }
  })
  const app = await readied(t, { store })
  t.notOk(app instanceof Error)
  const reads = calls.filter(call => !call.startsWith('attachLogger'))
  t.equal(reads.length, 1, 'one call')
  t.match(reads[0], /^get ready-check:[0-9a-f-]{36}$/)
})

t.test('startDegraded: the failure is logged as an error and the app starts; its store-bound requests answer 503', async (t) => {
  const lines: Array<Record<string, any>> = []
  const redis = closing(t, new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log: { error: () => {}, warn: () => {} } }))
  let app: FastifyInstance | JwtLoginSettingsError | undefined
  const stderr = await stderrDuring(async () => {
    app = await readied(t, { store: redis, startDegraded: true }, { logger: { level: 'error', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  })
  t.notOk(app instanceof Error, 'ready() resolved')
  t.match(lines, [{ level: 50, msg: /^jwt-login: the state store failed its check at ready\(\): its server cannot be reached: check the URL .*; started anyway \(startDegraded\): requests that need the store answer 503 until it is back$/ }])
  t.equal(stderr, '', 'with a logger, nothing printed')
  t.same(errorOf(await login(app as FastifyInstance)), [503, 201])

  // without a logger: printed to stderr
  const quiet = closing(t, new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log: { error: () => {}, warn: () => {} } }))
  const printed = await stderrDuring(async () => {
    app = await readied(t, { store: quiet, startDegraded: true })
  })
  t.notOk(app instanceof Error)
  t.match(printed, /^jwt-login: the state store failed its check at ready\(\): its server cannot be reached: .*started anyway \(startDegraded\).*\n$/)
})

t.test('a store of the host\'s own that throws or never answers: the error is named as it is', async (t) => {
  const memory = closing(t, new MemoryStore())
  const failing = (thrown: unknown): StateStore => ({ ...bound(memory), get: async () => { throw thrown } })
  t.match(await readied(t, { store: failing(new Error('boom')) }), { path: 'store', message: /check at ready\(\): a read failed \(Error boom\); or pass startDegraded/ })
  t.match(await readied(t, { store: failing(Object.assign(new Error('NOAUTH Authentication required.'), { name: 'ReplyError' })) }), { message: /the server refused the login: check the user and password of the URL \(Error NOAUTH Authentication required\.\)/ })
  t.match(await readied(t, { store: failing('down') }), { message: /a read failed \(String down\)/ })
  t.match(await readied(t, { store: failing(Object.assign(Object.create(null), { message: 'bare' })) }), { message: /a read failed \(object bare\)/ }, 'an error without a class')
  t.match(await readied(t, { store: failing(Object.assign(new Error('no route'), { code: 'EHOSTUNREACH' })) }), { message: /its server cannot be reached.*\(Error EHOSTUNREACH no route\)/ })
  t.match(await storeProblem({ ...bound(memory), get: async () => await new Promise<null>(() => {}) }, 50), /^its server did not answer in time: check the URL and that the server runs \(Error the state store did not answer within 50 ms\)$/)
  const quoting = await storeProblem(failing(new Error('cannot reach redis://jwt:s3cret-pass@cache.internal:6379/0')))
  t.match(quoting, 'redis://[redacted]@cache.internal:6379/0', 'the URL is named')
  t.notMatch(quoting, /jwt:|s3cret-pass/, 'its user and password are not')
  t.equal(await storeProblem(memory), null)
  t.notOk((await readied(t, {})) instanceof Error, 'the default MemoryStore passes')
})

/** The store's methods bound to it, as a plain object. */
function bound (store: MemoryStore): StateStore {
  return {
    get: store.get.bind(store),
    set: store.set.bind(store),
    consume: store.consume.bind(store),
    increment: store.increment.bind(store),
    compareAndSet: store.compareAndSet.bind(store),
    delete: store.delete.bind(store)
  }
}
