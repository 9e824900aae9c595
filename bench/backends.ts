/**
 * What the bench runs beside its server children, started when first needed
 * and stopped once at the end of the run (also after a failure or on
 * SIGINT): a Redis Cluster of local `redis-server` processes, a Redis of the
 * bench's own for the scaling run (so a million keys never burden the shared
 * Redis), and the bench's PostgreSQL schema.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { closedPort } from '../test/helpers/net.js'
import { answers, startRedisCluster, type LocalCluster } from '../test/helpers/redis-cluster.js'
import { BenchPostgres } from './postgres.js'

const CLUSTER_MASTERS = 3

export interface LocalRedis {
  url: string
  port: number
}

/** A `redis-server` on a spare loopback port, nothing kept on disk. */
async function startRedis (): Promise<{ redis: LocalRedis, child: ChildProcess }> {
  const port = await closedPort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const deadline = Date.now() + 10_000
  while (!await answers(port)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the bench's own redis-server on port ${port} did not answer`)
    }
    await sleep(100)
  }
  return { redis: { url: `redis://127.0.0.1:${port}`, port }, child }
}

/** The sum over `ports` of each Redis's keys (DBSIZE) and `used_memory` (INFO memory), in bytes. */
export async function redisUsage (ports: number[]): Promise<{ keys: number, bytes: number }> {
  const each = await Promise.all(ports.map(async (port) => {
    const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 })
    try {
      const info = await client.info('memory')
      const used = /^used_memory:(\d+)/m.exec(info)
      if (used === null) throw new Error(`no used_memory in INFO memory of port ${port}`)
      return { keys: await client.dbsize(), bytes: Number(used[1]) }
    } finally {
      client.disconnect()
    }
  }))
  return each.reduce((sum, one) => ({ keys: sum.keys + one.keys, bytes: sum.bytes + one.bytes }), { keys: 0, bytes: 0 })
}

export class Backends {
  #cluster: Promise<LocalCluster> | null = null
  #redis: Promise<{ redis: LocalRedis, child: ChildProcess }> | null = null
  #postgres: Promise<BenchPostgres | null> | null = null
  #exitGuard = (): void => {}
  #stopping: Promise<void> | null = null

  constructor () {
    // a parent that exits without stop() (an uncaught error) leaves no redis-server behind
    process.on('exit', () => { this.#exitGuard() })
  }

  /** The run's local Redis Cluster (three masters, no replicas). */
  async cluster (): Promise<LocalCluster> {
    this.#cluster ??= startRedisCluster({ masters: CLUSTER_MASTERS }).then((cluster) => {
      const previous = this.#exitGuard
      this.#exitGuard = () => {
        previous()
        for (const { port } of cluster.nodes) cluster.signal(port, 'SIGKILL')
      }
      return cluster
    })
    return await this.#cluster
  }

  /** The bench's own Redis (for the scaling run). */
  async redis (): Promise<LocalRedis> {
    this.#redis ??= startRedis().then((started) => {
      const previous = this.#exitGuard
      this.#exitGuard = () => {
        previous()
        started.child.kill('SIGKILL')
      }
      return started
    })
    return (await this.#redis).redis
  }

  /** The bench's PostgreSQL schema, or null when this tree has no `PostgresStore`. */
  async postgres (): Promise<BenchPostgres | null> {
    this.#postgres ??= BenchPostgres.open()
    return await this.#postgres
  }

  /** Stops whatever was started: the cluster's and the own Redis's processes, the PostgreSQL schema. A second call waits for the first. */
  async stop (): Promise<void> {
    this.#stopping ??= this.#stop()
    await this.#stopping
  }

  async #stop (): Promise<void> {
    const [cluster, redis, postgres] = [this.#cluster, this.#redis, this.#postgres]
    this.#cluster = this.#redis = this.#postgres = null
    // one that failed to start left nothing behind, and its error was thrown where it was needed
    const started = async <T>(promise: Promise<T> | null): Promise<T | null> => await promise?.catch(() => null) ?? null
    const results = await Promise.allSettled([
      started(cluster).then(async (c) => { await c?.stop() }),
      started(redis).then(async (own) => {
        if (own === null || own.child.exitCode !== null || own.child.signalCode !== null) return
        const exited = new Promise(resolve => own.child.once('exit', resolve))
        own.child.kill('SIGTERM')
        await exited
      }),
      started(postgres).then(async (p) => { await p?.close() })
    ])
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }
}
