// The transactions of the WordPress user adapter, and the named lock its writes of emails take turns under.
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise'
import type { Statements } from './user-sql.js'

/** Swallows an error that must not change the outcome (it is retried or moot). */
export function ignore (): void {}

/** Runs `work` in a transaction on `connection`: committed when it resolves, rolled back when anything throws. */
export async function inTransaction<T> (connection: PoolConnection, work: () => Promise<T>): Promise<T> {
  await connection.beginTransaction()
  try {
    const result = await work()
    await connection.commit()
    return result
  } catch (error) {
    // a connection that failed may fail the rollback too; the server rolls back when it closes
    await connection.rollback().catch(ignore)
    throw error
  }
}

/**
 * Runs `work` in a transaction on one connection of `pool` while holding
 * the named lock `lockName` (GET_LOCK, which WordPress never takes): the
 * adapter's createUser, setEmail, setEmailVerified and linkIdentity on
 * this database, in every process, take turns. The lock is taken before the
 * transaction starts and freed after it ends, so each holder reads what the
 * one before committed. A wait of more than 10 s throws, naming `method`.
 */
export async function underLock<T> (pool: Pool, sql: Statements, lockName: string, method: string, work: (connection: PoolConnection) => Promise<T>): Promise<T> {
  const name = [lockName, lockName, lockName]
  const connection = await pool.getConnection()
  // a named lock belongs to the connection: one whose unlock failed is closed (the server then
  // frees the lock), never handed back to the pool holding it, where every later writer would wait
  let holdsLock = false
  try {
    const [[lock]] = await connection.execute<RowDataPacket[]>(sql.lock, name)
    if (lock?.locked !== 1) throw new Error(`WordPressUserAdapter: ${method} timed out waiting for another createUser, setEmail, setEmailVerified or linkIdentity on this database`)
    holdsLock = true
    const result = await inTransaction(connection, async () => await work(connection))
      .finally(async () => { await connection.execute(sql.unlock, name) })
    holdsLock = false
    return result
  } finally {
    if (holdsLock) connection.destroy()
    else connection.release()
  }
}
