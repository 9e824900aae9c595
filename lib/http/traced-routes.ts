// Each route's handler runs in its flow's span (jwt-login.<flow>) while an OpenTelemetry SDK records.
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { flowOf } from '../telemetry/flows.js'
import type { OtelContext } from '../telemetry/otel.js'
import type { Telemetry } from '../telemetry/telemetry.js'

/** What @fastify/otel's `request.opentelemetry()` answers (the parts read here). */
interface FastifyOtelRequest {
  opentelemetry?: () => { context?: OtelContext | null }
}

/**
 * The context of the request's span when @fastify/otel instruments the
 * request (its documented `request.opentelemetry()`), else nothing (the flow
 * takes the active context then). A flow span is a child of the request
 * span: with a span per hook, the active context at the handler is the last
 * hook's span's, and @fastify/otel's handler span is not reachable.
 */
function requestContext (request: FastifyRequest): OtelContext | null | undefined {
  const otel = (request as FastifyOtelRequest).opentelemetry
  return typeof otel === 'function' ? otel.call(request).context : undefined
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
      return telemetry.flow(spec, url, () => handler.call(this, request, reply), () => reply.statusCode, requestContext(request))
    }
    route.handler = traced
  })
}
