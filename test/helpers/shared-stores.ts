import { randomUUID } from 'node:crypto'
import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'
import type { Clock } from '../../lib/clock.js'
import { deleteClusterKeys, startRedisCluster, type LocalCluster } from './redis-cluster.js'
import { redisStore } from './redis-store.js'

/** The stores a suite can run on: memory, one Redis, a Redis Cluster. */
export type StoreKind = 'memory' | 'redis' | 'cluster'

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

/** A RedisStore on this process's local cluster with a unique prefix; its keys go and it closes when `t` ends. */
export async function clusterStore (t: Teardown, name: string): Promise<{ store: RedisStore, prefix: string }> {
  const cluster = await sharedCluster()
  const prefix = `jwt-login-test:${name}:${randomUUID()}:`
  const store = new RedisStore({ cluster: { nodes: cluster.nodes }, prefix })
  t.teardown(async () => {
    await store.close()
    const admin = cluster.client()
    await deleteClusterKeys(admin, prefix)
    await admin.quit()
  })
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
  }
}
