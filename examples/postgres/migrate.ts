/**
 * Creates the example's tables, and the plugin's state table, in a
 * PostgreSQL schema of the host's choice.
 * (A host imports from 'fastify-jwt-login'; this example imports the source.)
 */
import { readFile } from 'node:fs/promises'
import pg from 'pg'
import { PostgresStore } from '../../lib/postgres.js'

/** The plugin's state table in `schema` (PostgresStore quotes each part itself). */
export function stateTable (schema: string): string {
  return `${schema}.jwt_login_state`
}

/**
 * `schema` is an identifier, quoted here, never a value spliced in raw. The
 * whole string is one simple query, which PostgreSQL runs as one implicit
 * transaction: SET LOCAL holds only for it, and a failure creates nothing.
 */
export async function migrate (pool: pg.Pool, schema: string): Promise<void> {
  const ddl = await readFile(new URL('./schema.sql', import.meta.url), 'utf8')
  const name = pg.escapeIdentifier(schema)
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${name}; SET LOCAL search_path TO ${name}; ${ddl}`)
  // the plugin's own table, by the store's idempotent migrate(); this store only migrates, so close it (its sweep timer stops)
  const store = new PostgresStore({ pool, table: stateTable(schema) })
  try {
    await store.migrate()
  } finally {
    await store.close()
  }
}

/** `schema.table`, quoted, for the adapters' queries (they never rely on search_path). */
export function qualified (schema: string, table: string): string {
  return `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`
}
