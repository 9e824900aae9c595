/**
 * `npm run bench`: each jwt-login route against a baseline measured in the
 * same run, reported as a ratio (goal ≥ 0.9).
 *
 * - POST /auth/validate vs a bare Fastify route that verifies the same token
 *   with @fastify/jwt.
 * - POST /auth (login) vs a bare route that runs argon2id verify with the
 *   same parameters, plus the event-loop delay p99 during the login load.
 *
 * Servers listen on 127.0.0.1; autocannon runs in a worker thread so the load
 * generator does not share the servers' event loop. Runs alternate
 * (baseline, subject, baseline, subject) and the best of each is kept.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import fastifyJwt from '@fastify/jwt'
import argon2 from 'argon2'
import autocannon from 'autocannon'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { ARGON2_OPTIONS, MemoryStore, MemoryUserAdapter } from '../lib/index.js'

const SECRET = 'bench-secret-that-is-at-least-32-bytes!!'
const USER = { login: 'bench', email: 'bench@example.com', password: 'bench-password-123' }
const DURATION = Number(process.env.BENCH_SECONDS ?? 8)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)

interface Run { requests: number, p99: number, errors: number }

async function load (url: string, body: string, connections: number): Promise<Run> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: DURATION,
    workers: 1
  })
  return { requests: result.requests.average, p99: result.latency.p99, errors: result.non2xx + result.errors }
}

async function listen (app: FastifyInstance): Promise<string> {
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

async function subjectApp (store?: MemoryStore): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(USER)
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    restRoute: false,
    ...(store === undefined ? {} : { store }),
    settings: {
      tokens: { keys: [{ kid: 'bench', secret: SECRET }] },
      refresh: { enabled: true },
      // the baseline has no request limit; the login lockout stays on (successes do not count)
      limits: { requestsPerIp: { max: 1_000_000_000, window: '1m' } }
    }
  })
  return app
}

async function baselineApp (hash: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyJwt, { secret: SECRET })
  app.post('/verify', async (request) => {
    const token = (request.body as { JWT: string }).JWT
    return { success: true, data: { payload: app.jwt.verify(token) } }
  })
  app.post('/argon2', async (request, reply) => {
    const ok = await argon2.verify(hash, (request.body as { password: string }).password)
    if (!ok) return await reply.code(401).send({ success: false })
    return { success: true }
  })
  return app
}

function best (runs: Run[]): Run {
  return runs.reduce((a, b) => (b.requests > a.requests ? b : a))
}

async function compare (name: string, baseline: () => Promise<Run>, subject: () => Promise<Run>): Promise<{ name: string, baseline: Run, subject: Run, ratio: number }> {
  const b: Run[] = []
  const s: Run[] = []
  for (let round = 0; round < ROUNDS; round++) {
    b.push(await baseline())
    s.push(await subject())
  }
  const bb = best(b)
  const ss = best(s)
  return { name, baseline: bb, subject: ss, ratio: ss.requests / bb.requests }
}

/**
 * Store growth: `sessions` sessions each refresh `rotations` times (in
 * process, one after another, as a client's refresh chain must); the state
 * entries per live session must not grow with the refreshes.
 */
async function storeGrowth (sessions: number, rotations: number): Promise<{ perSession: number, refreshesPerSecond: number }> {
  const store = new MemoryStore()
  const app = await subjectApp(store)
  const body = { email: USER.email, password: USER.password }
  const tokens: string[] = []
  for (let i = 0; i < sessions; i++) {
    tokens.push((await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: body })).json().data.refresh_token)
  }
  const started = performance.now()
  for (let round = 0; round < rotations; round++) {
    for (let i = 0; i < sessions; i++) {
      const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/refresh', payload: { refresh_token: tokens[i] } })
      tokens[i] = res.json().data.refresh_token
    }
  }
  const seconds = (performance.now() - started) / 1000
  const perSession = store.counts.state / sessions
  await app.close()
  await store.close()
  return { perSession, refreshesPerSecond: (sessions * rotations) / seconds }
}

async function main (): Promise<void> {
  const hash = await argon2.hash(USER.password, ARGON2_OPTIONS)
  const subject = await subjectApp()
  const baseline = await baselineApp(hash)
  const subjectUrl = await listen(subject)
  const baselineUrl = await listen(baseline)

  const login = await fetch(`${subjectUrl}/jwt-login/v1/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: USER.email, password: USER.password })
  })
  const token = ((await login.json()) as { data: { jwt: string } }).data.jwt
  const jwtBody = JSON.stringify({ JWT: token })
  const loginBody = JSON.stringify({ email: USER.email, password: USER.password })

  const validate = await compare('POST /auth/validate vs @fastify/jwt verify',
    async () => await load(`${baselineUrl}/verify`, jwtBody, 50),
    async () => await load(`${subjectUrl}/jwt-login/v1/auth/validate`, jwtBody, 50))

  let delay = monitorEventLoopDelay({ resolution: 10 })
  const loginResult = await compare('POST /auth vs argon2id verify',
    async () => await load(`${baselineUrl}/argon2`, JSON.stringify({ password: USER.password }), 8),
    async () => {
      // a fresh histogram per run, so the figure is the last login run's alone
      delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      const run = await load(`${subjectUrl}/jwt-login/v1/auth`, loginBody, 8)
      delay.disable()
      return run
    })

  await subject.close()
  await baseline.close()

  const rows = [validate, loginResult].map(r =>
    `| ${r.name} | ${r.baseline.requests.toFixed(0)} | ${r.subject.requests.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.subject.errors + r.baseline.errors} |`)
  console.log(`\njwt-login benchmarks (${DURATION}s per run, best of ${ROUNDS}, node ${process.version})\n`)
  console.log('| comparison | baseline req/s | jwt-login req/s | ratio | non-2xx |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(row)
  console.log(`\nevent-loop delay during login load: p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`)
  const growth = await storeGrowth(100, 200)
  console.log(`store growth: 100 sessions × 200 refreshes each → ${growth.perSession.toFixed(2)} state entries per live session (${growth.refreshesPerSecond.toFixed(0)} refreshes/s in process)`)
  const failed = [validate, loginResult].filter(r => r.ratio < 0.9)
  console.log(failed.length === 0 ? 'all ratios meet the goal (>= 0.9)' : `below the goal: ${failed.map(r => r.name).join(', ')}`)
}

await main()
