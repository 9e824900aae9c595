import { setTimeout as sleep } from 'node:timers/promises'
import type { Pool, PoolConfig, QueryResult, QueryResultRow } from 'pg'
import { requirePeer } from '../core/peer.js'
import { deadlineOf, withinDeadline } from './deadline.js'
import { RateLimitedLine } from './log-line.js'
import { POSTGRES_DEFAULT_TABLE, postgresSchemaSql, statements, tableNames, type Operation, type Statement } from './postgres-sql.js'
import type { AtomicBatch, BatchIncrement, ReadAndIncrementOptions, ReadAndIncrementResult, StateStore, StoreLogger } from './types.js'

const pg = requirePeer<typeof import('pg')>('pg', 'fastify-jwt-login/postgres')

export interface PostgresStoreOptions {
  /**
   * A connection string for a pool the store creates (with fail-closed
   * timeouts) and ends on `close()`. Give this or `pool`, not both.
   */
  connectionString?: string
  /** A `pg` pool the host owns: the store adds no listener to it and never ends it. */
  pool?: Pool
  /** Overrides the settings of the pool the store creates (only with `connectionString`). */
  poolOptions?: PoolConfig
  /** Prepended to every key so several apps can share one table (default `jwt-login:`). */
  prefix?: string
  /** The table, `name` or `schema.name` (default `jwt_login_state`); `migrate()` creates it. */
  table?: string
  /**
   * Prepare each statement once per connection (default `true`): validate's
   * one query is then neither parsed nor planned per request. Turn it off
   * behind a pooler that cannot keep prepared statements (PgBouncer before
   * 1.21 in transaction mode).
   */
  preparedStatements?: boolean
  /** How often expired rows are deleted, in ms (default 60 000). */
  sweepIntervalMs?: number
  /** Most rows one sweep statement deletes (default 1 000); while statements find full batches, more follow. */
  sweepBatch?: number
  /**
   * Where the store reports a lost connection of its own pool, a failing
   * sweep (each at most one line per 10 s) and an UNLOGGED table. Without it
   * the plugin hands the store the Fastify logger at registration.
   */
  log?: StoreLogger
}

/** The pause between two sweep statements while expired rows fill whole batches. */
const SWEEP_PAUSE_MS = 100

/** What a pool the store creates gets unless `poolOptions` says otherwise: a stalled database fails fast. */
export const POSTGRES_POOL_DEFAULTS: Readonly<PoolConfig> = Object.freeze({
  max: 10,
  connectionTimeoutMillis: 2000,
  statement_timeout: 2000,
  query_timeout: 2000
})

/** A whole number of at least 1 for the option `name`, or an Error naming it. */
function atLeastOne (name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) throw new Error(`PostgresStore: the option "${name}" must be a whole number of at least 1; got ${String(value)}`)
  return value
}

/**
 * Shared state on PostgreSQL, one row per key. Time is the database's
 * (`now()`), so every instance agrees on expiry. `getMany` is one query,
 * `consume` one `DELETE … RETURNING`, `increment` and `compareAndSet` one
 * statement each, so single use, counting and session updates stay atomic
 * across processes. Expired rows read as absent and are deleted by a
 * periodic sweep.
 *
 * Every call has a deadline, the pool's `query_timeout` (default 2 s), over
 * the whole call: the wait for a connection and the statement together. A
 * pool's own timeouts apply one after the other (2 s for a connection, then
 * 2 s for the statement), and a host's pool may have none, so a stalled
 * server could otherwise hold a call for 4 s, or, on such a pool, until it
 * answers again.
 */
export class PostgresStore implements StateStore, AtomicBatch {
  readonly system = 'postgresql'
  readonly #pool: Pool
  readonly #owned: boolean
  readonly #prefix: string
  readonly #table: string
  readonly #quotedTable: string
  readonly #sql: Record<Operation, Statement>
  readonly #sweepBatch: number
  readonly #deadlineMs: number
  readonly #timer: NodeJS.Timeout
  readonly #poolErrors = new RateLimitedLine('jwt-login: the PostgreSQL store lost a connection to the database; requests that need it answer 503 until it is back')
  readonly #sweepErrors = new RateLimitedLine('jwt-login: the PostgreSQL store could not delete expired rows; they read as absent and wait for the next sweep')
  #log: StoreLogger | null
  #sweeping = false
  #closed = false

  constructor (options: PostgresStoreOptions = {}) {
    this.#owned = ownsPool(options)
    this.#table = options.table ?? POSTGRES_DEFAULT_TABLE
    this.#quotedTable = tableNames(this.#table).table
    this.#sql = statements(this.#quotedTable, options.preparedStatements ?? true)
    this.#prefix = options.prefix ?? 'jwt-login:'
    this.#sweepBatch = atLeastOne('sweepBatch', options.sweepBatch, 1000)
    const sweepIntervalMs = atLeastOne('sweepIntervalMs', options.sweepIntervalMs, 60_000)
    this.#log = options.log ?? null
    this.#pool = options.pool ?? new pg.Pool({ ...POSTGRES_POOL_DEFAULTS, ...options.poolOptions, connectionString: options.connectionString })
    this.#deadlineMs = deadlineOf(this.#pool.options.query_timeout)
    // an idle client's error would otherwise crash the process; a pool the host owns keeps the host's handling
    if (this.#owned) this.#pool.on('error', (error: Error) => { this.#poolErrors.report(this.#log, error) })
    this.#timer = setInterval(() => { this.#sweepOnTimer() }, sweepIntervalMs)
    this.#timer.unref()
  }

  attachLogger (log: StoreLogger): void {
    this.#log ??= log
  }

  /**
   * Creates the table and its sweep index when they are missing (safe to
   * run on every start, by several instances at once), and warns when the
   * table is UNLOGGED: a crash would empty it, forgetting revocations.
   */
  async migrate (): Promise<void> {
    // one simple query is one implicit transaction: the lock is held until the CREATEs are done
    await this.#pool.query(postgresSchemaSql(this.#table))
    const { rows } = await this.#pool.query<{ persistence: string }>(
      'SELECT relpersistence AS persistence FROM pg_class WHERE oid = to_regclass($1)', [this.#quotedTable]
    )
    if (rows[0]?.persistence !== 'u') return
    const details = { table: this.#table }
    const message = 'jwt-login: the PostgreSQL store\'s table is UNLOGGED: a database crash empties it, and revocations and spent refresh tokens are forgotten; ALTER TABLE … SET LOGGED'
    // migrate() usually runs before the plugin could hand its logger over
    if (this.#log === null) console.warn(message, details)
    else this.#log.warn(details, message)
  }

  /**
   * Deletes the expired rows, at most `sweepBatch` per statement: while a
   * statement finds a full batch, the next follows after a short pause, so a
   * backlog drains without one long statement. Answers how many rows went.
   * Runs on the timer, never two at once.
   */
  async sweep (): Promise<number> {
    let total = 0
    // close() during a pause ends the drain before the next statement meets an ended pool
    while (!this.#closed) {
      const deleted = Number((await this.#pool.query({ ...this.#sql.sweep, values: [this.#sweepBatch] })).rowCount)
      total += deleted
      if (deleted < this.#sweepBatch) break
      await sleep(SWEEP_PAUSE_MS, undefined, { ref: false })
    }
    return total
  }

  #sweepOnTimer (): void {
    // a slow sweep is never overlapped by the next one
    if (this.#sweeping) return
    this.#sweeping = true
    this.sweep().catch((error: Error) => { this.#sweepErrors.report(this.#log, error) }).finally(() => { this.#sweeping = false })
  }

  /** One statement of a store call, failing once the deadline has passed (see the class). */
  async #run<R extends QueryResultRow = QueryResultRow> (statement: Statement, values: unknown[]): Promise<QueryResult<R>> {
    return await withinDeadline(this.#pool.query<R>({ ...statement, values }), this.#deadlineMs, 'PostgreSQL')
  }

  async get (key: string): Promise<string | null> {
    const { rows } = await this.#run<{ value: string }>(this.#sql.get, [this.#prefix + key])
    return rows[0]?.value ?? null
  }

  async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return []
    // one query, one primary-key lookup per key
    const { rows } = await this.#run<{ key: string, value: string }>(this.#sql.getMany, [keys.map(key => this.#prefix + key)])
    const found = new Map(rows.map(row => [row.key, row.value]))
    return keys.map(key => found.get(this.#prefix + key) ?? null)
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#run(this.#sql.set, [this.#prefix + key, value, ttlMs])
  }

  async consume (key: string): Promise<string | null> {
    const { rows } = await this.#run<{ value: string, live: boolean }>(this.#sql.consume, [this.#prefix + key])
    // an expired row is deleted too, but was never there for the caller
    return rows[0]?.live === true ? rows[0].value : null
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    const { rows } = await this.#run<{ count: number, ttl: number }>(this.#sql.increment, [this.#prefix + key, ttlMs])
    const row = rows[0] as { count: number, ttl: number }
    // Number(): a host pool may parse float8 into strings
    return { count: Number(row.count), ttlMs: Number(row.ttl) }
  }

  /**
   * One statement: its reads see the statement's snapshot (from before its
   * counts, never a write made after them), its counters are locked in key
   * order and counted as `increment` counts, all or none.
   */
  async readAndIncrement (read: readonly string[], increments: readonly BatchIncrement[], options: ReadAndIncrementOptions = {}): Promise<ReadAndIncrementResult> {
    const prefixed = (key: string): string => this.#prefix + key
    const held = options.unlessAbove
    const { rows } = await this.#run<{ read: boolean, key: string, value: string | null, count: number | null, ttl: number | null }>(this.#sql.readAndIncrement, [
      read.map(prefixed), increments.map(({ key }) => prefixed(key)), increments.map(({ ttlMs }) => ttlMs), (held?.keys ?? []).map(prefixed), held?.now ?? null
    ])
    const values = new Map(rows.filter(row => row.read).map(row => [row.key, row.value]))
    // Number(): a host pool may parse float8 into strings
    const counts = new Map(rows.filter(row => !row.read).map(row => [row.key, { count: Number(row.count), ttlMs: Number(row.ttl) }]))
    return { values: read.map(key => values.get(prefixed(key)) ?? null), counts: increments.map(({ key }) => counts.get(prefixed(key)) ?? null) }
  }

  async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    const result = expected === null
      ? await this.#run(this.#sql.insertIfAbsent, [this.#prefix + key, value, ttlMs])
      : await this.#run(this.#sql.replace, [this.#prefix + key, expected, value, ttlMs])
    return result.rowCount === 1
  }

  async delete (key: string): Promise<void> {
    await this.#run(this.#sql.delete, [this.#prefix + key])
  }

  /** Stops the sweep; ends the pool only when the store created it. */
  async close (): Promise<void> {
    clearInterval(this.#timer)
    if (this.#closed) return
    this.#closed = true
    if (this.#owned) await this.#pool.end()
  }
}

/** Whether the store creates (and ends) its pool: exactly one of `connectionString` and `pool`. */
function ownsPool (options: PostgresStoreOptions): boolean {
  const hasPool = options.pool !== undefined
  if (hasPool === (options.connectionString !== undefined)) {
    throw new Error(hasPool
      ? 'PostgresStore: give either the option "connectionString" (the store creates and ends its pool) or "pool" (yours), not both'
      : 'PostgresStore needs the option "connectionString" (the store creates and ends its pool) or "pool" (a pg Pool you own)')
  }
  if (hasPool && options.poolOptions !== undefined) {
    throw new Error('PostgresStore: the option "poolOptions" applies only to the pool the store creates from "connectionString"; configure your own "pool" yourself')
  }
  return !hasPool
}
