/**
 * Issue 41's "done when", from the packed tarball in a new project:
 * `fastify-jwt-login/conformance`'s `userAdapterSuite` runs under
 * `node --test` against docs/adapters.md's sketch of a user adapter and
 * passes; the same adapter comparing emails case-sensitively fails, with the
 * rule named.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { userAdapterRules } from '../../lib/conformance.js'
import { CHILD_ENV, installedVersion, packRepository, REPOSITORY, TSX_LOADER } from '../helpers/pack.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

t.setTimeout(600_000)

const execFileAsync = promisify(execFile)
const env = CHILD_ENV
const root = REPOSITORY
const tsx = TSX_LOADER
const versionOf = installedVersion

const schema = `jwt_login_conformance_${randomBytes(6).toString('hex')}`
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
const work = await mkdtemp(join(tmpdir(), 'jwt-login-conformance-'))
t.teardown(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
  await admin.end()
  await rm(work, { recursive: true, force: true })
})
await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)
await admin.query(`CREATE TABLE ${pg.escapeIdentifier(schema)}.users (id serial PRIMARY KEY, login text UNIQUE NOT NULL, email text UNIQUE NOT NULL, name text NOT NULL, roles text[] NOT NULL, hash text NOT NULL)`)

// docs/adapters.md's sketch, its `db` a pg pool on this test's schema; EMAIL_COMPARE=exact is the author's mistake
const USERS_TS = `import pg from 'pg'
import { hashPassword, verifyPasswordHash, type PublicUser, type UserAdapter } from 'fastify-jwt-login'

interface Row { id: number, login: string, email: string, name: string, roles: string[], hash: string }
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: \`-c search_path=\${process.env.USERS_SCHEMA}\` })
const db = {
  one: async (sql: string, params: unknown[]): Promise<Row | null> => (await pool.query<Row>(sql, params)).rows[0] ?? null,
  run: async (sql: string, params: unknown[]): Promise<void> => { await pool.query(sql, params) }
}
export const closeUsers = async (): Promise<void> => { await pool.end() }
const byEmail = process.env.EMAIL_COMPARE === 'exact' ? 'SELECT * FROM users WHERE email = $1' : 'SELECT * FROM users WHERE lower(email) = lower($1)'

export const users: UserAdapter<Row> = {
  findByEmail: async (email) => await db.one(byEmail, [email]),
  findByLogin: async (login) => await db.one('SELECT * FROM users WHERE login = $1', [login]),
  findById: async (id) => await db.one('SELECT * FROM users WHERE id = $1', [id]),
  verifyPassword: async (user, password) => await verifyPasswordHash(user.hash, password),
  toPublicUser: (user): PublicUser => ({ ID: user.id, user_login: user.login, user_email: user.email, display_name: user.name, roles: user.roles }),
  setPassword: async (user, password) => { await db.run('UPDATE users SET hash = $1 WHERE id = $2', [await hashPassword(password), user.id]) }
}

export async function addUser ({ login, email, password }: { login: string, email: string, password: string }): Promise<Row> {
  const { rows } = await pool.query<Row>('INSERT INTO users (login, email, name, roles, hash) VALUES ($1, $2, $1, $3, $4) RETURNING *', [login, email, ['subscriber'], await hashPassword(password)])
  return rows[0] as Row
}
`

const USERS_TEST_TS = `import { after, test } from 'node:test'
import { userAdapterSuite } from 'fastify-jwt-login/conformance'
import { addUser, closeUsers, users } from './users.js'

after(closeUsers)
await userAdapterSuite({ test, create: async () => ({ adapter: users, addUser }) })
`

const tarball = join(work, (await packRepository(root, work, env)).filename)
const project = join(work, 'project')
await mkdir(project)
await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'adapter-author', private: true, type: 'module' }))
await writeFile(join(project, 'users.ts'), USERS_TS)
await writeFile(join(project, 'users.test.ts'), USERS_TEST_TS)
await execFileAsync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `fastify@${await versionOf('fastify')}`, `pg@${await versionOf('pg')}`], { cwd: project, env, maxBuffer: 16 * 1024 * 1024 })

/** `node --test users.test.ts` in the project, with `extra` in its environment. */
async function nodeTest (extra: Record<string, string>): Promise<{ code: number, output: string }> {
  const ran = await execFileAsync(process.execPath, ['--import', tsx, '--test', '--test-reporter=tap', 'users.test.ts'], {
    cwd: project, env: { ...env, DATABASE_URL, USERS_SCHEMA: schema, ...extra }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024
  }).then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (error: { code: number, stdout: string, stderr: string }) => error)
  return { code: ran.code, output: `${ran.stdout}\n${ran.stderr}` }
}

const caseRule = userAdapterRules.find(rule => rule.name.startsWith('findByEmail') && rule.name.includes('case-insensitively'))
const ruleName = `UserAdapter: ${caseRule?.name ?? 'the rule of findByEmail\'s case'}`

t.test('the sketch passes the suite under node --test, skipping what it does not provide', async (t) => {
  const { code, output } = await nodeTest({})
  t.equal(code, 0, output)
  t.match(output, /# fail 0/)
  t.match(output, new RegExp(`ok \\d+ - ${ruleName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), 'the case rule ran and passed')
  t.match(output, /# SKIP|# skipped [1-9]/, 'what the sketch lacks is skipped, not failed')
})

t.test('a case-sensitive findByEmail fails the suite, naming the rule and quoting its contract', async (t) => {
  const { code, output } = await nodeTest({ EMAIL_COMPARE: 'exact' })
  t.not(code, 0)
  const failed = [...output.matchAll(/^not ok \d+ - (.+)$/gm)].map(match => match[1]?.trim())
  t.same(failed, [ruleName], 'exactly that rule fails')
  t.match(output, `the contract: "${caseRule?.contract ?? ''}"`)
})
