import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { net } from '../../lib/services/counters.js'
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
  const counted = await inner.get('fails:{alone}')
  t.match(await limiter.reserve([subject('alone', 1)]), { ok: false, refusedBy: ['alone'] }, 'locked and at its limit: refused')
  t.equal(await inner.get('fails:{alone}'), counted, 'by the read alone: nothing more counted')
})

t.test('credits: attempts less credits, and a credit larger than the attempts (left from an ended window) counts for nothing', async (t) => {
  t.equal(net(5, 2), 3)
  t.equal(net(2, 2), 0)
  t.equal(net(1, 5), 1)
})

/** A memory store without readAndIncrement that says its calls keep their order (a host's single-connection store). */
function orderedStore (inner: MemoryStore, failing: { reads?: boolean, increments?: (key: string) => boolean } = {}): StateStore {
  return {
    ...unorderedStore(inner, failing.increments ?? (() => false)),
    getMany: async (keys) => {
      if (failing.reads === true) throw new Error('reads down')
      return await inner.getMany(keys)
    },
    ordered: true
  }
}

t.test('an ordered store without readAndIncrement: read and count together; on a locked subject the attempt is counted and given back', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const limiter = new AttemptLimiter(orderedStore(inner), Date.now)
  t.match(await limiter.reserve([subject('alone', 1)], ['extra']), { ok: true, holds: [{ counted: 1 }], read: [null] })
  t.match(await limiter.reserve([subject('alone', 1)]), { ok: false, refusedBy: ['alone'] })
  t.ok(Number(await inner.get('lock:{alone}')) > Date.now(), 'over the limit: locked')
  t.match(await limiter.reserve([subject('alone', 1)]), { ok: false, refusedBy: ['alone'] })
  t.same(await inner.getMany(['fails:{alone}', 'released:{alone}']), ['3', '2'], 'the refused attempts counted, and given back')
})

t.test('an ordered store without readAndIncrement: a failed read gives the counts back; so does a failed count', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  await t.rejects(new AttemptLimiter(orderedStore(inner, { reads: true }), Date.now).reserve([subject('read', 5)]), { message: 'reads down' })
  t.same(await inner.getMany(['fails:{read}', 'released:{read}']), ['1', '1'])
  const failingCount = new AttemptLimiter(orderedStore(inner, { increments: (key) => key === 'fails:{second}' }), Date.now)
  await t.rejects(failingCount.reserve([subject('first', 5), subject('second', 5)]), { message: 'store down' })
  t.same(await inner.getMany(['fails:{first}', 'released:{first}', 'fails:{second}']), ['1', '1', null])
})

// The memory store offers readAndIncrement, as every store of the plugin's does: one call reads and counts.

t.test('readAndIncrement: a subject locked at its limit is refused, and nothing is written', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const limiter = new AttemptLimiter(inner, Date.now)
  t.match(await limiter.reserve([subject('other', 5), subject('locked', 1)], ['extra']), { ok: true, holds: [{ counted: 1 }, { counted: 1 }], read: [null] })
  t.match(await limiter.reserve([subject('other', 5), subject('locked', 1)]), { ok: false, refusedBy: ['locked'] })
  const before = await inner.getMany(['fails:{other}', 'released:{other}', 'fails:{locked}', 'released:{locked}'])
  t.same(before, ['2', '1', '2', '1'], 'the attempt that locked it was counted and given back')
  const refused = await limiter.reserve([subject('other', 5), subject('locked', 1)], ['extra'])
  t.match(refused, { ok: false, refusedBy: ['locked'], read: [null] })
  t.ok(!refused.ok && refused.retryAfter > 0)
  t.same(await inner.getMany(['fails:{other}', 'released:{other}', 'fails:{locked}', 'released:{locked}']), before, 'locked: no count, no credit')
})

t.test('readAndIncrement: a lock whose subject is below its limit again holds the first count back; the attempt is counted without the condition', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  await inner.set('lock:{s}', String(Date.now() + 60_000), 60_000)
  await inner.increment('fails:{s}', 60_000)
  await inner.increment('released:{s}', 60_000)
  const limiter = new AttemptLimiter(inner, Date.now)
  t.match(await limiter.reserve([subject('s', 1)]), { ok: true, holds: [{ counted: 1 }] }, 'the credit since the lock counts')
  t.equal(await inner.get('fails:{s}'), '2', 'counted once')
})

t.test('readAndIncrement on a store whose condition holds only in its own hash slot: the counts made beside a lock are given back', async (t) => {
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  // as a cluster does it: each subject's lock holds back its own count only
  const slotted = Object.assign(unorderedStore(inner, () => false), {
    readAndIncrement: async (read: readonly string[], increments: ReadonlyArray<{ key: string, ttlMs: number }>, options?: { unlessAbove?: { keys: readonly string[], now: number } }) => {
      const values = await inner.getMany(read)
      const counts = await Promise.all(increments.map(async ({ key, ttlMs }) => {
        const lock = options?.unlessAbove?.keys.find(name => name === key.replace(/^fails:/, 'lock:'))
        return lock !== undefined && Number(await inner.get(lock)) > (options?.unlessAbove?.now as number) ? null : await inner.increment(key, ttlMs)
      }))
      return { values, counts }
    }
  })
  await inner.set('lock:{locked}', String(Date.now() + 60_000), 60_000)
  await inner.increment('fails:{locked}', 60_000)
  const limiter = new AttemptLimiter(slotted, Date.now)
  t.match(await limiter.reserve([subject('client', 5), subject('locked', 1)]), { ok: false, refusedBy: ['locked'] })
  t.same(await inner.getMany(['fails:{client}', 'released:{client}', 'fails:{locked}', 'released:{locked}']), ['1', '1', '1', null], 'the client\'s count given back; the locked subject not counted')
})
