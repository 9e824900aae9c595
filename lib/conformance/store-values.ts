// The state-store rules on single values: get, set and their TTL, consume, compareAndSet, delete.
import { LONG_TTL_MS, atOnce, expectReadBack, expectSame, expectThat, keysOf, show, type StoreRule } from './store-kit.js'

/**
 * How often the rule on a TTL's end tries when the machine was too slow to
 * tell: twice, so that with the default briefTtlMs (two waits of 1.45 s) the
 * rule ends within the 5 s jest and vitest give a test.
 */
const NEAR_END_ATTEMPTS = 2

// A rule that needs a value gone by expiry writes it with the operation the rule is about, or with compareAndSet:
// `set`'s own TTL is then checked by the rules on set alone, and a store that breaks it fails those rules, not these.

export const VALUE_RULES: StoreRule[] = [
  {
    name: 'get answers null for a key never set',
    contract: 'The value under `key`, or `null` when absent or expired.',
    async run (store) {
      const key = keysOf()
      expectSame(await store.get(key('never-set')), null, 'get of a key never set')
    }
  },
  {
    name: 'set stores a value that get reads back',
    contract: 'Stores `value` under `key` for `ttlMs`, replacing any earlier value.',
    async run (store) {
      const key = keysOf()
      await store.set(key('k'), 'value', LONG_TTL_MS)
      expectSame(await store.get(key('k')), 'value', 'get after set')
    }
  },
  {
    name: 'set replaces an earlier value and its expiry',
    contract: 'Stores `value` under `key` for `ttlMs`, replacing any earlier value.',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      await store.set(key('k'), 'first', briefTtlMs)
      await store.set(key('k'), 'second', LONG_TTL_MS)
      expectSame(await store.get(key('k')), 'second', 'get after a second set of one key')
      await wait(briefTtlMs + ttlGranularityMs)
      expectSame(await store.get(key('k')), 'second', `get after the first set's ttlMs (${briefTtlMs} ms) passed: the second set's longer ttlMs should have replaced it`)
    }
  },
  {
    name: 'a value expires within ttlGranularityMs of its ttlMs: get and consume answer null',
    contract: 'The value under `key`, or `null` when absent or expired.',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const since = Date.now()
      await store.set(key('brief'), 'value', briefTtlMs)
      expectReadBack(await store.get(key('brief')), 'value', since, briefTtlMs, `get right after set with ttlMs ${briefTtlMs}`)
      await wait(briefTtlMs + ttlGranularityMs)
      expectSame(await store.get(key('brief')), null, `get ${briefTtlMs + ttlGranularityMs} ms after set with ttlMs ${briefTtlMs} (ttlGranularityMs ${ttlGranularityMs})`)
      expectSame(await store.consume(key('brief')), null, 'consume of the expired value')
    }
  },
  {
    name: 'a value is still there just before its ttlMs ends',
    contract: 'Stores `value` under `key` for `ttlMs`',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      // half a second over the brief TTL: a store that rounds a TTL down to whole seconds shows it
      const ttlMs = briefTtlMs + 500
      const readAt = ttlMs - ttlGranularityMs
      let elapsed = 0
      for (let attempt = 1; attempt <= NEAR_END_ATTEMPTS; attempt++) {
        const since = Date.now()
        await store.set(key(`near-end-${attempt}`), 'value', ttlMs)
        await wait(readAt)
        const seen = await store.get(key(`near-end-${attempt}`))
        if (seen === 'value') return
        elapsed = Date.now() - since
        // in real time, a read that came after the whole TTL cannot tell: try again
        expectThat(elapsed >= ttlMs, `get ${readAt} ms after set with ttlMs ${ttlMs} answered ${show(seen)}: the value went before its ttlMs`)
      }
      expectThat(false, `${NEAR_END_ATTEMPTS} times the read came ${elapsed} ms or more after the write, after the ttlMs of ${ttlMs} ms, too late to tell; the machine or the store is too slow for ttlGranularityMs ${ttlGranularityMs}`)
    }
  },
  {
    name: 'consume answers the value once and deletes it',
    contract: 'Reads and deletes `key` in one atomic step.',
    async run (store) {
      const key = keysOf()
      await store.set(key('once'), 'secret', LONG_TTL_MS)
      expectSame(await store.consume(key('once')), 'secret', 'the first consume')
      expectSame(await store.consume(key('once')), null, 'a second consume')
      expectSame(await store.get(key('once')), null, 'get after consume')
      expectSame(await store.consume(key('never-set')), null, 'consume of a key never set')
    }
  },
  {
    name: 'of concurrent consumes of one key, exactly one receives the value',
    contract: 'Of several concurrent calls for one key, exactly one receives the value; the others receive `null`.',
    async run (store, { parallelism }) {
      const key = keysOf()
      await store.set(key('race'), 'the-value', LONG_TTL_MS)
      const answers = await atOnce(parallelism, async () => await store.consume(key('race')))
      const winners = answers.filter(answer => answer === 'the-value').length
      expectThat(winners === 1, `${parallelism} concurrent consumes of one key: ${winners} received the value`)
      expectSame(answers.filter(answer => answer !== 'the-value' && answer !== null), [], 'what the others received besides null')
    }
  },
  {
    name: 'compareAndSet expecting null writes only when the key is absent',
    contract: '(`null`: only when the key is absent or expired)',
    async run (store) {
      const key = keysOf()
      expectSame(await store.compareAndSet(key('k'), null, 'first', LONG_TTL_MS), true, 'compareAndSet expecting null on an absent key')
      expectSame(await store.get(key('k')), 'first', 'get after it wrote')
      expectSame(await store.compareAndSet(key('k'), null, 'second', LONG_TTL_MS), false, 'compareAndSet expecting null on a key that holds a value')
      expectSame(await store.get(key('k')), 'first', 'get after it refused')
    }
  },
  {
    name: 'compareAndSet treats an expired value as absent',
    contract: '(`null`: only when the key is absent or expired)',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      expectSame(await store.compareAndSet(key('k'), null, 'old', briefTtlMs), true, `compareAndSet expecting null on an absent key, with ttlMs ${briefTtlMs}`)
      await wait(briefTtlMs + ttlGranularityMs)
      expectSame(await store.compareAndSet(key('k'), 'old', 'over-expired', LONG_TTL_MS), false, 'compareAndSet expecting the value after it expired')
      expectSame(await store.compareAndSet(key('k'), null, 'new', LONG_TTL_MS), true, 'compareAndSet expecting null after the value expired')
      expectSame(await store.get(key('k')), 'new', 'get after it wrote')
    }
  },
  {
    name: 'compareAndSet writes only over the expected value',
    contract: 'Writes `value` under `key` for `ttlMs` only when the value there now is `expected`',
    async run (store) {
      const key = keysOf()
      expectSame(await store.compareAndSet(key('absent'), 'x', 'value', LONG_TTL_MS), false, 'compareAndSet expecting a value on an absent key')
      expectSame(await store.get(key('absent')), null, 'get after it refused')
      await store.set(key('k'), 'v1', LONG_TTL_MS)
      expectSame(await store.compareAndSet(key('k'), 'other', 'v2', LONG_TTL_MS), false, 'compareAndSet expecting another value')
      expectSame(await store.compareAndSet(key('k'), 'V1', 'v2', LONG_TTL_MS), false, 'compareAndSet expecting the value in another case')
      expectSame(await store.get(key('k')), 'v1', 'get after it refused')
      expectSame(await store.compareAndSet(key('k'), 'v1', 'v2', LONG_TTL_MS), true, 'compareAndSet expecting the value there')
      expectSame(await store.get(key('k')), 'v2', 'get after it wrote')
    }
  },
  {
    name: 'a compareAndSet write applies its own ttlMs',
    contract: 'Writes `value` under `key` for `ttlMs`',
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      await store.set(key('shortened'), 'v1', LONG_TTL_MS)
      const since = Date.now()
      await store.set(key('lengthened'), 'v1', briefTtlMs)
      expectSame(await store.compareAndSet(key('shortened'), 'v1', 'v2', briefTtlMs), true, `compareAndSet with ttlMs ${briefTtlMs} over a value set for longer`)
      expectReadBack(await store.compareAndSet(key('lengthened'), 'v1', 'v2', LONG_TTL_MS), true, since, briefTtlMs, `compareAndSet with a long ttlMs over a value set for ${briefTtlMs} ms`)
      await wait(briefTtlMs + ttlGranularityMs)
      // read by consume: get's own handling of an expired value is the rule on expiry's
      expectSame(await store.consume(key('shortened')), null, 'consume after the shorter ttlMs of the compareAndSet passed')
      expectSame(await store.consume(key('lengthened')), 'v2', 'consume after the ttlMs of the earlier set passed, within the compareAndSet\'s')
    }
  },
  {
    name: 'of concurrent compareAndSet calls expecting one value, exactly one writes',
    contract: 'Of concurrent calls that expect what the key holds (`null` when it holds nothing), exactly one writes.',
    async run (store, { parallelism }) {
      const key = keysOf()
      await store.set(key('race'), 'start', LONG_TTL_MS)
      const wrote = await atOnce(parallelism, async (i) => await store.compareAndSet(key('race'), 'start', `v${i}`, LONG_TTL_MS))
      const writers = wrote.filter(answer => answer === true).length
      expectThat(writers === 1, `${parallelism} concurrent compareAndSet calls expecting the value there: ${writers} answered that they wrote`)
      expectSame(await store.get(key('race')), `v${wrote.indexOf(true)}`, 'get after the race: the value of the one that wrote')
    }
  },
  {
    name: 'of concurrent compareAndSet calls expecting null, exactly one writes',
    contract: 'Of concurrent calls that expect what the key holds (`null` when it holds nothing), exactly one writes.',
    async run (store, { parallelism }) {
      const key = keysOf()
      const wrote = await atOnce(parallelism, async (i) => await store.compareAndSet(key('race'), null, `v${i}`, LONG_TTL_MS))
      const writers = wrote.filter(answer => answer === true).length
      expectThat(writers === 1, `${parallelism} concurrent compareAndSet calls expecting null on an absent key: ${writers} answered that they wrote`)
      expectSame(await store.get(key('race')), `v${wrote.indexOf(true)}`, 'get after the race: the value of the one that wrote')
    }
  },
  {
    name: 'delete removes a value and a counter',
    contract: 'Removes `key`',
    async run (store) {
      const key = keysOf()
      await store.set(key('value'), 'v', LONG_TTL_MS)
      await store.delete(key('value'))
      expectSame(await store.get(key('value')), null, 'get after delete')
      await store.increment(key('counter'), LONG_TTL_MS)
      await store.increment(key('counter'), LONG_TTL_MS)
      await store.delete(key('counter'))
      expectSame((await store.increment(key('counter'), LONG_TTL_MS)).count, 1, 'the count of an increment after the counter was deleted')
    }
  },
  {
    name: 'delete of an absent key resolves',
    contract: 'absent keys are fine',
    async run (store) {
      const key = keysOf()
      expectSame(await store.delete(key('never-set')), undefined, 'delete of a key never set')
    }
  }
]
