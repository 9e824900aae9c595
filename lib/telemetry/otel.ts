// The optional peer `@opentelemetry/api`, loaded when it is installed, and the few of its shapes the plugin uses.
import { createRequire } from 'node:module'

/** A value an attribute may hold. */
export type AttributeValue = string | number | boolean

export type Attributes = Record<string, AttributeValue>

/** The span of the API as the plugin uses it. */
export interface OtelSpan {
  setAttribute: (key: string, value: AttributeValue) => unknown
  setAttributes: (attributes: Attributes) => unknown
  addEvent: (name: string, attributes?: Attributes) => unknown
  setStatus: (status: { code: number }) => unknown
  isRecording: () => boolean
  end: () => void
}

/** An opaque OpenTelemetry context. */
export type OtelContext = object

export interface OtelTracer {
  startSpan: (name: string, options: { kind: number, attributes?: Attributes }, context?: OtelContext) => OtelSpan
}

export interface OtelObservableResult {
  observe: (value: number, attributes?: Attributes) => void
}

/** An observable instrument: its callbacks run at each collection. */
export interface OtelObservable {
  addCallback: (callback: (result: OtelObservableResult) => void) => void
  removeCallback: (callback: (result: OtelObservableResult) => void) => void
}

export interface OtelMeter {
  createCounter: (name: string, options: { description: string, unit?: string }) => { add: (value: number, attributes?: Attributes) => void }
  createHistogram: (name: string, options: { description: string, unit?: string, advice?: { explicitBucketBoundaries?: number[] } }) => { record: (value: number, attributes?: Attributes) => void }
  createObservableGauge: (name: string, options: { description: string, unit?: string }) => OtelObservable
}

/** The parts of `@opentelemetry/api` the plugin calls. */
export interface OtelApi {
  trace: {
    getTracer: (name: string, version?: string) => OtelTracer
    getTracerProvider: () => unknown
    getSpan: (context: OtelContext) => OtelSpan | undefined
    setSpan: (context: OtelContext, span: OtelSpan) => OtelContext
  }
  context: {
    active: () => OtelContext
    with: <A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: OtelContext, fn: F, thisArg?: unknown, ...args: A) => ReturnType<F>
  }
  metrics: {
    getMeter: (name: string, version?: string) => OtelMeter
  }
  createNoopMeter: () => OtelMeter
  ProxyTracerProvider: new () => { getDelegate: () => unknown }
  SpanKind: { INTERNAL: number, CLIENT: number }
  SpanStatusCode: { ERROR: number }
}

const load = createRequire(import.meta.url)

/**
 * `@opentelemetry/api` when it can be loaded (one copy per process, as the
 * API itself keeps its globals), else `null`: nothing is recorded then, and
 * the plugin's ports and routes run unwrapped.
 */
export function loadOtel (name = '@opentelemetry/api'): OtelApi | null {
  try {
    return load(name) as OtelApi
  } catch {
    return null
  }
}

/**
 * Whether an SDK registered a tracer provider: the API's global proxy
 * delegates to its no-op provider until then (a new proxy's delegate is
 * that same no-op provider).
 */
export function tracesRecorded (api: OtelApi): boolean {
  const provider = api.trace.getTracerProvider() as { getDelegate?: () => unknown }
  const noop = new api.ProxyTracerProvider().getDelegate()
  return typeof provider.getDelegate !== 'function' || provider.getDelegate() !== noop
}

/** Whether an SDK registered a meter provider: without one, every meter is the API's no-op meter. */
export function metricsRecorded (api: OtelApi, meter: OtelMeter): boolean {
  return meter !== api.createNoopMeter()
}
