import t from 'tap'
import { hashTagOf, readAndIncrementBy, type ScriptArgs } from '../../lib/store/redis-batch.js'

// How RedisStore splits a readAndIncrement into Lua scripts: one in all on a single Redis, one per hash tag on a cluster.

t.test('the hash tag is what Redis Cluster hashes: the first {…} when not empty, else the whole key', async (t) => {
  t.equal(hashTagOf('jwt-login:fails:{login:user:abc}'), 'login:user:abc')
  t.equal(hashTagOf('jwt-login:session:x'), 'jwt-login:session:x', 'no brace')
  t.equal(hashTagOf('a{}b{c}'), 'a{}b{c}', 'an empty first tag: the whole key')
  t.equal(hashTagOf('a{b'), 'a{b', 'no closing brace')
  t.equal(hashTagOf('{x}{y}'), 'x', 'the first tag only')
})

/** A fake Redis for the scripts: records each script's arguments and answers as the script would on an empty database, or held back. */
function recorder (held: (keys: string[]) => boolean): { sent: ScriptArgs[], send: (args: ScriptArgs) => Promise<Array<string | number | null>> } {
  const sent: ScriptArgs[] = []
  return {
    sent,
    send: async (args) => {
      sent.push(args)
      const numKeys = args[0] as number
      const keys = args.slice(1, numKeys + 1) as string[]
      const [reads, counters, locks] = args.slice(numKeys + 1, numKeys + 4) as number[]
      const answer: Array<string | number | null> = keys.slice(0, reads).map(key => `value of ${key}`)
      if (held(keys.slice((reads as number) + (counters as number), (reads as number) + (counters as number) + (locks as number)))) return [...answer, 1]
      answer.push(0)
      for (let i = 0; i < (counters as number); i++) answer.push(i + 1, Number(args[numKeys + 5 + i]))
      return answer
    }
  }
}

t.test('a single Redis: one script with every key, the condition\'s keys last', async (t) => {
  const fake = recorder(() => false)
  const result = await readAndIncrementBy(fake.send, false, ['fails:{a}', 'other'], [{ key: 'fails:{a}', ttlMs: 1000.4 }, { key: 'fails:{b}', ttlMs: 2000 }], { unlessAbove: { keys: ['lock:{a}', 'lock:{b}'], now: 42 } })
  t.same(fake.sent, [[6, 'fails:{a}', 'other', 'fails:{a}', 'fails:{b}', 'lock:{a}', 'lock:{b}', 2, 2, 2, '42', 1001, 2000]], 'whole milliseconds, at least one')
  t.same(result, { values: ['value of fails:{a}', 'value of other'], counts: [{ count: 1, ttlMs: 1001 }, { count: 2, ttlMs: 2000 }] })
  const none = recorder(() => false)
  t.same(await readAndIncrementBy(none.send, false, [], [], {}), { values: [], counts: [] })
  t.same(none.sent, [], 'nothing asked: no script')
})

t.test('a cluster: one script per hash tag, all at once; a lock holds back the counters of its own tag only', async (t) => {
  const fake = recorder((locks) => locks.includes('lock:{a}'))
  const result = await readAndIncrementBy(fake.send, true, ['fails:{a}', 'fails:{b}', 'flow'], [{ key: 'fails:{a}', ttlMs: 1000 }, { key: 'fails:{b}', ttlMs: 1000 }], { unlessAbove: { keys: ['lock:{a}', 'lock:{b}', 'lock:{c}'], now: 7 } })
  t.same(fake.sent, [
    [3, 'fails:{a}', 'fails:{a}', 'lock:{a}', 1, 1, 1, '7', 1000],
    [3, 'fails:{b}', 'fails:{b}', 'lock:{b}', 1, 1, 1, '7', 1000],
    [1, 'flow', 1, 0, 0, '7']
  ], 'a lock of a tag without counters is not sent')
  t.same(result, { values: ['value of fails:{a}', 'value of fails:{b}', 'value of flow'], counts: [null, { count: 1, ttlMs: 1000 }] })
})

t.test('a null in a script\'s answer reads as absent', async (t) => {
  const result = await readAndIncrementBy(async () => [null, 'v', 0], false, ['absent', 'present'], [], {})
  t.same(result, { values: [null, 'v'], counts: [] })
})
