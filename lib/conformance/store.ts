// The StateStore conformance suite: the port's written contract (lib/store/types.ts), one test per rule, on any test runner.
import { STATE_STORE_MANIFEST, supportsOf } from '../adapters/manifest.js'
import type { StateStore } from '../store/types.js'
import { declareSuite, parallelismOf, type SuiteOptions } from './runner.js'
import { BATCH_RULES } from './store-batch.js'
import { COUNTER_RULES } from './store-counters.js'
import { KEY_PAIR_RULES } from './store-key-pairs.js'
import { KEY_RULES, PORT_RULES } from './store-keys.js'
import { settingsFrom, type StoreRule } from './store-kit.js'
import { VALUE_RULES } from './store-values.js'

export type { StateStoreSettings } from './store-kit.js'

/**
 * What `stateStoreSuite` takes: `create` resolves a fresh `StateStore`. The
 * suite names its keys at random for each test, so stores on one shared
 * server (one Redis, one table) never see one another's keys; `destroy` may
 * remove them. A store with `close` is closed by the last rule, and
 * `destroy` still runs after it: a `destroy` that closes the store must let
 * it be closed twice.
 */
export interface StateStoreSuiteOptions extends SuiteOptions<StateStore> {
  /**
   * How late after its TTL an expired value or counter may still be seen
   * (default 50 ms): a rule waits the TTL and this long, then expects it gone.
   * A value must still be there this long before its TTL ends, and the time
   * left `increment` answers may be off by this much either way (a store on
   * whole-second timestamps passes with 1000 and a `briefTtlMs` of 2000).
   */
  ttlGranularityMs?: number
  /**
   * A TTL short enough to wait out, long enough to read the value back
   * first (default 1000 ms); it must be longer than `ttlGranularityMs`.
   * With the defaults each rule ends within the 5 s jest and vitest give a
   * test; the longest may wait about twice this TTL and a second more, so a
   * longer one (or a larger `ttlGranularityMs`) needs the runner's per-test
   * timeout raised with it (jest and vitest: `testTimeout`).
   */
  briefTtlMs?: number
  /**
   * Lets at least `ms` pass for the store (default: a real sleep, until
   * `Date.now()` has moved on by `ms`; a bare `setTimeout` may wake a
   * millisecond early). A store on an injected clock passes one that
   * advances the clock.
   */
  wait?: (ms: number) => Promise<void>
  /** The size of the large value that must round-trip, in bytes (default 64 KiB). */
  largeValueBytes?: number
  /** How many keys one rule writes and reads back (default 1000). */
  manyKeys?: number
}

/**
 * The rules, in the order the suite declares them: values and their TTL,
 * consume, compareAndSet, delete; counters; keys and values as they are;
 * getMany; each operation on its own key alone; readAndIncrement; the order
 * of calls; attachLogger; close last.
 */
export const stateStoreRules: readonly StoreRule[] = [...VALUE_RULES, ...COUNTER_RULES, ...KEY_RULES, ...KEY_PAIR_RULES, ...BATCH_RULES, ...PORT_RULES]

/**
 * Declares one test per rule of the `StateStore` contract on `options.test`;
 * a rule that needs an optional method or `ordered` is skipped, saying so,
 * on a store without it.
 */
export async function stateStoreSuite (options: StateStoreSuiteOptions): Promise<void> {
  await declareSuite(options, 'StateStore', stateStoreRules, store => supportsOf(STATE_STORE_MANIFEST, store), settingsFrom(options, parallelismOf(options)))
}
