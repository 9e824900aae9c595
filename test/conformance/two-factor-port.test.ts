// The two-factor ports of the package, of the PostgreSQL example and of a host on MariaDB through the published suite, as an adapter author runs it.
import { randomBytes } from 'node:crypto'
import mysql, { type Pool, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise'
import { test } from 'tap'
import { PostgresTwoFactorStore } from '../../examples/postgres/two-factor.js'
import { twoFactorPortSuite } from '../../lib/conformance.js'
import type { TwoFactorMethod, TwoFactorPort } from '../../lib/index.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { exampleSchema, type ExampleSchema } from '../helpers/postgres-example-schema.js'
import { MYSQL_URL } from '../helpers/wordpress-db.js'

await twoFactorPortSuite({
  test,
  title: 'MemoryTwoFactorStore',
  // the memory store reads nothing of the user's record: the id is enough
  create: async () => ({ port: new MemoryTwoFactorStore(), user: async (userId: number) => ({ id: userId }) })
})

// Each test on a schema of its own; the user adapter's record is the row's id, which is all the port reads.
const schemas = new WeakMap<object, ExampleSchema>()
await twoFactorPortSuite({
  test,
  title: 'PostgresTwoFactorStore',
  create: async () => {
    const made = await exampleSchema()
    const fixture = {
      port: new PostgresTwoFactorStore(made.pool, made.schema),
      user: async (userId: number) => {
        await made.addUser(userId)
        return { id: userId }
      }
    }
    schemas.set(fixture, made)
    return fixture
  },
  destroy: async (fixture) => { await schemas.get(fixture)?.drop() }
})

/** The user's row as the host's user adapter reads it: the method is kept on it. */
interface MariaUser {
  id: number
  method: TwoFactorMethod | null
}

/**
 * A host's two-factor port on MariaDB, written as a host would: tables in
 * the database's default collation, which ignores case, so claims differing
 * by case alone compare equal (random claims never do).
 */
class MariaTwoFactorPort implements TwoFactorPort<MariaUser> {
  constructor (private readonly pool: Pool, private readonly users: string, private readonly codes: string) {}

  async methodOf (_userId: number, user: MariaUser): Promise<TwoFactorMethod | null> {
    return user.method
  }

  async getTotpSecret (userId: number): Promise<string | null> {
    const [rows] = await this.pool.execute<RowDataPacket[]>(`SELECT totp_secret FROM ${this.users} WHERE id = ?`, [userId])
    return (rows[0]?.totp_secret as string | null | undefined) ?? null
  }

  async setTotpSecret (userId: number, secret: string): Promise<void> {
    await this.pool.execute(`UPDATE ${this.users} SET totp_secret = ? WHERE id = ?`, [secret, userId])
  }

  // mysql2 asks for found rows (FOUND_ROWS): the retry, which changes nothing, still counts its row
  async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    const [result] = await this.pool.execute<ResultSetHeader>(
      `UPDATE ${this.codes} SET used_by = ? WHERE user_id = ? AND code_hash = ? AND (used_by IS NULL OR used_by = ?)`,
      [claim, userId, codeHash, claim]
    )
    return result.affectedRows === 1
  }

  async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    const connection = await this.pool.getConnection()
    try {
      await connection.beginTransaction()
      await connection.execute(`DELETE FROM ${this.codes} WHERE user_id = ?`, [userId])
      if (codeHashes.length > 0) await connection.query(`INSERT INTO ${this.codes} (user_id, code_hash) VALUES ?`, [codeHashes.map(hash => [userId, hash])])
      await connection.commit()
    } catch (error) {
      await connection.rollback()
      throw error
    } finally {
      connection.release()
    }
  }

  async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
    await this.pool.execute(`UPDATE ${this.users} SET method = ? WHERE id = ?`, [method, userId])
  }

  async countBackupCodes (userId: number): Promise<number> {
    const [rows] = await this.pool.execute<RowDataPacket[]>(`SELECT COUNT(*) AS unused FROM ${this.codes} WHERE user_id = ? AND used_by IS NULL`, [userId])
    return Number(rows[0]?.unused)
  }
}

/** The port's two tables under a prefix of their own in the `test` database, and what drops them. */
interface MariaTables {
  pool: Pool
  prefix: string
  users: string
  codes: string
  drop: () => Promise<void>
}

async function mariaTables (): Promise<MariaTables> {
  // ten connections, so that the suite's concurrent consumes meet in the database
  const pool = mysql.createPool({ uri: `${MYSQL_URL}/test`, connectionLimit: 10 })
  const prefix = `jwt_login_2fa_${randomBytes(6).toString('hex')}`
  const [users, codes] = [`\`${prefix}_users\``, `\`${prefix}_codes\``]
  await pool.query(`CREATE TABLE ${users} (id INT PRIMARY KEY, method VARCHAR(16) NULL, totp_secret VARCHAR(64) NULL)`)
  await pool.query(`CREATE TABLE ${codes} (
    user_id INT NOT NULL, code_hash VARCHAR(64) NOT NULL, used_by VARCHAR(128) NULL,
    PRIMARY KEY (user_id, code_hash), FOREIGN KEY (user_id) REFERENCES ${users} (id) ON DELETE CASCADE
  )`)
  return {
    pool,
    prefix,
    users,
    codes,
    drop: async () => {
      try {
        await pool.query(`DROP TABLE IF EXISTS ${codes}, ${users}`)
      } finally {
        await pool.end()
      }
    }
  }
}

test('the MariaDB port\'s claims compare in a case-insensitive collation', async (t) => {
  const tables = await mariaTables()
  t.teardown(tables.drop)
  const [rows] = await tables.pool.execute<RowDataPacket[]>(
    'SELECT COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = \'test\' AND TABLE_NAME = ? AND COLUMN_NAME = \'used_by\'',
    [`${tables.prefix}_codes`]
  )
  t.match(rows[0]?.collation, /_ci$/, 'the claim column\'s collation')
})

// Each test on tables of its own; `user` creates the user's row and reads it back, the method with it.
const tablesOf = new WeakMap<object, MariaTables>()
await twoFactorPortSuite({
  test,
  title: 'MariaTwoFactorPort',
  create: async () => {
    const tables = await mariaTables()
    const fixture = {
      port: new MariaTwoFactorPort(tables.pool, tables.users, tables.codes),
      user: async (userId: number): Promise<MariaUser> => {
        await tables.pool.execute(`INSERT IGNORE INTO ${tables.users} (id) VALUES (?)`, [userId])
        const [rows] = await tables.pool.execute<RowDataPacket[]>(`SELECT id, method FROM ${tables.users} WHERE id = ?`, [userId])
        return { id: userId, method: (rows[0]?.method as TwoFactorMethod | null | undefined) ?? null }
      }
    }
    tablesOf.set(fixture, tables)
    return fixture
  },
  destroy: async (fixture) => { await tablesOf.get(fixture)?.drop() }
})
