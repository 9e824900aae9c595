import { setTimeout as sleep } from 'node:timers/promises'
import type { ChainableCommander, Cluster, Redis } from 'ioredis'
import { deadlineOf, withinDeadline } from './deadline.js'
import { RateLimitedLine } from './log-line.js'
import { checkConnection, ownClient, waitOption, type RedisStoreOptions } from './redis-connection.js'
import { clusterReplicationOf, durabilityWarnings, ON_A_REPLICA, REPLICAS_UNACKNOWLEDGED, replicationOf } from './redis-server.js'
import { INCREMENT, READ_AND_INCREMENT, readAndIncrementBy, wholeMs } from './redis-batch.js'
import type { AtomicBatch, BatchIncrement, ReadAndIncrementOptions, ReadAndIncrementResult, StateStore, StoreLogger } from './types.js'

/** A cluster's answer that the key's slot is served elsewhere now (an ASK, during resharding, is not retried). */
const MOVED = /^MOVED /
/** A write moved by a failover is sent again after the slots are read again, this many times in all at most. */
const MAX_WRITE_ATTEMPTS = 5
/** The pause before the n-th retry of a moved write is n − 1 times this (0.3 s in all at most). */
const MOVED_PAUSE_MS = 50

// Write ARGV[3] for ARGV[4] ms only when the key holds ARGV[2] (or, with ARGV[1] = '1', is absent).
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (ARGV[1] == '1' and current == false) or (ARGV[1] == '0' and current == ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
  return 1
end
return 0
`

interface StoreCommands {
  jwtLoginIncrement: (key: string, ttlMs: number) => Promise<[number, number]>
  jwtLoginCompareAndSet: (key: string, absent: string, expected: string, value: string, ttlMs: number) => Promise<number>
  jwtLoginReadAndIncrement: (...args: Array<string | number>) => Promise<Array<string | number | null>>
}

type StoreClient = (Redis | Cluster) & StoreCommands

/** The commands a write is one of; the client and a pipeline both have each under the same name. */
type WriteCommand = 'set' | 'getdel' | 'del' | keyof StoreCommands
type Sends<R> = Record<WriteCommand, (...args: Array<string | number>) => R>

/**
 * Shared state for many instances, on one Redis or a Redis Cluster.
 * `consume` is one GETDEL, `increment` and `compareAndSet` one Lua script
 * each, all on one key, so single use, counting and session updates stay
 * atomic across processes and no command spans two hash slots. `getMany`
 * is one MGET on a single Redis, and one GET per key on a cluster (all sent
 * at once), since the keys it reads lie in different slots. Every call, on
 * a single Redis or a cluster, on a client of the store's or of the host's,
 * has a deadline (the client's `commandTimeout`, default 2 s), and a client
 * the store creates does not auto-pipeline, so that no call waits behind
 * another one's batch.
 */
export class RedisStore implements StateStore, AtomicBatch {
  /** A single Redis: one connection, whose commands run in the order sent. A cluster's nodes answer each on their own. */
  readonly ordered: boolean
  readonly system = 'redis'
  readonly #client: StoreClient
  readonly #owned: boolean
  #closing: Promise<void> | undefined
  readonly #prefix: string
  readonly #wait: { replicas: number, timeoutMs: number } | null
  readonly #deadlineMs: number
  #log: StoreLogger | null
  #serverChecked = false
  readonly #connectionErrors = new RateLimitedLine('jwt-login: the Redis store cannot reach Redis; requests that need it answer 503')
  #errorReported = false
  readonly #onReady = (): void => { this.#ready() }

  constructor (options: RedisStoreOptions = {}) {
    this.#prefix = options.prefix ?? 'jwt-login:'
    this.#wait = waitOption(options.waitForReplicas)
    checkConnection(options)
    const client = options.client ?? ownClient(options)
    this.#owned = options.client === undefined
    this.ordered = client.isCluster !== true
    this.#deadlineMs = deadlineOf(client.isCluster ? (client as Cluster).options.redisOptions?.commandTimeout : (client as Redis).options.commandTimeout)
    client.defineCommand('jwtLoginIncrement', { numberOfKeys: 1, lua: INCREMENT })
    client.defineCommand('jwtLoginCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET })
    // its number of keys comes first in each call
    client.defineCommand('jwtLoginReadAndIncrement', { lua: READ_AND_INCREMENT })
    this.#client = client as StoreClient
    this.#log = options.log ?? null
    // a client the host owns keeps the host's own error handling
    if (this.#owned) {
      client.on('error', (error: Error) => { this.#failed(error) })
      // a Cluster reports each node's connection errors apart
      client.on('node error', (error: Error) => { this.#failed(error) })
    }
    client.on('ready', this.#onReady)
    this.#checkServer()
  }

  attachLogger (log: StoreLogger): void {
    this.#log ??= log
    this.#checkServer()
  }

  /** One line per burst of connection errors, then at most one per interval, with the count of those not logged. */
  #failed (error: Error): void {
    if (this.#connectionErrors.report(this.#log, error)) this.#errorReported = true
  }

  #ready (): void {
    if (this.#errorReported) {
      this.#errorReported = false
      this.#log?.warn({ notLogged: this.#connectionErrors.notLogged }, 'jwt-login: the Redis store reaches Redis again')
    }
    this.#checkServer()
  }

  /** Once per store, on the first connection with a logger (not on a reconnection): warns when the server could lose jwt-login's state. */
  #checkServer (): void {
    const log = this.#log
    if (log === null || this.#serverChecked || this.#client.status !== 'ready') return
    this.#serverChecked = true
    this.#checkDurability(log)
    this.#checkReplicas(log)
  }

  /** Warns when the server keeps nothing on disk or may evict keys. */
  #checkDurability (log: StoreLogger): void {
    const names = ['save', 'appendonly', 'maxmemory-policy']
    Promise.all(names.map(async (name) => await this.#client.config('GET', name) as [string, string])).then((answers) => {
      for (const warning of durabilityWarnings(Object.fromEntries(answers))) {
        log.warn(warning.details, warning.message)
      }
    }, (error: Error) => {
      // CONFIG is often disabled on managed Redis: nothing to check then
      log.debug?.({ err: { message: error.message } }, 'jwt-login: could not read the Redis persistence settings; not checked')
    })
  }

  /**
   * Warns when Redis has replicas and writes do not wait for them (a
   * failover may then bring back what a write removed), or when the store
   * talks to a replica, which refuses writes.
   */
  #checkReplicas (log: StoreLogger): void {
    const wait = this.#wait
    const replication = this.#client.isCluster
      ? (this.#client as Cluster).cluster('NODES').then(nodes => clusterReplicationOf(nodes as string))
      : this.#client.info('replication').then(replicationOf)
    replication.then(({ onReplica, replicas }) => {
      if (onReplica) log.warn({ role: 'slave' }, ON_A_REPLICA)
      else if (replicas > 0 && wait === null) log.warn({ replicas }, REPLICAS_UNACKNOWLEDGED)
    }, (error: Error) => {
      // INFO or CLUSTER may be refused on managed Redis: nothing to check then
      log.debug?.({ err: { message: error.message } }, 'jwt-login: could not read the Redis replication state; replicas not checked')
    })
  }

  async get (key: string): Promise<string | null> {
    return await this.#bounded(this.#client.get(this.#prefix + key))
  }

  async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    // MGET takes at least one key
    if (keys.length === 0) return []
    const prefixed = keys.map(key => this.#prefix + key)
    // a cluster refuses an MGET across hash slots (CROSSSLOT): one GET each, in parallel
    if (this.#client.isCluster) return await this.#bounded(Promise.all(prefixed.map(async key => await this.#client.get(key))))
    return await this.#bounded(this.#client.mget(prefixed))
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#write('set', this.#prefix + key, value, 'PX', wholeMs(ttlMs))
  }

  async consume (key: string): Promise<string | null> {
    return await this.#write<string | null>('getdel', this.#prefix + key)
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    const [count, ttl] = await this.#write<[number, number]>('jwtLoginIncrement', this.#prefix + key, wholeMs(ttlMs))
    return { count, ttlMs: ttl }
  }

  async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    const written = await this.#write<number>('jwtLoginCompareAndSet', this.#prefix + key, expected === null ? '1' : '0', expected ?? '', value, wholeMs(ttlMs))
    return written === 1
  }

  async delete (key: string): Promise<void> {
    await this.#write('del', this.#prefix + key)
  }

  /**
   * One Lua script on a single Redis; on a cluster one per hash tag, all sent
   * at once (the attempt limiter tags each subject's counters alike, so each
   * subject is read and counted in one script, and its lock holds back its
   * own counts only).
   */
  async readAndIncrement (read: readonly string[], increments: readonly BatchIncrement[], options: ReadAndIncrementOptions = {}): Promise<ReadAndIncrementResult> {
    const prefixed = (key: string): string => this.#prefix + key
    const held = options.unlessAbove
    return await readAndIncrementBy(
      async (args) => await this.#write<Array<string | number | null>>('jwtLoginReadAndIncrement', ...args),
      this.#client.isCluster,
      read.map(prefixed),
      increments.map(({ key, ttlMs }) => ({ key: prefixed(key), ttlMs })),
      held === undefined ? {} : { unlessAbove: { keys: held.keys.map(prefixed), now: held.now } }
    )
  }

  /**
   * One write: the command alone, or, with `waitForReplicas`, the command and
   * a WAIT in one pipeline (on a cluster both go to the key's master), and an
   * error when fewer replicas than asked have it.
   */
  async #write<T = unknown> (command: WriteCommand, ...args: Array<string | number>): Promise<T> {
    const wait = this.#wait
    if (wait === null) return await this.#bounded((this.#client as unknown as Sends<Promise<T>>)[command](...args))
    const send = async (): Promise<[[Error | null, T], [Error | null, number]]> => {
      const pipeline = this.#client.pipeline() as unknown as Sends<ChainableCommander>
      return await this.#bounded(pipeline[command](...args).wait(wait.replicas, wait.timeoutMs).exec() as Promise<[[Error | null, T], [Error | null, number]]>)
    }
    let answers = await send()
    // a moved slot: the write did not run, and ioredis follows no redirect in a pipeline whose WAIT answered
    const moved = (): boolean => this.#client.isCluster && MOVED.test(answers[0][0]?.message ?? '')
    for (let attempt = 1; attempt < MAX_WRITE_ATTEMPTS && moved(); attempt++) {
      // the node asked for the layout may not have heard of the failover yet: each later ask waits longer
      await sleep(MOVED_PAUSE_MS * (attempt - 1))
      await this.#learnSlots()
      answers = await send()
    }
    const [[writeError, result], [waitError, acknowledged]] = answers
    const failed = writeError ?? waitError
    if (failed !== null) throw failed
    if (acknowledged < wait.replicas) throw new Error(`only ${acknowledged} of ${wait.replicas} replicas acknowledged the write within ${wait.timeoutMs} ms`)
    return result
  }

  /**
   * A call unanswered after the deadline fails (503 / 201): ioredis has no
   * timeout of its own on a client without `commandTimeout`, nor for
   * commands in its offline queue while no node of a cluster is reachable.
   */
  #bounded<T> (call: Promise<T>): Promise<T> {
    return withinDeadline(call, this.#deadlineMs, 'Redis')
  }

  /** Asks the cluster for its slot layout again (after a failover the client still sends to the old master). */
  async #learnSlots (): Promise<void> {
    await new Promise<void>((resolve) => { (this.#client as Cluster).refreshSlotsCache(() => { resolve() }) })
  }

  /** Closes a client the store created (once: a second call waits for the first), leaves a host's alone. */
  async close (): Promise<void> {
    this.#closing ??= this.#quit()
    await this.#closing
  }

  async #quit (): Promise<void> {
    this.#client.off('ready', this.#onReady)
    if (this.#owned) await this.#client.quit()
  }
}
