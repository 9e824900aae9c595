import { randomBytes, randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { PostgresStore } from '../../lib/postgres.js'
import { RedisStore, type RedisStoreOptions } from '../../lib/redis.js'
import type { Clock } from '../../lib/core/clock.js'
import { startRedisCluster, type LocalCluster } from './redis-cluster.js'
import { redisStore } from './redis-store.js'

/** The stores a suite can run on: memory, one Redis, a Redis Cluster, PostgreSQL. */
export type StoreKind = 'memory' | 'redis' | 'cluster' | 'postgres'

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

interface Teardown { teardown: (fn: () => Promise<void>) => void }

// one local cluster (three masters) per test process, started by the first store that needs it
let localCluster: Promise<LocalCluster> | null = null

/** This process's local Redis Cluster, started on first use and stopped when the process's tests end. */
export async function sharedCluster (): Promise<LocalCluster> {
  if (localCluster === null) {
    localCluster = startRedisCluster({ masters: 3 })
    t.teardown(async () => { await (await localCluster)?.stop() })
  }
  return await localCluster
}

/** A RedisStore on `cluster` (default: this process's local cluster) with a unique prefix; its keys go and it closes when `t` ends. */
export async function clusterStore (
  t: Teardown,
  name: string,
  { cluster, options = {} }: { cluster?: LocalCluster, options?: Pick<RedisStoreOptions, 'waitForReplicas'> } = {}
): Promise<{ store: RedisStore, prefix: string }> {
  const on = cluster ?? await sharedCluster()
  const prefix = `jwt-login-test:${name}:${randomUUID()}:`
  const store = new RedisStore({ cluster: { nodes: on.nodes }, prefix, ...options })
  t.teardown(async () => {
    await store.close()
    await on.deleteKeys(prefix)
  })
  return { store, prefix }
}

// one schema (with the store's table) per test process on the test database, dropped when its tests end
let localTable: Promise<string> | null = null

/** This process's state table on the local PostgreSQL, created on first use. */
export async function sharedTable (): Promise<string> {
  if (localTable === null) {
    const schema = `jwt_login_test_${randomBytes(6).toString('hex')}`
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
    t.teardown(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
      await admin.end()
    })
    localTable = (async () => {
      await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)
      const migrator = new PostgresStore({ pool: admin, table: `${schema}.state` })
      await migrator.migrate()
      await migrator.close()
      return `${schema}.state`
    })()
  }
  return await localTable
}

/** A PostgresStore on this process's table with a unique prefix; closed when `t` ends (the schema goes with the process). */
export async function postgresStore (t: Teardown, name: string): Promise<{ store: PostgresStore, prefix: string }> {
  const prefix = `jwt-login-test:${name}:${randomUUID()}:`
  const store = new PostgresStore({ connectionString: DATABASE_URL, table: await sharedTable(), prefix })
  t.teardown(async () => { await store.close() })
  return { store, prefix }
}

/** A fresh store of `kind` for one test, cleaned up when it ends; the memory store takes `clock`. */
export async function storeOf (t: Teardown, kind: StoreKind, name: string, clock?: Clock): Promise<StateStore> {
  switch (kind) {
    case 'memory': {
      const memory = new MemoryStore(clock === undefined ? {} : { clock })
      t.teardown(async () => { await memory.close() })
      return memory
    }
    case 'redis': return redisStore(t, name).store
    case 'cluster': return (await clusterStore(t, name)).store
    case 'postgres': return (await postgresStore(t, name)).store
  }
}

/** The `create` and `destroy` of a conformance suite: stores as `storeOf` makes them, without a tap test. */
export interface StorePorts {
  create: () => Promise<StateStore>
  destroy: (store: StateStore) => Promise<void>
}

/**
 * Fresh stores of `kind` for a conformance suite, each cleaned up by
 * `destroy` as `storeOf` cleans up at a test's end (keys removed, store
 * closed; the suite's last rule has closed its store already, which each of
 * our stores allows).
 */
export function storePorts (kind: StoreKind, name: string, clock?: Clock): StorePorts {
  const cleanups = new Map<StateStore, Array<() => Promise<void>>>()
  return {
    create: async () => {
      const steps: Array<() => Promise<void>> = []
      const store = await storeOf({ teardown: (step) => { steps.push(step) } }, kind, name, clock)
      cleanups.set(store, steps)
      return store
    },
    destroy: async (store) => {
      const steps = cleanups.get(store) ?? []
      cleanups.delete(store)
      for (const step of steps.reverse()) await step()
    }
  }
}
