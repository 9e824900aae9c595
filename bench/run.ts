/**
 * `npm run bench`: each jwt-login path against a baseline measured in the
 * same run, each store against memory, and the stores' scaling with the
 * number of live sessions (see docs/benchmarks.md).
 *
 * Every server runs in its own child process (`server.ts`); autocannon runs
 * here, in the parent. Each comparison warms its servers, then runs them in
 * interleaved rounds (baseline, contender(s), baseline, …) and reports the
 * median ratio of req/s with its range, and each server's own CPU time per
 * request. The last lines are the median ratios (the fifteen of a full run).
 *
 * Login is judged per hashing slot (issue 37): `login` puts jwt-login with
 * its default `passwordHashing.concurrency` (one fewer than the cores, at
 * least one) against bare argon2id behind the same bound, passed to the
 * bare server as its argument, and has a CPU goal besides its ratio (CPU per
 * sign-in at most 1.05 × the baseline's); `login-unbounded` puts jwt-login
 * with the concurrency at the cores against unbounded bare argon2id, what a
 * host that raises the bound gets.
 *
 * The passkey sign-in (two requests and a signature over a fresh challenge)
 * is measured apart, against the password sign-in, by closed-loop clients in
 * the parent (`passkeys.ts`), and reported in its own table, with no goal.
 * Validate under a login flood (`flood.ts`) runs a second autocannon on the
 * same server; the latency run (`remote.ts`) puts a delay proxy between the
 * servers and their stores and measures sequential requests. The sizing run
 * (`sizing.ts`) measures the CPU time per request of each flow on one
 * server, for the sizing table of docs/deployment.md.
 *
 * `BENCH_ONLY` runs one part (and what it takes along): `comparisons`
 * everything but the scaling run; `stores` the store comparisons (with the
 * bare store routes); `login` the two login comparisons, `login` and
 * `login-unbounded`, and nothing else (the cheapest run of them:
 * `BENCH_ONLY=login BENCH_SECONDS=2 BENCH_ROUNDS=1 npm run bench`);
 * `flood`, `remote`, `passkeys`, `sizing`, `scaling` each alone.
 * `against` (with `BENCH_AGAINST`, the path of another checkout) puts
 * validate of this checkout and of that one side by side against the same
 * bare route, in the same rounds; it runs only when named.
 * `BENCH_SESSIONS` lists the scaling run's levels (default
 * 10000,100000,1000000); `BENCH_REMOTE_DELAYS_MS` the latency run's delays
 * besides 0 (default 1,5), `BENCH_REMOTE_REQUESTS` its measured requests
 * per flow and delay (default 20 × `BENCH_SECONDS`).
 */
import os from 'node:os'
import { join, resolve } from 'node:path'
import { MemoryStore } from '../lib/index.js'
import { subjectApp } from './apps.js'
import { Backends } from './backends.js'
import { compare, cpuGoalMet, cpuTimes, failures, median, ratioFigure, ratios, row, skipped, type Comparison, type Contender, type Rounds } from './compare.js'
import { probe, type Run, type Target } from './load.js'
import { FLOOD_CONNECTIONS, HASHING_CONCURRENCY, validateUnderLoginFlood, type FloodComparison } from './flood.js'
import { passkeySignIns, printPasskeys, type PasskeyComparison } from './passkeys.js'
import { LOGIN_REMOTE_GOAL, printRemote, remoteLatency, type RemoteResult, type RemoteSettings } from './remote.js'
import { printScaling, scaling, type ScalingRow } from './scaling.js'
import { printSizing, sizing, type SizingResult } from './sizing.js'
import { ServerProcess, stopAll } from './servers.js'
import { PREFIX, type ServerKind } from './shared.js'
import { JSON_HEADERS, LOGIN_BODY, loginTarget, signIn, validateTarget } from './targets.js'

function positiveInteger (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not ${raw}`)
  return value
}

function sessionLevels (): number[] {
  const raw = process.env.BENCH_SESSIONS
  const levels = raw === undefined || raw === '' ? [10_000, 100_000, 1_000_000] : raw.split(',').map(Number)
  if (levels.some((n, i) => !Number.isInteger(n) || n < 2 || (i > 0 && n <= (levels[i - 1] as number)))) {
    throw new Error(`BENCH_SESSIONS must list increasing integers above 1, not ${raw}`)
  }
  return levels
}

/** The latency run's delays, ms: 0, then `BENCH_REMOTE_DELAYS_MS` (default 1,5), ascending. */
function remoteDelays (): number[] {
  const raw = process.env.BENCH_REMOTE_DELAYS_MS
  const listed = raw === undefined || raw === '' ? [1, 5] : raw.split(',').map(Number)
  if (listed.some(n => !Number.isFinite(n) || n < 0 || n > 1000)) throw new Error(`BENCH_REMOTE_DELAYS_MS must list delays from 0 to 1000 ms, not ${raw}`)
  return [...new Set([0, ...listed])].sort((a, b) => a - b)
}

/** What `BENCH_ONLY` can name. */
const PART_NAMES = ['comparisons', 'login', 'stores', 'flood', 'remote', 'passkeys', 'sizing', 'scaling', 'against'] as const
type Part = typeof PART_NAMES[number]

function only (): Part | null {
  const raw = process.env.BENCH_ONLY
  if (raw === undefined || raw === '') return null
  if ((PART_NAMES as readonly string[]).includes(raw)) return raw as Part
  throw new Error(`BENCH_ONLY must be one of ${PART_NAMES.join(', ')}, not ${raw}`)
}

const SECONDS = positiveInteger('BENCH_SECONDS', 5)
const ROUNDS = positiveInteger('BENCH_ROUNDS', 3)
const ONLY = only()
/** What each `BENCH_ONLY` runs: `comparisons` takes every comparison along, the scaling run aside. */
const PARTS: Record<Part, Part[]> = {
  comparisons: ['comparisons', 'login', 'stores', 'passkeys', 'flood', 'remote', 'sizing'],
  login: ['login'],
  stores: ['stores'],
  flood: ['flood'],
  remote: ['remote'],
  passkeys: ['passkeys'],
  sizing: ['sizing'],
  scaling: ['scaling'],
  against: ['against']
}
/** `against` runs only when named: it needs `BENCH_AGAINST`. */
const runs = (part: Part): boolean => ONLY === null ? part !== 'against' : PARTS[ONLY].includes(part)
const SESSIONS = sessionLevels()
const REMOTE: RemoteSettings = { delaysMs: remoteDelays(), requests: positiveInteger('BENCH_REMOTE_REQUESTS', 20 * SECONDS) }
const WARM_UP_SECONDS = 1
const backends = new Backends()

function rounds (connections: number): Rounds {
  return { rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARM_UP_SECONDS, connections }
}

/** Runs one comparison on fresh servers and stops them afterwards, whatever happens. */
async function withServers<T> (run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } finally {
    await stopAll()
  }
}

/** One contender against one baseline, as the first four comparisons are; `cpuGoal`: see `Comparison.cpuGoal`. */
async function versus (name: string, labels: { subject: string, baseline: string }, goal: number, targets: { baseline: Target, subject: Target }, connections: number, cpuGoal?: number): Promise<Comparison> {
  const [comparison] = await compare(name, { side: 'baseline', label: labels.baseline, target: targets.baseline },
    [{ name, side: 'jwt-login', label: labels.subject, goal, ...(cpuGoal === undefined ? {} : { cpuGoal }), target: targets.subject }], rounds(connections))
  return comparison as Comparison
}

/** Validate's CPU goal: jwt-login's CPU per request at most this many times the bare route's (a CPU ratio of 0.92 or more). */
const VALIDATE_CPU_GOAL = 1.08

/** Validate's steady-latency goal: its p99 at most this many times the bare route's under the same load. */
const VALIDATE_P99_GOAL = 1.5

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
    return await versus('validate', { subject: '`POST /auth/validate`', baseline: '@fastify/jwt verify, answer of the same size' }, 0.92,
      { baseline: bareTarget, subject: subjectTarget }, 50, VALIDATE_CPU_GOAL)
  })
}

/**
 * `BENCH_ONLY=against BENCH_AGAINST=<another checkout>`: validate of this
 * checkout and of the other (its own bench/server.ts, its node_modules),
 * each against the same bare route in the same interleaved rounds: the two
 * ratios side by side (how a change moved validate, the machine's noise
 * shared by both).
 */
async function validateAgainst (): Promise<Comparison[]> {
  const other = process.env.BENCH_AGAINST
  if (other === undefined || other === '') throw new Error('BENCH_ONLY=against needs BENCH_AGAINST, the path of another checkout')
  return await withServers(async () => {
    const subject = await ServerProcess.start('subject')
    const earlier = await ServerProcess.startFrom(join(resolve(other), 'bench', 'server.ts'), 'subject')
    const subjectTarget = validateTarget(subject, await signIn(subject))
    const earlierTarget = validateTarget(earlier, await signIn(earlier))
    const answer = await probe(subjectTarget)
    const earlierAnswer = await probe(earlierTarget)
    const bare = await ServerProcess.start('bare-validate', String(answer.bytes))
    const bareTarget: Target = { server: bare, method: 'POST', path: '/verify', headers: JSON_HEADERS, body: JSON.stringify({ JWT: await signIn(subject) }) }
    await probe(bareTarget)
    console.log(`validate answer bodies: this checkout ${answer.bytes} bytes, ${other} ${earlierAnswer.bytes} bytes`)
    return await compare('validate against', { side: 'baseline', label: '@fastify/jwt verify, answer of the same size', target: bareTarget }, [
      { name: 'validate', side: 'jwt-login', label: '`POST /auth/validate`, this checkout', goal: 0.92, target: subjectTarget },
      { name: 'validate-against', side: 'other', label: `\`POST /auth/validate\`, ${other}`, goal: 0.92, target: earlierTarget }
    ], rounds(50))
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
    return await versus('authenticate', { subject: 'host route + `jwtLogin.authenticate`', baseline: 'host route + `request.jwtVerify()`' }, 0.95,
      { baseline: bareTarget, subject: subjectTarget }, 50)
  })
}

/** Passkey sign-ins against password sign-ins, as many clients as the login comparison has connections. */
async function passkeyLogin (): Promise<PasskeyComparison> {
  return await withServers(async () => await passkeySignIns({ rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARM_UP_SECONDS, clients: 8 }))
}

/** The sign-ins in flight in both login comparisons: more than the cores, so a bound has sign-ins waiting. */
const LOGIN_CONNECTIONS = 8
/** The login comparison's CPU goal: jwt-login's CPU per sign-in at most this many times the baseline's. */
const LOGIN_CPU_GOAL = 1.05

/**
 * `POST /auth` on `subject` (its arguments: the hashing concurrency, the
 * default without) against the bare argon2id route on `bare-argon2` (its
 * arguments: the bound, none without), with the same login body.
 */
async function loginComparison (name: string, sides: { subject: string[], bare: string[] }, labels: { subject: string, baseline: string }, cpuGoal?: number): Promise<Comparison> {
  return await withServers(async () => {
    const subject = await ServerProcess.start('subject', ...sides.subject)
    const bare = await ServerProcess.start('bare-argon2', ...sides.bare)
    const subjectTarget = loginTarget(subject)
    const bareTarget: Target = { server: bare, method: 'POST', path: '/argon2', headers: JSON_HEADERS, body: LOGIN_BODY }
    await probe(subjectTarget)
    await probe(bareTarget)
    return await versus(name, labels, 0.95, { baseline: bareTarget, subject: subjectTarget }, LOGIN_CONNECTIONS, cpuGoal)
  })
}

/**
 * Login per hashing slot: jwt-login with its default hashing concurrency
 * (not passed: the plugin sizes it) against bare argon2id behind the same
 * bound, `HASHING_CONCURRENCY` (the plugin's own figure), passed to the bare
 * server so that both sides visibly hash as many at once.
 */
async function login (): Promise<Comparison> {
  return await loginComparison('login', { subject: [], bare: [String(HASHING_CONCURRENCY)] }, {
    subject: `\`POST /auth\`, default \`passwordHashing.concurrency\` (${HASHING_CONCURRENCY})`,
    baseline: `argon2id verify, same parameters, ${HASHING_CONCURRENCY} at once`
  }, LOGIN_CPU_GOAL)
}

/** What a host that raises the bound to the cores gets: jwt-login at `concurrency` = the cores against unbounded bare argon2id. */
async function loginUnbounded (): Promise<Comparison> {
  const cores = os.availableParallelism()
  return await loginComparison('login-unbounded', { subject: [String(cores)], bare: [] }, {
    subject: `\`POST /auth\`, \`passwordHashing.concurrency\` at the cores (${cores})`,
    baseline: 'argon2id verify, same parameters, unbounded'
  })
}

type Path = 'validate' | 'login'
type StoreName = 'redis' | 'cluster' | 'postgres'

/** Each store's name in the round lines, in the stores table, and in the comparison's label. */
const STORES: Record<StoreName, { side: string, title: string, label: string }> = {
  redis: { side: 'Redis', title: 'Redis', label: 'RedisStore (the shared Redis)' },
  cluster: { side: 'Cluster', title: 'Redis Cluster', label: 'RedisStore on a local Redis Cluster (3 masters)' },
  postgres: { side: 'PostgreSQL', title: 'PostgreSQL', label: 'PostgresStore (the local PostgreSQL)' }
}

function storePrefix (path: Path, store: string): string {
  return `bench:${process.pid}:${path}-${store}:`
}

/** A store server of a store comparison, and the arguments it was started with (its prefix first). */
interface StoreServer {
  store: StoreName
  server: ServerProcess
  args: string[]
}

/** The store servers of one store comparison: memory, Redis, the cluster, PostgreSQL when this tree has it. */
async function storeServers (path: Path): Promise<{ memory: ServerProcess, others: StoreServer[], postgres: boolean }> {
  const prefix = (store: string): string => storePrefix(path, store)
  const cluster = await backends.cluster()
  const postgres = await backends.postgres()
  const specs: Array<{ store: StoreName | 'memory', kind: ServerKind, args: string[] }> = [
    { store: 'memory', kind: 'subject', args: [] },
    { store: 'redis', kind: 'subject-redis', args: [prefix('redis')] },
    { store: 'cluster', kind: 'subject-cluster', args: [prefix('cluster'), cluster.nodes.map(node => node.port).join(',')] },
    ...(postgres === null ? [] : [{ store: 'postgres' as const, kind: 'subject-postgres' as const, args: [prefix('postgres'), postgres.table('state')] }])
  ]
  const started = await Promise.allSettled(specs.map(async spec => await ServerProcess.start(spec.kind, ...spec.args)))
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  const servers = started.map(result => (result as PromiseFulfilledResult<ServerProcess>).value)
  return {
    memory: servers[0] as ServerProcess,
    others: specs.slice(1).map((spec, i) => ({ store: spec.store as StoreName, server: servers[i + 1] as ServerProcess, args: spec.args })),
    postgres: postgres !== null
  }
}

/** `path` on each store against the same on memory, interleaved in the same rounds; for validate also each store against its bare route. */
async function storeComparisons (path: Path): Promise<Comparison[]> {
  try {
    return await storeRounds(path)
  } finally {
    // the cluster stays up for the scaling run: this comparison's keys go (the shared Redis's go with their server)
    await (await backends.cluster()).deleteKeys(storePrefix(path, 'cluster'))
  }
}

/** Each store's bare validate route: `bare-validate` with the store's read, on the keys of the store's server (same prefix). */
const BARE_STORE_KINDS: Record<StoreName, ServerKind> = { redis: 'bare-redis-validate', cluster: 'bare-cluster-validate', postgres: 'bare-postgres-validate' }
const BARE_READS: Record<StoreName, string> = {
  redis: 'the same `MGET` with ioredis',
  cluster: 'the same two `GET`s in parallel with an ioredis Cluster',
  postgres: 'the same prepared `SELECT` on a `pg` pool of the store\'s size'
}

/**
 * The contender that compares a store's validate with a bare route doing the
 * same read: the bare server starts on the store server's prefix (and ports
 * or table), with jwt-login's answer size for the same token, and must
 * answer the same token with a 2xx (it finds the session's entry).
 */
async function bareStoreContender ({ store, args }: StoreServer, subject: Target): Promise<Contender> {
  const jwtLogin = await probe(subject)
  const bare = await ServerProcess.start(BARE_STORE_KINDS[store], String(jwtLogin.bytes), ...args)
  const bareTarget: Target = { server: bare, method: 'POST', path: '/verify', headers: JSON_HEADERS, body: subject.body as string }
  const answer = await probe(bareTarget)
  console.log(`${STORES[store].title} validate answer bodies: jwt-login ${jwtLogin.bytes} bytes, bare route ${answer.bytes} bytes`)
  const label = `bare Fastify \`POST /verify\`: @fastify/jwt verify and ${BARE_READS[store]}, answer of the same size`
  return {
    name: `${store}-validate-bare`,
    side: STORES[store].side,
    label: `\`POST /auth/validate\` on ${STORES[store].label}`,
    goal: STORE_VALIDATE_GOALS[store],
    target: subject,
    versus: { side: `bare ${STORES[store].side}`, label, target: bareTarget }
  }
}

/** Each store's validate against a bare route reading that store as validate does. */
const STORE_VALIDATE_GOALS: Record<StoreName, number> = { redis: 0.92, cluster: 0.9, postgres: 0.92 }

async function storeRounds (path: Path): Promise<Comparison[]> {
  return await withServers(async () => {
    const { memory, others, postgres } = await storeServers(path)
    const target = async (server: ServerProcess): Promise<Target> => path === 'validate' ? validateTarget(server, await signIn(server)) : loginTarget(server)
    const route = path === 'validate' ? '`POST /auth/validate`' : '`POST /auth`'
    // measured in this order in each round: each store's bare route just before the store
    const contenders: Contender[] = []
    for (const other of others) {
      const { store, server } = other
      // the one goal of the store rows, from before they were several; the others are measured only
      const goal = store === 'redis' && path === 'validate' ? 0.8 : undefined
      const subject = await target(server)
      if (path === 'validate') contenders.push(await bareStoreContender(other, subject))
      contenders.push({ name: `${store}-${path}`, side: STORES[store].side, label: `${route} on ${STORES[store].label}`, goal, target: subject })
    }
    const baseline = { side: 'memory', label: 'the same on MemoryStore', target: await target(memory) }
    for (const side of [baseline, ...contenders]) await probe(side.target)
    const measured = await compare(`store ${path}`, baseline, contenders, rounds(path === 'validate' ? 50 : 8))
    // the rows against memory first, as before there were bare routes
    const comparisons = [...measured.filter(c => !isBare(c)), ...measured.filter(isBare)]
    if (!postgres) {
      console.log(`${path} on PostgreSQL skipped: this tree has no lib/postgres.ts`)
      comparisons.splice(2, 0, skipped({ name: `postgres-${path}`, label: `${route} on ${STORES.postgres.label}` }, baseline.label, 'no lib/postgres.ts in this tree'))
      if (path === 'validate') comparisons.push(skipped({ name: 'postgres-validate-bare', label: `${route} on ${STORES.postgres.label}`, goal: STORE_VALIDATE_GOALS.postgres }, `bare Fastify \`POST /verify\` and ${BARE_READS.postgres}`, 'no lib/postgres.ts in this tree'))
    }
    return comparisons
  })
}

function isBare (c: Comparison): boolean {
  return c.name.endsWith('-validate-bare')
}

/**
 * Store growth: `sessions` sessions each refresh `rotations` times (in
 * process, one after another, as a client's refresh chain must); the state
 * entries per live session must not grow with the refreshes.
 */
async function storeGrowth (sessions: number, rotations: number): Promise<{ perSession: number, refreshesPerSecond: number }> {
  const store = new MemoryStore()
  const app = await subjectApp(store, sessions)
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

interface Measured {
  comparisons: Comparison[]
  growth: { perSession: number, refreshesPerSecond: number } | null
  passkeys: PasskeyComparison | null
  flood: FloodComparison | null
  remote: RemoteResult | null
  sizing: SizingResult | null
  scaled: { rows: ScalingRow[], weighing: string[] } | null
}

/** Everything the run measures; its servers and backends are stopped afterwards, whatever happens. */
async function measureAll (): Promise<Measured> {
  const measured: Measured = { comparisons: [], growth: null, passkeys: null, flood: null, remote: null, sizing: null, scaled: null }
  try {
    if (runs('comparisons')) measured.comparisons.push(await validate(), await authenticate())
    if (runs('against')) measured.comparisons.push(...await validateAgainst())
    if (runs('login')) measured.comparisons.push(await login(), await loginUnbounded())
    if (runs('stores')) {
      const stores = [...await storeComparisons('validate'), ...await storeComparisons('login')]
      // the rows against memory first, in the order they had before the bare routes came
      measured.comparisons.push(...stores.filter(c => !isBare(c)), ...stores.filter(isBare))
    }
    if (runs('comparisons')) measured.growth = await storeGrowth(100, 200)
    if (runs('flood')) {
      measured.flood = await withServers(async () => await validateUnderLoginFlood(rounds(50)))
      measured.comparisons.push(measured.flood.comparison)
    }
    if (runs('passkeys')) measured.passkeys = await passkeyLogin()
    if (runs('remote')) measured.remote = await withServers(async () => await remoteLatency(backends, REMOTE))
    if (runs('sizing')) measured.sizing = await withServers(async () => await sizing({ rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARM_UP_SECONDS }))
    if (runs('scaling')) measured.scaled = await scaling(backends, { sizes: SESSIONS, seconds: SECONDS, warmUpSeconds: WARM_UP_SECONDS })
  } finally {
    await stopAll()
    await backends.stop()
  }
  return measured
}

/** The stores side by side: req/s and the median ratio to memory, for validate and for login, and validate's ratio to its bare route. */
function printStores (comparisons: Comparison[]): void {
  const byName = new Map(comparisons.map(c => [c.name, c]))
  if (!byName.has('redis-validate') || !byName.has('redis-login')) return
  const cells = (name: string): string => {
    const c = byName.get(name) as Comparison
    return c.skipped !== undefined ? 'skipped | n/a' : `${median(c.subject.map(run => run.reqPerSec)).toFixed(0)} | ${ratioFigure(c)}`
  }
  const bare = (name: string): string => {
    const c = byName.get(name) as Comparison
    return c.skipped !== undefined ? 'n/a' : `${ratioFigure(c)} (bare ${median(c.baseline.map(run => run.reqPerSec)).toFixed(0)} req/s)`
  }
  const memory = (path: Path): string => median((byName.get(`redis-${path}`) as Comparison).baseline.map(run => run.reqPerSec)).toFixed(0)
  console.log('\n| store | validate req/s | validate ratio to memory | validate ratio to a bare route with the same read | login req/s | login ratio to memory |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  console.log(`| memory | ${memory('validate')} | 1.00 | — | ${memory('login')} | 1.00 |`)
  for (const [store, { title }] of Object.entries(STORES)) {
    console.log(`| ${title} | ${cells(`${store}-validate`)} | ${bare(`${store}-validate-bare`)} | ${cells(`${store}-login`)} |`)
  }
}

/** Validate's p99 alone and under the flood, and what the flood got (medians over the rounds). */
function printFlood ({ comparison, floods }: FloodComparison): void {
  const p99 = (runs: Run[]): string => median(runs.map(run => run.p99Ms)).toFixed(0)
  const busy = floods.reduce((n, flood) => n + flood.busy, 0)
  const other = floods.reduce((n, flood) => n + flood.otherNon2xx + flood.errors, 0)
  console.log(`\nValidate under a login flood (${FLOOD_CONNECTIONS} connections on \`POST /auth\`, 4 × the default hashing concurrency ${HASHING_CONCURRENCY}): validate p99 ${p99(comparison.baseline)} ms alone, ${p99(comparison.subject)} ms under the flood; ${median(comparison.baseline.map(run => run.reqPerSec)).toFixed(0)} against ${median(comparison.subject.map(run => run.reqPerSec)).toFixed(0)} validations/s (medians of ${floods.length} rounds).`)
  console.log(`The flood: ${median(floods.map(flood => flood.signInsPerSec)).toFixed(0)} sign-ins/s (median), ${busy} answers 503 (busy) and ${other} other failures over all rounds; they do not count as the run's failures.`)
}

/** The login rows, whose CPU per sign-in gets a line of its own. */
const LOGIN_ROWS = ['login', 'login-unbounded']

/** A login row's CPU per sign-in on both sides, and the multiple of the baseline's jwt-login spends, against the row's CPU goal if it has one. */
function cpuPerSignIn (c: Comparison): string {
  const cpu = (runs: Run[]): string => median(runs.map(run => run.cpuPerRequest)).toFixed(0)
  const goal = c.cpuGoal === undefined ? 'no CPU goal' : `goal ≤ ${c.cpuGoal.toFixed(2)} ×: ${cpuGoalMet(c) ? 'met' : 'not met'}`
  return `CPU per sign-in, ${c.name}: jwt-login ${cpu(c.subject)} µs, baseline ${cpu(c.baseline)} µs (medians): ${cpuTimes(c).toFixed(2)} × the baseline's (${goal}).`
}

/** Validate's p99 on both sides (medians over the rounds), against its steady-latency goal. */
function validateLatency (c: Comparison): string {
  const [bare, subject] = [median(c.baseline.map(run => run.p99Ms)), median(c.subject.map(run => run.p99Ms))]
  const times = subject / bare
  return `Validate p99: jwt-login ${subject} ms, bare route ${bare} ms (medians): ${times.toFixed(2)} × the bare route's (goal ≤ ${VALIDATE_P99_GOAL} ×: ${times <= VALIDATE_P99_GOAL ? 'met' : 'not met'}).`
}

function printComparisons (comparisons: Comparison[], growth: Measured['growth']): void {
  console.log('\n| comparison | baseline req/s | jwt-login req/s | ratio, median [min–max] | goal | p99 ms (baseline / jwt-login) | CPU µs/req (baseline / jwt-login) | CPU ratio (baseline / jwt-login) | non-2xx + errors (baseline / jwt-login) |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const c of comparisons) console.log(`| ${row(c)} |`)
  printStores(comparisons)
  const loginRuns = comparisons.find(c => c.name === 'login')?.subject.map(run => run.loopDelayP99Ms)
  if (loginRuns !== undefined) console.log(`\nEvent-loop delay in jwt-login's process during the login load: p99 ${median(loginRuns).toFixed(1)} ms (median of ${ROUNDS} runs) [${Math.min(...loginRuns).toFixed(1)}–${Math.max(...loginRuns).toFixed(1)}].`)
  for (const c of comparisons.filter(c => LOGIN_ROWS.includes(c.name) && c.skipped === undefined)) console.log(cpuPerSignIn(c))
  const validated = comparisons.find(c => c.name === 'validate' && c.skipped === undefined)
  if (validated !== undefined) console.log(validateLatency(validated))
  if (growth !== null) console.log(`Store growth: 100 sessions × 200 refreshes each → ${growth.perSession.toFixed(2)} state entries per live session (${growth.refreshesPerSecond.toFixed(0)} refreshes/s in process).`)
}

/** A ratio line that is no ratio of req/s (`login-remote`): its value, null when it could not be measured. */
interface RatioLine {
  name: string
  value: number | null
  goal: number
}

/** The closing lines; the ratios come last, one per line, for `tail`. */
function printVerdict (comparisons: Comparison[], others: RatioLine[]): void {
  // other work on the machine skews both sides; the load average says how busy it was
  console.log(`Load average at the end: ${loadAverage()}.`)
  // a memory run is the baseline of several store comparisons: count it once
  const runs = new Set(comparisons.flatMap(c => [...c.baseline, ...c.subject]))
  const failedRuns = [...runs].filter(run => failures(run) > 0).length
  if (failedRuns > 0) console.log(`WARNING: ${failedRuns} runs had non-2xx answers or errors; their figures are not comparable.`)
  if (comparisons.length === 0 && others.length === 0) return
  const missed = [
    ...comparisons.filter(c => c.goal !== undefined && c.skipped === undefined && median(ratios(c)) < c.goal).map(c => c.name),
    ...comparisons.filter(c => c.skipped === undefined && !cpuGoalMet(c)).map(c => `${c.name} (CPU per request ${cpuTimes(c).toFixed(2)} × the baseline's)`),
    ...others.filter(line => line.value !== null && line.value < line.goal).map(line => line.name)
  ]
  console.log(missed.length === 0 ? 'All ratios meet their goals.' : `Below goal: ${missed.join(', ')}.`)
  console.log('')
  for (const c of comparisons) console.log(`ratio ${c.name}: ${ratioFigure(c)}`)
  for (const line of others) console.log(`ratio ${line.name}: ${line.value === null ? 'n/a' : line.value.toFixed(2)}`)
}

async function main (): Promise<void> {
  console.log(`jwt-login benchmarks: node ${process.version}, ${os.availableParallelism()} CPUs, ${SECONDS} s per run, ${ROUNDS} interleaved rounds, ${WARM_UP_SECONDS} s warm-up per server, load average ${loadAverage()}${ONLY === null ? '' : `, ${ONLY} only`}`)
  const { comparisons, growth, passkeys, flood, remote, sizing: sized, scaled } = await measureAll()
  if (comparisons.length > 0) printComparisons(comparisons, growth)
  // before the verdict, whose last lines stay the ratios
  if (flood !== null) printFlood(flood)
  if (passkeys !== null) printPasskeys(passkeys)
  if (remote !== null) printRemote(remote, REMOTE)
  if (sized !== null) printSizing(sized)
  if (scaled !== null) printScaling(scaled)
  printVerdict(comparisons, remote === null ? [] : [{ name: 'login-remote', value: remote.ratio, goal: LOGIN_REMOTE_GOAL }])
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const exit = (): never => process.exit(130)
    stopAll().then(async () => { await backends.stop() }).then(exit, exit)
  })
}

try {
  await main()
} catch (error) {
  console.error('bench failed:', error)
  // measureAll has stopped its servers and backends; this is for a failure before it
  await stopAll()
  await backends.stop().catch(() => {})
  process.exitCode = 1
}
