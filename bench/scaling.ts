/**
 * The scaling run: for each store, one jwt-login server signs in once, then
 * the store is seeded up to each number of live sessions (10 000, 100 000,
 * 1 000 000 by default), and at each level the bench measures validate
 * throughput (a token whose session is among them) and the store's size.
 *
 * Seeding copies the real session record: fresh session ids (base-36 time,
 * '-', a random UUID) under the store's prefix, the same value, the refresh
 * lifetime as TTL. Memory: in the server's process (an IPC `seed` message),
 * the store bounded above the largest level; Redis: on a Redis of the bench's
 * own, pipelined SET PX; Redis Cluster: the same on the run's local cluster,
 * pipelined per node; PostgreSQL: one INSERT … SELECT generate_series.
 */
import { randomUUID } from 'node:crypto'
import { Redis, type Cluster } from 'ioredis'
import type { Backends } from './backends.js'
import { redisUsage } from './backends.js'
import { failures } from './compare.js'
import { measure, probe, warmUp, type Run } from './load.js'
import { ServerProcess, stopAll } from './servers.js'
import { REFRESH_LIFETIME_MS } from './shared.js'
import { sessionIdOf, signIn, validateTarget } from './targets.js'

const CONNECTIONS = 50
const SEED_BATCH = 10_000

export interface ScalingSettings {
  sizes: number[]
  seconds: number
  warmUpSeconds: number
}

/** One store under test: its server, and how to seed it and weigh it. */
interface Subject {
  store: string
  /** how `bytes` is measured, for the table's note */
  weighing: string
  start: () => Promise<ServerProcess>
  /** once signed in: the store's key of the real session (without the store's prefix) */
  prepare: (server: ServerProcess, sessionKey: string) => Promise<void>
  seed: (count: number) => Promise<void>
  size: () => Promise<{ entries: number, bytes: number, note?: string }>
  /** closes the bench's own clients (the server is stopped apart) */
  close: () => Promise<void>
}

export interface ScalingRow {
  store: string
  sessions: number
  entries: number
  run: Run
  bytes: number
  seedSeconds: number
}

function memorySubject (largest: number): Subject {
  let server: ServerProcess | null = null
  let key = ''
  let last = { entries: 0, bytes: 0, note: '' }
  return {
    store: 'memory',
    weighing: 'V8 heap in use after a full GC, minus the same before seeding (MemoryStore.counts.state entries)',
    start: async () => await ServerProcess.start('subject-memory', String(largest + 10_000)),
    prepare: async (s, sessionKey) => { server = s; key = sessionKey },
    seed: async (count) => {
      const seeded = await (server as ServerProcess).seed(key, count, REFRESH_LIFETIME_MS)
      last = { entries: seeded.entries, bytes: seeded.heapBytes, note: `, RSS ${megabytes(seeded.rssBytes)} above its size before seeding` }
    },
    size: async () => last,
    close: async () => {}
  }
}

/**
 * Seeds `count` copies of the session under `key` (with prefix), batch by
 * batch: one pipeline per batch on a single Redis; on a cluster through an
 * auto-pipelining client, which sends one pipeline per node.
 */
async function seedRedis (client: Redis | Cluster, prefix: string, key: string, count: number): Promise<void> {
  const [value, ttl] = [await client.get(prefix + key), await client.pttl(prefix + key)]
  if (value === null || ttl <= 0) throw new Error(`scaling: no session under ${prefix + key} to copy`)
  const head = `${prefix}session:${Date.now().toString(36)}-`
  for (let done = 0; done < count; done += SEED_BATCH) {
    const batch = Math.min(SEED_BATCH, count - done)
    if (client.isCluster) {
      await Promise.all(Array.from({ length: batch }, async () => await client.set(head + randomUUID(), value, 'PX', ttl)))
      continue
    }
    const pipeline = client.pipeline()
    for (let i = 0; i < batch; i++) pipeline.set(head + randomUUID(), value, 'PX', ttl)
    const failed = (await pipeline.exec())?.find(([error]) => error !== null)
    if (failed !== undefined) throw new Error('scaling: a SET of the seed failed', { cause: failed[0] })
  }
}

function redisSubject (store: string, prefix: string, open: () => Promise<{ args: string[], ports: number[], client: Redis | Cluster }>): Subject {
  let ports: number[] = []
  let client: Redis | Cluster | null = null
  let key = ''
  let before = 0
  return {
    store,
    weighing: `INFO memory used_memory minus the same before seeding${store === 'Redis' ? '' : ', summed over the masters'} (DBSIZE keys, with the counters of the one sign-in)`,
    start: async () => {
      const opened = await open()
      ports = opened.ports
      client = opened.client
      return await ServerProcess.start(store === 'Redis' ? 'subject-redis' : 'subject-cluster', prefix, ...opened.args)
    },
    prepare: async (_server, sessionKey) => {
      key = sessionKey
      before = (await redisUsage(ports)).bytes
    },
    seed: async (count) => { await seedRedis(client as Redis | Cluster, prefix, key, count) },
    size: async () => {
      const usage = await redisUsage(ports)
      return { entries: usage.keys, bytes: usage.bytes - before }
    },
    close: async () => { client?.disconnect() }
  }
}

async function postgresSubject (backends: Backends, prefix: string): Promise<Subject | null> {
  const postgres = await backends.postgres()
  if (postgres === null) return null
  const table = postgres.table('scaling_state')
  let key = ''
  return {
    store: 'PostgreSQL',
    weighing: 'pg_total_relation_size of the bench\'s table (heap, indexes, TOAST; rows of this prefix\'s sessions)',
    start: async () => await ServerProcess.start('subject-postgres', prefix, table),
    prepare: async (_server, sessionKey) => { key = sessionKey },
    seed: async (count) => { await postgres.seed(table, prefix + key, prefix, count) },
    size: async () => await postgres.size(table, prefix),
    // the bench's schema is dropped with the other backends at the end of the run
    close: async () => {}
  }
}

async function subjects (backends: Backends, largest: number): Promise<Subject[]> {
  const prefix = (store: string): string => `bench:${process.pid}:scaling-${store}:`
  const list = [
    memorySubject(largest),
    redisSubject('Redis', prefix('redis'), async () => {
      const own = await backends.redis()
      return { args: [own.url], ports: [own.port], client: new Redis(own.url) }
    }),
    redisSubject('Redis Cluster', prefix('cluster'), async () => {
      const cluster = await backends.cluster()
      const ports = cluster.nodes.map(node => node.port)
      return { args: [ports.join(',')], ports, client: cluster.client({ enableAutoPipelining: true }) }
    })
  ]
  const postgres = await postgresSubject(backends, prefix('postgres'))
  if (postgres === null) console.log('scaling: PostgreSQL skipped: this tree has no lib/postgres.ts')
  return postgres === null ? list : [...list, postgres]
}

/** Seeds up to each level, measures validate and weighs the store; the server is stopped afterwards, whatever happens. */
async function scaleOne (subject: Subject, settings: ScalingSettings): Promise<ScalingRow[]> {
  const rows: ScalingRow[] = []
  try {
    const server = await subject.start()
    const token = await signIn(server)
    const target = validateTarget(server, token)
    await subject.prepare(server, `session:${sessionIdOf(token)}`)
    let live = 1
    for (const sessions of settings.sizes) {
      const started = performance.now()
      await subject.seed(sessions - live)
      live = sessions
      const seedSeconds = (performance.now() - started) / 1000
      await probe(target)
      await warmUp(target, CONNECTIONS, settings.warmUpSeconds)
      const run = await measure(target, CONNECTIONS, settings.seconds)
      const { entries, bytes, note } = await subject.size()
      const row: ScalingRow = { store: subject.store, sessions, entries, run, bytes, seedSeconds }
      rows.push(row)
      console.log(`scaling ${subject.store} ${sessions}: seeded in ${seedSeconds.toFixed(1)} s, ${run.reqPerSec.toFixed(0)} req/s, p99 ${run.p99Ms} ms, ${entries} entries, ${megabytes(bytes)}${note ?? ''}${failures(run) > 0 ? ` (WARNING: ${run.non2xx} non-2xx answers, ${run.errors} errors)` : ''}`)
    }
  } finally {
    await stopAll()
    await subject.close()
  }
  return rows
}

function megabytes (bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/** Runs every store through every level; answers the rows and how each store was weighed. */
export async function scaling (backends: Backends, settings: ScalingSettings): Promise<{ rows: ScalingRow[], weighing: string[] }> {
  const largest = Math.max(...settings.sizes)
  const rows: ScalingRow[] = []
  const list = await subjects(backends, largest)
  for (const subject of list) rows.push(...await scaleOne(subject, settings))
  return { rows, weighing: list.map(subject => `${subject.store}: ${subject.weighing}`) }
}

/** The scaling table and how each store's bytes were measured. */
export function printScaling ({ rows, weighing }: { rows: ScalingRow[], weighing: string[] }): void {
  console.log('\n| store | live sessions | entries in store | validate req/s | p99 ms | store bytes | bytes per session | seeding s |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const r of rows) {
    console.log(`| ${r.store} | ${r.sessions} | ${r.entries} | ${r.run.reqPerSec.toFixed(0)} | ${r.run.p99Ms} | ${megabytes(r.bytes)} | ${(r.bytes / r.sessions).toFixed(0)} | ${r.seedSeconds.toFixed(1)} |`)
  }
  console.log('\nStore bytes:')
  for (const line of weighing) console.log(`- ${line}.`)
}
