/**
 * The jwt-login two-factor port on PostgreSQL (the `two_factor` and
 * `backup_codes` tables of schema.sql). A host imports the types from
 * 'jwt-login'; this example imports the plugin's source.
 */
import type pg from 'pg'
import type { TwoFactorMethod, TwoFactorPort } from '../../lib/index.js'
import { qualified } from './migrate.js'

export class PostgresTwoFactorStore implements TwoFactorPort {
  readonly #pool: pg.Pool
  readonly #twoFactor: string
  readonly #backupCodes: string

  constructor (pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#twoFactor = qualified(schema, 'two_factor')
    this.#backupCodes = qualified(schema, 'backup_codes')
  }

  /**
   * The host's switch (a settings page, or the account routes' `PUT` and
   * `DELETE /account/2fa`): turns two-factor on with `method` as the
   * primary one, or off with `null`. Enroll first: a TOTP user with
   * no confirmed secret matches no code.
   */
  async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#twoFactor} (user_id, method) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET method = EXCLUDED.method`,
      [userId, method]
    )
  }

  async methodOf (userId: number): Promise<TwoFactorMethod | null> {
    const { rows } = await this.#pool.query<{ method: TwoFactorMethod | null }>(`SELECT method FROM ${this.#twoFactor} WHERE user_id = $1`, [userId])
    return rows[0]?.method ?? null
  }

  async getTotpSecret (userId: number): Promise<string | null> {
    const { rows } = await this.#pool.query<{ totp_secret: string | null }>(`SELECT totp_secret FROM ${this.#twoFactor} WHERE user_id = $1`, [userId])
    return rows[0]?.totp_secret ?? null
  }

  /** Called by the plugin's confirmTotp once the first code was right; keeps the method as it is. */
  async setTotpSecret (userId: number, secret: string): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#twoFactor} (user_id, totp_secret) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET totp_secret = EXCLUDED.totp_secret`,
      [userId, secret]
    )
  }

  /**
   * One UPDATE and its row count: of two requests racing with the same
   * code, the database lets exactly one mark it used, so a code works once.
   * The row keeps the claim (the sign-in attempt) that spent it, so that
   * attempt's retry after a lost answer (COMMIT done, connection dropped)
   * is answered `true` again instead of losing the code.
   */
  async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    const result = await this.#pool.query(
      `UPDATE ${this.#backupCodes} SET used_by = $3
       WHERE user_id = $1 AND code_hash = $2 AND (used_by IS NULL OR used_by = $3)`,
      [userId, codeHash, claim]
    )
    return result.rowCount === 1
  }

  /** The user's unused backup codes, for `GET /account` (the account routes). */
  async countBackupCodes (userId: number): Promise<number> {
    const { rows } = await this.#pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.#backupCodes} WHERE user_id = $1 AND used_by IS NULL`, [userId])
    // count(*) always answers one row
    return (rows[0] as { n: number }).n
  }

  /**
   * The old codes go and the new ones come in one statement, so no reader
   * ever sees both sets or neither (one statement is one transaction).
   */
  async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    await this.#pool.query(
      `WITH old AS (DELETE FROM ${this.#backupCodes} WHERE user_id = $1)
       INSERT INTO ${this.#backupCodes} (user_id, code_hash) SELECT $1, unnest($2::text[])`,
      [userId, codeHashes]
    )
  }
}
