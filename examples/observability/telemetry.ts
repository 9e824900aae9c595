/**
 * OpenTelemetry as a host sets it up, BEFORE it builds its app: a tracer
 * provider, the async-hooks context manager (the active span follows each
 * request through its promises), a meter provider read by the Prometheus
 * exporter, and @fastify/otel's instrumentation, whose plugin the host
 * registers on its Fastify instance before jwt-login. jwt-login itself needs
 * nothing more: it finds the registered providers through `@opentelemetry/api`
 * (at registration, and again at `ready()`) and records its flow spans, its
 * store and port calls and its metrics under the scope `fastify-jwt-login`
 * (docs/observability.md).
 *
 * Where spans go is the caller's choice (`spanProcessor`): main.ts prints
 * them on the console in batches, a real host hands a batch processor of an
 * OTLP exporter, and test/examples/example-observability.test.ts a simple
 * processor of an in-memory exporter. Metrics are not pushed: Prometheus scrapes them
 * from the host's own `GET /metrics` (main.ts), which the exporter's request
 * handler answers (`preventServerStart`: no second port).
 */
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base'

/** The service the spans and metrics are reported for (`service.name`). */
export const SERVICE_NAME = 'jwt-login-observability-example'

export interface TelemetryOptions {
  /** `service.name` of the resource (SERVICE_NAME by default). */
  serviceName?: string
  /** Where finished spans go: e.g. `new BatchSpanProcessor(new OTLPTraceExporter())` in production. */
  spanProcessor: SpanProcessor
}

export interface HostTelemetry {
  /** @fastify/otel: register `fastifyOtel.plugin()` on the Fastify instance before any other plugin and route. */
  fastifyOtel: FastifyOtelInstrumentation
  /** The metric reader that renders the Prometheus text format: `getMetricsRequestHandler` serves a scrape. */
  prometheus: PrometheusExporter
  /** Ends the span processor (flushing it) and the meter provider; the globals stay registered. */
  shutdown: () => Promise<void>
}

/**
 * Registers the tracer provider, the context manager and the meter provider
 * globally (once per process: the API keeps the first of each) and makes the
 * @fastify/otel instrumentation.
 */
export function setUpTelemetry (options: TelemetryOptions): HostTelemetry {
  const resource = resourceFromAttributes({ 'service.name': options.serviceName ?? SERVICE_NAME })
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [options.spanProcessor] })
  const prometheus = new PrometheusExporter({ preventServerStart: true })
  const meterProvider = new MeterProvider({ resource, readers: [prometheus] })

  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)

  // registered by the host itself (app.register(fastifyOtel.plugin())), not on every Fastify instance the process makes
  const fastifyOtel = new FastifyOtelInstrumentation({ registerOnInitialization: false })
  fastifyOtel.setTracerProvider(tracerProvider)

  return {
    fastifyOtel,
    prometheus,
    shutdown: async () => {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
    }
  }
}
