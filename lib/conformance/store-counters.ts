// The state-store rules on counters: increment's count, its TTL and the time left it answers, and counting under concurrency.
import { LONG_TTL_MS, atOnce, expectReadBack, expectSame, expectThat, keysOf, oneTo, type StoreRule } from './store-kit.js'

/**
 * How long a rule lets pass between two counts of one counter to see that the
 * later count kept its expiry: a fifth of the brief TTL, and over twice the
 * granularity, since a new counter's time left may be off by the granularity
 * either way and one set anew must still show.
 */
export function stepOf (briefTtlMs: number, ttlGranularityMs: number): number {
  return Math.max(Math.ceil(briefTtlMs / 5), 2 * ttlGranularityMs + 1)
}

/**
 * Checks the time left a later count answered, `waited` ms at least after
 * the counter was made with `ttlMs` (at `since`, in real time): not more
 * than what is left plus the granularity (the expiry was kept; a store may
 * expire that late), not less by more than the granularity (it is the time
 * left).
 */
export function expectTimeLeft (answered: number, ttlMs: number, waited: number, since: number, ttlGranularityMs: number, what: string): void {
  // in real time more may have passed than was waited
  const passed = Math.max(waited, Date.now() - since)
  expectThat(answered <= ttlMs - waited + ttlGranularityMs, `${what} answered ${answered} ms left of a counter made with ttlMs ${ttlMs} at least ${waited} ms earlier (ttlGranularityMs ${ttlGranularityMs}): its expiry was not kept`)
  expectThat(answered >= ttlMs - passed - ttlGranularityMs, `${what} answered ${answered} ms left of a counter made with ttlMs ${ttlMs} at most ${passed} ms earlier (ttlGranularityMs ${ttlGranularityMs}): less than the time left`)
}

/** Checks the time left a new counter answered: its `ttlMs`, give or take the granularity. */
export function expectNewTtl (answered: number, ttlMs: number, ttlGranularityMs: number, what: string): void {
  expectThat(answered <= ttlMs + ttlGranularityMs && answered >= ttlMs - ttlGranularityMs, `${what} with ttlMs ${ttlMs} answered ${answered} ms left (ttlGranularityMs ${ttlGranularityMs})`)
}

export const COUNTER_RULES: StoreRule[] = [
  {
    name: 'the first increment counts 1 and answers its ttlMs',
    contract: 'The first increment creates the counter with `ttlMs`',
    async run (store, { ttlGranularityMs }) {
      const key = keysOf()
      const first = await store.increment(key('counter'), LONG_TTL_MS)
      expectSame(first.count, 1, 'the count of the first increment')
      expectNewTtl(first.ttlMs, LONG_TTL_MS, ttlGranularityMs, 'the first increment')
    }
  },
  {
    name: 'a counter expires once the time left that increment answered has passed, and starts again at 1',
    contract: 'returns the new count and the time left (ms) before the counter expires',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const since = Date.now()
      await store.increment(key('window'), briefTtlMs)
      await wait(Math.floor(briefTtlMs / 2))
      const second = await store.increment(key('window'), briefTtlMs)
      expectReadBack(second.count, 2, since, briefTtlMs, `the count of a second increment ${Math.floor(briefTtlMs / 2)} ms into a ttlMs of ${briefTtlMs}`)
      expectThat(second.ttlMs > 0 && second.ttlMs <= briefTtlMs + ttlGranularityMs, `the second increment of a counter made with ttlMs ${briefTtlMs} answered ${second.ttlMs} ms left (ttlGranularityMs ${ttlGranularityMs})`)
      await wait(second.ttlMs + ttlGranularityMs)
      const third = await store.increment(key('window'), briefTtlMs)
      expectSame(third.count, 1, `the count of an increment ${second.ttlMs + ttlGranularityMs} ms after one that answered ${second.ttlMs} ms left (ttlGranularityMs ${ttlGranularityMs})`)
    }
  },
  {
    name: 'later increments keep the counter\'s expiry, whatever their ttlMs',
    contract: 'later ones keep its expiry',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const step = stepOf(briefTtlMs, ttlGranularityMs)
      const since = Date.now()
      await store.increment(key('counter'), LONG_TTL_MS)
      await wait(step)
      const cases: Array<[number, string]> = [[LONG_TTL_MS, 'with the same ttlMs'], [LONG_TTL_MS * 10, 'with a longer ttlMs'], [briefTtlMs, 'with a shorter ttlMs']]
      for (const [i, [ttlMs, how]] of cases.entries()) {
        const later = await store.increment(key('counter'), ttlMs)
        expectSame(later.count, i + 2, `the count of increment ${i + 2}`)
        expectTimeLeft(later.ttlMs, LONG_TTL_MS, step, since, ttlGranularityMs, `increment ${i + 2} ${how}`)
      }
    }
  },
  {
    name: 'concurrent increments count 1 to N, each once',
    contract: 'Adds one to the counter under `key` atomically',
    async run (store, { parallelism }) {
      const key = keysOf()
      const answers = await atOnce(parallelism, async () => await store.increment(key('busy'), LONG_TTL_MS))
      expectSame(answers.map(answer => answer.count).sort((a, b) => a - b), oneTo(parallelism), `the counts of ${parallelism} concurrent increments, sorted`)
      expectSame((await store.increment(key('busy'), LONG_TTL_MS)).count, parallelism + 1, 'the count of one more increment')
    }
  },
  {
    name: 'get reads a counter as its count',
    contract: '`get`, `getMany` and `readAndIncrement` read a counter as its count, a string of decimal digits.',
    async run (store) {
      const key = keysOf()
      for (let i = 0; i < 3; i++) await store.increment(key('counter'), LONG_TTL_MS)
      expectSame(await store.get(key('counter')), '3', 'get of a counter incremented three times')
    }
  }
]
