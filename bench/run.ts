/**
 * `npm run bench`: each jwt-login path against a baseline measured in the
 * same run (see the README's Benchmarks section).
 *
 * Every server runs in its own child process (`server.ts`); autocannon runs
 * here, in the parent. Each comparison warms both servers, then runs them in
 * interleaved rounds (baseline, jwt-login, baseline, jwt-login, …) and
 * reports the median ratio of req/s with its range, and each server's own CPU
 * time per request. The last lines are the four median ratios.
 */
import os from 'node:os'
import { MemoryStore } from '../lib/index.js'
import { subjectApp } from './apps.js'
import { measure, probe, warmUp, type Run, type Target } from './load.js'
import { ServerProcess, stopAll } from './servers.js'
import { PREFIX, USER } from './shared.js'

function positiveInteger (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not ${raw}`)
  return value
}

const SECONDS = positiveInteger('BENCH_SECONDS', 5)
const ROUNDS = positiveInteger('BENCH_ROUNDS', 3)
const WARM_UP_SECONDS = 1
const JSON_HEADERS = { 'content-type': 'application/json' }
const LOGIN_BODY = JSON.stringify({ email: USER.email, password: USER.password })

type Name = 'validate' | 'authenticate' | 'redis-validate' | 'login'

interface Comparison {
  name: Name
  subjectLabel: string
  baselineLabel: string
  goal: number
  baseline: Run[]
  subject: Run[]
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function ratios (c: Comparison): number[] {
  return c.subject.map((run, i) => run.reqPerSec / (c.baseline[i] as Run).reqPerSec)
}

function failures (run: Run): number {
  return run.non2xx + run.errors
}

function describeRun (run: Run): string {
  return `${run.reqPerSec.toFixed(0)} req/s, p99 ${run.p99Ms} ms, ${run.cpuPerRequest.toFixed(0)} µs CPU/req`
}

async function compare (
  name: Name,
  labels: { subject: string, baseline: string },
  goal: number,
  targets: { baseline: Target, subject: Target },
  connections: number
): Promise<Comparison> {
  await warmUp(targets.baseline, connections, WARM_UP_SECONDS)
  await warmUp(targets.subject, connections, WARM_UP_SECONDS)
  const comparison: Comparison = { name, subjectLabel: labels.subject, baselineLabel: labels.baseline, goal, baseline: [], subject: [] }
  for (let round = 1; round <= ROUNDS; round++) {
    const baseline = await measure(targets.baseline, connections, SECONDS)
    const subject = await measure(targets.subject, connections, SECONDS)
    comparison.baseline.push(baseline)
    comparison.subject.push(subject)
    console.log(`${name} round ${round}/${ROUNDS}: baseline ${describeRun(baseline)} | jwt-login ${describeRun(subject)} | ratio ${(subject.reqPerSec / baseline.reqPerSec).toFixed(2)}`)
    for (const [side, run] of [['baseline', baseline], ['jwt-login', subject]] as const) {
      if (failures(run) > 0) console.log(`WARNING: ${name} round ${round} ${side}: ${run.non2xx} non-2xx answers, ${run.errors} errors`)
    }
  }
  return comparison
}

async function signIn (server: ServerProcess): Promise<string> {
  const answer = await probe({ server, method: 'POST', path: `${PREFIX}/auth`, headers: JSON_HEADERS, body: LOGIN_BODY })
  return (answer.json as { data: { jwt: string } }).data.jwt
}

function validateTarget (server: ServerProcess, token: string): Target {
  return { server, method: 'POST', path: `${PREFIX}/auth/validate`, headers: JSON_HEADERS, body: JSON.stringify({ JWT: token }) }
}

/** Runs one comparison on fresh servers and stops them afterwards, whatever happens. */
async function withServers (run: () => Promise<Comparison>): Promise<Comparison> {
  try {
    return await run()
  } finally {
    await stopAll()
  }
}

async function validate (): Promise<Comparison> {
  return await withServers(async () => {
    const subject = await ServerProcess.start('subject')
    const token = await signIn(subject)
    const subjectTarget = validateTarget(subject, token)
    const answer = await probe(subjectTarget)
    const bare = await ServerProcess.start('bare-validate', String(answer.bytes))
    const bareTarget: Target = { server: bare, method: 'POST', path: '/verify', headers: JSON_HEADERS, body: JSON.stringify({ JWT: token }) }
    const bareAnswer = await probe(bareTarget)
    console.log(`validate answer bodies: jwt-login ${answer.bytes} bytes, baseline ${bareAnswer.bytes} bytes`)
    return await compare('validate', { subject: '`POST /auth/validate`', baseline: '@fastify/jwt verify, answer of the same size' }, 0.9,
      { baseline: bareTarget, subject: subjectTarget }, 50)
  })
}

async function authenticate (): Promise<Comparison> {
  return await withServers(async () => {
    const subject = await ServerProcess.start('subject-hook')
    const bare = await ServerProcess.start('bare-hook')
    const headers = { authorization: `Bearer ${await signIn(subject)}` }
    const subjectTarget: Target = { server: subject, method: 'GET', path: '/private', headers }
    const bareTarget: Target = { server: bare, method: 'GET', path: '/private', headers }
    const sizes = [await probe(bareTarget), await probe(subjectTarget)].map(answer => answer.bytes)
    console.log(`authenticate answer bodies: jwt-login ${sizes[1]} bytes, baseline ${sizes[0]} bytes`)
    return await compare('authenticate', { subject: 'host route + `jwtLogin.authenticate`', baseline: 'host route + `request.jwtVerify()`' }, 0.95,
      { baseline: bareTarget, subject: subjectTarget }, 50)
  })
}

async function redisValidate (): Promise<Comparison> {
  return await withServers(async () => {
    const memory = await ServerProcess.start('subject')
    const redis = await ServerProcess.start('subject-redis', `bench:${process.pid}:${Date.now()}:`)
    const memoryTarget = validateTarget(memory, await signIn(memory))
    const redisTarget = validateTarget(redis, await signIn(redis))
    await probe(memoryTarget)
    await probe(redisTarget)
    return await compare('redis-validate', { subject: '`POST /auth/validate` on RedisStore', baseline: 'the same on MemoryStore' }, 0.8,
      { baseline: memoryTarget, subject: redisTarget }, 50)
  })
}

async function login (): Promise<Comparison> {
  return await withServers(async () => {
    const subject = await ServerProcess.start('subject')
    const bare = await ServerProcess.start('bare-argon2')
    const subjectTarget: Target = { server: subject, method: 'POST', path: `${PREFIX}/auth`, headers: JSON_HEADERS, body: LOGIN_BODY }
    const bareTarget: Target = { server: bare, method: 'POST', path: '/argon2', headers: JSON_HEADERS, body: LOGIN_BODY }
    await probe(subjectTarget)
    await probe(bareTarget)
    return await compare('login', { subject: '`POST /auth`', baseline: 'argon2id verify, same parameters' }, 0.95,
      { baseline: bareTarget, subject: subjectTarget }, 8)
  })
}

/**
 * Store growth: `sessions` sessions each refresh `rotations` times (in
 * process, one after another, as a client's refresh chain must); the state
 * entries per live session must not grow with the refreshes.
 */
async function storeGrowth (sessions: number, rotations: number): Promise<{ perSession: number, refreshesPerSecond: number }> {
  const store = new MemoryStore()
  const app = await subjectApp(store)
  const tokens: string[] = []
  for (let i = 0; i < sessions; i++) {
    const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, headers: JSON_HEADERS, payload: LOGIN_BODY })
    tokens.push(res.json().data.refresh_token)
  }
  const started = performance.now()
  for (let round = 0; round < rotations; round++) {
    for (let i = 0; i < sessions; i++) {
      const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: tokens[i] } })
      if (res.statusCode !== 200) throw new Error(`store growth: refresh answered ${res.statusCode}: ${res.body}`)
      tokens[i] = res.json().data.refresh_token
    }
  }
  const seconds = (performance.now() - started) / 1000
  const perSession = store.counts.state / sessions
  await app.close()
  await store.close()
  return { perSession, refreshesPerSecond: (sessions * rotations) / seconds }
}

function loadAverage (): string {
  return os.loadavg().map(n => n.toFixed(2)).join(' ')
}

function row (c: Comparison): string {
  const r = ratios(c)
  const ratio = median(r)
  const met = ratio >= c.goal ? 'met' : '**not met**'
  const cpuBaseline = median(c.baseline.map(run => run.cpuPerRequest))
  const cpuSubject = median(c.subject.map(run => run.cpuPerRequest))
  const failed = `${c.baseline.reduce((n, run) => n + failures(run), 0)} / ${c.subject.reduce((n, run) => n + failures(run), 0)}`
  return [
    `${c.name}: ${c.subjectLabel} vs ${c.baselineLabel}`,
    median(c.baseline.map(run => run.reqPerSec)).toFixed(0),
    median(c.subject.map(run => run.reqPerSec)).toFixed(0),
    `**${ratio.toFixed(2)}** [${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}]`,
    `≥ ${c.goal.toFixed(2)}: ${met}`,
    `${median(c.baseline.map(run => run.p99Ms))} / ${median(c.subject.map(run => run.p99Ms))}`,
    `${cpuBaseline.toFixed(0)} / ${cpuSubject.toFixed(0)}`,
    (cpuBaseline / cpuSubject).toFixed(2),
    failed
  ].join(' | ')
}

async function main (): Promise<void> {
  console.log(`jwt-login benchmarks: node ${process.version}, ${os.availableParallelism()} CPUs, ${SECONDS} s per run, ${ROUNDS} interleaved rounds, ${WARM_UP_SECONDS} s warm-up per server, load average ${loadAverage()}`)
  const comparisons = [await validate(), await authenticate(), await redisValidate(), await login()]
  const growth = await storeGrowth(100, 200)

  console.log('\n| comparison | baseline req/s | jwt-login req/s | ratio, median [min–max] | goal | p99 ms (baseline / jwt-login) | CPU µs/req (baseline / jwt-login) | CPU ratio (baseline / jwt-login) | non-2xx + errors (baseline / jwt-login) |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const c of comparisons) console.log(`| ${row(c)} |`)

  const loginRuns = (comparisons[3] as Comparison).subject.map(run => run.loopDelayP99Ms)
  console.log(`\nEvent-loop delay in jwt-login's process during the login load: p99 ${median(loginRuns).toFixed(1)} ms (median of ${ROUNDS} runs) [${Math.min(...loginRuns).toFixed(1)}–${Math.max(...loginRuns).toFixed(1)}].`)
  console.log(`Store growth: 100 sessions × 200 refreshes each → ${growth.perSession.toFixed(2)} state entries per live session (${growth.refreshesPerSecond.toFixed(0)} refreshes/s in process).`)
  // other work on the machine skews both sides; the load average says how busy it was
  console.log(`Load average at the end: ${loadAverage()}.`)
  const failedRuns = comparisons.flatMap(c => [...c.baseline, ...c.subject]).filter(run => failures(run) > 0).length
  if (failedRuns > 0) console.log(`WARNING: ${failedRuns} runs had non-2xx answers or errors; their figures are not comparable.`)
  const missed = comparisons.filter(c => median(ratios(c)) < c.goal).map(c => c.name)
  console.log(missed.length === 0 ? 'All ratios meet their goals.' : `Below goal: ${missed.join(', ')}.`)
  console.log('')
  for (const c of comparisons) console.log(`ratio ${c.name}: ${median(ratios(c)).toFixed(2)}`)
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const exit = (): never => process.exit(130)
    stopAll().then(exit, exit)
  })
}

try {
  await main()
} catch (error) {
  console.error('bench failed:', error)
  await stopAll()
  process.exitCode = 1
}
