// What the Redis store learns of its server at start: persistence and eviction, replication, and what it warns about them.
/** What the store's Redis says about keeping its data (`CONFIG GET` answers; absent when not known). */
export interface RedisDurability {
  save?: string
  appendonly?: string
  'maxmemory-policy'?: string
}

/** The warnings a server's settings call for: jwt-login's state must survive a restart and must never be evicted. */
export function durabilityWarnings (config: RedisDurability): Array<{ details: object, message: string }> {
  const warnings: Array<{ details: object, message: string }> = []
  if (config.save === '' && config.appendonly === 'no') {
    warnings.push({
      details: { save: config.save, appendonly: config.appendonly },
      message: 'jwt-login: Redis keeps nothing on disk (no RDB save points, no AOF): revocations and spent refresh tokens are lost when it restarts'
    })
  }
  const policy = config['maxmemory-policy']
  if (policy !== undefined && policy !== 'noeviction') {
    warnings.push({
      details: { 'maxmemory-policy': policy },
      message: 'jwt-login: Redis may evict keys when its memory is full: a revocation or a spent refresh token could vanish; use maxmemory-policy noeviction'
    })
  }
  return warnings
}

/** The warning when Redis has replicas and writes do not wait for them. */
export const REPLICAS_UNACKNOWLEDGED = 'jwt-login: Redis has replicas but the Redis store\'s option waitForReplicas is off: a failover can lose revocations and spent single-use secrets that were already answered, so a revoked session may work again; set waitForReplicas so that a write answers only once a replica has it'
export const ON_A_REPLICA = 'jwt-login: the Redis store is connected to a replica (role:slave), which refuses writes: every request that writes answers 503; connect it to the master'

/** What Redis says about its replication: whether the store talks to a replica, and how many replicas there are. */
export interface Replication { onReplica: boolean, replicas: number }

/** From a single Redis's `INFO replication` (`role:slave`, `connected_slaves:N`). */
export function replicationOf (info: string): Replication {
  const fields = new Map(info.split('\r\n').map(line => line.split(':', 2) as [string, string]))
  return { onReplica: fields.get('role') === 'slave', replicas: Number(fields.get('connected_slaves')) }
}

/**
 * From a cluster's `CLUSTER NODES`: every node flagged a replica, synced or
 * not (`CLUSTER SLOTS`, which ioredis reads, leaves out a replica that has
 * not yet reported its offset). The store's cluster client talks to masters.
 */
export function clusterReplicationOf (nodes: string): Replication {
  return { onReplica: false, replicas: nodes.split('\n').filter(line => /^\S+ \S+ \S*\bslave\b/.test(line)).length }
}
