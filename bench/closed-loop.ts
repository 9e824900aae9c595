/**
 * A closed-loop load driver in the parent, for sign-ins that a fixed
 * autocannon request cannot make (a passkey's needs a fresh challenge each
 * time): `clients` concurrent clients, each signing in again as soon as its
 * last sign-in ended, over keep-alive HTTP, for a given time.
 */
import { Agent, request } from 'node:http'
import type { ServerProcess } from './servers.js'

/** One HTTP answer, its body as text. */
export interface Answer {
  status: number
  body: string
}

/** A keep-alive HTTP client for one server, at most one connection per concurrent client. */
export class Client {
  readonly #server: ServerProcess
  readonly #agent: Agent

  constructor (server: ServerProcess, connections: number) {
    this.#server = server
    this.#agent = new Agent({ keepAlive: true, maxSockets: connections })
  }

  /** `POST path` with a JSON body; rejects only on a connection error. */
  async post (path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
    return await new Promise<Answer>((resolve, reject) => {
      const outgoing = request(`${this.#server.url}${path}`, {
        method: 'POST',
        agent: this.#agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }
      }, (incoming) => {
        const chunks: Buffer[] = []
        incoming.on('data', (chunk: Buffer) => { chunks.push(chunk) })
        incoming.once('end', () => { resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString() }) })
        incoming.once('error', reject)
      })
      outgoing.once('error', reject)
      outgoing.end(body)
    })
  }

  /** Closes its connections, so the parent holds none open to a stopped server. */
  close (): void {
    this.#agent.destroy()
  }
}

/** Whether an answer is a complete sign-in: a 200 whose data carries a jwt (not a two-factor challenge). */
export function signedIn (answer: Answer): boolean {
  if (answer.status !== 200) return false
  let data: { jwt?: unknown, two_factor_required?: unknown } | undefined
  try {
    data = (JSON.parse(answer.body) as { data?: typeof data }).data
  } catch {
    return false
  }
  return typeof data?.jwt === 'string' && data.two_factor_required === undefined
}

/** What the clients of one run count together. */
export interface Tally {
  completed: number
  /** answers that were not a complete sign-in */
  failed: number
  /** connection errors */
  errors: number
  /** the parent's CPU time spent signing (passkey assertions), µs */
  signingMicros: number
  /** each complete sign-in's time from its first request to its last answer, ms */
  latenciesMs: number[]
  /** the last answer that was not a sign-in, for the warning */
  lastFailure?: string
}

/** One sign-in as a client makes it, request after request; answers the last answer (the first that was not a 200 when one was not). */
export type SignIn = (tally: Tally) => Promise<Answer>

/** One sign-in path to load: its server, its name in the round lines, and how a client signs in. */
export interface Loop {
  side: string
  server: ServerProcess
  signIn: SignIn
}

/** One measured run of a loop. */
export interface LoopRun {
  /** complete sign-ins per second */
  signInsPerSec: number
  p99Ms: number
  failed: number
  errors: number
  /** the server process's user + system CPU time per sign-in tried, µs */
  serverCpuPerSignIn: number
  /** the parent's user + system CPU time per sign-in tried (HTTP, JSON, signing), µs */
  clientCpuPerSignIn: number
  /** the part of it spent signing assertions, µs */
  signingPerSignIn: number
  /** the parent's CPU time over the run's wall time: 1 is one core kept busy */
  clientBusy: number
  /** the last answer that was not a sign-in */
  lastFailure?: string
}

/** The CPU time (user + system) of this process since `since`, µs. */
export function cpuSince (since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since)
  return used.user + used.system
}

function p99 (values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] as number
}

/** One sign-in, counted: complete, failed (its answer kept) or a connection error. */
async function attempt (signIn: SignIn, tally: Tally): Promise<void> {
  const began = performance.now()
  let answer: Answer
  try {
    answer = await signIn(tally)
  } catch (error) {
    tally.errors++
    tally.lastFailure = String(error)
    return
  }
  if (signedIn(answer)) {
    tally.completed++
    tally.latenciesMs.push(performance.now() - began)
  } else {
    tally.failed++
    tally.lastFailure = `${answer.status} ${answer.body.slice(0, 300)}`
  }
}

/** One client: signs in again and again until `until` (a `performance.now()` time); the sign-in under way when it passes ends first. */
async function client (signIn: SignIn, until: number, tally: Tally): Promise<void> {
  while (performance.now() < until) await attempt(signIn, tally)
}

function emptyTally (): Tally {
  return { completed: 0, failed: 0, errors: 0, signingMicros: 0, latenciesMs: [] }
}

/** One sign-in before any load; throws with its answer unless it signs in, so a misconfigured loop stops the bench first. */
export async function probeLoop (loop: Loop): Promise<void> {
  const tally = emptyTally()
  await attempt(loop.signIn, tally)
  if (tally.completed !== 1) throw new Error(`${loop.server.kind}: the ${loop.side} sign-in failed: ${tally.lastFailure ?? '?'}`)
}

/** `clients` clients on `loop` for `seconds`; answers what they counted, the run's wall time and the parent's CPU time over it. */
async function drive (loop: Loop, clients: number, seconds: number): Promise<{ tally: Tally, wallMicros: number, clientMicros: number }> {
  const tally = emptyTally()
  const cpuAt = process.cpuUsage()
  const began = performance.now()
  const until = began + seconds * 1000
  await Promise.all(Array.from({ length: clients }, async () => { await client(loop.signIn, until, tally) }))
  return { tally, wallMicros: (performance.now() - began) * 1000, clientMicros: cpuSince(cpuAt) }
}

/** Load the loop, unmeasured, so every side starts warm. */
export async function warmUpLoop (loop: Loop, clients: number, seconds: number): Promise<void> {
  await drive(loop, clients, seconds)
}

/** One measured run: the clients' figures, the parent's CPU, and the server's own CPU time over it. */
export async function measureLoop (loop: Loop, clients: number, seconds: number): Promise<LoopRun> {
  const { result, usage } = await loop.server.measure(async () => await drive(loop, clients, seconds))
  const { tally, wallMicros, clientMicros } = result
  const tried = tally.completed + tally.failed + tally.errors
  const per = (micros: number): number => tried === 0 ? Number.NaN : micros / tried
  return {
    signInsPerSec: tally.completed / (wallMicros / 1e6),
    p99Ms: p99(tally.latenciesMs),
    failed: tally.failed,
    errors: tally.errors,
    serverCpuPerSignIn: per(usage.cpuMicros),
    clientCpuPerSignIn: per(clientMicros),
    signingPerSignIn: per(tally.signingMicros),
    clientBusy: clientMicros / wallMicros,
    ...(tally.lastFailure === undefined ? {} : { lastFailure: tally.lastFailure })
  }
}
