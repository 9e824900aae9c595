// What the state-store rules share: their settings, fresh key names, and assertions whose messages show what was seen.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import { optionalMethod, settleAll } from './port-helpers.js'
import { inSuiteRealm } from './realm.js'
import type { Rule } from './runner.js'
import type { StateStore } from '../store/types.js'

/** The settings every rule receives: `StateStoreSuiteOptions` with their defaults filled in. */
export interface StateStoreSettings {
  ttlGranularityMs: number
  briefTtlMs: number
  wait: (ms: number) => Promise<void>
  largeValueBytes: number
  manyKeys: number
  parallelism: number
}

/** A state-store rule. */
export type StoreRule = Rule<StateStore, StateStoreSettings>

/** A TTL no rule waits out: ten minutes, so a store without its own cleanup keeps a run's leftovers briefly. */
export const LONG_TTL_MS = 600_000

/** The settings as given, checked, with the defaults for those not given. */
export function settingsFrom (
  given: Partial<Omit<StateStoreSettings, 'parallelism'>>,
  parallelism: number
): StateStoreSettings {
  const whole = (name: string, value: number, least: number): number => {
    if (!Number.isSafeInteger(value) || value < least) throw new TypeError(`${name} must be an integer of at least ${least}`)
    return value
  }
  const ttlGranularityMs = whole('ttlGranularityMs', given.ttlGranularityMs ?? 50, 0)
  const briefTtlMs = whole('briefTtlMs', given.briefTtlMs ?? 1000, 2)
  // expiry is seen within the granularity: one as long as the brief TTL could not tell an expired value from one never kept
  if (briefTtlMs <= ttlGranularityMs) throw new TypeError('briefTtlMs must be longer than ttlGranularityMs')
  const wait = given.wait ?? sleepAtLeast
  if (typeof wait !== 'function') throw new TypeError('wait must be a function that lets the given milliseconds pass for the store')
  return {
    ttlGranularityMs,
    briefTtlMs,
    wait,
    largeValueBytes: whole('largeValueBytes', given.largeValueBytes ?? 64 * 1024, 1),
    manyKeys: whole('manyKeys', given.manyKeys ?? 1000, 1),
    parallelism
  }
}

/**
 * The default `wait`: sleeps until `ms` have passed by the wall clock. A
 * timer may fire a millisecond early by `Date.now()`, and a store on the
 * wall clock (Redis, MemoryStore without a clock) would then answer a
 * millisecond more left than a rule allows.
 */
export async function sleepAtLeast (ms: number): Promise<void> {
  const until = Date.now() + ms
  for (let left = ms; left > 0; left = until - Date.now()) await sleep(left)
}

/** Names for one rule's keys. */
export interface Keys {
  /** A key of this run alone: stores on a shared server never see another run's keys. */
  (name: string): string
  /**
   * A key of this run in one atomic unit with the others named so: they
   * share a `{…}` hash tag, which a Redis Cluster keeps in one slot, since
   * `AtomicBatch` promises its guarantees within one unit only.
   */
  unit: (name: string) => string
}

/** Fresh key names for one rule, random for each run. */
export function keysOf (): Keys {
  const run = randomUUID()
  return Object.assign((name: string) => `jwt-login-conformance:${run}:${name}`, {
    unit: (name: string) => `jwt-login-conformance:{${run}}:${name}`
  })
}

/** The optional methods of a store a rule `needs`. */
type OptionalMethod = 'getMany' | 'readAndIncrement' | 'attachLogger' | 'close'

/** An optional method of the store, bound to it: the rule runs only when `supports` says the store has it (its `needs`), and fails naming it when it does not. */
export function methodOf<K extends OptionalMethod> (store: StateStore, name: K): NonNullable<StateStore[K]> {
  return optionalMethod(store, name, 'the store')
}

/** A value as a message shows it: JSON (a bigint with its `n`), long strings cut, with their length. */
export function show (value: unknown): string {
  if (typeof value === 'string' && value.length > 120) return `${JSON.stringify(value.slice(0, 60))}… (${value.length} characters)`
  const text = String(JSON.stringify(value, (_, inner: unknown) => typeof inner === 'bigint' ? `${inner}n` : inner))
  return text.length > 400 ? `${text.slice(0, 400)}…` : text
}

/** Fails the rule unless `actual` deeply and strictly equals `expected`; the message says what was expected and what came. */
export function expectSame (actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(inSuiteRealm(actual), expected, `${what}: expected ${show(expected)}, got ${show(actual)}`)
}

/** Fails the rule with `message` unless `condition` holds. */
export function expectThat (condition: boolean, message: string): asserts condition {
  assert.ok(condition, message)
}

/**
 * Checks a value read back before its TTL ended. When it is not what was
 * written but the read came later than the TTL in real time, the machine
 * was too slow for `briefTtlMs`, and the message says so instead.
 */
export function expectReadBack (actual: unknown, expected: unknown, since: number, ttlMs: number, what: string): void {
  const elapsed = Date.now() - since
  if (!isDeepStrictEqual(inSuiteRealm(actual), expected) && elapsed >= ttlMs) {
    assert.fail(`${what}: read back ${elapsed} ms after the write, not within its ttlMs of ${ttlMs} ms; raise briefTtlMs (and the runner's per-test timeout with it)`)
  }
  expectSame(actual, expected, what)
}

/** `count` calls of `call` at once, none waiting for another; their answers in the order made. */
export async function atOnce<T> (count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  return await settleAll(Array.from({ length: count }, async (_, i) => await call(i)))
}

/** `call` for each item, at most `width` at a time; after a failure no new call starts. */
export async function eachAtMost<T> (items: readonly T[], width: number, call: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0
  let failed = false
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const i = next++
      try {
        await call(items[i] as T, i)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await settleAll(Array.from({ length: Math.min(width, items.length) }, worker))
}

/** The numbers 1 to `n`, as concurrent counts of one counter must be once sorted. */
export function oneTo (n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1)
}
