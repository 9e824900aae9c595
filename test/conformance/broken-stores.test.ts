/**
 * The StateStore suite catches a broken store: a good in-memory port
 * (a MemoryStore on an injected clock) passes every rule, and the same port
 * with one rule broken fails that rule and no other. Also: the suite's own
 * verdicts when the machine is too slow to tell, and its settings (the
 * contract quotes are checked in test/conformance/contracts.test.ts).
 */
import { setTimeout as sleep, setImmediate as tick } from 'node:timers/promises'
import t from 'tap'
import { ConformanceError, stateStoreRules, stateStoreSuite, type StateStoreSuiteOptions } from '../../lib/conformance.js'
import { atOnce, eachAtMost, settingsFrom, show } from '../../lib/conformance/store-kit.js'
import { MemoryStore, type ReadAndIncrementOptions, type StateStore } from '../../lib/index.js'
import { testClock } from '../helpers/app.js'
import { runSuite, type SuiteRun } from '../helpers/conformance.js'

type Port = StateStore & Required<Pick<StateStore, 'getMany' | 'readAndIncrement' | 'close' | 'attachLogger'>> & { ordered: boolean }

/** What set and compareAndSet wrote (and consume and delete did not remove), kept past its expiry: what a store that misses an expiry answers. */
interface Written { value: string, expiresAt: number }

/** What a breakage builds on: the good port, its memory store, and what was written through it. */
interface Base { good: Port, memory: MemoryStore, written: Map<string, Written> }

const clock = testClock()
const wait = async (ms: number): Promise<void> => { clock.advance(ms) }
/** Longer than any rule lets pass: a TTL a broken store puts in place of the one asked. */
const FOREVER = 1e12

/**
 * The good port: each call reaches the memory store at once (no await before
 * it), so the port keeps the store's order, and keeps `written` alike.
 */
function baseOn (memory: MemoryStore): Base {
  const written = new Map<string, Written>()
  const good: Port = {
    ordered: true,
    get: async (key) => await memory.get(key),
    getMany: async (keys) => await memory.getMany(keys),
    set: async (key, value, ttlMs) => {
      written.set(key, { value, expiresAt: clock() + ttlMs })
      await memory.set(key, value, ttlMs)
    },
    consume: async (key) => {
      written.delete(key)
      return await memory.consume(key)
    },
    increment: async (key, ttlMs) => await memory.increment(key, ttlMs),
    compareAndSet: async (key, expected, value, ttlMs) => {
      const wrote = memory.compareAndSet(key, expected, value, ttlMs)
      if (await wrote) written.set(key, { value, expiresAt: clock() + ttlMs })
      return await wrote
    },
    delete: async (key) => {
      written.delete(key)
      await memory.delete(key)
    },
    readAndIncrement: async (read, increments, options) => await memory.readAndIncrement(read, increments, options),
    close: async () => { await memory.close() },
    attachLogger: (log) => { memory.attachLogger(log) }
  }
  return { good, memory, written }
}

/** The live value written under `key`, as the good port would answer it; undefined when absent or expired. */
function liveOf (written: Map<string, Written>, key: string): string | undefined {
  const entry = written.get(key)
  return entry !== undefined && entry.expiresAt > clock() ? entry.value : undefined
}

/** Whether a key of `unlessAbove` holds a number `over` now, read from the memory store. */
async function heldBy (memory: MemoryStore, options: ReadAndIncrementOptions | undefined, over: (value: number, now: number) => boolean): Promise<boolean> {
  const held = options?.unlessAbove
  if (held === undefined) return false
  return (await memory.getMany(held.keys)).some(value => value !== null && over(Number(value), held.now))
}

/** Whether `key` matches `pattern` as SQL LIKE does (`%` any run of characters, `_` any one). */
function likes (pattern: string, key: string): boolean {
  const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('%', '.*').replaceAll('_', '.')
  return new RegExp(`^${source}$`, 's').test(key)
}

/** The other keys written that `pattern` matches as SQL LIKE does, their values live. */
function likeOthers (written: Map<string, Written>, pattern: string): string[] {
  return [...written.keys()].filter(key => key !== pattern && likes(pattern, key) && liveOf(written, key) !== undefined)
}

/** The suite on ports the breakage makes of the good one; every port's store is closed after its test. */
async function suiteOn (breaks: (base: Base) => Partial<Port>, settings: Partial<StateStoreSuiteOptions> = {}): Promise<SuiteRun> {
  const stores = new Map<StateStore, MemoryStore>()
  return await runSuite(async (test) => {
    await stateStoreSuite({
      test,
      wait,
      create: async () => {
        const base = baseOn(new MemoryStore({ clock }))
        const port = { ...base.good, ...breaks(base) }
        stores.set(port, base.memory)
        return port
      },
      destroy: async (port) => { await stores.get(port)?.close() },
      ...settings
    })
  })
}

const ALL = stateStoreRules.map(rule => `StateStore: ${rule.name}`)
/** The suite's default ttlGranularityMs. */
const GRANULARITY = 50
/** How the rules on keys a store could take for one another end their names. */
const ALIKE = 'not one it matches as a pattern or but for case or trailing spaces'

t.test('the good in-memory port passes every rule', async (t) => {
  const run = await suiteOn(() => ({}))
  t.same([...run.failed.keys()], [], 'no rule fails')
  t.same(run.passed, ALL, 'every rule passes, none skipped')
})

t.test('a bare store (no optional method, not ordered) passes, the rules that need what it lacks skipped with the reason', async (t) => {
  const run = await suiteOn(() => ({ getMany: undefined, readAndIncrement: undefined, close: undefined, attachLogger: undefined, ordered: false }))
  t.same([...run.failed.keys()], [])
  const needing = stateStoreRules.filter(rule => rule.needs !== undefined)
  t.equal(run.skipped.length, needing.length, 'each rule that needs a capability is skipped')
  t.match(run.skipped, needing.map(rule => new RegExp(`^StateStore: ${rule.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(skipped: the port does not provide ${rule.needs?.join(', ') as string}\\)$`)))
})

t.test('a rule whose method `supports` claimed but the store lacks fails, naming the method', async (t) => {
  const lacking = ['getMany', 'readAndIncrement', 'close', 'attachLogger'] as const
  const run = await runSuite(async (test) => {
    await stateStoreSuite({
      test,
      wait,
      supports: Object.fromEntries(lacking.map(name => [name, true])),
      create: async () => ({ ...baseOn(new MemoryStore({ clock })).good, getMany: undefined, readAndIncrement: undefined, close: undefined, attachLogger: undefined })
    })
  })
  const needing = stateStoreRules.filter(rule => rule.needs?.some(need => (lacking as readonly string[]).includes(need)) === true)
  t.strictSame([...run.failed.keys()], needing.map(rule => `StateStore: ${rule.name}`), 'the rules that need a method the store lacks fail, alone')
  for (const rule of needing) {
    t.match(run.failed.get(`StateStore: ${rule.name}`)?.message, `seen: the store has no ${rule.needs?.[0] as string}, though \`supports\` says it provides it`, rule.name)
  }
})

t.test('a store whose counters answer up to ttlGranularityMs more time left than their ttlMs passes', async (t) => {
  const over = (counted: { count: number, ttlMs: number } | null): { count: number, ttlMs: number } | null => counted === null ? null : { ...counted, ttlMs: counted.ttlMs + GRANULARITY }
  const run = await suiteOn(({ good }) => ({
    increment: async (key, ttlMs) => over(await good.increment(key, ttlMs)) as { count: number, ttlMs: number },
    readAndIncrement: async (read, increments, options) => {
      const answer = await good.readAndIncrement(read, increments, options)
      return { ...answer, counts: answer.counts.map(over) }
    }
  }))
  t.same([...run.failed.keys()], [])
  t.same(run.passed, ALL)
})

t.test('an honest store on whole-second timestamps passes with ttlGranularityMs 1000', async (t) => {
  // one millisecond past a whole second: each expiry, rounded up to the next whole second, comes 999 ms late
  clock.advance(1001 - clock() % 1000)
  const late = (ttlMs: number): number => Math.ceil((clock() + ttlMs) / 1000) * 1000 - clock()
  const run = await suiteOn(({ good }) => ({
    set: async (key, value, ttlMs) => { await good.set(key, value, late(ttlMs)) },
    increment: async (key, ttlMs) => await good.increment(key, late(ttlMs)),
    compareAndSet: async (key, expected, value, ttlMs) => await good.compareAndSet(key, expected, value, late(ttlMs)),
    readAndIncrement: async (read, increments, options) => await good.readAndIncrement(read, increments.map(({ key, ttlMs }) => ({ key, ttlMs: late(ttlMs) })), options)
  }), { ttlGranularityMs: 1000, briefTtlMs: 2000 })
  t.same([...run.failed.keys()], [])
  t.same(run.passed, ALL)
})

interface Breakage {
  /** The rule it breaks, as the suite names it. */
  rule: string
  /** What is broken. */
  what: string
  breaks: (base: Base) => Partial<Port>
}

const BREAKAGES: Breakage[] = [
  {
    rule: 'set replaces an earlier value and its expiry',
    what: 'set writes only over an absent key',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.compareAndSet(key, null, value, ttlMs) } })
  },
  {
    rule: 'a value expires within ttlGranularityMs of its ttlMs: get and consume answer null',
    what: 'set ignores its ttlMs',
    breaks: ({ good }) => ({ set: async (key, value) => { await good.set(key, value, FOREVER) } })
  },
  {
    rule: 'a value expires within ttlGranularityMs of its ttlMs: get and consume answer null',
    what: 'set expires a value three granularities late',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.set(key, value, ttlMs + 150) } })
  },
  {
    rule: 'a value expires within ttlGranularityMs of its ttlMs: get and consume answer null',
    what: 'get answers an expired value',
    breaks: ({ memory, written }) => ({
      get: async (key) => {
        // what was written before the call, as the store would keep it
        const kept = written.get(key)?.value ?? null
        return await memory.get(key) ?? kept
      }
    })
  },
  {
    rule: 'a value is still there just before its ttlMs ends',
    what: 'set rounds its ttlMs down to whole seconds',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.set(key, value, Math.floor(ttlMs / 1000) * 1000) } })
  },
  {
    rule: 'of concurrent consumes of one key, exactly one receives the value',
    what: 'consume reads, then deletes in a later step',
    breaks: ({ good }) => ({
      consume: async (key) => {
        const value = await good.get(key)
        await tick()
        await good.delete(key)
        return value
      }
    })
  },
  {
    rule: 'compareAndSet treats an expired value as absent',
    what: 'compareAndSet compares with an expired value',
    breaks: ({ good, written }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        const entry = written.get(key)
        if (entry === undefined || entry.expiresAt > clock()) return await good.compareAndSet(key, expected, value, ttlMs)
        if (entry.value !== expected) return false
        await good.set(key, value, ttlMs)
        return true
      }
    })
  },
  {
    rule: 'compareAndSet writes only over the expected value',
    what: 'compareAndSet compares without case',
    breaks: ({ good, written }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        const live = liveOf(written, key)
        if (expected === null || live === undefined || live === expected || live.toLowerCase() !== expected.toLowerCase()) return await good.compareAndSet(key, expected, value, ttlMs)
        await good.set(key, value, ttlMs)
        return true
      }
    })
  },
  {
    rule: 'a compareAndSet write applies its own ttlMs',
    what: 'compareAndSet keeps the expiry of the value it replaces',
    breaks: ({ good, written }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        const entry = written.get(key)
        if (expected === null || entry === undefined || liveOf(written, key) !== expected) return await good.compareAndSet(key, expected, value, ttlMs)
        await good.set(key, value, entry.expiresAt - clock())
        return true
      }
    })
  },
  {
    rule: 'of concurrent compareAndSet calls expecting one value, exactly one writes',
    what: 'compareAndSet over a value reads, then writes in a later step',
    breaks: ({ good }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        if (expected === null) return await good.compareAndSet(key, expected, value, ttlMs)
        const current = await good.get(key)
        await tick()
        if (current !== expected) return false
        await good.set(key, value, ttlMs)
        return true
      }
    })
  },
  {
    rule: 'of concurrent compareAndSet calls expecting null, exactly one writes',
    what: 'compareAndSet on an absent key reads, then writes in a later step',
    breaks: ({ good }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        if (expected !== null) return await good.compareAndSet(key, expected, value, ttlMs)
        const current = await good.get(key)
        await tick()
        if (current !== null) return false
        await good.set(key, value, ttlMs)
        return true
      }
    })
  },
  {
    rule: 'delete removes a value and a counter',
    what: 'delete leaves counters',
    breaks: ({ good, written }) => ({ delete: async (key) => { if (written.has(key)) await good.delete(key) } })
  },
  {
    rule: `delete removes its own key alone, ${ALIKE}`,
    what: 'delete also removes the values whose keys match its key as an SQL LIKE pattern',
    breaks: ({ good, written }) => ({
      delete: async (key) => {
        for (const other of likeOthers(written, key)) await good.delete(other)
        await good.delete(key)
      }
    })
  },
  {
    rule: `consume takes its own key alone, ${ALIKE}`,
    what: 'consume also deletes the values whose keys match its key as an SQL LIKE pattern',
    breaks: ({ good, written }) => ({
      consume: async (key) => {
        for (const other of likeOthers(written, key)) await good.delete(other)
        return await good.consume(key)
      }
    })
  },
  {
    rule: `compareAndSet writes under its own key alone, ${ALIKE}`,
    what: 'compareAndSet takes its key as an SQL LIKE pattern: expecting null, any key it matches counts; expecting a value, it writes every key it matches that holds that value',
    breaks: ({ good, written }) => ({
      compareAndSet: async (key, expected, value, ttlMs) => {
        const others = likeOthers(written, key)
        if (expected === null) return others.length === 0 && await good.compareAndSet(key, null, value, ttlMs)
        const wrote = await good.compareAndSet(key, expected, value, ttlMs)
        for (const other of others) if (wrote && liveOf(written, other) === expected) await good.set(other, value, ttlMs)
        return wrote
      }
    })
  },
  {
    rule: 'delete of an absent key resolves',
    what: 'delete throws for an absent key',
    breaks: ({ good, written }) => ({
      delete: async (key) => {
        if (!written.has(key) && await good.get(key) === null) throw new Error('no such key')
        await good.delete(key)
      }
    })
  },
  {
    rule: 'the first increment counts 1 and answers its ttlMs',
    what: 'the first increment answers its ttlMs in seconds',
    breaks: ({ good }) => ({
      increment: async (key, ttlMs) => {
        const counted = await good.increment(key, ttlMs)
        return counted.count === 1 ? { count: 1, ttlMs: Math.round(ttlMs / 1000) } : counted
      }
    })
  },
  {
    rule: 'the first increment counts 1 and answers its ttlMs',
    what: 'the first increment answers a time left over its ttlMs by more than ttlGranularityMs',
    breaks: ({ good }) => ({
      increment: async (key, ttlMs) => {
        const counted = await good.increment(key, ttlMs)
        return counted.count === 1 ? { count: 1, ttlMs: ttlMs + GRANULARITY + 1 } : counted
      }
    })
  },
  {
    rule: 'a counter expires once the time left that increment answered has passed, and starts again at 1',
    what: 'a counter never expires, though increment answers the time left',
    breaks: ({ good }) => {
      const due = new Map<string, number>()
      return {
        increment: async (key, ttlMs) => {
          const { count } = await good.increment(key, FOREVER)
          if (count === 1) due.set(key, clock() + ttlMs)
          return { count, ttlMs: (due.get(key) as number) - clock() }
        }
      }
    }
  },
  {
    rule: 'later increments keep the counter\'s expiry, whatever their ttlMs',
    what: 'increment sets the expiry again on every count',
    breaks: ({ memory }) => ({
      increment: async (key, ttlMs) => {
        const { count } = await memory.increment(key, ttlMs)
        // a set value counts on as a counter would, with the new expiry
        if (count > 1) await memory.set(key, String(count), ttlMs)
        return { count, ttlMs }
      }
    })
  },
  {
    rule: 'concurrent increments count 1 to N, each once',
    what: 'increment reads the counter, then creates it in a later step when it was absent',
    breaks: ({ good }) => ({
      increment: async (key, ttlMs) => {
        const seen = await good.get(key)
        await tick()
        if (seen === null) await good.delete(key)
        return await good.increment(key, ttlMs)
      }
    })
  },
  {
    rule: `increment counts under its own key alone, ${ALIKE}`,
    what: 'increment folds its key to lower case, as a counters table with a case-insensitive key',
    breaks: ({ good }) => {
      const counted = new Set<string>()
      const folded = (key: string): string => counted.has(key) ? key.toLowerCase() : key
      return {
        increment: async (key, ttlMs) => {
          counted.add(key)
          return await good.increment(folded(key), ttlMs)
        },
        get: async (key) => await good.get(folded(key)),
        delete: async (key) => { await good.delete(folded(key)) }
      }
    }
  },
  {
    rule: 'get reads a counter as its count',
    what: 'get answers a counter as a number',
    breaks: ({ memory, written }) => ({
      get: async (key) => {
        const value = await memory.get(key)
        return (written.has(key) || value === null ? value : Number(value)) as string | null
      }
    })
  },
  {
    rule: 'keys with colons, spaces, braces, wildcards, unicode and newlines are kept apart',
    what: 'set and get cut a key at its first newline',
    breaks: ({ good }) => ({
      set: async (key, value, ttlMs) => { await good.set(key.split('\n')[0] as string, value, ttlMs) },
      get: async (key) => await good.get(key.split('\n')[0] as string)
    })
  },
  {
    rule: 'values round-trip exactly: unicode, newlines, quotes, JSON, the empty string',
    what: 'set stores the UTF-8 bytes of a value read back as Latin-1',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.set(key, Buffer.from(value, 'utf8').toString('latin1'), ttlMs) } })
  },
  {
    rule: 'values round-trip exactly: unicode, newlines, quotes, JSON, the empty string',
    what: 'set turns CRLF into LF',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.set(key, value.replaceAll('\r\n', '\n'), ttlMs) } })
  },
  {
    rule: 'long keys that differ only at their end are kept apart',
    what: 'set and get cut keys to 255 characters',
    breaks: ({ good }) => ({
      set: async (key, value, ttlMs) => { await good.set(key.slice(0, 255), value, ttlMs) },
      get: async (key) => await good.get(key.slice(0, 255))
    })
  },
  {
    rule: 'a value of largeValueBytes round-trips',
    what: 'set cuts values to 32 KiB',
    breaks: ({ good }) => ({ set: async (key, value, ttlMs) => { await good.set(key, value.slice(0, 32 * 1024), ttlMs) } })
  },
  {
    rule: 'manyKeys values are each read back',
    what: 'get answers null for the keys written after the 500th',
    breaks: ({ good, written }) => ({
      get: async (key) => {
        const place = [...written.keys()].indexOf(key)
        return place >= 500 ? null : await good.get(key)
      }
    })
  },
  {
    rule: 'getMany answers the values in the order of the keys, null for an absent one',
    what: 'getMany answers the values found, then the nulls',
    breaks: ({ good }) => ({
      getMany: async (keys) => {
        const values = await good.getMany(keys)
        return [...values.filter(value => value !== null), ...values.filter(value => value === null)]
      }
    })
  },
  {
    rule: 'getMany answers a key asked twice at both places',
    what: 'getMany answers a key asked twice at its first place only',
    breaks: ({ good }) => ({
      getMany: async (keys) => {
        const values = await good.getMany(keys)
        return values.map((value, i) => keys.indexOf(keys[i] as string) === i ? value : null)
      }
    })
  },
  {
    rule: 'getMany answers null for an expired key',
    what: 'getMany answers an expired value',
    breaks: ({ good, written }) => ({
      getMany: async (keys) => {
        const kept = keys.map(key => written.get(key)?.value ?? null)
        return (await good.getMany(keys)).map((value, i) => value ?? kept[i] as string | null)
      }
    })
  },
  {
    rule: 'getMany of no keys answers an empty list',
    what: 'getMany of no keys fails, as an MGET without keys does',
    breaks: ({ good }) => ({
      getMany: async (keys) => {
        if (keys.length === 0) throw new Error('ERR wrong number of arguments for \'mget\' command')
        return await good.getMany(keys)
      }
    })
  },
  {
    rule: 'getMany reads manyKeys keys in one call',
    what: 'getMany answers at most 500 values',
    breaks: ({ good }) => ({ getMany: async (keys) => (await good.getMany(keys)).slice(0, 500) })
  },
  {
    rule: 'readAndIncrement reads every key before it counts',
    what: 'readAndIncrement counts, then reads',
    breaks: ({ good, memory }) => ({
      readAndIncrement: async (read, increments, options) => {
        if (await heldBy(memory, options, (value, now) => value > now)) return await good.readAndIncrement(read, increments, options)
        const counts = await Promise.all(increments.map(async ({ key, ttlMs }) => await memory.increment(key, ttlMs)))
        return { values: await memory.getMany(read), counts }
      }
    })
  },
  {
    rule: 'readAndIncrement answers the values read in their order, null for an absent or expired one',
    what: 'readAndIncrement answers an expired value',
    breaks: ({ good, written }) => ({
      readAndIncrement: async (read, increments, options) => {
        const kept = read.map(key => written.get(key)?.value ?? null)
        const answer = await good.readAndIncrement(read, increments, options)
        return { ...answer, values: answer.values.map((value, i) => value ?? kept[i] as string | null) }
      }
    })
  },
  {
    rule: 'readAndIncrement counts as increment does',
    what: 'readAndIncrement answers the ttlMs asked, not the time left',
    breaks: ({ good }) => ({
      readAndIncrement: async (read, increments, options) => {
        const answer = await good.readAndIncrement(read, increments, options)
        return { ...answer, counts: answer.counts.map((count, i) => count === null ? null : { count: count.count, ttlMs: (increments[i] as { ttlMs: number }).ttlMs }) }
      }
    })
  },
  {
    rule: 'concurrent readAndIncrement calls count 1 to N, each once',
    what: 'readAndIncrement reads each counter, then creates it in a later step when it was absent',
    breaks: ({ good, memory }) => ({
      readAndIncrement: async (read, increments, options) => {
        if (await heldBy(memory, options, (value, now) => value > now)) return await good.readAndIncrement(read, increments, options)
        const values = await memory.getMany(read)
        const seen = await memory.getMany(increments.map(({ key }) => key))
        await tick()
        for (const [i, value] of seen.entries()) if (value === null) await memory.delete((increments[i] as { key: string }).key)
        return { values, counts: await Promise.all(increments.map(async ({ key, ttlMs }) => await memory.increment(key, ttlMs))) }
      }
    })
  },
  {
    rule: 'readAndIncrement counts under its own keys alone, not ones they match as a pattern or but for case or trailing spaces',
    what: 'readAndIncrement folds the keys it counts to lower case',
    breaks: ({ good }) => ({
      readAndIncrement: async (read, increments, options) => await good.readAndIncrement(read, increments.map(({ key, ttlMs }) => ({ key: key.toLowerCase(), ttlMs })), options)
    })
  },
  {
    rule: 'of concurrent readAndIncrement calls, one counts all its counters before another counts any',
    what: 'readAndIncrement counts its counters one after the other',
    breaks: ({ good, memory }) => ({
      readAndIncrement: async (read, increments, options) => {
        if (await heldBy(memory, options, (value, now) => value > now)) return await good.readAndIncrement(read, increments, options)
        const values = memory.getMany(read)
        const counts = []
        for (const { key, ttlMs } of increments) {
          counts.push(await memory.increment(key, ttlMs))
          await tick()
        }
        return { values: await values, counts }
      }
    })
  },
  {
    rule: 'readAndIncrement counts nothing while a key of unlessAbove holds a number above now',
    what: 'readAndIncrement ignores unlessAbove',
    breaks: ({ good }) => ({ readAndIncrement: async (read, increments) => await good.readAndIncrement(read, increments) })
  },
  {
    rule: 'readAndIncrement counts when no key of unlessAbove holds a number above now',
    what: 'readAndIncrement holds back on a key that holds now itself',
    breaks: ({ good, memory }) => ({
      readAndIncrement: async (read, increments, options) => {
        if (!await heldBy(memory, options, (value, now) => value === now)) return await good.readAndIncrement(read, increments, options)
        return { values: await memory.getMany(read), counts: increments.map(() => null) }
      }
    })
  },
  {
    rule: 'calls made without waiting for one another take effect in the order made',
    what: 'an ordered store whose set waits a turn of the event loop',
    breaks: ({ good }) => ({
      set: async (key, value, ttlMs) => {
        await tick()
        await good.set(key, value, ttlMs)
      }
    })
  },
  {
    rule: 'attachLogger takes a logger and the store answers on',
    what: 'attachLogger throws',
    breaks: () => ({ attachLogger: () => { throw new Error('no logger wanted') } })
  },
  {
    rule: 'close resolves',
    what: 'close rejects',
    breaks: ({ good }) => ({
      close: async () => {
        await good.close()
        throw new Error('already closed')
      }
    })
  }
]

for (const { rule, what, breaks } of BREAKAGES) {
  t.test(`${what}: the suite fails "${rule}" and no other rule`, async (t) => {
    t.ok(stateStoreRules.some(known => known.name === rule), 'a rule of the suite')
    const run = await suiteOn(breaks)
    t.same([...run.failed.keys()], [`StateStore: ${rule}`])
    const error = run.failed.get(`StateStore: ${rule}`)
    t.ok(error instanceof ConformanceError, 'a ConformanceError')
    const contract = stateStoreRules.find(known => known.name === rule)?.contract as string
    t.match(error?.message, `StateStore: ${rule}\nthe contract: "${contract}"\nseen: `, 'naming the rule and quoting its contract')
    t.equal(run.passed.length, ALL.length - 1, 'every other rule passes')
  })
}

t.test('the suite says when the machine was too slow to tell, rather than blame the store', async (t) => {
  const rule = (name: string): (typeof stateStoreRules)[number] => stateStoreRules.find(known => known.name === name) as (typeof stateStoreRules)[number]

  // in real time, a TTL waited to its end less no granularity: each read comes after the value's whole TTL
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  const nearEnd = settingsFrom({ briefTtlMs: 2, ttlGranularityMs: 0, wait: async (ms) => { await sleep(ms + 10) } }, 2)
  await t.rejects(rule('a value is still there just before its ttlMs ends').run(store, nearEnd), /2 times the read came \d+ ms or more after the write, after the ttlMs of 502 ms, too late to tell/)

  // a read back slower than the brief TTL
  const slow = { ...baseOn(new MemoryStore({ clock })).good, get: async () => { await sleep(30); return null } }
  t.teardown(async () => { await slow.close() })
  const brief = settingsFrom({ briefTtlMs: 20, ttlGranularityMs: 0, wait }, 2)
  await t.rejects(rule('a value expires within ttlGranularityMs of its ttlMs: get and consume answer null').run(slow, brief), /read back \d+ ms after the write, not within its ttlMs of 20 ms; raise briefTtlMs/)
})

t.test('the settings are checked before any test is declared', async (t) => {
  const declared: string[] = []
  const test = (name: string): void => { declared.push(name) }
  const create = async (): Promise<StateStore> => new MemoryStore({ clock })
  const refused: Array<[Partial<StateStoreSuiteOptions>, RegExp]> = [
    [{ ttlGranularityMs: -1 }, /ttlGranularityMs must be an integer of at least 0/],
    [{ ttlGranularityMs: 1.5 }, /ttlGranularityMs must be an integer/],
    [{ briefTtlMs: 1 }, /briefTtlMs must be an integer of at least 2/],
    [{ briefTtlMs: 50, ttlGranularityMs: 50 }, /briefTtlMs must be longer than ttlGranularityMs/],
    [{ wait: 'soon' as unknown as StateStoreSuiteOptions['wait'] }, /wait must be a function/],
    [{ largeValueBytes: 0 }, /largeValueBytes must be an integer of at least 1/],
    [{ manyKeys: Number.NaN }, /manyKeys must be an integer of at least 1/],
    [{ parallelism: 1 }, /parallelism must be an integer of at least 2/]
  ]
  for (const [settings, message] of refused) {
    await t.rejects(stateStoreSuite({ test, create, supports: {}, ...settings }), { name: 'TypeError', message }, JSON.stringify(settings))
  }
  t.same(declared, [], 'nothing declared')
  await stateStoreSuite({ test, create, supports: {}, ttlGranularityMs: 0, briefTtlMs: 2, largeValueBytes: 1, manyKeys: 1, parallelism: 2, title: 'Mine' })
  t.equal(declared.length, stateStoreRules.length, 'the least settings taken')
  t.ok(declared.every(name => name.startsWith('Mine: ')), 'under the title given')
})

t.test('a rule\'s concurrent calls have all settled when it fails, and no new one starts after a failure', async (t) => {
  const settledCalls: number[] = []
  const call = async (i: number): Promise<number> => {
    await sleep(i === 1 ? 0 : 20)
    settledCalls.push(i)
    if (i === 1 || i === 2) throw new Error(`call ${i} failed`)
    return i
  }
  await t.rejects(atOnce(4, call), /call 1 failed/, 'the error of the first call that failed')
  t.same(settledCalls.sort(), [0, 1, 2, 3], 'every call settled before the rule failed')
  t.same(await atOnce(2, async (i) => i), [0, 1], 'the answers in the order made')

  const started: number[] = []
  settledCalls.length = 0
  await t.rejects(eachAtMost([0, 1, 2, 3, 4, 5], 2, async (item) => {
    started.push(item)
    await call(item)
  }), /call 1 failed/)
  t.same(started, [0, 1], 'no call started after call 1 failed')
  t.same(settledCalls.sort(), [0, 1], 'and call 0, running then, settled before the failure came')
})

t.test('the messages show what was seen: long strings cut, bigints with their n', async (t) => {
  t.equal(show(undefined), 'undefined')
  t.equal(show(null), 'null')
  t.equal(show('x'.repeat(121)), `"${'x'.repeat(60)}"… (121 characters)`)
  t.equal(show({ count: 3n }), '{"count":"3n"}')
  t.equal(show(Array.from({ length: 200 }, (_, i) => i)).length, 401, 'a long JSON cut at 400 characters and an ellipsis')
})
