/**
 * `node --import tsx examples/observability/main.ts`: the demo host with
 * OpenTelemetry, on 127.0.0.1:`PORT` (3000 by default). Spans are printed on
 * the console (batched); metrics are at http://127.0.0.1:3000/metrics.
 *
 * The telemetry is set up before the app is built (and before the plugin is
 * registered), as a host does it; the app closes, and the last spans are
 * flushed, on SIGINT or SIGTERM.
 */
import { BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base'
import { setUpTelemetry } from './telemetry.js'
import { startObservedDemo } from './server.js'

// a real host exports to its collector instead: new BatchSpanProcessor(new OTLPTraceExporter()) of @opentelemetry/exporter-trace-otlp-http
const telemetry = setUpTelemetry({ serviceName: process.env.OTEL_SERVICE_NAME, spanProcessor: new BatchSpanProcessor(new ConsoleSpanExporter()) })
const { app } = await startObservedDemo({ telemetry, port: Number(process.env.PORT ?? 3000), jwtSecret: process.env.JWT_SECRET })
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(telemetry.shutdown).then(() => process.exit(0), () => process.exit(1))
  })
}
