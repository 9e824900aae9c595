// The state-store rules on `readAndIncrement` (`AtomicBatch`): the reads before the counts, counting as increment does, unlessAbove, concurrency.
import type { ReadAndIncrementResult } from '../store/types.js'
import { expectNewTtl, expectTimeLeft, stepOf } from './store-counters.js'
import { KEY_PAIRS } from './store-key-pairs.js'
import { LONG_TTL_MS, atOnce, expectReadBack, expectSame, expectThat, keysOf, methodOf, oneTo, show, type StoreRule } from './store-kit.js'

/** One count that was made. */
type Counted = NonNullable<ReadAndIncrementResult['counts'][number]>

/** The counts of a result, without their time left. */
function countsOf (result: ReadAndIncrementResult): Array<number | null> {
  return result.counts.map(count => count === null ? null : count.count)
}

const NEEDS = ['readAndIncrement']

// The keys a rule counts share one atomic unit (see `Keys.unit`): the guarantees hold within one.
export const BATCH_RULES: StoreRule[] = [
  {
    name: 'readAndIncrement reads every key before it counts',
    contract: 'every key of `read` is read before any counter of `increments` is counted, and no write made after an increment is seen by the reads',
    needs: NEEDS,
    async run (store, { parallelism }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const counters = [{ key: key.unit('fails'), ttlMs: LONG_TTL_MS }, { key: key.unit('failed'), ttlMs: LONG_TTL_MS }]
      const first = await batch([key.unit('fails'), key.unit('failed')], counters)
      expectSame(first.values, [null, null], 'the values of two counters read in the call that creates them')
      expectSame(countsOf(first), [1, 1], 'the counts of that call')
      const second = await batch([key.unit('fails'), key.unit('failed')], counters)
      expectSame(second.values, ['1', '1'], 'the values of the two counters read in the call that counts them again')
      const answers = await atOnce(parallelism, async () => await batch([key.unit('busy')], [{ key: key.unit('busy'), ttlMs: LONG_TTL_MS }]))
      for (const answer of answers) {
        const [value] = answer.values
        const [own] = countsOf(answer)
        // Number(null) is 0: a counter absent at the read
        expectThat(Number(value) < Number(own), `of ${parallelism} concurrent calls that read and count one counter, one read ${show(value)} and counted ${show(own)}`)
      }
    }
  },
  {
    name: 'readAndIncrement answers the values read in their order, null for an absent or expired one',
    contract: 'The values of the keys read, in their order (`null`: absent or expired), as they were before the increments.',
    needs: NEEDS,
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      // reads alone promise no snapshot: these keys may lie in several atomic units, the answer still in their order
      await store.set(key('x'), 'vx', LONG_TTL_MS)
      await store.set(key('y'), 'vy', LONG_TTL_MS)
      const since = Date.now()
      await store.compareAndSet(key('brief'), null, 'vb', briefTtlMs)
      const read = [key('y'), key('absent'), key('x'), key('brief'), key('y')]
      expectReadBack(await batch(read, []), { values: ['vy', null, 'vx', 'vb', 'vy'], counts: [] }, since, briefTtlMs, 'a call that reads five keys (one absent, one twice) and counts none')
      await wait(briefTtlMs + ttlGranularityMs)
      expectSame((await batch([key('brief'), key('x')], [])).values, [null, 'vx'], `the values read after the ttlMs of the first (${briefTtlMs} ms) passed`)
      expectSame(await batch([], []), { values: [], counts: [] }, 'a call that reads and counts nothing')
    }
  },
  {
    name: 'readAndIncrement counts as increment does',
    contract: 'One counter a `readAndIncrement` adds one to: as `increment` does, with `ttlMs` for a new one.',
    needs: NEEDS,
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const since = Date.now()
      const first = await batch([], [{ key: key.unit('long'), ttlMs: LONG_TTL_MS }, { key: key.unit('brief'), ttlMs: briefTtlMs }])
      expectSame(countsOf(first), [1, 1], 'the counts of a call that creates two counters')
      const [long, brief] = first.counts as Counted[]
      expectNewTtl((long as Counted).ttlMs, LONG_TTL_MS, ttlGranularityMs, 'a new counter of the call')
      expectNewTtl((brief as Counted).ttlMs, briefTtlMs, ttlGranularityMs, 'a new counter of the call')
      expectSame((await store.increment(key.unit('long'), LONG_TTL_MS)).count, 2, 'the count of increment on the counter the call created')
      const later = await batch([], [{ key: key.unit('brief'), ttlMs: briefTtlMs }, { key: key.unit('long'), ttlMs: LONG_TTL_MS * 10 }])
      expectReadBack(countsOf(later), [2, 3], since, briefTtlMs, 'the counts of a later call, in the order of its increments')
      // the step may outlast the brief counter: only the long one is counted after it
      const step = stepOf(briefTtlMs, ttlGranularityMs)
      await wait(step)
      const kept = await batch([], [{ key: key.unit('long'), ttlMs: LONG_TTL_MS * 10 }])
      expectSame(countsOf(kept), [4], `the count of a call ${step} ms later`)
      expectTimeLeft((kept.counts[0] as Counted).ttlMs, LONG_TTL_MS, step, since, ttlGranularityMs, 'a later count with a longer ttlMs')
      // the rest of the brief counter's ttlMs and the granularity
      await wait(Math.max(0, briefTtlMs + ttlGranularityMs - step))
      expectSame(countsOf(await batch([], [{ key: key.unit('brief'), ttlMs: briefTtlMs }])), [1], `the count of a counter after its ttlMs (${briefTtlMs} ms) passed`)
    }
  },
  {
    name: 'concurrent readAndIncrement calls count 1 to N, each once',
    contract: 'each increment is atomic as `increment` is',
    needs: NEEDS,
    async run (store, { parallelism }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const answers = await atOnce(parallelism, async () => await batch([], [{ key: key.unit('busy'), ttlMs: LONG_TTL_MS }]))
      expectSame(answers.map(answer => countsOf(answer)[0] as number).sort((a, b) => a - b), oneTo(parallelism), `the counts of ${parallelism} concurrent calls, sorted`)
      expectSame((await store.increment(key.unit('busy'), LONG_TTL_MS)).count, parallelism + 1, 'the count of one increment after them')
    }
  },
  {
    name: 'readAndIncrement counts under its own keys alone, not ones they match as a pattern or but for case or trailing spaces',
    contract: 'One counter a `readAndIncrement` adds one to: as `increment` does, with `ttlMs` for a new one.',
    needs: NEEDS,
    async run (store) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const increments = KEY_PAIRS.map(name => ({ key: key.unit(name), ttlMs: LONG_TTL_MS }))
      for (const round of [1, 2]) {
        expectSame(countsOf(await batch([], increments)), KEY_PAIRS.map(() => round), `the counts of call ${round} of one that counts the keys ending in ${show(KEY_PAIRS)}, in their order`)
      }
    }
  },
  {
    name: 'of concurrent readAndIncrement calls, one counts all its counters before another counts any',
    contract: 'of two concurrent calls that count the same counters, one counts all of them before the other',
    needs: NEEDS,
    async run (store, { parallelism }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const a = { key: key.unit('a'), ttlMs: LONG_TTL_MS }
      const b = { key: key.unit('b'), ttlMs: LONG_TTL_MS }
      // half the calls name the counters the other way round, so counting one after the other shows
      const answers = await atOnce(parallelism, async (i) => await batch([], i % 2 === 0 ? [a, b] : [b, a]))
      for (const [i, answer] of answers.entries()) {
        const [first, second] = countsOf(answer)
        expectThat(first === second, `of ${parallelism} concurrent calls that count the same two counters, one counted ${first} and ${second}: another call counted between its counts`)
        expectThat(typeof first === 'number', `call ${i} answered no count`)
      }
    }
  },
  {
    name: 'readAndIncrement counts nothing while a key of unlessAbove holds a number above now',
    contract: 'with `unlessAbove`, when one of its keys holds a number greater than `now` at the time of the reads, no counter is incremented (`counts` all `null`)',
    needs: NEEDS,
    async run (store) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const now = Date.now()
      await store.set(key.unit('lock'), String(now + LONG_TTL_MS), LONG_TTL_MS)
      await store.increment(key.unit('counted'), LONG_TTL_MS)
      const counters = [{ key: key.unit('counted'), ttlMs: LONG_TTL_MS }, { key: key.unit('new'), ttlMs: LONG_TTL_MS }]
      const held = await batch([key.unit('lock'), key.unit('counted')], counters, { unlessAbove: { keys: [key.unit('no-lock'), key.unit('lock')], now } })
      expectSame(held, { values: [String(now + LONG_TTL_MS), '1'], counts: [null, null] }, 'a call while a key of unlessAbove holds a time after now')
      expectSame((await store.increment(key.unit('counted'), LONG_TTL_MS)).count, 2, 'the count of an increment of the existing counter after the held call')
      expectSame((await store.increment(key.unit('new'), LONG_TTL_MS)).count, 1, 'the count of an increment of the other counter after the held call')
    }
  },
  {
    name: 'readAndIncrement counts when no key of unlessAbove holds a number above now',
    contract: 'while any of `keys` holds a number greater than `now` (ms since the epoch, the caller\'s clock), nothing is counted',
    needs: NEEDS,
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const batch = methodOf(store, 'readAndIncrement')
      const now = Date.now()
      await store.compareAndSet(key.unit('expired'), null, String(now + LONG_TTL_MS), briefTtlMs)
      await store.set(key.unit('equal'), String(now), LONG_TTL_MS)
      await store.set(key.unit('below'), String(now - 1), LONG_TTL_MS)
      await store.set(key.unit('text'), 'not a number', LONG_TTL_MS)
      await wait(briefTtlMs + ttlGranularityMs)
      const cases: Array<[string, string]> = [['equal', 'now itself'], ['below', 'a time before now'], ['text', 'a value that is no number'], ['absent', 'nothing'], ['expired', 'a time after now that expired']]
      for (const [i, [lock, what]] of cases.entries()) {
        const answer = await batch([], [{ key: key.unit('counter'), ttlMs: LONG_TTL_MS }], { unlessAbove: { keys: [key.unit(lock)], now } })
        expectSame(countsOf(answer), [i + 1], `the count of a call whose key of unlessAbove holds ${what}`)
      }
    }
  }
]
