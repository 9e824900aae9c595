/**
 * Defect: a stalled PostgreSQL (the server answering nothing at all) held
 * requests past the 2 s deadline. A pool of the host's without
 * `query_timeout` waited until the server answered again; the store's own
 * pool applies its timeouts one after the other (2 s for a connection, then
 * 2 s for the statement), so a call that got its connection late waited up
 * to 4 s. Now every call has a deadline over the whole call: the pool's
 * `query_timeout`, default 2 s.
 *
 * The stall is a loopback proxy in front of the local PostgreSQL that stops
 * passing the clients' bytes on: the shared server is never paused.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { PostgresStore } from '../../lib/postgres.js'
import { DATABASE_URL, sharedTable } from '../helpers/shared-stores.js'
import { allFailedInTime, DEADLINE_MS, inWaves, SLACK_MS, STALL_MS, wave } from '../helpers/deadlines.js'
import { Recorder, timed } from '../helpers/log-recorder.js'
import { startStallProxy } from '../helpers/stall-proxy.js'

const table = await sharedTable()
const target = new URL(DATABASE_URL)

/** The database URL through `port` (a proxy) instead of the server's own. */
function through (port: number): string {
  const url = new URL(DATABASE_URL)
  url.host = `127.0.0.1:${port}`
  return url.toString()
}

t.test('defect 4 on PostgreSQL, a stalled server: every call through a host pool without timeouts, and through the store\'s own pool, fails within the 2 s deadline', async (t) => {
  const proxy = await startStallProxy(Number(target.port), target.hostname)
  const log = new Recorder()
  const hostPool = new pg.Pool({ connectionString: through(proxy.port), max: 4 })
  hostPool.on('error', () => {})
  const hosted = new PostgresStore({ pool: hostPool, table, prefix: `deadlines-host:${randomUUID()}:`, log })
  const owned = new PostgresStore({ connectionString: through(proxy.port), table, prefix: `deadlines-own:${randomUUID()}:`, log })
  t.teardown(async () => {
    proxy.resume()
    try {
      await Promise.all([hosted.close(), owned.close()])
      await hostPool.end()
    } finally {
      await proxy.close()
    }
  })
  // a few connections open in each pool before the stall
  await Promise.all([...wave(hosted, 'warm-up'), ...wave(owned, 'warm-up')])

  proxy.stall()
  setTimeout(() => { proxy.resume() }, STALL_MS).unref()
  const results = await inWaves(() => [...wave(hosted, 'host pool'), ...wave(owned, 'own pool')])
  allFailedInTime(t, results, 'deadlines-')
  t.ok(results.some(result => /^host pool /.test(result.call) && result.error?.message === 'PostgreSQL did not answer within 2000 ms'), 'a host pool without timeouts fails by the store\'s deadline, with a generic message')

  proxy.resume()
  await owned.set('after', 'v', 60_000)
  t.equal(await owned.get('after'), 'v', 'the store works again once the server answers')
})

t.test('defect 4 on PostgreSQL, the store\'s own pool: a call that gets its connection just as the server stalls fails at the deadline, not after 2 s of waiting plus 2 s of query_timeout', async (t) => {
  const proxy = await startStallProxy(Number(target.port), target.hostname)
  const prefix = `deadlines-handover:${randomUUID()}:`
  const owned = new PostgresStore({ connectionString: through(proxy.port), table, prefix, poolOptions: { max: 1 }, log: new Recorder() })
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  t.teardown(async () => {
    proxy.resume()
    try {
      await admin.query('ROLLBACK').catch(() => {})
      await admin.end()
      await owned.close()
    } finally {
      await proxy.close()
    }
  })
  await owned.set('locked', 'v', 60_000)
  // the pool's one connection is taken by a write that waits on a row lock; the next call waits for the connection
  await admin.query('BEGIN')
  await admin.query(`SELECT 1 FROM ${table.split('.').map(part => pg.escapeIdentifier(part)).join('.')} WHERE key = $1 FOR UPDATE`, [`${prefix}locked`])
  const first = timed('the write on the locked row', async () => { await owned.set('locked', 'v2', 60_000) })
  const next = timed('the next call', async () => await owned.get('other'))
  await sleep(1000)
  // the server stalls; the lock goes, so the write is answered and the connection handed to the next call, whose query meets the stall
  proxy.stall()
  await sleep(200)
  await admin.query('COMMIT')
  const [written, read] = await Promise.all([first, next])
  t.equal(written.error, null, `the write was answered (${Math.round(written.ms)} ms)`)
  t.match(read.error, { message: 'PostgreSQL did not answer within 2000 ms' }, 'the next call fails by the store\'s deadline')
  t.ok(read.ms <= DEADLINE_MS + SLACK_MS, `within ${DEADLINE_MS} + ${SLACK_MS} ms: ${Math.round(read.ms)} ms`)
})
