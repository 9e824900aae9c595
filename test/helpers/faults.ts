/**
 * Fault injection for the state store and the host adapters: a wrapper counts
 * the calls the plugin makes and, when armed, fails the k-th one.
 *
 * - `before`: the call is not made and rejects (the store or host is down).
 * - `after`: the call is made on the inner object, then rejects (a Redis
 *   command that timed out on the client but ran; a host write that landed
 *   but answered an error).
 *
 * Every function property is wrapped (through a Proxy, so methods added to a
 * port later are counted too) except `close` and the sync `toPublicUser`.
 * Calls go to the inner object with itself as `this`, so its own internal
 * calls (MemoryUserAdapter.createUser calling addUser) are not counted.
 */
import type { StateStore } from '../../lib/index.js'

export type FaultMode = 'before' | 'after'

export interface FaultPlan {
  /** The call to fail, counted from 1 since `arm`. */
  k: number
  mode: FaultMode
}

export interface FaultCall {
  /** 1-based position since `arm`. */
  n: number
  method: string
  /** The first argument, shortened: a store key (the keys of a getMany, space-separated), an email, a user id. */
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
 * One fault switch; several wrappers may share one (the user adapter and the
 * two-factor port count as one host, so "the k-th adapter call" spans both).
 */
export class Faults {
  #armed = false
  #plan: FaultPlan | null = null
  #calls: FaultCall[] = []
  #fired: FaultCall | null = null

  /** Starts counting from zero; with a plan, the plan's call will fail. Without one, it only counts. */
  arm (plan: FaultPlan | null = null): void {
    this.#armed = true
    this.#plan = plan
    this.#calls = []
    this.#fired = null
  }

  /** Stops counting and failing; answers the number of calls seen since `arm`. */
  disarm (): number {
    this.#armed = false
    this.#plan = null
    return this.#calls.length
  }

  get armed (): boolean {
    return this.#armed
  }

  /** The calls seen since the last `arm`, in order. */
  get calls (): readonly FaultCall[] {
    return this.#calls
  }

  /** The call that was failed since the last `arm`, or `null`. */
  get fired (): FaultCall | null {
    return this.#fired
  }

  /** The calls as `k → method:key` lines, the failed one marked. */
  describe (): string {
    if (this.#calls.length === 0) return '(no calls)'
    return this.#calls.map(c => `${c.n} → ${c.method}:${c.key}${c === this.#fired ? '  <= fault' : ''}`).join('\n')
  }

  /** Runs one call of the wrapped object under the switch. */
  async invoke<T> (method: string, key: string, run: () => Promise<T>): Promise<T> {
    const call: FaultCall = { n: this.#calls.length + 1, method, key }
    this.#calls.push(call)
    const plan = this.#plan
    if (plan === null || plan.k !== call.n) return await run()
    this.#fired = call
    if (plan.mode === 'before') throw new InjectedFault(call, 'before')
    await run()
    throw new InjectedFault(call, 'after')
  }
}

const NEVER_WRAPPED = new Set(['close', 'toPublicUser', 'constructor'])
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
  }
  return typeof first
}

function wrap<T extends object> (inner: T, faults: Faults, unwrapped: ReadonlySet<string>): T & { readonly faults: Faults } {
  const wrapped = new Map<string, (...args: unknown[]) => unknown>()
  return new Proxy(inner, {
    get (target, property) {
      if (property === 'faults') return faults
      // the inner object as receiver: getters and methods with private fields keep working
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const fn = value as (...args: unknown[]) => unknown
      if (typeof property !== 'string' || unwrapped.has(property)) return fn.bind(target)
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
  }) as T & { readonly faults: Faults }
}

/** The store, counted and failable (every method but `close`). */
export function faultyStore<S extends StateStore> (inner: S, faults: Faults = new Faults()): S & { readonly faults: Faults } {
  return wrap(inner, faults, NEVER_WRAPPED)
}

/**
 * A host adapter (user adapter or two-factor port), counted and failable.
 * Every function but `toPublicUser` and `close` is wrapped: call setup
 * helpers (addUser, enable, …) on the inner object, not on the wrapper.
 */
export function faultyAdapter<A extends object> (inner: A, faults: Faults = new Faults()): A & { readonly faults: Faults } {
  return wrap(inner, faults, NEVER_WRAPPED)
}

/** A rule on a store call: `true` makes it fail. */
export type FaultRule = (method: string, key: string) => boolean

/**
 * Whether `rule` fails this call. A `getMany` is also a `get` of each of its
 * keys, so a rule on reads covers batched reads; a `readAndIncrement` is also
 * a `getMany` of the keys it reads and an `increment` of each counter.
 */
function ruleFails (rule: FaultRule, method: string, args: unknown[]): boolean {
  const first = args[0]
  if (method === 'readAndIncrement' && Array.isArray(first)) {
    const counters = (args[1] as Array<{ key: string }>).map(counter => counter.key)
    return rule(method, [...first, ...counters].join(' ')) || (first.length > 0 && ruleFails(rule, 'getMany', [first])) || counters.some(key => rule('increment', key))
  }
  if (method === 'getMany' && Array.isArray(first)) {
    return rule(method, first.join(' ')) || first.some(key => rule('get', String(key)))
  }
  return rule(method, String(first))
}

/**
 * A store whose calls fail, without running, while `rule` says so (`null`
 * lets everything through): for failures named by call rather than by
 * position. A method assigned to it replaces the store's own.
 */
export function ruledStore<S extends StateStore> (inner: S): S & { rule: FaultRule | null } {
  const control = { rule: null as FaultRule | null }
  const replaced = new Map<string | symbol, unknown>()
  return new Proxy(inner, {
    get (target, property) {
      if (property === 'rule') return control.rule
      if (replaced.has(property)) return replaced.get(property)
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function' || typeof property !== 'string' || NEVER_WRAPPED.has(property)) {
        return typeof value === 'function' ? value.bind(target) : value
      }
      return async (...args: unknown[]) => {
        if (control.rule !== null && ruleFails(control.rule, property, args)) throw new Error(`injected ${property} failure`)
        return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
      }
    },
    set (_target, property, value) {
      if (property === 'rule') control.rule = value as FaultRule | null
      else replaced.set(property, value)
      return true
    }
  }) as S & { rule: FaultRule | null }
}

/** Runs `action` with the switch counting only; answers its result and the calls it made (N = `calls.length`). */
export async function measure<T> (faults: Faults, action: () => Promise<T>): Promise<{ result: T, calls: FaultCall[] }> {
  faults.arm()
  try {
    const result = await action()
    return { result, calls: [...faults.calls] }
  } finally {
    faults.disarm()
  }
}

/** `inner` as another writer always beats it: every compare-and-set answers `false`, the rest is `inner`'s. */
export function contendedStore (inner: StateStore): StateStore {
  return {
    get: async (key) => await inner.get(key),
    set: async (key, value, ttlMs) => { await inner.set(key, value, ttlMs) },
    consume: async (key) => await inner.consume(key),
    increment: async (key, ttlMs) => await inner.increment(key, ttlMs),
    compareAndSet: async () => false,
    delete: async (key) => { await inner.delete(key) }
  }
}
