import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { AttemptLimiter, type Reservable } from '../../lib/services/limits.js'

// The attempt limiter on a store whose calls may overtake one another (no `ordered`): the read
// first, then the subjects but the last together, then the last once they let the attempt through.

/** A memory store that does not say its calls keep their order, and can fail the increments of one key. */
function unorderedStore (inner: MemoryStore, failing: (key: string) => boolean): StateStore {
  return {
    get: async (key) => await inner.get(key),
    getMany: async (keys) => await inner.getMany(keys),
    set: async (key, value, ttlMs) => { await inner.set(key, value, ttlMs) },
    consume: async (key) => await inner.consume(key),
    increment: async (key, ttlMs) => {
      if (failing(key)) throw new Error('store down')
      return await inner.increment(key, ttlMs)
    },
    compareAndSet: async (key, expected, value, ttlMs) => await inner.compareAndSet(key, expected, value, ttlMs),
    delete: async (key) => { await inner.delete(key) }
  }
}

const subject = (key: string, max: number): Reservable => ({ key, limit: { max, windowMs: 60_000 }, onSuccess: 'reset' })

t.test('the last subject counts only once the others let the attempt through', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const limiter = new AttemptLimiter(unorderedStore(inner, () => false), Date.now)
  const first = await limiter.reserve([subject('named', 1), subject('account', 5)], ['extra'])
  t.match(first, { ok: true, read: [null] })
  const refused = await limiter.reserve([subject('named', 1), subject('account', 5)])
  t.match(refused, { ok: false, refusedBy: ['named'] })
  t.equal(await inner.get('fails:{account}'), '1', 'refused on the first subject: the account was not counted')
  const accountOver = await limiter.reserve([subject('other', 5), subject('account', 1)])
  t.match(accountOver, { ok: false, refusedBy: ['account'] })
  t.equal(await inner.get('released:{other}'), '1', 'refused on the last subject: the first gets its attempt back')
})

t.test('a count of the last subject that fails gives the others their attempt back, then the error goes on', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const limiter = new AttemptLimiter(unorderedStore(inner, (key) => key === 'fails:{account}'), Date.now)
  await t.rejects(limiter.reserve([subject('named', 5), subject('account', 5)]), { message: 'store down' })
  t.equal(await inner.get('fails:{named}'), '1')
  t.equal(await inner.get('released:{named}'), '1', 'given back')
})

t.test('one subject on an unordered store: read, then counted', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const limiter = new AttemptLimiter(unorderedStore(inner, () => false), Date.now)
  t.match(await limiter.reserve([subject('alone', 1)]), { ok: true, holds: [{ counted: 1 }] })
  t.match(await limiter.reserve([subject('alone', 1)]), { ok: false, refusedBy: ['alone'] })
})
