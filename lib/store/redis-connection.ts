// How the Redis store reaches Redis: its options, the connection it opens (fail-closed defaults, no auto-pipelining) and the checks of options that contradict each other.
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis'
import { requirePeer } from '../core/peer.js'
import type { StoreLogger } from './types.js'

const ioredis = requirePeer<typeof import('ioredis')>('ioredis', 'fastify-jwt-login/redis')

export interface RedisStoreOptions {
  /**
   * An ioredis client the host owns (a `Redis`, or a `Cluster` for a Redis
   * Cluster), or a URL / options, or cluster nodes, for one the store
   * creates and closes. Keep `enableAutoPipelining` off on a client of
   * yours: an auto-pipelined call is not sent before the batch ahead of it
   * is answered, so behind a stalled batch it reaches its deadline unsent.
   */
  client?: Redis | Cluster
  url?: string
  redisOptions?: RedisOptions
  /** The seed nodes of a Redis Cluster (and its options) for a `Cluster` the store creates. */
  cluster?: { nodes: ClusterNode[], options?: ClusterOptions }
  /**
   * Answer a write only once this many replicas have it (`WAIT`), so a
   * failover cannot lose a revocation or bring back a spent secret; a write
   * fewer replicas acknowledge within `timeoutMs` (default 500) fails closed
   * (503). Off by default (Redis replicates asynchronously), and not turned
   * on by itself when replicas are seen: after a failover every write would
   * then answer 503 until a replica is back in sync, a trade the operator
   * has to choose. A store that sees replicas with it off warns once at start.
   */
  waitForReplicas?: { replicas: number, timeoutMs?: number }
  /** Prepended to every key so several apps can share one Redis (default `jwt-login:`). */
  prefix?: string
  /**
   * Where the store reports a lost connection (at most one line per 10 s)
   * and a server that would lose its data on a restart. Without it the
   * plugin hands the store the Fastify logger at registration.
   */
  log?: StoreLogger
}

/** The `waitForReplicas` option checked, or `null` when writes do not wait. */
export function waitOption (option: RedisStoreOptions['waitForReplicas']): { replicas: number, timeoutMs: number } | null {
  if (option === undefined) return null
  const { replicas, timeoutMs = 500 } = option
  if (!Number.isInteger(replicas) || replicas < 1) throw new TypeError('RedisStore: waitForReplicas.replicas must be a whole number of at least 1')
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new TypeError('RedisStore: waitForReplicas.timeoutMs must be a whole number of ms of at least 1')
  return { replicas, timeoutMs }
}

/** Fail-closed defaults for a connection the store opens: one retry, a 2 s answer. */
const CONNECTION_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 1, commandTimeout: 2000 }

/**
 * Refuses options that contradict each other (only one way to reach Redis
 * is used), and a cluster that reads from replicas: a replica may not have
 * a revocation yet, so a revoked token would validate on another instance.
 */
export function checkConnection (options: RedisStoreOptions): void {
  const ways = [options.client !== undefined, options.cluster !== undefined, options.url !== undefined || options.redisOptions !== undefined]
  if (ways.filter(Boolean).length > 1) throw new TypeError('RedisStore: give one of client, cluster, or url / redisOptions')
  const scaleReads = options.client?.isCluster === true ? (options.client as Cluster).options.scaleReads : options.cluster?.options?.scaleReads
  if (scaleReads !== undefined && scaleReads !== 'master') {
    throw new TypeError('RedisStore: a cluster that reads from replicas (scaleReads) could find a revoked session still live; use scaleReads: \'master\'')
  }
}

/** The store's own client: one Redis, or a cluster, with the fail-closed defaults. */
export function ownClient (options: RedisStoreOptions): Redis | Cluster {
  if (options.cluster !== undefined) {
    return new ioredis.Cluster(options.cluster.nodes, {
      // off: after a failover an auto-pipelined command answered MOVED is not redirected, and the
      // client keeps the stale layout (seen in the failover test); plain commands follow MOVED
      enableAutoPipelining: false,
      ...options.cluster.options,
      redisOptions: { ...CONNECTION_DEFAULTS, ...options.cluster.options?.redisOptions }
    })
  }
  // off: an auto-pipelined call waits until the batch before it is answered, so on a stalled server
  // later calls queued behind a stuck batch (3.5 s, a sign-in 8 s); plain commands are still sent at once
  return new ioredis.Redis(options.url ?? 'redis://127.0.0.1:6379', { ...CONNECTION_DEFAULTS, enableAutoPipelining: false, ...options.redisOptions })
}
