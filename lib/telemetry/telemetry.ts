// Spans and metrics of the flows and of every store and port call, when an OpenTelemetry SDK records them; nothing else costs more than a flag read.
import { AsyncLocalStorage } from 'node:async_hooks'
import { performance } from 'node:perf_hooks'
import { isJwtLoginError } from '../core/errors.js'
import { eventAttributes } from './attributes.js'
import type { FlowSpec } from './flows.js'
import { Instruments, type GaugeSources } from './metrics.js'
import { metricsRecorded, tracesRecorded, type Attributes, type OtelApi, type OtelContext, type OtelSpan, type OtelTracer } from './otel.js'

/** The instrumentation scope: what the spans and metrics are named after in the host's backend. */
export const SCOPE_NAME = 'fastify-jwt-login'

/** How a flow ended (`jwt_login.outcome`); a refresh's success is `rotated` or `retried`, a reuse `reuse`. */
export type FlowOutcome = 'success' | 'second_factor' | 'refused' | 'locked' | 'rate_limited' | 'error' | 'rotated' | 'retried' | 'reuse'

/** What a flow learns while it runs, from its audit events and its own notes. */
interface FlowState {
  readonly spec: FlowSpec
  readonly span: OtelSpan | undefined
  /** The context with the flow's span: its store and port calls' parent, whatever span a host's instrumentation runs the handler in. */
  readonly context: OtelContext
  readonly events: Set<string>
  provider?: string
  method?: string
  userId?: number
  retried?: true
}

export interface TelemetryOptions {
  /** `@opentelemetry/api`, or `null` when it is not installed. */
  api: OtelApi | null
  /** The `telemetry.userIds` setting in force. */
  userIds: () => boolean
  gauges: GaugeSources
}

/** The locked-user answer (403 / 251), an outcome of its own. */
const USER_LOCKED = 251

/** A thrown value's `error.type`: a jwt-login error's code, else the class's name; never its message. */
function errorType (error: unknown): string {
  if (isJwtLoginError(error)) return error.code
  const name = (error as { constructor?: { name?: unknown } } | null)?.constructor?.name
  return typeof name === 'string' && /^[A-Za-z_$][\w$]{0,99}$/.test(name) ? name : '_OTHER'
}

/** A flow's outcome by what its handler threw, or the status it answered. */
function classify (error: unknown, status: number): { outcome: FlowOutcome, attributes: Attributes } {
  const known = isJwtLoginError(error) ? error : undefined
  const code = error === undefined ? status : known?.statusCode ?? 500
  const attributes: Attributes = {}
  if (error !== undefined) attributes['error.type'] = errorType(error)
  if (known !== undefined) attributes['jwt_login.error_code'] = known.errorCode
  if (known?.errorCode === USER_LOCKED) return { outcome: 'locked', attributes }
  if (code === 429) return { outcome: 'rate_limited', attributes }
  if (code >= 500) return { outcome: 'error', attributes }
  return { outcome: code >= 400 ? 'refused' : 'success', attributes }
}

/** Whether a handler's answer is a promise. */
function isPromise (value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * The plugin's telemetry. `available` when `@opentelemetry/api` loads;
 * `live` once an SDK registered a tracer or a meter provider (looked for at
 * registration and at `ready()`). While it is not live, the wrapped ports
 * and routes call straight through.
 */
export class Telemetry {
  readonly available: boolean
  readonly #api: OtelApi | null
  readonly #userIds: () => boolean
  readonly #gauges: GaugeSources
  readonly #flows = new AsyncLocalStorage<FlowState>()
  #tracer: OtelTracer | undefined
  #instruments: Instruments | undefined
  #live = false

  constructor ({ api, userIds, gauges }: TelemetryOptions) {
    this.#api = api
    this.available = api !== null
    this.#userIds = userIds
    this.#gauges = gauges
    this.refresh()
  }

  get live (): boolean {
    return this.#live
  }

  /** Looks for a registered SDK again: traces from then on, metrics once a meter provider is found. */
  refresh (): void {
    const api = this.#api
    if (api === null) return
    this.#tracer = tracesRecorded(api) ? api.trace.getTracer(SCOPE_NAME) : undefined
    if (this.#instruments === undefined) {
      const meter = api.metrics.getMeter(SCOPE_NAME)
      if (metricsRecorded(api, meter)) this.#instruments = new Instruments(meter, this.#gauges)
    }
    this.#live = this.#tracer !== undefined || this.#instruments !== undefined
  }

  /** The instance closed: its gauges stop reporting. */
  close (): void {
    this.#instruments?.close()
  }

  /**
   * The calls of one port as `run(operation, work)`: straight through
   * without the API or an SDK, else through `call`.
   */
  runner (port: string, system?: string): <T>(operation: string, work: () => Promise<T>) => Promise<T> {
    if (!this.available) return (_operation, work) => work()
    return (operation, work) => this.#live ? this.call(port, operation, system, work) : work()
  }

  /**
   * A store or port call, timed; a span of its own (`<port>.<operation>`)
   * when a span is active (a flow's, or the host's): a store call is a
   * client span with `db.system` when the store names it. In a flow, it is
   * the flow span's child, even when a host's instrumentation made a span of
   * its own around the handler (@fastify/otel's `handler` span).
   */
  call<T> (port: string, operation: string, system: string | undefined, work: () => Promise<T>): Promise<T> {
    const start = performance.now()
    const api = this.#api as OtelApi
    const parent = this.#flows.getStore()?.context ?? api.context.active()
    const store = port === 'store'
    let span: OtelSpan | undefined
    if (this.#tracer !== undefined && api.trace.getSpan(parent) !== undefined) {
      const attributes: Attributes = { 'jwt_login.port': port, 'jwt_login.operation': operation }
      if (store) attributes['db.operation.name'] = operation
      if (system !== undefined) attributes['db.system'] = system
      span = this.#tracer.startSpan(port === operation ? port : `${port}.${operation}`, { kind: store ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL, attributes }, parent)
    }
    let answer: Promise<T>
    try {
      answer = span === undefined ? work() : api.context.with(api.trace.setSpan(parent, span), work)
    } catch (error) {
      answer = Promise.reject(error)
    }
    const ended = (error: unknown): void => {
      const outcome = error === undefined ? 'ok' : 'error'
      const labels: Attributes = { 'jwt_login.operation': operation, 'jwt_login.outcome': outcome }
      if (!store) labels['jwt_login.port'] = port
      const instruments = this.#instruments
      if (instruments !== undefined) (store ? instruments.storeDuration : instruments.portDuration).record((performance.now() - start) / 1000, labels)
      if (span === undefined) return
      if (error !== undefined) {
        span.setAttribute('error.type', errorType(error))
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      span.end()
    }
    answer.then(() => { ended(undefined) }, (error: unknown) => { ended(error ?? 'undefined') })
    return answer
  }

  /**
   * A route's flow: the span `jwt-login.<name>` (a child of `parent`, the
   * host's request span, when the route found one; else of the active
   * span), its outcome, duration and counters. `status` reads the answer's
   * status once the handler settled.
   */
  flow<T> (spec: FlowSpec, route: string, work: () => T, status: () => number, parent?: OtelContext): T {
    const start = performance.now()
    const api = this.#api as OtelApi
    let span: OtelSpan | undefined
    let context = parent ?? api.context.active()
    if (this.#tracer !== undefined) {
      span = this.#tracer.startSpan(`jwt-login.${spec.name}`, { kind: api.SpanKind.INTERNAL, attributes: { 'jwt_login.flow': spec.name, 'http.route': route } }, context)
      context = api.trace.setSpan(context, span)
    }
    const state: FlowState = { spec, span, context, events: new Set() }
    const run = (): T => this.#flows.run(state, work)
    let answer: T
    try {
      answer = span === undefined ? run() : api.context.with(context, run)
    } catch (error) {
      this.#flowEnded(state, start, error, 500)
      throw error
    }
    if (!isPromise(answer)) {
      this.#flowEnded(state, start, undefined, status())
      return answer
    }
    return answer.then((value) => {
      this.#flowEnded(state, start, undefined, status())
      return value
    }, (error: unknown) => {
      this.#flowEnded(state, start, error ?? 'undefined', 500)
      throw error
    }) as T
  }

  /** The second factor a step tries (`totp`, `email`, `passkey`), its method label unless an accepted code names another (`backup_codes`). */
  secondFactorTried (method: string): void {
    const state = this.#flows.getStore()
    if (state !== undefined) state.method ??= method
  }

  /** A refresh answered the successor it had given already (a retry within `refresh.reuseInterval`). */
  retried (): void {
    const state = this.#flows.getStore()
    if (state !== undefined) state.retried = true
  }

  /** An attempt limit locked a subject out (its key: `<kind>:<hash>`). */
  lockout (subjectKey: string): void {
    this.#instruments?.lockouts.add(1, { 'jwt_login.subject': subjectKey.slice(0, subjectKey.lastIndexOf(':')) })
  }

  /**
   * An audit event: noted on the running flow, an event of its span (else
   * of the active span; its safe fields only, see attributes.ts), and a
   * host's lock counted.
   */
  observe (event: string, payload: Readonly<Record<string, unknown>>): void {
    if (!this.#live) return
    const state = this.#flows.getStore()
    if (state !== undefined) {
      state.events.add(event)
      if (typeof payload.provider === 'string') state.provider = payload.provider
      if (event === 'two_factor.code_accepted' && typeof payload.method === 'string') state.method = payload.method
      if (typeof payload.userId === 'number') state.userId = payload.userId
    }
    if (event === 'user.locked') this.#instruments?.lockouts.add(1, { 'jwt_login.subject': 'user' })
    if (this.#tracer === undefined) return
    const api = this.#api as OtelApi
    const span = state?.span ?? api.trace.getSpan(api.context.active())
    if (span?.isRecording() === true) span.addEvent(event, eventAttributes(event, payload, this.#userIds()))
  }

  #flowEnded (state: FlowState, start: number, error: unknown, status: number): void {
    const { spec, span, events } = state
    const classified = classify(error, status)
    let outcome = classified.outcome
    if (outcome === 'success' && events.has('two_factor.challenge_issued')) outcome = 'second_factor'
    if (spec.counter?.kind === 'refresh') {
      if (outcome === 'success') outcome = state.retried === true ? 'retried' : 'rotated'
      else if (events.has('refresh.reused')) outcome = 'reuse'
    }
    if (span !== undefined) {
      span.setAttributes({ ...classified.attributes, 'jwt_login.outcome': outcome })
      if (state.userId !== undefined && this.#userIds()) span.setAttribute('user.id', String(state.userId))
      if (outcome === 'error') span.setStatus({ code: (this.#api as OtelApi).SpanStatusCode.ERROR })
      span.end()
    }
    const instruments = this.#instruments
    if (instruments === undefined) return
    instruments.flowDuration.record((performance.now() - start) / 1000, { 'jwt_login.flow': spec.name, 'jwt_login.outcome': outcome })
    const counter = spec.counter
    if (counter === undefined) return
    const labels: Attributes = { 'jwt_login.outcome': outcome }
    if (counter.kind === 'sign_in') {
      instruments.signIns.add(1, { ...labels, 'jwt_login.method': counter.method })
      if (counter.method === 'provider') instruments.providerSignIns.add(1, { ...labels, 'jwt_login.provider': state.provider ?? 'unknown' })
    } else if (counter.kind === 'second_factor') {
      instruments.secondFactors.add(1, { ...labels, 'jwt_login.method': state.method ?? 'unknown' })
    } else if (counter.kind === 'refresh') {
      instruments.refreshes.add(1, labels)
    } else {
      instruments.resets.add(1, { ...labels, 'jwt_login.step': counter.step })
    }
  }
}

/** The options of telemetry that records nothing: no API, so its setting and gauges are never read (no user IDs, no queue). */
export const NO_TELEMETRY: Readonly<TelemetryOptions> = { api: null, userIds: () => false, gauges: { hashingQueue: () => ({ signIns: 0, newPasswords: 0 }) } }

/** Telemetry that records nothing: without `@opentelemetry/api` (and in direct flow tests). */
export function withoutTelemetry (): Telemetry {
  return new Telemetry(NO_TELEMETRY)
}
