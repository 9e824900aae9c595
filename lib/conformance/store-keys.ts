// The state-store rules on what keys and values may be and on getMany; and those on the store as a whole: the order of its calls, its logger, close.
import type { StateStore, StoreLogger } from '../store/types.js'
import { settleAll } from './port-helpers.js'
import { KEY_PAIRS } from './store-key-pairs.js'
import { LONG_TTL_MS, atOnce, eachAtMost, expectReadBack, expectSame, expectThat, keysOf, methodOf, show, type StoreRule } from './store-kit.js'

/** Key names the store must keep apart and as they are, some a trim, a fold, a cut or a pattern of another. */
const ODD_KEYS = [
  'a:b:c', 'with space', ' leading', 'leading', 'trailing ', 'trailing', 'Case', 'case', 'tab\tkey', 'new\nline', 'new',
  'curly{brace}', '{}', 'ünïcødé', 'unicode', '日本語', '😀', 'quote"\'`', 'percent%_under', '*glob?[x]', 'semi;colon', '', ...KEY_PAIRS
]

/** Values the store must answer exactly as written. */
const ODD_VALUES = [
  'ünïcødé', '日本語のテキスト', 'emoji 😀🎉 and a flag 🇫🇷', 'line\nbreak', 'windows\r\nline', 'tab\tand\vvertical',
  '  leading and trailing spaces  ', 'quotes " \' ` and \\ backslash', '\u2028\u2029 separators', '\'; DROP TABLE state; --',
  JSON.stringify({ a: [1, 'two', null, true, 2.5e-7], nested: { 'quo"te': 'ü\n', empty: {} } }), '', 'null', '0'
]

/** An ASCII value of exactly `bytes` bytes whose every line differs, so a cut or a shuffle shows. */
function largeValue (bytes: number): string {
  return Array.from({ length: Math.ceil(bytes / 8) }, (_, i) => `${i.toString(36).padStart(7, '0')}\n`).join('').slice(0, bytes)
}

/** Writes `count` keys (`v0`, `v1`, …) `width` at a time; answers their keys. */
async function writeMany (store: StateStore, key: (name: string) => string, count: number, width: number): Promise<string[]> {
  const keys = Array.from({ length: count }, (_, i) => key(`many-${i}`))
  await eachAtMost(keys, width, async (name, i) => { await store.set(name, `v${i}`, LONG_TTL_MS) })
  return keys
}

/** What of `answers` is not `v0`, `v1`, …: the first few, for the message. */
function wrongOfMany (answers: ReadonlyArray<string | null | undefined>, count: number): string {
  const wrong = Array.from({ length: count }, (_, i) => i).filter(i => answers[i] !== `v${i}`)
  return wrong.slice(0, 5).map(i => `key ${i}: ${show(answers[i])}`).join(', ') + (wrong.length > 5 ? `, and ${wrong.length - 5} more` : '')
}

const GET_MANY = ['getMany']

export const KEY_RULES: StoreRule[] = [
  {
    name: 'keys with colons, spaces, braces, wildcards, unicode and newlines are kept apart',
    contract: 'The value under `key`',
    async run (store) {
      const key = keysOf()
      for (const [i, name] of ODD_KEYS.entries()) await store.set(key(name), `value-${i}`, LONG_TTL_MS)
      for (const [i, name] of ODD_KEYS.entries()) expectSame(await store.get(key(name)), `value-${i}`, `get of the key ending in ${show(name)}`)
    }
  },
  {
    name: 'values round-trip exactly: unicode, newlines, quotes, JSON, the empty string',
    contract: 'Stores `value` under `key` for `ttlMs`',
    async run (store) {
      const key = keysOf()
      for (const [i, value] of ODD_VALUES.entries()) {
        await store.set(key(`v${i}`), value, LONG_TTL_MS)
        expectSame(await store.get(key(`v${i}`)), value, 'get of the value set')
        expectSame(await store.compareAndSet(key(`v${i}`), value, `${value}!`, LONG_TTL_MS), true, `compareAndSet expecting the value ${show(value)}`)
        expectSame(await store.consume(key(`v${i}`)), `${value}!`, 'consume of the value compareAndSet wrote')
      }
    }
  },
  {
    name: 'long keys that differ only at their end are kept apart',
    contract: 'The value under `key`',
    async run (store) {
      const key = keysOf()
      const long = 'long-'.padEnd(500, 'x')
      await store.set(key(`${long}a`), 'a', LONG_TTL_MS)
      await store.set(key(`${long}b`), 'b', LONG_TTL_MS)
      expectSame([await store.get(key(`${long}a`)), await store.get(key(`${long}b`))], ['a', 'b'], 'get of two keys of 500 characters that differ in their last')
    }
  },
  {
    name: 'a value of largeValueBytes round-trips',
    contract: 'Stores `value` under `key` for `ttlMs`',
    async run (store, { largeValueBytes }) {
      const key = keysOf()
      const value = largeValue(largeValueBytes)
      await store.set(key('large'), value, LONG_TTL_MS)
      const seen = await store.get(key('large'))
      expectThat(seen === value, `get of a value of ${largeValueBytes} bytes answered ${show(seen)}`)
    }
  },
  {
    name: 'manyKeys values are each read back',
    contract: 'Stores `value` under `key` for `ttlMs`',
    async run (store, { manyKeys, parallelism }) {
      const keys = await writeMany(store, keysOf(), manyKeys, parallelism)
      const answers: Array<string | null> = []
      await eachAtMost(keys, parallelism, async (name, i) => { answers[i] = await store.get(name) })
      const wrong = wrongOfMany(answers, manyKeys)
      expectThat(wrong === '', `of ${manyKeys} keys set, get answered wrong for ${wrong}`)
    }
  },
  {
    name: 'getMany answers the values in the order of the keys, null for an absent one',
    contract: 'The values under `keys`, in their order (`null` for each absent or expired one)',
    needs: GET_MANY,
    async run (store) {
      const key = keysOf()
      for (const name of ['a', 'b', 'c']) await store.set(key(name), `v${name}`, LONG_TTL_MS)
      await store.increment(key('counter'), LONG_TTL_MS)
      const keys = [key('b'), key('absent'), key('a'), key('counter'), key('c')]
      expectSame(await methodOf(store, 'getMany')(keys), ['vb', null, 'va', '1', 'vc'], 'getMany of b, an absent key, a, a counter counted once, c')
    }
  },
  {
    name: 'getMany answers a key asked twice at both places',
    contract: 'The values under `keys`, in their order',
    needs: GET_MANY,
    async run (store) {
      const key = keysOf()
      await store.set(key('a'), 'va', LONG_TTL_MS)
      expectSame(await methodOf(store, 'getMany')([key('a'), key('a')]), ['va', 'va'], 'getMany of one key twice')
    }
  },
  {
    name: 'getMany answers null for an expired key',
    contract: '(`null` for each absent or expired one)',
    needs: GET_MANY,
    async run (store, { briefTtlMs, ttlGranularityMs, wait }) {
      const key = keysOf()
      const since = Date.now()
      await store.compareAndSet(key('brief'), null, 'value', briefTtlMs)
      expectReadBack(await methodOf(store, 'getMany')([key('brief')]), ['value'], since, briefTtlMs, `getMany right after the key was written with ttlMs ${briefTtlMs}`)
      await wait(briefTtlMs + ttlGranularityMs)
      expectSame(await methodOf(store, 'getMany')([key('brief')]), [null], `getMany ${briefTtlMs + ttlGranularityMs} ms after the key was written with ttlMs ${briefTtlMs}`)
    }
  },
  {
    name: 'getMany of no keys answers an empty list',
    contract: 'The values under `keys`, in their order',
    needs: GET_MANY,
    async run (store) {
      expectSame(await methodOf(store, 'getMany')([]), [], 'getMany of no keys')
    }
  },
  {
    name: 'getMany reads manyKeys keys in one call',
    contract: 'The values under `keys`, in their order',
    needs: GET_MANY,
    async run (store, { manyKeys, parallelism }) {
      const keys = await writeMany(store, keysOf(), manyKeys, parallelism)
      const answers = await methodOf(store, 'getMany')(keys)
      expectThat(answers.length === manyKeys, `getMany of ${manyKeys} keys answered ${answers.length} values`)
      const wrong = wrongOfMany(answers, manyKeys)
      expectThat(wrong === '', `getMany of ${manyKeys} keys answered wrong for ${wrong}`)
    }
  },
]

/** The rules on the store as a whole: the order of its calls, its logger, and close, which comes last of all. */
export const PORT_RULES: StoreRule[] = [
  {
    name: 'calls made without waiting for one another take effect in the order made',
    contract: '`true` when calls made without waiting for one another take effect in the order they were made',
    needs: ['ordered'],
    async run (store, { parallelism }) {
      const key = keysOf()
      // each key read before its write and after it, every call made at once
      const seen = await atOnce(parallelism, async (i) => await settleAll<unknown>([
        store.get(key(`k${i}`)), store.set(key(`k${i}`), `v${i}`, LONG_TTL_MS), store.get(key(`k${i}`))
      ]))
      for (const [i, [before, , after]] of seen.entries()) {
        expectSame([before, after], [null, `v${i}`], `a get made before a set, and one made after it, all without waiting (call ${i} of ${parallelism})`)
      }
    }
  },
  {
    name: 'attachLogger takes a logger and the store answers on',
    contract: 'Gives the store a logger for what it has to say outside any request',
    needs: ['attachLogger'],
    async run (store) {
      const key = keysOf()
      // what the store says is kept, not checked: a server's settings may well call for a warning
      const said: unknown[] = []
      const record = said.push.bind(said) as StoreLogger['warn']
      methodOf(store, 'attachLogger')({ error: record, warn: record, debug: record })
      await store.set(key('k'), 'value', LONG_TTL_MS)
      expectSame(await store.get(key('k')), 'value', 'get after set, on a store given a logger')
    }
  },
  {
    name: 'close resolves',
    contract: 'Releases connections or timers the store owns.',
    needs: ['close'],
    async run (store) {
      expectSame(await methodOf(store, 'close')(), undefined, 'what close resolved')
    }
  }
]
