// The Redis store's counting in Lua (one counter, and readAndIncrement: one script per hash slot, one in all on a single Redis), and how a batch is split into scripts.
import type { BatchIncrement, ReadAndIncrementOptions, ReadAndIncrementResult } from './types.js'

// One counter counted: INCR, the expiry set on the first count (or on a counter that lost it), and the count and the
// time left answered (on the first, the expiry just set: a PTTL could already be a millisecond short). The Lua both
// the increment script and the batch run, so a counter counts alike either way.
export const COUNT = `
local function count (key, ttl)
  local value = redis.call('INCR', key)
  if value == 1 then
    redis.call('PEXPIRE', key, ttl)
    return value, ttl
  end
  local left = redis.call('PTTL', key)
  if left < 0 then
    redis.call('PEXPIRE', key, ttl)
    left = ttl
  end
  return value, left
end
`

// KEYS[1], ARGV[1] its TTL: `count` of one counter.
export const INCREMENT = `${COUNT}
local value, left = count(KEYS[1], tonumber(ARGV[1]))
return { value, left }
`

// KEYS: the keys read, the counters, the keys of the condition; ARGV: their numbers, `now` (or ''), each counter's TTL.
// Reads first (GET answers false for an absent key, which stays a nil in the answer), then the condition: a key of it
// holding a number over `now` holds every count back (answered 1). Else each counter is counted.
export const READ_AND_INCREMENT = `${COUNT}
local reads, counters, held = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local answer = {}
for i = 1, reads do answer[i] = redis.call('GET', KEYS[i]) end
for i = 1, held do
  local value = tonumber(redis.call('GET', KEYS[reads + counters + i]))
  if value ~= nil and value > tonumber(ARGV[4]) then
    answer[reads + 1] = 1
    return answer
  end
end
answer[reads + 1] = 0
for i = 1, counters do
  answer[reads + 2 * i], answer[reads + 2 * i + 1] = count(KEYS[reads + i], tonumber(ARGV[4 + i]))
end
return answer
`

/** The numbers of keys, then the keys, then the script's arguments (`numkeys` first, as EVALSHA takes them). */
export type ScriptArgs = Array<string | number>

/** One script's share of a call: the positions (in the call) of its reads and counters, and its arguments. */
interface Part {
  reads: number[]
  counters: number[]
  held: string[]
}

/**
 * The hash tag Redis Cluster hashes a key by: what is between the first `{`
 * and the next `}` when that is not empty, else the whole key. Keys with the
 * same tag are in the same slot.
 */
export function hashTagOf (key: string): string {
  const open = key.indexOf('{')
  if (open === -1) return key
  const close = key.indexOf('}', open + 1)
  return close <= open + 1 ? key : key.slice(open + 1, close)
}

/** A whole number of milliseconds of at least one, as Redis takes a TTL. */
export function wholeMs (ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs))
}

/**
 * Runs a readAndIncrement as scripts: `split` puts every key in one script
 * (a single Redis), or (a cluster) the keys of each hash tag in one of their
 * own, all sent at once, a key of the condition with the counters of its
 * tag. `send` runs one script (a write: with WAIT when the store waits for
 * replicas). The keys are prefixed already.
 */
export async function readAndIncrementBy (
  send: (args: ScriptArgs) => Promise<Array<string | number | null>>,
  split: boolean,
  read: readonly string[],
  increments: readonly BatchIncrement[],
  options: ReadAndIncrementOptions
): Promise<ReadAndIncrementResult> {
  const held = options.unlessAbove
  const parts = new Map<string, Part>()
  const partOf = (key: string): Part => {
    const tag = split ? hashTagOf(key) : ''
    let part = parts.get(tag)
    if (part === undefined) parts.set(tag, part = { reads: [], counters: [], held: [] })
    return part
  }
  read.forEach((key, i) => { partOf(key).reads.push(i) })
  increments.forEach(({ key }, i) => { partOf(key).counters.push(i) })
  // a key of the condition matters only beside counters it can hold back
  for (const key of held?.keys ?? []) {
    const part = parts.get(split ? hashTagOf(key) : '')
    if (part !== undefined && part.counters.length > 0) part.held.push(key)
  }
  const values: ReadAndIncrementResult['values'] = read.map(() => null)
  const counts: ReadAndIncrementResult['counts'] = increments.map(() => null)
  await Promise.all([...parts.values()].map(async (part) => {
    const keys = [...part.reads.map(i => read[i] as string), ...part.counters.map(i => (increments[i] as BatchIncrement).key), ...part.held]
    const answer = await send([keys.length, ...keys, part.reads.length, part.counters.length, part.held.length, held === undefined ? '' : String(held.now), ...part.counters.map(i => wholeMs((increments[i] as BatchIncrement).ttlMs))])
    part.reads.forEach((at, j) => { values[at] = answer[j] === null || answer[j] === undefined ? null : String(answer[j]) })
    if (answer[part.reads.length] === 1) return
    part.counters.forEach((at, j) => { counts[at] = { count: Number(answer[part.reads.length + 1 + 2 * j]), ttlMs: Number(answer[part.reads.length + 2 + 2 * j]) } })
  }))
  return { values, counts }
}
