// The state-store rules on keys a store could take for one another: each operation acts on its own key alone.
import { LONG_TTL_MS, expectSame, keysOf, show, type StoreRule } from './store-kit.js'

/**
 * Key names in which each of the first half could be taken for the one at
 * its place in the second: as an SQL LIKE pattern (`_`, `%`, a backslash
 * escape), a Redis glob (`*`, `?`, `[…]`), without case, or without trailing
 * spaces (MariaDB's PAD SPACE collations). Every pattern comes before the
 * key it matches, so an operation on it meets that key still there.
 */
export const KEY_PAIRS = [
  'a_c', 'p%', 'back\\slash', 'g*', 'k?y', '[ab]', 'Key', 'pad ',
  'abc', 'pq', 'backslash', 'gx', 'kay', 'a', 'key', 'pad'
]

/** The end of a rule's name: what the keys of `KEY_PAIRS` have in common. */
const ALIKE = 'not one it matches as a pattern or but for case or trailing spaces'

/** What the keys of `KEY_PAIRS` are called in messages. */
function named (name: string): string {
  return `the key ending in ${show(name)}`
}

export const KEY_PAIR_RULES: StoreRule[] = [
  {
    name: `increment counts under its own key alone, ${ALIKE}`,
    contract: 'Adds one to the counter under `key`',
    async run (store) {
      const key = keysOf()
      // counted twice over: a count that lands on another counter shows in either round
      for (const round of [1, 2]) {
        for (const name of KEY_PAIRS) expectSame((await store.increment(key(name), LONG_TTL_MS)).count, round, `increment ${round} of ${named(name)}`)
      }
    }
  },
  {
    name: `consume takes its own key alone, ${ALIKE}`,
    contract: 'Reads and deletes `key` in one atomic step.',
    async run (store) {
      const key = keysOf()
      for (const [i, name] of KEY_PAIRS.entries()) await store.set(key(name), `value-${i}`, LONG_TTL_MS)
      for (const [i, name] of KEY_PAIRS.entries()) expectSame(await store.consume(key(name)), `value-${i}`, `consume of ${named(name)}, after those before it were consumed`)
    }
  },
  {
    name: `compareAndSet writes under its own key alone, ${ALIKE}`,
    contract: 'Writes `value` under `key` for `ttlMs` only when the value there now is `expected`',
    async run (store) {
      const key = keysOf()
      // written matches first here: a pattern expecting null must not see them
      for (const name of [...KEY_PAIRS].reverse()) expectSame(await store.compareAndSet(key(name), null, 'same', LONG_TTL_MS), true, `compareAndSet expecting null on ${named(name)}, absent`)
      // one value under every key: a write that reaches another key makes it differ from what the next call expects
      for (const [i, name] of KEY_PAIRS.entries()) expectSame(await store.compareAndSet(key(name), 'same', `value-${i}`, LONG_TTL_MS), true, `compareAndSet expecting the value under ${named(name)}`)
      for (const [i, name] of KEY_PAIRS.entries()) expectSame(await store.get(key(name)), `value-${i}`, `get of ${named(name)} after compareAndSet wrote under each key`)
    }
  },
  {
    name: `delete removes its own key alone, ${ALIKE}`,
    contract: 'Removes `key`',
    async run (store) {
      const key = keysOf()
      for (const [i, name] of KEY_PAIRS.entries()) await store.set(key(name), `value-${i}`, LONG_TTL_MS)
      for (const [i, name] of KEY_PAIRS.entries()) {
        await store.delete(key(name))
        expectSame(await store.get(key(name)), null, `get of ${named(name)} after its delete`)
        for (const [j, other] of KEY_PAIRS.entries()) {
          if (j > i) expectSame(await store.get(key(other)), `value-${j}`, `get of ${named(other)} after the delete of ${named(name)}`)
        }
      }
    }
  }
]
