/**
 * The store reads of the bare validate routes that the store rows are
 * compared with: the same keys jwt-login reads for validate (the session's
 * entry and its user's cutoff, `stateKeys` in lib/tokens/revocation.ts),
 * read with the same client, as the stores read them (lib/store/redis.ts,
 * lib/store/postgres.ts): one ioredis `MGET` on a single Redis; one ioredis
 * Cluster `GET` per key, in parallel (the keys lie in different slots); one
 * prepared `SELECT … WHERE key = ANY($1)` on a `pg` pool of the store's size.
 * The clients get the settings the stores give their own (no
 * auto-pipelining, one retry, 2 s timeouts).
 *
 * A token is live when its session's entry is there and not `revoked`, and
 * its user has no cutoff (the bench never sets one). The entry must be
 * there: a bare route reading other keys than jwt-login does fails the
 * bench's probe instead of measuring a cheaper read.
 */
import { Cluster, Redis } from 'ioredis'
import pg from 'pg'
import { REVOKED, stateKeys } from '../lib/tokens/revocation.js'
import type { SessionRead } from './apps.js'
import { loadPostgresRead } from './postgres.js'

/** The settings RedisStore gives a client of its own (lib/store/redis-connection.ts). */
const REDIS_CLIENT = { maxRetriesPerRequest: 1, commandTimeout: 2000 }

function liveBy (entry: string | null | undefined, cutoff: string | null | undefined): boolean {
  return entry !== null && entry !== undefined && entry !== REVOKED && (cutoff === null || cutoff === undefined)
}

function keysOf (prefix: string, sessionId: string, userId: string): [string, string] {
  return [prefix + stateKeys.session(sessionId), prefix + stateKeys.userCutoff(userId)]
}

/** One `MGET` of both keys on a single Redis. */
export function redisRead (url: string, prefix: string): SessionRead {
  const client = new Redis(url, { ...REDIS_CLIENT, enableAutoPipelining: false })
  return {
    live: async (sessionId, userId) => {
      const [entry, cutoff] = await client.mget(keysOf(prefix, sessionId, userId))
      return liveBy(entry, cutoff)
    },
    close: async () => { await client.quit() }
  }
}

/** One `GET` per key, sent together, on a Redis Cluster. */
export function clusterRead (ports: number[], prefix: string): SessionRead {
  const client = new Cluster(ports.map(port => ({ host: '127.0.0.1', port })), { enableAutoPipelining: false, redisOptions: REDIS_CLIENT })
  return {
    live: async (sessionId, userId) => {
      const [entry, cutoff] = await Promise.all(keysOf(prefix, sessionId, userId).map(async key => await client.get(key)))
      return liveBy(entry, cutoff)
    },
    close: async () => { await client.quit() }
  }
}

/** The store's prepared `getMany` statement on a pool with the store's defaults. */
export async function postgresRead (url: string, table: string, prefix: string): Promise<SessionRead> {
  const { poolDefaults, getMany } = await loadPostgresRead()
  const statement = getMany(table)
  const pool = new pg.Pool({ ...poolDefaults, connectionString: url })
  return {
    live: async (sessionId, userId) => {
      const keys = keysOf(prefix, sessionId, userId)
      const { rows } = await pool.query<{ key: string, value: string }>({ ...statement, values: [keys] })
      const found = new Map(rows.map(row => [row.key, row.value]))
      return liveBy(found.get(keys[0]), found.get(keys[1]))
    },
    close: async () => { await pool.end() }
  }
}
