// The instruments: counters by bounded labels, duration histograms, and the gauges read at each collection.
import type { Attributes, OtelMeter, OtelObservable, OtelObservableResult } from './otel.js'

/** Bucket bounds of the duration histograms, in seconds: 250 ms (a sign-in's target) is one of them. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

interface Counter { add: (value: number, attributes?: Attributes) => void }
interface Histogram { record: (value: number, attributes?: Attributes) => void }

/** What the gauges read when the meter collects. */
export interface GaugeSources {
  /** Password hashes waiting for a slot, per queue. */
  hashingQueue: () => { signIns: number, newPasswords: number }
  /** The memory store's entries as a share of their bound (0 to 1), per kind; absent with another store. */
  memoryStore?: () => { state: number, counters: number }
}

/** The plugin's instruments on one meter (see docs/observability.md for each). */
export class Instruments {
  readonly signIns: Counter
  readonly secondFactors: Counter
  readonly refreshes: Counter
  readonly lockouts: Counter
  readonly resets: Counter
  readonly providerSignIns: Counter
  readonly flowDuration: Histogram
  readonly storeDuration: Histogram
  readonly portDuration: Histogram

  constructor (meter: OtelMeter, gauges: GaugeSources) {
    this.signIns = meter.createCounter('jwt_login.sign_ins', { description: 'Sign-ins by first-factor method and outcome', unit: '{sign_in}' })
    this.secondFactors = meter.createCounter('jwt_login.second_factors', { description: 'Second-factor steps by method and outcome', unit: '{step}' })
    this.refreshes = meter.createCounter('jwt_login.refreshes', { description: 'Refresh-token uses by outcome', unit: '{refresh}' })
    this.lockouts = meter.createCounter('jwt_login.lockouts', { description: 'Subjects locked out by an attempt limit, or users locked by the host', unit: '{lockout}' })
    this.resets = meter.createCounter('jwt_login.resets', { description: 'Password reset steps by outcome', unit: '{step}' })
    this.providerSignIns = meter.createCounter('jwt_login.provider_sign_ins', { description: 'Provider (OpenID, OAuth 2.0) sign-ins by provider and outcome', unit: '{sign_in}' })
    const advice = { explicitBucketBoundaries: DURATION_BUCKETS }
    this.flowDuration = meter.createHistogram('jwt_login.flow.duration', { description: 'Duration of each flow, from its handler to its answer', unit: 's', advice })
    this.storeDuration = meter.createHistogram('jwt_login.store.duration', { description: 'Duration of each state-store call', unit: 's', advice })
    this.portDuration = meter.createHistogram('jwt_login.port.duration', { description: "Duration of each call to a host's port (users, mailer, two-factor, passkeys, gates)", unit: 's', advice })
    this.#observe(meter.createObservableGauge('jwt_login.hashing.queue', { description: 'Password hashes waiting for a slot', unit: '{hash}' }), (result) => {
      const { signIns, newPasswords } = gauges.hashingQueue()
      result.observe(signIns, { 'jwt_login.queue': 'sign_ins' })
      result.observe(newPasswords, { 'jwt_login.queue': 'new_passwords' })
    })
    const memoryStore = gauges.memoryStore
    if (memoryStore === undefined) return
    this.#observe(meter.createObservableGauge('jwt_login.memory_store.usage', { description: "The memory store's entries as a share of their bound", unit: '1' }), (result) => {
      const { state, counters } = memoryStore()
      result.observe(state, { 'jwt_login.entries': 'state' })
      result.observe(counters, { 'jwt_login.entries': 'counters' })
    })
  }

  readonly #callbacks: Array<() => void> = []

  #observe (gauge: OtelObservable, callback: (result: OtelObservableResult) => void): void {
    gauge.addCallback(callback)
    this.#callbacks.push(() => { gauge.removeCallback(callback) })
  }

  /** The gauges stop reading this instance (closed): another instance on the same meter reports its own. */
  close (): void {
    for (const remove of this.#callbacks.splice(0)) remove()
  }
}
