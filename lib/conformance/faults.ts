/**
 * Fault injection for any port (the state store, the user adapter, the
 * two-factor and passkey ports, the mailer): a wrapper counts the calls made
 * through it and, when armed, fails or stalls the k-th one.
 *
 * - `before`: the call is not made and rejects (the store or host is down).
 * - `after`: the call is made on the inner object, then rejects (a command
 *   that timed out on the client but ran; a write that landed but answered
 *   an error).
 * - `stall`: the call waits until `release()` (or `disarm()`, or the plan's
 *   `stallMs`), then is made: a slow network, for the plugin's deadlines.
 *
 * Every function property is wrapped (through a Proxy, so methods added to a
 * port later are counted too) except `close`, `attachLogger` and the sync `toPublicUser`.
 * Calls go to the inner object with itself as `this`, so its own internal
 * calls are not counted.
 */

export type FaultMode = 'before' | 'after' | 'stall'

export interface FaultPlan {
  /** The call to fail, counted from 1 since `arm`. */
  k: number
  mode: FaultMode
  /** With `stall`: how long the call waits before it is made (default: until `release` or `disarm`). */
  stallMs?: number
}

export interface FaultCall {
  /** 1-based position since `arm`. */
  n: number
  method: string
  /** The first argument, shortened: a store key (the keys of a getMany, space-separated), an email, a user id; never a later argument (a password). */
  key: string
}

/** The error an injected fault rejects with. */
export class InjectedFault extends Error {
  readonly call: FaultCall
  readonly mode: FaultMode

  constructor (call: FaultCall, mode: FaultMode) {
    super(`injected fault (${mode}) at call ${call.n}: ${call.method} ${call.key}`)
    this.name = 'InjectedFault'
    this.call = call
    this.mode = mode
  }
}

/**
 * One fault switch; several wrappers may share one (a user adapter and a
 * two-factor port over one database count as one host, so "the k-th host
 * call" spans both).
 */
export class Faults {
  #armed = false
  #plan: FaultPlan | null = null
  #calls: FaultCall[] = []
  #fired: FaultCall | null = null
  #stalled: Array<() => void> = []

  /** Starts counting from zero; with a plan, the plan's call will fail or stall. Without one, it only counts. */
  arm (plan: FaultPlan | null = null): void {
    if (plan !== null && (!Number.isSafeInteger(plan.k) || plan.k < 1)) throw new TypeError('the call to fail is counted from 1')
    this.release()
    this.#armed = true
    this.#plan = plan
    this.#calls = []
    this.#fired = null
  }

  /** Stops counting and failing, lets a stalled call go on; answers the number of calls seen since `arm`. */
  disarm (): number {
    this.#armed = false
    this.#plan = null
    this.release()
    return this.#calls.length
  }

  /** Lets every stalled call go on. */
  release (): void {
    const stalled = this.#stalled
    this.#stalled = []
    for (const go of stalled) go()
  }

  get armed (): boolean {
    return this.#armed
  }

  /** The calls seen since the last `arm`, in order. */
  get calls (): readonly FaultCall[] {
    return this.#calls
  }

  /** The call that was failed or stalled since the last `arm`, or `null`. */
  get fired (): FaultCall | null {
    return this.#fired
  }

  /** The calls as `k → method:key` lines, the faulted one marked. */
  describe (): string {
    if (this.#calls.length === 0) return '(no calls)'
    return this.#calls.map(c => `${c.n} → ${c.method}:${c.key}${c === this.#fired ? '  <= fault' : ''}`).join('\n')
  }

  /** Runs one call of a wrapped port under the switch. */
  async invoke<T> (method: string, key: string, run: () => Promise<T>): Promise<T> {
    const call: FaultCall = { n: this.#calls.length + 1, method, key }
    this.#calls.push(call)
    const plan = this.#plan
    if (plan === null || plan.k !== call.n) return await run()
    this.#fired = call
    if (plan.mode === 'before') throw new InjectedFault(call, 'before')
    if (plan.mode === 'stall') {
      await this.#stall(plan.stallMs)
      return await run()
    }
    await run()
    throw new InjectedFault(call, 'after')
  }

  async #stall (ms: number | undefined): Promise<void> {
    await new Promise<void>(resolve => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms)
      this.#stalled.push(() => { clearTimeout(timer); resolve() })
    })
  }
}

const NEVER_WRAPPED = new Set(['close', 'toPublicUser', 'constructor', 'attachLogger'])
const MAX_KEY = 60

/** A short view of a call's first argument (a key, an email, a user id; never a password). */
function keyOf (args: unknown[]): string {
  const first = args[0]
  if (first === undefined) return ''
  // the keys of a getMany, each shortened
  if (Array.isArray(first)) return first.map(key => keyOf([key])).join(' ')
  if (typeof first === 'string') return first.length > MAX_KEY ? `${first.slice(0, MAX_KEY)}…` : first
  if (typeof first === 'number') return String(first)
  if (first !== null && typeof first === 'object') {
    if ('ID' in first) return `user=${String(first.ID)}`
    if ('email' in first) return String(first.email)
    if ('to' in first) return `to=${String(first.to)}`
  }
  return typeof first
}

/**
 * The port, counted and failable through `faults` (a new switch by
 * default, on the wrapper as `.faults`). Set up the inner port through the
 * inner object (seeding users is not a call of the plugin's).
 */
export function faultyPort<P extends object> (inner: P, faults: Faults = new Faults()): P & { readonly faults: Faults } {
  const wrapped = new Map<string, (...args: unknown[]) => unknown>()
  return new Proxy(inner, {
    get (target, property) {
      if (property === 'faults') return faults
      // the inner object as receiver: getters and methods with private fields keep working
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const fn = value as (...args: unknown[]) => unknown
      if (typeof property !== 'string' || NEVER_WRAPPED.has(property)) return fn.bind(target)
      let wrapper = wrapped.get(property)
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          if (!faults.armed) return fn.apply(target, args)
          return faults.invoke(property, keyOf(args), async () => await fn.apply(target, args))
        }
        wrapped.set(property, wrapper)
      }
      return wrapper
    }
  }) as P & { readonly faults: Faults }
}

/** Runs `action` with the switch counting only; answers its result and the calls it made. */
export async function measure<T> (faults: Faults, action: () => Promise<T>): Promise<{ result: T, calls: FaultCall[] }> {
  faults.arm()
  try {
    const result = await action()
    return { result, calls: [...faults.calls] }
  } finally {
    faults.disarm()
  }
}

/** One run of a sweep: the plan, the call it hit, and how the action ended. */
export interface SweepOutcome<T> {
  plan: FaultPlan
  /** The call the plan failed (`null`: the action made fewer calls this time). */
  fired: FaultCall | null
  /** The calls of this run, the faulted one marked, for a failure message. */
  calls: string
  /**
   * Whether the calls before the faulted one were other methods than the
   * unfaulted run's: state that `reset` does not put back (a cache, a
   * counter) changed the flow, so the k-th call is not the one it was.
   */
  drifted: boolean
  result?: T
  error?: unknown
}

export interface SweepOptions<T> {
  faults: Faults
  /** Puts the world back before each run (fresh users, an empty store); the unfaulted run counts the calls after it too. */
  reset?: () => Promise<void>
  /** The action under test, such as one sign-in through `fastify.inject`: it must not throw for an answer it is given. */
  run: () => Promise<T>
  /** Judges one faulted run (the answer, then the state it left); throw to fail. A stalled call is still held while it runs. */
  check: (outcome: SweepOutcome<T>) => Promise<void> | void
  /** The fault modes to try at every call (default `before` and `after`). */
  modes?: readonly FaultMode[]
  /**
   * With `stall` among the modes (required then): how long the action may
   * wait on the stalled call, which is held until `check` has judged the
   * run (its late write must not land first). The action is expected to
   * give up by its own deadline; one that is still waiting after `stallMs`
   * is an outcome with an error saying so.
   */
  stallMs?: number
}

/** The error of a run that still waited on a stalled call after `stallMs`: the action has no deadline of its own. */
export class StalledRunError extends Error {
  constructor (stallMs: number) {
    super(`the action still waited on the stalled call after ${stallMs} ms: it has no deadline of its own`)
    this.name = 'StalledRunError'
  }
}

/** The methods of the calls before the k-th, to compare a run's path with the unfaulted one's. */
const pathBefore = (calls: readonly FaultCall[], k: number): string => calls.slice(0, k - 1).map(call => call.method).join(' ')

/** Runs the action under the plan: its outcome, and the run itself when a stall cut the wait short (to be awaited after the release). */
async function runOnce<T> (options: SweepOptions<T>, plan: FaultPlan, unfaulted: readonly FaultCall[]): Promise<{ outcome: SweepOutcome<T>, pending: Promise<unknown>, made: number }> {
  const { faults, run } = options
  faults.arm(plan)
  const outcome: SweepOutcome<T> = { plan, fired: null, calls: '', drifted: false }
  const running = run().then(result => { outcome.result = result }, (error: unknown) => { outcome.error = error })
  let timer: NodeJS.Timeout | undefined
  const cut = plan.mode === 'stall'
    ? new Promise<void>(resolve => { timer = setTimeout(() => { outcome.error = new StalledRunError(options.stallMs as number); resolve() }, options.stallMs) })
    : running
  await Promise.race([running, cut])
  clearTimeout(timer)
  outcome.fired = faults.fired
  outcome.calls = faults.describe()
  outcome.drifted = pathBefore(faults.calls, plan.k) !== pathBefore(unfaulted, plan.k)
  return { outcome, pending: running, made: faults.calls.length }
}

/**
 * jwt-login's fault sweep for an author's own port: runs `run` once
 * unfaulted to count its N calls, then once per call and mode with that
 * call failing, and hands each outcome to `check`. It goes past N while a
 * run that failed the k-th call had drifted or made calls after it (such a
 * flow may have more calls to fail; the last of those runs may find none,
 * `fired` null). Answers the outcomes.
 */
export async function sweepFaults<T> (options: SweepOptions<T>): Promise<Array<SweepOutcome<T>>> {
  const { faults, reset, check } = options
  const modes = options.modes ?? ['before', 'after']
  if (modes.includes('stall') && !(typeof options.stallMs === 'number' && options.stallMs > 0)) throw new TypeError('a sweep with stall needs stallMs: how long the action may wait on the stalled call')
  await reset?.()
  const { calls } = await measure(faults, options.run)
  const outcomes: Array<SweepOutcome<T>> = []
  // a flow whose path varies may make more calls than the unfaulted run: go on while one may have more, within a bound
  for (let k = 1, more = false; k <= calls.length || (more && k <= 4 * calls.length + 16); k++) {
    more = false
    for (const mode of modes) {
      await reset?.()
      const { outcome, pending, made } = await runOnce(options, { k, mode }, calls)
      try {
        await check(outcome)
      } finally {
        faults.disarm()
        await pending
      }
      more ||= outcome.fired !== null && (outcome.drifted || made > k)
      outcomes.push(outcome)
    }
  }
  return outcomes
}
