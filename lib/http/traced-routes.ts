// Each route's handler runs in its flow's span (jwt-login.<flow>) while an OpenTelemetry SDK records.
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { flowOf } from '../telemetry/flows.js'
import type { OtelContext } from '../telemetry/otel.js'
import type { Telemetry } from '../telemetry/telemetry.js'

/**
 * The context of the host's request span when @fastify/otel made one
 * (`request.opentelemetry()`): the active context in a handler is the last
 * hook's span there, so the flow's span would hang under a hook.
 */
function hostRequestContext (request: FastifyRequest): OtelContext | undefined {
  const otel = (request as unknown as { opentelemetry?: unknown }).opentelemetry
  if (typeof otel !== 'function') return undefined
  return (otel.call(request) as { context?: OtelContext | null }).context ?? undefined
}

/**
 * Wraps the handler of every route of the scope that runs a flow (see
 * telemetry/flows.ts): without `@opentelemetry/api` nothing is wrapped; with
 * it, a handler calls straight through until an SDK is registered.
 */
export function traceFlows (instance: FastifyInstance, telemetry: Telemetry): void {
  if (!telemetry.available) return
  instance.addHook('onRoute', (route) => {
    const spec = flowOf(route.method, route.routePath)
    if (spec === undefined) return
    const handler = route.handler
    const url = route.url as string
    const traced: RouteHandlerMethod = function (request, reply) {
      if (!telemetry.live) return handler.call(this, request, reply)
      return telemetry.flow(spec, url, () => handler.call(this, request, reply), () => reply.statusCode, hostRequestContext(request))
    }
    route.handler = traced
  })
}
