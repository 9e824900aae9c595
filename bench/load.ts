/** The load generator: autocannon in the parent process, against a server child. */
import autocannon from 'autocannon'
import type { ServerProcess } from './servers.js'

export interface Target {
  server: ServerProcess
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
}

export interface Run {
  /** 2xx answers per second; failed answers do not count */
  reqPerSec: number
  p99Ms: number
  non2xx: number
  errors: number
  /** the server process's user + system CPU time per answer, µs */
  cpuPerRequest: number
  loopDelayP99Ms: number
}

async function load (target: Target, connections: number, seconds: number): Promise<autocannon.Result> {
  return await autocannon({
    url: `${target.server.url}${target.path}`,
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
    connections,
    duration: seconds
  })
}

/** Load the target, unmeasured, so both sides start warm. */
export async function warmUp (target: Target, connections: number, seconds: number): Promise<void> {
  await load(target, connections, seconds)
}

/** One measured run: the load's figures and the server's own CPU time and event-loop delay over it. */
export async function measure (target: Target, connections: number, seconds: number): Promise<Run> {
  const { result, usage } = await target.server.measure(async () => await load(target, connections, seconds))
  return {
    reqPerSec: result['2xx'] / result.duration,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuPerRequest: result.requests.total === 0 ? Number.NaN : usage.cpuMicros / result.requests.total,
    loopDelayP99Ms: usage.loopDelayP99Ms
  }
}

/** One request; throws unless it answers 2xx, so a misconfigured target stops the bench before any load. */
export async function probe (target: Target): Promise<{ bytes: number, json: unknown }> {
  const response = await fetch(`${target.server.url}${target.path}`, {
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${target.server.kind} ${target.method} ${target.path} answered ${response.status}: ${text}`)
  return { bytes: Buffer.byteLength(text), json: JSON.parse(text) }
}
