/**
 * The sizing run (`BENCH_ONLY=sizing`): how much CPU jwt-login's process
 * spends on one request of each flow, so an operator can size a host (the
 * sizing table of docs/deployment.md). One server (`subject-sizing`, memory
 * store) takes a steady closed-loop load of one flow at a time and measures
 * its own CPU time over the run (`process.cpuUsage()`, user + system: the
 * event loop and libuv's threads, where argon2 runs); CPU per request is
 * that over the requests answered, and the rate one core serves is 1e6 over
 * it. After a warm-up of each, the flows are measured in turns, for
 * `rounds` rounds of `seconds`:
 * - password sign-in (`POST /auth`, the right password) with the default
 *   argon2 parameters (`ARGON2_OPTIONS`), and the same with Keycloak's
 *   (another user, whose stored hash was made with them): autocannon, a few
 *   connections, with the hashing bound as high as the connections so that
 *   it never leaves a core idle;
 * - TOTP second factor (`POST /auth/2fa`), in batches: a batch's challenges
 *   (fresh TOTP users' password sign-ins) are made first, unmeasured, then
 *   the server measures the batch's second factors alone, each a fresh
 *   user's first use of the current step;
 * - refresh (`POST /auth/refresh`): one chain per client, each refreshing
 *   with the token its last refresh answered;
 * - validate (`POST /auth/validate`): autocannon, one token.
 * Beside each flow, the store work of its usual path from the capacity
 * model (test/helpers/capacity.ts, loaded only when this part runs).
 */
import os from 'node:os'
import { generate } from 'otplib'
import { ARGON2_OPTIONS, createTotpSecret } from '../lib/index.js'
import type { Cost } from '../test/helpers/capacity.js'
import { KEYCLOAK_ARGON2_OPTIONS, SIZING_SIGN_IN_USERS } from './apps.js'
import { Client, signedIn, type Answer } from './closed-loop.js'
import { median } from './compare.js'
import { measure, probe, warmUp, type Target } from './load.js'
import { ServerProcess } from './servers.js'
import { KEYCLOAK_USER, PREFIX, signInUser, totpUser, USER } from './shared.js'
import { loginTarget, validateTarget } from './targets.js'

export interface SizingSettings {
  rounds: number
  seconds: number
  warmUpSeconds: number
}

/** Sign-ins in flight: enough to keep two cores' argon2 busy; the hashing bound is set to as many. */
const SIGN_IN_CONNECTIONS = 4
/** Closed-loop clients of the second factor and the refresh chains. */
const CLIENTS = 16
/** Connections of the validate load, as in the validate comparison. */
const VALIDATE_CONNECTIONS = 50
/** Second factors per batch: its challenges are made before, unmeasured. */
const TOTP_BATCH = 500
/**
 * TOTP users the server gets per second of second-factor load: above what
 * one event loop can complete (a second factor costs a few hundred µs);
 * were they used up, a round would end early, and say so.
 */
const TOTP_USERS_PER_SECOND = 4000

/** One measured run of a flow. */
export interface SizingRun {
  reqPerSec: number
  /** the server's user + system CPU time over the requests answered, µs */
  cpuPerRequest: number
  /** answers that were not the flow's success, and connection errors */
  failed: number
  lastFailure?: string
}

/** One row of the table: a flow, its runs (one per round), its store work on the usual path. */
export interface SizingRow {
  flow: string
  /** the argon2 parameters of a sign-in row */
  argon2?: string
  runs: SizingRun[]
  cost: Cost
}

export interface SizingResult {
  rows: SizingRow[]
  loadAverageAtStart: string
  how: SizingSettings
  /** second-factor runs that ended early for want of fresh TOTP users */
  shortRuns: number
}

/** A flow as the server is loaded with it. */
interface Flow {
  flow: string
  argon2?: string
  /** the capacity model's route whose usual path this flow takes */
  scenario: string
  warmUp: (seconds: number) => Promise<void>
  run: (seconds: number) => Promise<SizingRun>
}

function argon2Text (options: { memoryCost: number, timeCost: number, parallelism: number }): string {
  return `argon2id m = ${options.memoryCost} KiB, t = ${options.timeCost}, p = ${options.parallelism}`
}

function loadAverage (): string {
  return os.loadavg().map(n => n.toFixed(2)).join(' ')
}

function dataOf (answer: Answer): Record<string, unknown> {
  return (JSON.parse(answer.body) as { data: Record<string, unknown> }).data
}

/** What the clients of one closed-loop run count together. */
interface Tally {
  ok: number
  failed: number
  lastFailure?: string
}

function fail (tally: Tally, failure: string): void {
  tally.failed++
  tally.lastFailure = failure
}

/** `work` on each item, `clients` at a time, each client taking the next item when its last is done. */
async function eachInParallel<T> (items: T[], clients: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(clients, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T)
  }))
}

/** An autocannon flow (a fixed request): its warm-up and its measured runs. */
function fixedFlow (target: Target, connections: number): Pick<Flow, 'warmUp' | 'run'> {
  return {
    warmUp: async (seconds) => { await warmUp(target, connections, seconds) },
    run: async (seconds) => {
      const run = await measure(target, connections, seconds)
      const failed = run.non2xx + run.errors
      return { reqPerSec: run.reqPerSec, cpuPerRequest: run.cpuPerRequest, failed, ...(failed === 0 ? {} : { lastFailure: `${run.non2xx} non-2xx answers, ${run.errors} errors` }) }
    }
  }
}

/** The sign-in of a user with the bench user's password; answers its data, or throws with the answer. */
async function signInAs (server: ServerProcess, email: string): Promise<Record<string, unknown>> {
  const answer = await probe({ ...loginTarget(server), body: JSON.stringify({ email, password: USER.password }) })
  return (answer.json as { data: Record<string, unknown> }).data
}

/**
 * Refresh chains, one per client, each started by a sign-in of its own user
 * (who is signed in nowhere else); a chain that fails stops for the rest of
 * the run (its token may be spent).
 */
async function refreshFlow (server: ServerProcess, client: Client): Promise<Pick<Flow, 'warmUp' | 'run'>> {
  const tokens: string[] = []
  for (let i = 0; i < CLIENTS; i++) tokens.push((await signInAs(server, signInUser(i).email)).refresh_token as string)
  const chains = async (seconds: number, tally: Tally): Promise<void> => {
    const until = performance.now() + seconds * 1000
    await Promise.all(tokens.map(async (_, i) => {
      while (performance.now() < until) {
        let answer: Answer
        try {
          answer = await client.post(`${PREFIX}/auth/refresh`, JSON.stringify({ refresh_token: tokens[i] }))
        } catch (error) {
          fail(tally, String(error))
          return
        }
        if (!signedIn(answer)) {
          fail(tally, `${answer.status} ${answer.body.slice(0, 300)}`)
          return
        }
        tokens[i] = dataOf(answer).refresh_token as string
        tally.ok++
      }
    }))
  }
  return {
    warmUp: async (seconds) => { await chains(seconds, { ok: 0, failed: 0 }) },
    run: async (seconds) => {
      const tally: Tally = { ok: 0, failed: 0 }
      const began = performance.now()
      const { usage } = await server.measure(async () => { await chains(seconds, tally) })
      return closedLoopRun(tally, usage.cpuMicros, performance.now() - began)
    }
  }
}

function closedLoopRun (tally: Tally, cpuMicros: number, wallMs: number): SizingRun {
  const requests = tally.ok + tally.failed
  return {
    reqPerSec: wallMs === 0 ? Number.NaN : tally.ok / (wallMs / 1000),
    cpuPerRequest: requests === 0 ? Number.NaN : cpuMicros / requests,
    failed: tally.failed,
    ...(tally.lastFailure === undefined ? {} : { lastFailure: tally.lastFailure })
  }
}

/** The TOTP users the server has, handed out once each. */
class TotpUsers {
  readonly size: number
  #next = 0
  constructor (size: number) {
    this.size = size
  }

  get left (): number {
    return this.size - this.#next
  }

  take (count: number): number[] {
    const taken = Array.from({ length: Math.min(count, this.left) }, (_, i) => this.#next + i)
    this.#next += taken.length
    return taken
  }
}

/** The challenges of fresh TOTP users (their password sign-ins), unmeasured: their interim tokens; throws on an answer that is no challenge. */
async function challenges (client: Client, users: number[]): Promise<string[]> {
  const interims: string[] = []
  await eachInParallel(users, CLIENTS, async (i) => {
    const answer = await client.post(`${PREFIX}/auth`, JSON.stringify({ email: totpUser(i).email, password: USER.password }))
    if (answer.status !== 200 || dataOf(answer).two_factor_required !== true) {
      throw new Error(`sizing: a TOTP user's challenge answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    }
    interims.push(dataOf(answer).jwt as string)
  })
  return interims
}

/**
 * Second factors in batches until `seconds` of them were measured: each
 * batch's challenges first, unmeasured, then its second factors, the code of
 * the current step (each user's first), between the server's start and stop.
 */
function secondFactorFlow (server: ServerProcess, client: Client, users: TotpUsers, secret: string, onShort: () => void): Pick<Flow, 'warmUp' | 'run'> {
  const batches = async (seconds: number): Promise<{ tally: Tally, cpuMicros: number, wallMs: number }> => {
    const tally: Tally = { ok: 0, failed: 0 }
    let cpuMicros = 0
    let wallMs = 0
    while (wallMs < seconds * 1000) {
      const batch = users.take(TOTP_BATCH)
      if (batch.length === 0) {
        onShort()
        break
      }
      const interims = await challenges(client, batch)
      const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) })
      const began = performance.now()
      const { usage } = await server.measure(async () => {
        await eachInParallel(interims, CLIENTS, async (interim) => {
          try {
            const answer = await client.post(`${PREFIX}/auth/2fa`, JSON.stringify({ JWT: interim, code }))
            if (signedIn(answer)) tally.ok++
            else fail(tally, `${answer.status} ${answer.body.slice(0, 300)}`)
          } catch (error) {
            fail(tally, String(error))
          }
        })
      })
      wallMs += performance.now() - began
      cpuMicros += usage.cpuMicros
    }
    return { tally, cpuMicros, wallMs }
  }
  return {
    warmUp: async (seconds) => { await batches(seconds) },
    run: async (seconds) => {
      const { tally, cpuMicros, wallMs } = await batches(seconds)
      return closedLoopRun(tally, cpuMicros, wallMs)
    }
  }
}

/** The store work of each flow's usual path, run through the capacity model's rig (no OpenID provider: those scenarios are not run). */
async function storeWork (routes: string[]): Promise<Map<string, Cost>> {
  const { costOf, runScenario, SCENARIOS } = await import('../test/helpers/capacity.js')
  const costs = new Map<string, Cost>()
  for (const route of new Set(routes)) {
    const scenario = SCENARIOS.find(s => s.route === route)
    if (scenario === undefined) throw new Error(`sizing: the capacity model has no scenario "${route}"`)
    costs.set(route, costOf(await runScenario(scenario, null)))
  }
  return costs
}

function describeRun (run: SizingRun): string {
  return `${run.reqPerSec.toFixed(0)} req/s, ${run.cpuPerRequest.toFixed(0)} µs CPU/req`
}

/** Starts the server (the caller stops it), checks each flow once, warms each up, then runs the rounds in turns. */
export async function sizing (how: SizingSettings): Promise<SizingResult> {
  const loadAverageAtStart = loadAverage()
  const { secret } = createTotpSecret('jwt-login bench', 'sizing')
  // enough for the warm-up and every round, and the batch each may run past its time
  const users = new TotpUsers(TOTP_USERS_PER_SECOND * (how.warmUpSeconds + how.rounds * how.seconds) + (how.rounds + 1) * TOTP_BATCH)
  const server = await ServerProcess.start('subject-sizing', String(users.size), secret, String(SIGN_IN_CONNECTIONS))
  const client = new Client(server, CLIENTS)
  let shortRuns = 0
  try {
    const validate = validateTarget(server, (await signInAs(server, signInUser(SIZING_SIGN_IN_USERS - 1).email)).jwt as string)
    const keycloak: Target = { ...loginTarget(server), body: JSON.stringify({ email: KEYCLOAK_USER.email, password: USER.password }) }
    for (const target of [loginTarget(server), keycloak, validate]) await probe(target)
    const flows: Flow[] = [
      { flow: 'password sign-in: `POST /auth`', argon2: `${argon2Text(ARGON2_OPTIONS)} (the default, \`ARGON2_OPTIONS\`)`, scenario: 'POST /auth — success', ...fixedFlow(loginTarget(server), SIGN_IN_CONNECTIONS) },
      { flow: 'password sign-in, Keycloak\'s argon2 parameters: `POST /auth`', argon2: `${argon2Text(KEYCLOAK_ARGON2_OPTIONS)} (Keycloak's default)`, scenario: 'POST /auth — success', ...fixedFlow(keycloak, SIGN_IN_CONNECTIONS) },
      { flow: 'TOTP second factor: `POST /auth/2fa`', scenario: 'POST /auth/2fa — TOTP code', ...secondFactorFlow(server, client, users, secret, () => { shortRuns++ }) },
      { flow: 'refresh: `POST /auth/refresh`', scenario: 'POST /auth/refresh', ...await refreshFlow(server, client) },
      { flow: 'validate: `POST /auth/validate`', scenario: 'POST /auth/validate', ...fixedFlow(validate, VALIDATE_CONNECTIONS) }
    ]
    const costs = await storeWork(flows.map(f => f.scenario))
    for (const flow of flows) await flow.warmUp(how.warmUpSeconds)
    const runs: SizingRun[][] = flows.map(() => [])
    for (let round = 1; round <= how.rounds; round++) {
      const parts: string[] = []
      for (const [i, flow] of flows.entries()) {
        const run = await flow.run(how.seconds)
        runs[i]?.push(run)
        parts.push(`${flow.flow.split(':')[0] as string} ${describeRun(run)}`)
        if (run.failed > 0) console.log(`WARNING: sizing round ${round} ${flow.flow}: ${run.failed} failed requests (last: ${run.lastFailure ?? '?'})`)
      }
      console.log(`sizing round ${round}/${how.rounds}: ${parts.join(' | ')}`)
    }
    const rows = flows.map((flow, i): SizingRow => ({
      flow: flow.flow,
      ...(flow.argon2 === undefined ? {} : { argon2: flow.argon2 }),
      runs: runs[i] as SizingRun[],
      cost: costs.get(flow.scenario) as Cost
    }))
    return { rows, loadAverageAtStart, how, shortRuns }
  } finally {
    client.close()
  }
}

/** A rate per core: one decimal below 100. */
function perCore (cpuPerRequest: number): string {
  const rate = 1e6 / cpuPerRequest
  return rate < 100 ? rate.toFixed(1) : rate.toFixed(0)
}

/** The hardware line and the sizing table. */
export function printSizing ({ rows, loadAverageAtStart, how, shortRuns }: SizingResult): void {
  const signIns = rows.filter(row => row.argon2 !== undefined).map(row => `${row.flow.split(':')[0] as string}: ${row.argon2 as string}`)
  console.log(`\nSizing: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.availableParallelism()} cores, Node ${process.version}, load average at the start ${loadAverageAtStart}; one jwt-login process on the memory store; CPU per request is the process's user + system CPU time (event loop and libuv's threads) over the requests answered, median [min–max] of ${how.rounds} rounds of ${how.seconds} s after ${how.warmUpSeconds} s of warm-up; ${signIns.join('; ')}.`)
  console.log('\n| flow | CPU µs per request, median [min–max] | per core per second | store calls | writes | round trips | bytes written |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const { flow, runs, cost } of rows) {
    const cpu = runs.map(run => run.cpuPerRequest)
    const middle = median(cpu)
    const cells = [
      flow,
      `${middle.toFixed(0)} [${Math.min(...cpu).toFixed(0)}–${Math.max(...cpu).toFixed(0)}]`,
      perCore(middle),
      String(cost.calls), String(cost.writes), String(cost.roundTrips), String(cost.bytesWritten)
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
  const failed = rows.reduce((n, row) => n + row.runs.reduce((m, run) => m + run.failed, 0), 0)
  if (failed > 0) console.log(`WARNING: ${failed} requests of the sizing run failed; their rows are not comparable.`)
  if (shortRuns > 0) console.log(`NOTE: ${shortRuns} second-factor runs ended early, out of fresh TOTP users; their CPU per request stands, over fewer requests.`)
}
