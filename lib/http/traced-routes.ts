// Each route's handler runs in its flow's span (jwt-login.<flow>) while an OpenTelemetry SDK records.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify'
import { flowOf } from '../telemetry/flows.js'
import type { Telemetry } from '../telemetry/telemetry.js'

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
      return telemetry.flow(spec, url, () => handler.call(this, request, reply), () => reply.statusCode)
    }
    route.handler = traced
  })
}
