/**
 * Issue 24: the first hour of a newcomer, replayed. The packed tarball is
 * installed into a new ESM host written from the README's quick start and
 * docs/adapters.md only: a user adapter as the docs' sketch shows it, on
 * PostgreSQL, and a PostgresStore. Then (a) a typo in a top-level option is
 * refused at registration with the option it is near, (b) a store whose
 * migrate() was never called is refused at ready() naming migrate(), and
 * (c) with migrate() the quick start's login answers a JWT that the host's
 * protected route takes.
 */
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { hashPassword } from '../../lib/index.js'
import { CHILD_ENV, installedVersion, packRepository, REPOSITORY, TSX_LOADER } from '../helpers/pack.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

t.setTimeout(600_000)

const execFileAsync = promisify(execFile)
const env = CHILD_ENV
const root = REPOSITORY
const tsx = TSX_LOADER
const versionOf = installedVersion

const ALICE = { login: 'alice', email: 'alice@example.com', name: 'Alice', password: 'correct horse battery staple' }

// the host's users, in a schema of this test's own
const schema = `jwt_login_newcomer_${randomBytes(6).toString('hex')}`
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
const work = await mkdtemp(join(tmpdir(), 'jwt-login-newcomer-'))
t.teardown(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await admin.end()
  await rm(work, { recursive: true, force: true })
})
await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)
await admin.query(`CREATE TABLE ${pg.escapeIdentifier(schema)}.users (id serial PRIMARY KEY, login text UNIQUE NOT NULL, email text UNIQUE NOT NULL, name text NOT NULL, roles text[] NOT NULL, hash text NOT NULL)`)
await admin.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.users (login, email, name, roles, hash) VALUES ($1, $2, $3, $4, $5)`, [ALICE.login, ALICE.email, ALICE.name, ['subscriber'], await hashPassword(ALICE.password)])

// the user adapter of docs/adapters.md's sketch, its `db` made of a pg pool whose search path is the users' schema
const USERS_TS = `import pg from 'pg'
import { hashPassword, verifyPasswordHash, type PublicUser, type UserAdapter } from 'fastify-jwt-login'

interface Row { id: number, login: string, email: string, name: string, roles: string[], hash: string }
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: \`-c search_path=\${process.env.USERS_SCHEMA}\` })
const db = {
  one: async (sql: string, params: unknown[]): Promise<Row | null> => (await pool.query<Row>(sql, params)).rows[0] ?? null,
  run: async (sql: string, params: unknown[]): Promise<void> => { await pool.query(sql, params) }
}
export const closeUsers = async (): Promise<void> => { await pool.end() }

export const users: UserAdapter<Row> = {
  findByEmail: async (email) => await db.one('SELECT * FROM users WHERE lower(email) = lower($1)', [email]),
  findByLogin: async (login) => await db.one('SELECT * FROM users WHERE login = $1', [login]),
  findById: async (id) => await db.one('SELECT * FROM users WHERE id = $1', [id]),
  verifyPassword: async (user, password) => await verifyPasswordHash(user.hash, password),
  toPublicUser: (user): PublicUser => ({ ID: user.id, user_login: user.login, user_email: user.email, display_name: user.name, roles: user.roles }),
  setPassword: async (user, password) => { await db.run('UPDATE users SET hash = $1 WHERE id = $2', [await hashPassword(password), user.id]) }
}
`

// the README's quick start with the state store of docs/adapters.md; TYPO and MIGRATE choose the newcomer's mistakes
const SERVER_TS = `import Fastify from 'fastify'
import jwtLogin from 'fastify-jwt-login'
import { PostgresStore } from 'fastify-jwt-login/postgres'
import { closeUsers, users } from './users.js'

const store = new PostgresStore({ connectionString: process.env.DATABASE_URL, table: process.env.STATE_TABLE })
if (process.env.MIGRATE === '1') await store.migrate()

const app = Fastify({ logger: true })
await app.register(jwtLogin, {
  users,
  store,
  settings: {
    tokens: { keys: [{ kid: '2026-11', secret: process.env.JWT_SECRET! }] }, // HS256, at least 32 bytes
    refresh: { enabled: true }
  },
  ...(process.env.TYPO === '1' ? { userCahce: { ttl: 10 } } : {})
})
app.addHook('onClose', async () => { await store.close(); await closeUsers() })

// host routes can require a valid final token
app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => request.jwtLogin!.user)
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
`

// npm pack runs `prepare`, so the tarball holds a fresh build; the host installs what the README's Installing says
const tarball = join(work, (await packRepository(root, work, env)).filename)
const host = join(work, 'host')
await mkdir(host)
await writeFile(join(host, 'package.json'), JSON.stringify({ name: 'newcomer-host', private: true, type: 'module' }))
await writeFile(join(host, 'users.ts'), USERS_TS)
await writeFile(join(host, 'server.ts'), SERVER_TS)
await execFileAsync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `fastify@${await versionOf('fastify')}`, `pg@${await versionOf('pg')}`], { cwd: host, env, maxBuffer: 16 * 1024 * 1024 })

interface Run { code: number | null, stdout: string, stderr: string, base: string | null, stop: () => Promise<void> }

/**
 * Starts `npx tsx server.ts` with `extra` in its environment: resolves when
 * it listens (answering its address) or has exited (answering its exit
 * code and output).
 */
async function start (extra: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, ['--import', tsx, 'server.ts'], {
    cwd: host,
    env: { ...env, DATABASE_URL, USERS_SCHEMA: schema, JWT_SECRET: randomBytes(32).toString('base64'), PORT: '0', ...extra }
  })
  const run: Run = { code: null, stdout: '', stderr: '', base: null, stop: async () => {} }
  const exited = new Promise<void>((resolve) => { child.on('exit', (code) => { run.code = code; resolve() }) })
  run.stop = async () => {
    if (run.code === null) child.kill('SIGTERM')
    await exited
  }
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      run.stdout += String(chunk)
      // the quick start's logger announces the address
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout)
      if (listening !== null && run.base === null) {
        run.base = listening[1] as string
        resolve()
      }
    })
    child.stderr.on('data', (chunk: Buffer) => { run.stderr += String(chunk) })
    exited.then(resolve, resolve)
  })
  t.teardown(run.stop)
  return run
}

t.test('(a) a typo in a top-level option is refused at registration, with the option it is near', async (t) => {
  const run = await start({ TYPO: '1', MIGRATE: '1', STATE_TABLE: `${schema}.state` })
  await run.stop()
  t.equal(run.base, null, 'it never listened')
  t.not(run.code, 0)
  t.match(run.stderr, 'JwtLoginSettingsError: jwt-login: invalid option userCahce: not an option of jwt-login: `userCahce` (did you mean `userCache`?)')
})

t.test('(b) a PostgresStore without migrate() is refused at ready(), naming migrate()', async (t) => {
  const run = await start({ STATE_TABLE: `${schema}.never_migrated` })
  await run.stop()
  t.equal(run.base, null, 'it never listened')
  t.not(run.code, 0)
  t.match(run.stderr, 'jwt-login: invalid option store: the state store failed its check at ready(): its table does not exist: call `await store.migrate()` before `ready()`')
  t.match(run.stderr, /relation ".*never_migrated" does not exist/)
})

t.test('(c) with migrate(): the quick start\'s login answers a JWT, and the protected route takes it', async (t) => {
  const run = await start({ MIGRATE: '1', STATE_TABLE: `${schema}.state` })
  t.teardown(run.stop)
  t.type(run.base, 'string', `it listens (stderr: ${run.stderr})`)
  // the README's curl, as fetch
  const login = await fetch(`${run.base as string}/jwt-login/v1/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ALICE.email, password: ALICE.password })
  })
  const body = await login.json() as { success: boolean, data: { jwt: string, refresh_token: string } }
  t.equal(login.status, 200)
  t.equal(body.success, true)
  t.match(body.data.jwt, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/)
  t.type(body.data.refresh_token, 'string')
  const me = await fetch(`${run.base as string}/me`, { headers: { authorization: `Bearer ${body.data.jwt}` } })
  t.same(await me.json(), { ID: 1, user_login: 'alice', user_email: ALICE.email, display_name: ALICE.name, roles: ['subscriber'] })
  const wrong = await fetch(`${run.base as string}/jwt-login/v1/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ALICE.email, password: 'not the password' })
  })
  t.equal(wrong.status, 401)
})
