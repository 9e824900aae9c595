// An OpenTelemetry SDK registered the way a host registers it: spans kept in memory, metrics read on demand.
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'

/** A metric reader that collects when asked. */
class OnDemandReader extends MetricReader {
  constructor () {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }

  protected async onShutdown (): Promise<void> {}
  protected async onForceFlush (): Promise<void> {}
}

export interface Otel {
  spans: InMemorySpanExporter
  /** One metric point's value by its name and labels (a counter's sum, a histogram's count, a gauge's value); 0 when absent. */
  value: (name: string, labels?: Record<string, string | number>) => Promise<number>
  collect: () => Promise<ResourceMetrics>
  /** The finished spans. */
  finished: () => ReadableSpan[]
}

/** Registers a tracer provider, a meter provider and the async-hooks context manager globally (once per process). */
export function registerOtel (): Otel {
  const spans = new InMemorySpanExporter()
  const reader = new OnDemandReader()
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }))
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  const collect = async (): Promise<ResourceMetrics> => (await reader.collect()).resourceMetrics
  const value = async (name: string, labels: Record<string, string | number> = {}): Promise<number> => {
    const collected = await collect()
    let total = 0
    for (const scope of collected.scopeMetrics) {
      for (const metric of scope.metrics) {
        if (metric.descriptor.name !== name) continue
        for (const point of metric.dataPoints) {
          if (!Object.entries(labels).every(([key, wanted]) => point.attributes[key] === wanted)) continue
          const v = point.value as number | { count: number }
          total += typeof v === 'number' ? v : v.count
        }
      }
    }
    return total
  }
  return { spans, value, collect, finished: () => spans.getFinishedSpans() }
}
