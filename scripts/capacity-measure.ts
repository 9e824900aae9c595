/**
 * Measures what the capacity model in docs/deployment.md rests on, and
 * prints its tables for the page:
 *
 * 1. every route's usual path, run through the plugin on a memory store that
 *    records each call (test/helpers/capacity.ts): the calls, their round
 *    trips and the key and value bytes they write;
 * 2. for every entry in the page's entries table, the entry a real run wrote
 *    (its key and value), replicated `--entries` times with other keys of the
 *    same length, on Redis (`INFO memory` used_memory before and after, and
 *    `MEMORY USAGE` of sample keys) and on PostgreSQL (a scratch table of the
 *    PostgresStore's schema: `pg_total_relation_size`, indexes included).
 *
 * Run: node --import tsx scripts/capacity-measure.ts [--entries 10000] [--rounds 3]
 * Redis: REDIS_URL (default redis://127.0.0.1:6379; an empty database number
 * is picked, and only keys under a prefix of this run are written).
 * PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test;
 * a schema of this run, dropped at the end).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import pg from 'pg'
import { postgresSchemaSql } from '../lib/postgres.js'
import { RedisStore } from '../lib/redis.js'
import {
  costOf, docTable, entryBytes, plain, renderCalls, routeCell, runScenario, SCENARIOS, TABLES, writtenEntry,
  type EntryTemplate, type StoreCall
} from '../test/helpers/capacity.js'
import { startIdp } from '../test/helpers/oidc-provider.js'

const { values: args } = parseArgs({ options: { entries: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' } } })
const N = Number(args.entries)
const ROUNDS = Number(args.rounds)
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** A prefix as long as the stores' default `jwt-login:`, so the keys measured have their real size. */
const PREFIX = `cap-${randomBytes(3).toString('hex').slice(0, 5)}:`
const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** `n` distinct keys as long as `key`: its last 8 characters replaced by random ones (so index inserts land anywhere). */
function variants (key: string, n: number): string[] {
  const keys = new Set<string>()
  const head = key.slice(0, Math.max(0, key.length - 8))
  while (keys.size < n) {
    const tail = [...randomBytes(8)].map(byte => ALPHABET[byte % ALPHABET.length]).join('')
    keys.add(head + tail.slice(0, key.length - head.length))
  }
  return [...keys]
}

async function inChunks<T> (items: T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each))
}

interface RedisFigure { usedMemory: number, memoryUsage: number }

/** A Redis connection on a database number nobody uses (only keys of this run are written there anyway). */
async function emptyDatabase (): Promise<number> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    for (let db = 15; db > 0; db--) {
      await client.select(db)
      if (await client.dbsize() === 0) return db
    }
    return 0
  } finally {
    await client.quit()
  }
}

async function usedMemory (client: Redis): Promise<number> {
  const info = await client.info('memory')
  return Number((/^used_memory:(\d+)/m.exec(info) as RegExpExecArray)[1])
}

/** One round on Redis: N entries written as the store writes them, measured, deleted. */
async function redisRound (client: Redis, store: RedisStore, entry: EntryTemplate): Promise<RedisFigure> {
  const keys = variants(entry.key, N)
  // long enough that nothing expires while it is measured
  const ttlMs = Math.max(entry.ttlMs, 600_000)
  const before = await usedMemory(client)
  await inChunks(keys, 500, async key => entry.method === 'increment' ? await store.increment(key, ttlMs) : await store.set(key, entry.value, ttlMs))
  await sleep(200)
  const after = await usedMemory(client)
  const samples = keys.slice(0, 100)
  const usage = await Promise.all(samples.map(async key => Number(await client.call('MEMORY', 'USAGE', PREFIX + key, 'SAMPLES', '0'))))
  for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500).map(key => PREFIX + key))
  // the database's hash tables shrink back before the next round
  await sleep(1000)
  return { usedMemory: (after - before) / N, memoryUsage: usage.reduce((a, b) => a + b, 0) / usage.length }
}

async function measureRedis (entries: EntryTemplate[]): Promise<RedisFigure[]> {
  const db = await emptyDatabase()
  const url = `${REDIS_URL.replace(/\/\d*$/, '')}/${db}`
  const client = new Redis(url, { maxRetriesPerRequest: 1 })
  const store = new RedisStore({ url, prefix: PREFIX })
  try {
    const version = (/^redis_version:(\S+)/m.exec(await client.info('server')) as RegExpExecArray)[1] as string
    console.log(`Redis ${version}, database ${db}, key prefix "${PREFIX}", ${N} entries per kind, median of ${ROUNDS} rounds`)
    const figures: RedisFigure[] = []
    for (const entry of entries) {
      const rounds: RedisFigure[] = []
      for (let r = 0; r < ROUNDS; r++) rounds.push(await redisRound(client, store, entry))
      figures.push({ usedMemory: median(rounds.map(f => f.usedMemory)), memoryUsage: median(rounds.map(f => f.memoryUsage)) })
    }
    return figures
  } finally {
    const leftover = await client.keys(`${PREFIX}*`)
    if (leftover.length > 0) await client.del(...leftover)
    await store.close()
    await client.quit()
  }
}

/** Bytes per row on PostgreSQL, indexes included: N rows of the entry in a scratch table of the store's schema. */
async function measurePostgres (entries: EntryTemplate[]): Promise<number[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  const schema = `capacity_${randomBytes(4).toString('hex')}`
  const table = `${schema}.jwt_login_state`
  try {
    const version = (await client.query('SHOW server_version')).rows[0].server_version as string
    console.log(`PostgreSQL ${version}, scratch schema ${schema}, ${N} rows per kind, median of ${ROUNDS} rounds`)
    await client.query(`CREATE SCHEMA ${schema}`)
    // the store's own table and indexes, as migrate() creates them
    await client.query(postgresSchemaSql(table))
    const size = async (): Promise<number> => Number((await client.query(`SELECT pg_total_relation_size('${table}') AS size`)).rows[0].size)
    const figures: number[] = []
    for (const entry of entries) {
      const rounds: number[] = []
      for (let r = 0; r < ROUNDS; r++) {
        await client.query(`TRUNCATE ${table}`)
        const before = await size()
        // each row its own expiry, as rows written over time have
        await client.query(
          `INSERT INTO ${table} (key, value, expires_at)
           SELECT k, $2, now() + ($3::float8 + i) * interval '1 millisecond' FROM unnest($1::text[]) WITH ORDINALITY AS t(k, i)`,
          [variants(PREFIX + entry.key, N), entry.value, entry.ttlMs]
        )
        rounds.push((await size() - before) / N)
      }
      figures.push(median(rounds))
    }
    return figures
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  }
}

/** The most sessions a user's index lists (`sessions.maxPerUser`, default 50). */
const MAX_PER_USER = 50

/** A browser's `User-Agent` of a usual length (111 characters), for the full index. */
const BROWSER_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

/**
 * A user's session index as it is when full: the one a sign-in wrote, with
 * `MAX_PER_USER` sessions listed (ids of the plugin's form, a second apart,
 * each with how it began, an IPv4 address and a browser's `User-Agent`).
 * Sessions whose refresh family is gone stay listed until the index is full,
 * so a user who signs in at least every `refresh.lifetime` comes to this.
 */
function fullIndex (entry: EntryTemplate): EntryTemplate {
  const [, endsAt, family, method, ip] = (JSON.parse(entry.value) as Array<[string, number, number, string, string, string]>)[0] as [string, number, number, string, string, string]
  const listed = Array.from({ length: MAX_PER_USER }, (_, i) => [
    `${(endsAt - 1_209_600_000 - (MAX_PER_USER - i) * 1000).toString(36)}-${randomUUID()}`, endsAt - (MAX_PER_USER - i) * 1000, family, method, ip, BROWSER_USER_AGENT
  ])
  return { ...entry, value: JSON.stringify(listed) }
}

function printRouteTables (results: Array<{ route: string, calls: StoreCall[] }>): void {
  console.log(`\n| ${TABLES.calls.join(' | ')} |\n| --- | --- |`)
  for (const { route, calls } of results) console.log(`| ${routeCell(route)} | ${renderCalls(calls)} |`)
  console.log(`\n| ${TABLES.costs.join(' | ')} |\n| --- | ${TABLES.costs.slice(1).map(() => '---:').join(' | ')} |`)
  for (const { route, calls } of results) {
    const cost = costOf(calls)
    console.log(`| ${routeCell(route)} | ${cost.calls} | ${cost.writes} | ${cost.calls} | ${cost.roundTrips} | ${cost.clusterCommands} | ${cost.calls} | ${cost.bytesWritten} |`)
  }
}

async function main (): Promise<void> {
  console.log(`capacity-measure, ${new Date().toISOString()}, Node ${process.version}`)
  const idp = await startIdp()
  const results: Array<{ route: string, calls: StoreCall[] }> = []
  try {
    for (const scenario of SCENARIOS) results.push({ route: scenario.route, calls: await runScenario(scenario, idp) })
  } finally {
    await idp.close()
  }
  printRouteTables(results)

  const rows = docTable(readFileSync(new URL('../docs/deployment.md', import.meta.url), 'utf8'), TABLES.entries)
  const entries = rows.map(([, key, writtenBy]) => {
    const calls = results.find(result => result.route === plain(writtenBy as string))?.calls ?? []
    const entry = writtenEntry(calls, plain(key as string))
    if (entry === null) throw new Error(`no ${key} written by ${writtenBy}`)
    return entry
  })
  const index = rows.findIndex(([, key]) => plain(key as string) === 'sessions:user:<uid>')
  if (index !== -1) entries.push(fullIndex(entries[index] as EntryTemplate))
  console.log()
  const redis = await measureRedis(entries)
  const postgres = await measurePostgres(entries)
  console.log(`\n| ${TABLES.entries.join(' | ')} |\n| --- | --- | --- | --- | ---: | ---: | ---: |`)
  rows.forEach(([name, key, writtenBy, ttl], i) => {
    const entry = entries[i] as EntryTemplate
    const r = redis[i] as RedisFigure
    console.log(`| ${name} | ${key} | ${writtenBy} | ${ttl} | ${entryBytes(entry.key, entry.value)} | ${Math.round(r.usedMemory)} | ${Math.round(postgres[i] as number)} |`)
  })
  if (index !== -1) {
    const figures = (i: number): Record<'bytes' | 'redis' | 'postgres', number> => {
      const entry = entries[i] as EntryTemplate
      return { bytes: entryBytes(entry.key, entry.value), redis: (redis[i] as RedisFigure).usedMemory, postgres: postgres[i] as number }
    }
    const [one, full] = [figures(index), figures(entries.length - 1)]
    const each = (figure: 'bytes' | 'redis' | 'postgres'): number => Math.round((full[figure] - one[figure]) / (MAX_PER_USER - 1))
    console.log(`\nA full session index (${MAX_PER_USER} sessions listed): ${full.bytes} key + value bytes, ${Math.round(full.redis)} on Redis, ${Math.round(full.postgres)} on PostgreSQL; each session listed after the first: ${each('bytes')}, ${each('redis')} and ${each('postgres')}`)
  }
  console.log('\nRedis MEMORY USAGE per key (key, value and main-table entry; without the expiry-table entry and bucket pointers):')
  rows.forEach(([name], i) => { console.log(`  ${name}: ${Math.round((redis[i] as RedisFigure).memoryUsage)}`) })
  if (index !== -1) console.log(`  session index, full: ${Math.round((redis[entries.length - 1] as RedisFigure).memoryUsage)}`)
}

await main()
