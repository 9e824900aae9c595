/**
 * The fault helpers of the test suite: the published wrapper
 * (fastify-jwt-login/conformance) under the names the tests use, and the
 * store wrappers for failures named by call rather than by position.
 */
import type { StateStore } from '../../lib/index.js'
import { Faults, faultyPort } from '../../lib/conformance/faults.js'

export { Faults, InjectedFault, measure, type FaultCall, type FaultMode, type FaultPlan } from '../../lib/conformance/faults.js'

const NEVER_WRAPPED = new Set(['close', 'toPublicUser', 'constructor', 'attachLogger'])

/** The store, counted and failable (every method but `close`). */
export function faultyStore<S extends StateStore> (inner: S, faults: Faults = new Faults()): S & { readonly faults: Faults } {
  return faultyPort(inner, faults)
}

/**
 * A host adapter (user adapter or two-factor port), counted and failable.
 * Every function but `toPublicUser` and `close` is wrapped: call setup
 * helpers (addUser, enable, …) on the inner object, not on the wrapper.
 */
export function faultyAdapter<A extends object> (inner: A, faults: Faults = new Faults()): A & { readonly faults: Faults } {
  return faultyPort(inner, faults)
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
