// The SQL of the PostgreSQL store: its one table and index, checked names, and the statements of each operation.
import { createHash } from 'node:crypto'

/** The default table. */
export const POSTGRES_DEFAULT_TABLE = 'jwt_login_state'

// the key of the advisory lock migrate() takes ('jwl_mig' in ASCII)
const MIGRATE_LOCK = 0x6a776c5f6d6967n

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
// the index is named after the table with this suffix, and the whole must fit PostgreSQL's 63 bytes
const INDEX_SUFFIX = '_expires_at_idx'
const MAX_TABLE_NAME = 63 - INDEX_SUFFIX.length

export interface TableNames { table: string, index: string }

/** A checked identifier (letters, digits, underscores) in double quotes, its case kept; pg's own escapeIdentifier is missing from early pg 8 releases. */
export function quote (identifier: string): string {
  return `"${identifier}"`
}

/** The quoted table and index names for `table` (`name` or `schema.name`), or an Error naming the option. */
export function tableNames (table: string): TableNames {
  const parts = table.split('.')
  const name = parts.at(-1) as string
  const valid = parts.length <= 2 && parts.every(part => IDENTIFIER.test(part) && part.length <= 63) && name.length <= MAX_TABLE_NAME
  if (!valid) {
    throw new Error(`PostgresStore: the option "table" must be a name or schema.name of letters, digits and underscores (the name at most ${MAX_TABLE_NAME} characters); got ${JSON.stringify(table)}`)
  }
  return { table: parts.map(quote).join('.'), index: quote(name + INDEX_SUFFIX) }
}

/**
 * The SQL `migrate()` runs: the store's table and its sweep index, created
 * when missing, under a transaction-level advisory lock so that instances
 * migrating at once never race on the catalog. A host with its own
 * migrations can run it there instead, as one transaction.
 */
export function postgresSchemaSql (table = POSTGRES_DEFAULT_TABLE): string {
  const names = tableNames(table)
  return [
    `SELECT pg_advisory_xact_lock(${MIGRATE_LOCK});`,
    `CREATE TABLE IF NOT EXISTS ${names.table} (`,
    '  key text COLLATE "C" PRIMARY KEY,',
    '  value text NOT NULL,',
    '  expires_at timestamptz NOT NULL',
    ');',
    `CREATE INDEX IF NOT EXISTS ${names.index} ON ${names.table} (expires_at);`
  ].join('\n')
}

export type Operation = 'get' | 'getMany' | 'set' | 'consume' | 'increment' | 'readAndIncrement' | 'insertIfAbsent' | 'replace' | 'delete' | 'sweep'

/** A statement's text, and its name when it is prepared once per connection. */
export interface Statement { text: string, name?: string }

/**
 * The store's statements on one table; `$1` is always the prefixed key.
 * Prepared, each is parsed and planned once per pooled connection instead
 * of on every request. The name is derived from the text, so two stores on
 * different tables sharing a pool never clash.
 */
export function statements (table: string, prepared: boolean): Record<Operation, Statement> {
  const texts = statementTexts(table)
  return Object.fromEntries(Object.entries(texts).map(([operation, text]) => {
    const name = `jwt_login_${operation}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`
    return [operation, prepared ? { text, name } : { text }]
  })) as Record<Operation, Statement>
}

function statementTexts (table: string): Record<Operation, string> {
  const ttl = (n: number): string => `now() + $${n}::float8 * interval '1 millisecond'`
  return {
    get: `SELECT value FROM ${table} WHERE key = $1 AND expires_at > now()`,
    getMany: `SELECT key, value FROM ${table} WHERE key = ANY($1::text[]) AND expires_at > now()`,
    set: `INSERT INTO ${table} (key, value, expires_at) VALUES ($1, $2, ${ttl(3)})
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
    consume: `DELETE FROM ${table} WHERE key = $1 RETURNING value, expires_at > now() AS live`,
    // a live counter counts on and keeps its expiry; an expired one starts again at 1 with the new TTL
    increment: `INSERT INTO ${table} AS s (key, value, expires_at) VALUES ($1, '1', ${ttl(2)})
      ON CONFLICT (key) DO UPDATE SET
        value = CASE WHEN s.expires_at > now() THEN (s.value::bigint + 1)::text ELSE '1' END,
        expires_at = CASE WHEN s.expires_at > now() THEN s.expires_at ELSE EXCLUDED.expires_at END
      RETURNING value::float8 AS count, ceil(extract(epoch FROM s.expires_at - now()) * 1000)::float8 AS ttl`,
    // $1 the keys read, $2 the counters and $3 their TTLs, $4 the keys of the condition and $5 its `now`: the reads see the
    // statement's snapshot, from before its increments; a key of the condition holding a number over $5 holds every count
    // back; the counters are counted as `increment` counts one, locked in key order, so that concurrent batches never deadlock
    readAndIncrement: `WITH reads AS (
        SELECT key, value FROM ${table} WHERE key = ANY($1::text[]) AND expires_at > now()
      ), held AS (
        SELECT 1 FROM ${table} WHERE key = ANY($4::text[]) AND expires_at > now()
          AND CASE WHEN value ~ '^[0-9]+(\\.[0-9]+)?$' THEN value::float8 > $5::float8 ELSE false END
      ), counted AS (
        INSERT INTO ${table} AS s (key, value, expires_at)
        SELECT c.key, '1', now() + c.ttl * interval '1 millisecond'
        FROM unnest($2::text[], $3::float8[]) AS c (key, ttl)
        WHERE NOT EXISTS (SELECT 1 FROM held)
        ORDER BY c.key COLLATE "C"
        ON CONFLICT (key) DO UPDATE SET
          value = CASE WHEN s.expires_at > now() THEN (s.value::bigint + 1)::text ELSE '1' END,
          expires_at = CASE WHEN s.expires_at > now() THEN s.expires_at ELSE EXCLUDED.expires_at END
        RETURNING s.key, s.value::float8 AS count, ceil(extract(epoch FROM s.expires_at - now()) * 1000)::float8 AS ttl
      )
      SELECT true AS read, key, value, NULL::float8 AS count, NULL::float8 AS ttl FROM reads
      UNION ALL
      SELECT false, key, NULL, count, ttl FROM counted`,
    insertIfAbsent: `INSERT INTO ${table} AS s (key, value, expires_at) VALUES ($1, $2, ${ttl(3)})
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
      WHERE s.expires_at <= now()`,
    replace: `UPDATE ${table} SET value = $3, expires_at = ${ttl(4)} WHERE key = $1 AND value = $2 AND expires_at > now()`,
    delete: `DELETE FROM ${table} WHERE key = $1`,
    // instances sweeping at once skip each other's rows instead of waiting on them
    sweep: `DELETE FROM ${table} WHERE key IN (
      SELECT key FROM ${table} WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)`
  }
}
