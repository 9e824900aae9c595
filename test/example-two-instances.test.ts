import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import t from 'tap'
import { ALICE, BOB, LOCKOUT_MAX } from '../examples/two-instances/users.js'
import { claimsOf } from './helpers/http.js'
import { deleteKeys, REDIS_URL } from './helpers/redis-store.js'

/**
 * The hosts load TypeScript as this test process does (tap's loader, which
 * keeps line numbers), so their coverage of lib/ merges with the tests'.
 * With tsx, whose output is one minified line, the merged line coverage of
 * every module a host loads would be wrong.
 */
const LOADERS = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')

const HOST = fileURLToPath(new URL('../examples/two-instances/host.ts', import.meta.url))
const PREFIX = `jwt-login-test:two-instances:${randomUUID()}:`
const JWT_SECRET = randomBytes(32).toString('base64url')

interface Instance { base: string, child: ChildProcess }

/** Starts one host process and resolves with its address once it prints it. */
async function startInstance (env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, [...LOADERS, HOST], {
    env: { ...process.env, REDIS_URL, ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> })
  return await new Promise((resolve, reject) => {
    child.once('exit', (code) => { reject(new Error(`the host exited with ${String(code)} before listening`)) })
    // stdout also carries the host's log lines (Fastify's JSON logger): wait for the address
    lines.on('line', (line) => {
      const { listening } = JSON.parse(line) as { listening?: string }
      if (listening !== undefined) resolve({ base: listening, child })
    })
  })
}

/** SIGTERM and wait: the host closes the app and its Redis connection, then exits. */
async function stop ({ child }: Instance): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const env = { REDIS_PREFIX: PREFIX, JWT_SECRET, PORT: '0' }
const [a, b] = await Promise.all([startInstance(env), startInstance(env)]) as [Instance, Instance]
t.teardown(async () => {
  await Promise.all([stop(a), stop(b)])
  await deleteKeys(PREFIX)
})

interface Answer { status: number, data: Record<string, any>, retryAfter: string | null }

async function call (instance: Instance, path: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${instance.base}/jwt-login/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  return { status: res.status, data: (await res.json() as { data: Record<string, any> }).data, retryAfter: res.headers.get('retry-after') }
}

const login = async (on: Instance, who: { email: string, password: string }): Promise<Answer> =>
  await call(on, '/auth', { email: who.email, password: who.password })

t.test('a host without JWT_SECRET refuses to start (no made-up key)', async (t) => {
  const { JWT_SECRET: _unset, ...withoutKey } = { ...process.env, ...env }
  const child = spawn(process.execPath, [...LOADERS, HOST], { env: withoutKey, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  t.not(code, 0)
  t.match(stderr, 'JWT_SECRET is required')
})

t.test('two processes listen on their own ports', async (t) => {
  t.not(a.base, b.base)
  t.match(a.base, /^http:\/\/127\.0\.0\.1:\d+$/)
})

t.test('a token signed by one instance validates on the other; the session lives in the shared Redis', async (t) => {
  const signedIn = await login(a, ALICE)
  t.equal(signedIn.status, 200)
  const validated = await call(b, '/auth/validate', { JWT: signedIn.data.jwt })
  t.equal(validated.status, 200)
  t.equal(validated.data.user.user_email, ALICE.email)

  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  t.teardown(() => redis.quit())
  t.not(await redis.get(`${PREFIX}session:${String(claimsOf(signedIn.data.jwt).sid)}`), null, 'the session record under the shared prefix')
})

t.test('a revoke through one instance is refused by the other at once', async (t) => {
  const { data: tokens } = await login(a, ALICE)
  t.equal((await call(b, '/auth/validate', { JWT: tokens.jwt })).status, 200)
  const revoked = await call(a, '/auth/revoke', { JWT: tokens.jwt })
  t.same(revoked, { status: 200, data: { message: 'Token was revoked.' }, retryAfter: null })

  const validated = await call(b, '/auth/validate', { JWT: tokens.jwt })
  t.same([validated.status, validated.data.errorCode], [401, 55])
  const refreshed = await call(b, '/auth/refresh', { refresh_token: tokens.refresh_token })
  t.same([refreshed.status, refreshed.data.errorCode], [401, 51], 'the session refresh token is gone too')
})

t.test('a refresh token reused across instances ends its session everywhere', async (t) => {
  const { data: first } = await login(a, ALICE)
  const { data: other } = await login(b, ALICE)
  const second = await call(a, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(second.status, 200)
  const third = await call(b, '/auth/refresh', { refresh_token: second.data.refresh_token })
  t.equal(third.status, 200, 'the rotation continues on the other instance')

  // a thief replays the first (long spent) refresh token on the other instance
  const replay = await call(b, '/auth/refresh', { refresh_token: first.refresh_token })
  t.same([replay.status, replay.data.errorCode], [401, 51])
  const newest = await call(a, '/auth/refresh', { refresh_token: third.data.refresh_token })
  t.same([newest.status, newest.data.errorCode], [401, 51], 'the newest refresh token of the family fails too')
  for (const [jwt, on] of [[first.jwt, a], [second.data.jwt, b], [third.data.jwt, a]] as const) {
    const res = await call(on, '/auth/validate', { JWT: jwt })
    t.same([res.status, res.data.errorCode], [401, 55], 'every access token of the session is revoked')
  }

  t.equal((await call(a, '/auth/validate', { JWT: other.jwt })).status, 200, 'another session of the user stands')
  t.equal((await call(a, '/auth/refresh', { refresh_token: other.refresh_token })).status, 200)
})

t.test('failed logins split across the instances lock the account on both', async (t) => {
  const wrong = { email: BOB.email, password: 'not the password' }
  const failures = Array.from({ length: LOCKOUT_MAX }, (_, i) => i % 2 === 0 ? a : b) // a, b, a, ...
  for (const on of failures) {
    const res = await login(on, wrong)
    t.same([res.status, res.data.errorCode], [401, 48])
  }
  for (const on of [b, a]) {
    const res = await login(on, BOB)
    t.same([res.status, res.data.errorCode], [429, 200], 'locked: even the right password is refused, unverified')
    t.ok(Number(res.retryAfter) > 0, 'with Retry-After')
  }
  const other = await login(b, ALICE)
  t.equal(other.status, 200, 'another account is not locked')
})
