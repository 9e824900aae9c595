/**
 * The bench's PostgreSQL pieces, kept apart: `PostgresStore` is loaded by a
 * dynamic import the type checker does not resolve, so the bench builds and
 * runs (without its PostgreSQL rows) in a tree without `lib/postgres.ts`.
 *
 * The parent creates a schema of its own (`jwt_login_bench_<pid>`), each
 * `subject-postgres` child migrates its table in it, and the parent drops the
 * schema at the end of the run, also after a failure or on SIGINT.
 */
import pg from 'pg'
import type { StateStore } from '../lib/index.js'
import { POSTGRES_URL } from './shared.js'

/** What the bench uses of `PostgresStore` (lib/postgres.ts). */
export interface PostgresStoreLike extends StateStore {
  migrate: () => Promise<void>
  close: () => Promise<void>
}
type PostgresStoreClass = new (options: { connectionString: string, prefix: string, table: string }) => PostgresStoreLike

// a string, not a literal, so that tsc does not look for the module
const POSTGRES_MODULE: string = '../lib/postgres.js'

/** `PostgresStore`, or null when this tree has no `lib/postgres.ts` (any other failure to load it is thrown). */
export async function loadPostgresStore (): Promise<PostgresStoreClass | null> {
  try {
    const module = await import(POSTGRES_MODULE) as { PostgresStore: PostgresStoreClass }
    return module.PostgresStore
  } catch (error) {
    const { code, message } = error as { code?: string, message?: string }
    if (code === 'ERR_MODULE_NOT_FOUND' && message?.includes('lib/postgres') === true) return null
    throw error
  }
}

/** A `subject-postgres` (or `remote-postgres`) child's store: its own prefix, on `table` (`schema.name`), migrated, through `url`. */
export async function postgresStore (prefix: string, table: string, url = POSTGRES_URL): Promise<PostgresStoreLike> {
  const PostgresStore = await loadPostgresStore()
  if (PostgresStore === null) throw new Error('subject-postgres needs lib/postgres.ts')
  const store = new PostgresStore({ connectionString: url, prefix, table })
  await store.migrate()
  return store
}

/** What the bare PostgreSQL route takes from the store's own modules: its pool settings and validate's statement. */
export interface PostgresRead {
  poolDefaults: pg.PoolConfig
  /** `getMany` on `table` (`schema.name`): its text and, prepared, its name */
  getMany: (table: string) => { text: string, name?: string }
}

// strings, as above: a tree without the PostgreSQL store builds without them
const POSTGRES_STORE_MODULE: string = '../lib/store/postgres.js'
const POSTGRES_SQL_MODULE: string = '../lib/store/postgres-sql.js'

/**
 * The store's own pool defaults and `getMany` statement (internal modules,
 * not the package's entry), so the bare route reads with the very
 * statement and pool the store uses.
 */
export async function loadPostgresRead (): Promise<PostgresRead> {
  const store = await import(POSTGRES_STORE_MODULE) as { POSTGRES_POOL_DEFAULTS: pg.PoolConfig }
  const sql = await import(POSTGRES_SQL_MODULE) as {
    statements: (table: string, prepared: boolean) => { getMany: { text: string, name?: string } }
    tableNames: (table: string) => { table: string }
  }
  return { poolDefaults: store.POSTGRES_POOL_DEFAULTS, getMany: (table) => sql.statements(sql.tableNames(table).table, true).getMany }
}

/** The parent's connection to the bench's schema. */
export class BenchPostgres {
  readonly schema = `jwt_login_bench_${process.pid}`
  readonly #client: pg.Client

  private constructor (client: pg.Client) {
    this.#client = client
  }

  /** Connects and creates the bench's schema; null when the tree has no `PostgresStore` (the bench skips its rows). */
  static async open (): Promise<BenchPostgres | null> {
    if (await loadPostgresStore() === null) return null
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    const bench = new BenchPostgres(client)
    try {
      await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(bench.schema)}`)
    } catch (error) {
      await client.end()
      throw error
    }
    return bench
  }

  /** `schema.name` of a table in the bench's schema, for a child's `table` option. */
  table (name: string): string {
    return `${this.schema}.${name}`
  }

  #quoted (table: string): string {
    return table.split('.').map(part => pg.escapeIdentifier(part)).join('.')
  }

  /**
   * Writes `count` more sessions beside the real one under `key` (with the
   * store's prefix): fresh session ids (base-36 time, '-', a random UUID),
   * the same value and expiry, in one INSERT … SELECT; then ANALYZE, as
   * autovacuum would soon after such a load.
   */
  async seed (table: string, key: string, prefix: string, count: number): Promise<void> {
    const quoted = this.#quoted(table)
    const idHead = `${prefix}session:${Date.now().toString(36)}-`
    await this.#client.query(
      `INSERT INTO ${quoted} (key, value, expires_at)
       SELECT $1 || gen_random_uuid()::text, s.value, s.expires_at
       FROM generate_series(1, $3::int), (SELECT value, expires_at FROM ${quoted} WHERE key = $2) AS s`,
      [idHead, key, count]
    )
    await this.#client.query(`ANALYZE ${quoted}`)
  }

  /** The table's rows under `prefix`'s sessions and its total size on disk (heap, indexes, TOAST). */
  async size (table: string, prefix: string): Promise<{ entries: number, bytes: number }> {
    const quoted = this.#quoted(table)
    const { rows } = await this.#client.query<{ entries: string, bytes: string }>(
      `SELECT (SELECT count(*) FROM ${quoted} WHERE starts_with(key, $1)) AS entries, pg_total_relation_size($2::regclass) AS bytes`,
      [`${prefix}session:`, quoted]
    )
    const row = rows[0] as { entries: string, bytes: string }
    return { entries: Number(row.entries), bytes: Number(row.bytes) }
  }

  /** Drops the bench's schema with its tables, and disconnects. */
  async close (): Promise<void> {
    try {
      await this.#client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(this.schema)} CASCADE`)
    } finally {
      await this.#client.end()
    }
  }
}
