/**
 * One benchmark server in its own process:
 * `node --import tsx bench/server.ts <kind> [args…]`, started by `run.ts`
 * with an IPC channel. It listens on 127.0.0.1:0, reports its port, and
 * measures its own CPU time and event-loop delay between the parent's `start`
 * and `stop`. It shuts down on `close`, SIGINT, SIGTERM or a lost parent.
 *
 * Arguments:
 * - `subject [hashing concurrency]`: the subject app, with
 *   `passwordHashing.concurrency` at that figure, the default without
 * - `bare-argon2 [at once]`: the bare argon2id route, at most that many
 *   verifications at once (the others wait in arrival order), unbounded
 *   without
 * - `bare-validate <answer bytes>`
 * - `subject-flood`: the subject with the bench user and one more, whose
 *   token the login flood's validate presents (see `floodApp`)
 * - `subject-passkeys`: the subject with passkeys on (RP ID `localhost`,
 *   origin `http://localhost`), no passkey enrolled yet
 * - `subject-memory <maxEntries>`: a MemoryStore of that bound, which takes
 *   the parent's `seed` messages (run with `--expose-gc`, to weigh its heap)
 * - `subject-redis <key prefix> [url]`: on the shared Redis, the prefix's keys
 *   are deleted on shutdown; on a Redis of the bench's own (`url`), the parent
 *   stops the whole server
 * - `subject-cluster <key prefix> <port,port,…>`: on the bench's local Redis
 *   Cluster (the parent stops it, keys and all)
 * - `subject-postgres <key prefix> <schema.table>`: in the bench's schema
 *   (the parent drops it)
 * - `bare-redis-validate <answer bytes> <key prefix>`,
 *   `bare-cluster-validate <answer bytes> <key prefix> <port,port,…>`,
 *   `bare-postgres-validate <answer bytes> <key prefix> <schema.table>`:
 *   `bare-validate` reading the store as jwt-login's validate does, the keys
 *   of the `subject-*` server of the same prefix (see bare-stores.ts); they
 *   write nothing
 * - `remote-redis <key prefix> <url> <users> <TOTP secret>`,
 *   `remote-postgres <key prefix> <schema.table> <url> <users> <TOTP secret>`:
 *   the latency run's subject (`remoteApp`), its store reached through the
 *   parent's delay proxy at `url`; the shared Redis's keys of the prefix are
 *   deleted on shutdown, straight, not through the proxy
 * - `subject-sizing <TOTP users> <TOTP secret> <hashing concurrency>`: the
 *   sizing run's subject (`sizingApp`), on a memory store
 */
import { randomUUID } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { MemoryStore } from '../lib/index.js'
import { RedisStore } from '../lib/redis.js'
import { bareArgon2App, bareHookApp, bareValidateApp, floodApp, remoteApp, sizingApp, subjectApp, subjectHookApp, subjectPasskeyApp, type SessionRead } from './apps.js'
import { clusterRead, postgresRead, redisRead } from './bare-stores.js'
import { postgresStore } from './postgres.js'
import { isServerKind, POSTGRES_URL, REDIS_URL, type ChildMessage, type ParentMessage, type Seeded } from './shared.js'

type Seeder = (key: string, count: number, ttlMs: number) => Promise<Seeded>

interface Built {
  app: FastifyInstance
  cleanup: () => Promise<void>
  seed?: Seeder
}

/** A parent that is gone gets nothing (the `disconnect` handler shuts down). */
function send (message: ChildMessage): void {
  if (process.connected) process.send?.(message)
}

async function deleteKeys (prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    for await (const keys of client.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await client.del(...keys)
    }
  } finally {
    await client.quit()
  }
}

function memoryInUse (): { heap: number, rss: number } {
  globalThis.gc?.()
  const usage = process.memoryUsage()
  return { heap: usage.heapUsed, rss: usage.rss }
}

/**
 * Writes `count` more sessions beside the real one under `key`: fresh session
 * ids (base-36 time, '-', a random UUID), each with its own copy of the real
 * record (a shared string would weigh nothing), and the refresh lifetime.
 */
function memorySeeder (store: MemoryStore): Seeder {
  let before: { heap: number, rss: number } | null = null
  return async (key, count, ttlMs) => {
    before ??= memoryInUse()
    const value = await store.get(key)
    if (value === null) throw new Error(`subject-memory: no session under ${key} to copy`)
    const head = `session:${Date.now().toString(36)}-`
    for (let i = 0; i < count; i++) await store.set(head + randomUUID(), Buffer.from(value).toString(), ttlMs)
    const now = memoryInUse()
    return { entries: store.counts.state, heapBytes: now.heap - before.heap, rssBytes: now.rss - before.rss }
  }
}

function benchPrefix (kind: string, prefix: string | undefined): string {
  if (prefix === undefined || !prefix.startsWith('bench:')) throw new Error(`${kind} needs a key prefix starting with bench:`)
  return prefix
}

async function storeSubject (kind: string, args: string[]): Promise<Built> {
  const [first, second] = args
  if (kind === 'subject-memory') {
    const maxEntries = Number(first)
    if (!Number.isInteger(maxEntries) || maxEntries <= 0) throw new Error('subject-memory needs its maxEntries')
    const store = new MemoryStore({ maxEntries })
    return { app: await subjectApp(store), cleanup: async () => { await store.close() }, seed: memorySeeder(store) }
  }
  const prefix = benchPrefix(kind, first)
  if (kind === 'subject-redis') {
    const store = new RedisStore({ url: second ?? REDIS_URL, prefix })
    const shared = second === undefined
    const cleanup = async (): Promise<void> => {
      await store.close()
      if (shared) await deleteKeys(prefix)
    }
    return { app: await subjectApp(store), cleanup }
  }
  if (second === undefined) throw new Error(`${kind} needs ${kind === 'subject-cluster' ? 'the cluster ports' : 'its table'}`)
  const store = kind === 'subject-cluster'
    ? new RedisStore({ cluster: { nodes: second.split(',').map(port => ({ host: '127.0.0.1', port: Number(port) })) }, prefix })
    : await postgresStore(prefix, second)
  return { app: await subjectApp(store), cleanup: async () => { await store.close() } }
}

/** A bare validate route reading the store as jwt-login does (the kind was checked before). */
async function bareStoreValidate (kind: string, args: string[]): Promise<Built> {
  const [bytes, prefix, where] = [Number(args[0]), benchPrefix(kind, args[1]), args[2]]
  if (!Number.isInteger(bytes) || bytes <= 0) throw new Error(`${kind} needs the answer size in bytes`)
  let read: SessionRead
  if (kind === 'bare-redis-validate') {
    read = redisRead(REDIS_URL, prefix)
  } else if (where === undefined) {
    throw new Error(`${kind} needs ${kind === 'bare-cluster-validate' ? 'the cluster ports' : 'its table'}`)
  } else {
    read = kind === 'bare-cluster-validate' ? clusterRead(where.split(',').map(Number), prefix) : await postgresRead(POSTGRES_URL, where, prefix)
  }
  return { app: await bareValidateApp(bytes, read), cleanup: read.close }
}

/** The latency run's subject: its store through the parent's proxy at `url`. */
async function remoteSubject (kind: string, args: string[]): Promise<Built> {
  const prefix = benchPrefix(kind, args[0])
  const [table, url, users, secret] = kind === 'remote-redis' ? [undefined, ...args.slice(1)] : args.slice(1)
  const count = Number(users)
  if (url === undefined || secret === undefined || !Number.isInteger(count) || count < 1) {
    throw new Error(`${kind} needs ${kind === 'remote-redis' ? '' : 'its table, '}the proxy's URL, the number of users and the TOTP secret`)
  }
  if (kind === 'remote-redis') {
    const store = new RedisStore({ url, prefix })
    const cleanup = async (): Promise<void> => {
      // the keys go even when the store's connection through the proxy is gone already
      try {
        await store.close()
      } finally {
        await deleteKeys(prefix)
      }
    }
    return { app: await remoteApp(store, count, secret), cleanup }
  }
  const store = await postgresStore(prefix, table as string, url)
  return { app: await remoteApp(store, count, secret), cleanup: async () => { await store.close() } }
}

/** The sizing run's subject: its TOTP users, their secret and the password-hashing bound from the arguments. */
async function sizingSubject (args: string[]): Promise<Built> {
  const [users, secret, concurrency] = [Number(args[0]), args[1], Number(args[2])]
  if (!Number.isInteger(users) || users < 1 || secret === undefined || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error('subject-sizing needs the number of TOTP users, the TOTP secret and the hashing concurrency')
  }
  return { app: await sizingApp(users, secret, concurrency), cleanup: async () => {} }
}

/** An optional positive integer argument (a bound of `subject` or `bare-argon2`): undefined when absent. */
function optionalBound (kind: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${kind}'s bound must be a positive integer, not ${raw}`)
  return value
}

async function build (kind: string, args: string[]): Promise<Built> {
  const nothing = async (): Promise<void> => {}
  switch (kind) {
    case 'bare-validate': {
      const bytes = Number(args[0])
      if (!Number.isInteger(bytes) || bytes <= 0) throw new Error('bare-validate needs the answer size in bytes')
      return { app: await bareValidateApp(bytes), cleanup: nothing }
    }
    case 'bare-redis-validate':
    case 'bare-cluster-validate':
    case 'bare-postgres-validate': return await bareStoreValidate(kind, args)
    case 'remote-redis':
    case 'remote-postgres': return await remoteSubject(kind, args)
    case 'bare-hook': return { app: await bareHookApp(), cleanup: nothing }
    case 'bare-argon2': return { app: await bareArgon2App(optionalBound(kind, args[0])), cleanup: nothing }
    case 'subject': return { app: await subjectApp(undefined, 50, undefined, optionalBound(kind, args[0])), cleanup: nothing }
    case 'subject-hook': return { app: await subjectHookApp(), cleanup: nothing }
    case 'subject-passkeys': return { app: await subjectPasskeyApp(), cleanup: nothing }
    case 'subject-flood': return { app: await floodApp(), cleanup: nothing }
    case 'subject-sizing': return await sizingSubject(args)
    // the store kinds (the kind was checked before)
    default: return await storeSubject(kind, args)
  }
}

/** The parent's messages: a measurement window's `start` and `stop`, `seed` (a store that can), `close`. */
function answerer (seed: Seeder | undefined, shutdown: () => void): (message: ParentMessage) => void {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  let cpuAt = process.cpuUsage()
  return (message) => {
    if (message.type === 'start') {
      delay.reset()
      delay.enable()
      cpuAt = process.cpuUsage()
      send({ type: 'started', id: message.id })
    } else if (message.type === 'stop') {
      const cpu = process.cpuUsage(cpuAt)
      delay.disable()
      send({
        type: 'measured',
        id: message.id,
        cpuMicros: cpu.user + cpu.system,
        loopDelayP99Ms: delay.percentile(99) / 1e6,
        loopDelayMaxMs: delay.max / 1e6
      })
    } else if (message.type === 'seed') {
      if (seed === undefined) throw new Error(`bench server ${process.argv[2] ?? '?'} cannot seed`)
      // a failed seed ends the process: the parent's waiting call fails with "exited"
      seed(message.key, message.count, message.ttlMs).then(
        (seeded) => { send({ type: 'seeded', id: message.id, ...seeded }) },
        (error: unknown) => { console.error('bench server seed:', error); process.exit(1) }
      )
    } else {
      shutdown()
    }
  }
}

async function main (): Promise<void> {
  const [kind, ...args] = process.argv.slice(2)
  if (!isServerKind(kind) || process.send === undefined) {
    throw new Error('usage: started by bench/run.ts with an IPC channel, as server.ts <kind> [args…]')
  }
  const { app, cleanup, seed } = await build(kind, args)

  let closing: Promise<void> | null = null
  const shutdown = (): void => {
    closing ??= (async () => {
      try {
        await app.close()
        await cleanup()
      } finally {
        process.exit(0)
      }
    })()
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
  process.on('disconnect', shutdown)
  // a parent lost while the app was being built
  if (!process.connected) shutdown()

  process.on('message', answerer(seed, shutdown))

  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  send({ type: 'ready', port: address.port })
}

try {
  await main()
} catch (error) {
  console.error(`bench server ${process.argv[2] ?? '?'}:`, error)
  process.exit(1)
}
