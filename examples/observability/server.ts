/**
 * The demo host (examples/demo.ts: in-memory users with DEMO_USER, the memory
 * store) observed: @fastify/otel's plugin registered before anything else, so
 * each request is a span (`request`) with a span per hook and handler, and
 * jwt-login's flow spans (`jwt-login.sign_in`, …) with their store and port
 * calls (`store.*`, `users.*`) nest inside it; the Prometheus text format of
 * every metric at the host's own `GET /metrics`; `GET /ready` answers from
 * `fastify.jwtLogin.health()`, for a readiness probe.
 *
 * The telemetry must be set up first (telemetry.ts): main.ts does it, then
 * calls `startObservedDemo`; so does test/examples/example-observability.test.ts,
 * with spans kept in memory.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { HealthReport } from '../../lib/index.js'
import { banner, buildDemo } from '../demo.js'
import type { HostTelemetry } from './telemetry.js'

export interface ObservedDemoOptions {
  /** What setUpTelemetry() answered. */
  telemetry: HostTelemetry
  /** 0 picks a free port (the passkey origin and the mail link need a known one: see examples/demo.ts). */
  port: number
  host?: string
  /** The HS256 signing secret; a random one by default. */
  jwtSecret?: string
  /** Where the banner and the console mailer write. */
  print?: (text: string) => void
}

export interface ObservedDemo {
  app: FastifyInstance
  /** Where it listens, e.g. http://127.0.0.1:3000. */
  address: string
}

/** Builds the observed demo host, adds `GET /metrics`, listens and prints the banner. */
export async function startObservedDemo (options: ObservedDemoOptions): Promise<ObservedDemo> {
  const { telemetry, port, print = console.log } = options
  const app = await buildDemo({
    port,
    print,
    jwtSecret: options.jwtSecret,
    // before the docs and jwt-login: @fastify/otel wraps the routes and hooks registered after it only
    beforePlugin: async (instance) => { await instance.register(telemetry.fastifyOtel.plugin()) }
  })
  // Prometheus scrapes this route; the exporter renders what the meter provider collects. No spans for the scrapes.
  app.get('/metrics', { config: { otel: false }, schema: { hide: true } }, async (request, reply) => {
    reply.hijack()
    telemetry.prometheus.getMetricsRequestHandler(request.raw, reply.raw)
  })
  // The readiness probe (docs/observability.md#health): 503 while the store or the user adapter does not answer in time.
  app.get('/ready', { config: { otel: false }, schema: { hide: true } }, async (request, reply) => {
    const { status, body } = readiness(await app.jwtLogin.health({ deadlineMs: 1000 }), request.log)
    return await reply.code(status).send(body)
  })
  const address = await app.listen({ host: options.host ?? '127.0.0.1', port })
  print(`${banner(address)}\nMetrics (Prometheus text format): ${address}/metrics\n`)
  return { app, address }
}

/**
 * The readiness probe's answer to a health report: 503 while a check fails.
 * The body says only whether the pod is ready; the checks go to the log (a
 * store's problem may name its host).
 */
export function readiness (report: HealthReport, log: Pick<FastifyBaseLogger, 'warn'>): { status: 200 | 503, body: { healthy: boolean } } {
  if (report.healthy) return { status: 200, body: { healthy: true } }
  log.warn({ checks: report.checks }, 'not ready')
  return { status: 503, body: { healthy: false } }
}
