/**
 * The jwt-login passkey port on PostgreSQL (the `passkeys` table of
 * schema.sql). A host imports the types from 'fastify-jwt-login'; this example
 * imports the plugin's source.
 */
import type pg from 'pg'
import type { PasskeyPort, PasskeyUse, StoredPasskey } from '../../lib/index.js'
import { qualified } from './migrate.js'

/** A row of `passkeys` as pg reads it: a bigint comes back as a string, timestamptz as a Date, text[] as an array. */
interface PasskeyRow {
  id: string
  user_id: number
  public_key: string
  counter: string
  transports: string[]
  device_type: StoredPasskey['deviceType']
  backup_eligible: boolean
  backed_up: boolean
  aaguid: string
  name: string
  created_at: Date
  last_used_at: Date | null
}

const COLUMNS = 'id, user_id, public_key, counter, transports, device_type, backup_eligible, backed_up, aaguid, name, created_at, last_used_at'

/** The port's shape of a row. `Number` is exact for the counter: it is at most 2^32 - 1. */
function toPasskey (row: PasskeyRow): StoredPasskey {
  return {
    id: row.id,
    userId: row.user_id,
    publicKey: row.public_key,
    counter: Number(row.counter),
    transports: row.transports,
    deviceType: row.device_type,
    backupEligible: row.backup_eligible,
    backedUp: row.backed_up,
    aaguid: row.aaguid,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at
  }
}

export class PostgresPasskeyStore implements PasskeyPort {
  readonly #pool: pg.Pool
  readonly #passkeys: string

  constructor (pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#passkeys = qualified(schema, 'passkeys')
  }

  /** Through the index on user_id; the id breaks ties between credentials created in the same microsecond, so the order is stable. */
  async listByUser (userId: number): Promise<StoredPasskey[]> {
    const { rows } = await this.#pool.query<PasskeyRow>(`SELECT ${COLUMNS} FROM ${this.#passkeys} WHERE user_id = $1 ORDER BY created_at, id`, [userId])
    return rows.map(toPasskey)
  }

  /** By the primary key, whoever's it is: a passwordless sign-in learns the user from the credential. */
  async findById (credentialId: string): Promise<StoredPasskey | null> {
    const { rows } = await this.#pool.query<PasskeyRow>(`SELECT ${COLUMNS} FROM ${this.#passkeys} WHERE id = $1`, [credentialId])
    const row = rows[0]
    return row === undefined ? null : toPasskey(row)
  }

  /**
   * One INSERT and its row count: the primary key on the id decides, so of
   * two registrations racing with one credential id exactly one is stored,
   * and the other answers `false` instead of failing with unique_violation
   * (which the plugin would answer as the database being down).
   */
  async create (passkey: StoredPasskey): Promise<boolean> {
    const result = await this.#pool.query(
      `INSERT INTO ${this.#passkeys} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (id) DO NOTHING`,
      [
        passkey.id, passkey.userId, passkey.publicKey, passkey.counter, passkey.transports, passkey.deviceType,
        passkey.backupEligible, passkey.backedUp, passkey.aaguid, passkey.name, passkey.createdAt, passkey.lastUsedAt
      ]
    )
    return result.rowCount === 1
  }

  /** A credential deleted since it signed updates no row, which is not an error. */
  async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
    await this.#pool.query(
      `UPDATE ${this.#passkeys} SET counter = GREATEST(counter, $2), backed_up = $3, last_used_at = $4 WHERE id = $1`,
      [credentialId, use.counter, use.backedUp, use.lastUsedAt]
    )
  }

  /** The user id in the WHERE clause: another user's credential matches no row, as a missing one does. */
  async rename (userId: number, credentialId: string, name: string): Promise<boolean> {
    const result = await this.#pool.query(`UPDATE ${this.#passkeys} SET name = $3 WHERE id = $2 AND user_id = $1`, [userId, credentialId, name])
    return result.rowCount === 1
  }

  /** As rename: only the user's own credential matches. */
  async delete (userId: number, credentialId: string): Promise<boolean> {
    const result = await this.#pool.query(`DELETE FROM ${this.#passkeys} WHERE id = $2 AND user_id = $1`, [userId, credentialId])
    return result.rowCount === 1
  }
}
