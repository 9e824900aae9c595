import { randomUUID } from 'node:crypto'
import t from 'tap'
import { runManyInstances } from '../helpers/many-instances.js'
import { sharedCluster } from '../helpers/shared-stores.js'

// Three host processes on a local Redis Cluster (three masters, started for this file), under a key prefix of this run.
const cluster = await sharedCluster()
const prefix = `jwt-login-test:many-instances:${randomUUID()}:`

await runManyInstances(t, {
  kind: 'redis-cluster',
  env: { REDIS_CLUSTER_NODES: cluster.nodes.map(node => `${node.host}:${node.port}`).join(','), REDIS_PREFIX: prefix },
  cleanup: async () => { await cluster.deleteKeys(prefix) }
})
