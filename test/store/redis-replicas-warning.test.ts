/**
 * Defect: a Redis (Cluster) failover could bring back a revoked session.
 * Redis replicates asynchronously; with a replica lagging, revocations that
 * had answered 200 were lost at the failover. `waitForReplicas` prevents it
 * but is off by default (it must stay so: after a failover every write would
 * answer 503 until a replica is back, a choice for the operator), and
 * nothing told an operator with replicas that it was off. Now a store that
 * sees replicas at start, with the option off, warns once.
 *
 * The single servers are redis-server processes of this file's own (a
 * master with a replica, a master alone, a master refusing INFO), the
 * clusters too; the shared Redis is never touched.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import t from 'tap'
import { RedisStore, type RedisStoreOptions } from '../../lib/redis.js'
import { Recorder, until, type Line } from '../helpers/log-recorder.js'
import { startRedisCluster } from '../helpers/redis-cluster.js'
import { startRedisServer } from '../helpers/redis-server.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const [master, alone, locked] = await Promise.all([
  startRedisServer(),
  startRedisServer(),
  // managed Redis often refuses INFO and CONFIG: an ACL that denies both
  startRedisServer(['--user', 'default', 'on', 'nopass', '~*', '&*', '+@all', '-info', '-config'])
])
t.teardown(async () => { await Promise.all([master.stop(), alone.stop(), locked.stop()]) })
const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port)])
t.teardown(replica.stop)
const admin = new Redis(master.url)
t.teardown(() => { admin.disconnect() })
await until('the replica to be connected to its master', async () => /^connected_slaves:1\r?$/m.test(await admin.info('replication')))

const [withReplicas, withoutReplicas] = await Promise.all([startRedisCluster({ masters: 3, replicas: 1 }), startRedisCluster({ masters: 3 })])
t.teardown(async () => { await Promise.all([withReplicas.stop(), withoutReplicas.stop()]) })

const UNACKNOWLEDGED = /^jwt-login: Redis has replicas but the Redis store's option waitForReplicas is off: a failover can lose revocations and spent single-use secrets that were already answered, so a revoked session may work again; set waitForReplicas/

/** A store logging to a new recorder, closed at teardown. */
function storeWithLog (t: Test, options: RedisStoreOptions): { store: RedisStore, log: Recorder } {
  const log = new Recorder()
  const store = new RedisStore({ ...options, log })
  t.teardown(async () => { await store.close() })
  return { store, log }
}

/** The lines a store logs about replicas (a cluster of this machine also has its durability warning). */
function aboutReplicas (log: Recorder): Line[] {
  return log.lines.filter(line => /replica/.test(line.message))
}

/** Waits until the store's start-up checks are surely done: a command after them is answered, then a pause. */
async function checked (store: RedisStore): Promise<void> {
  await store.get('checks-done')
  await sleep(100)
}

t.test('defect 3: a RedisStore made from just `url` on a master with a replica, waitForReplicas off: exactly one warning naming waitForReplicas and the risk', async (t) => {
  const { store, log } = storeWithLog(t, { url: master.url })
  await until('the warning', () => log.lines.length > 0)
  await checked(store)
  t.same(log.lines.map(line => line.level), ['warn'], 'one line, a warning')
  t.match(log.lines[0], { details: { replicas: 1 }, message: UNACKNOWLEDGED })
})

t.test('defect 3: one warning per store, not one per reconnection', async (t) => {
  const client = new Redis(master.url)
  t.teardown(() => { client.disconnect() })
  const { store, log } = storeWithLog(t, { client })
  await until('the warning', () => aboutReplicas(log).length > 0)
  for (let i = 0; i < 2; i++) {
    const ready = new Promise(resolve => client.once('ready', resolve))
    client.disconnect(true)
    await ready
  }
  await checked(store)
  t.equal(aboutReplicas(log).length, 1, 'two reconnections later, still one warning')
})

t.test('no warning with waitForReplicas set, nor on a master without replicas', async (t) => {
  const waiting = storeWithLog(t, { url: master.url, waitForReplicas: { replicas: 1 } })
  const single = storeWithLog(t, { url: alone.url })
  await Promise.all([checked(waiting.store), checked(single.store)])
  t.same(waiting.log.lines, [], 'waitForReplicas: nothing to say')
  t.same(single.log.lines, [], 'no replica: nothing to say')
  await waiting.store.set('acknowledged', 'v', 60_000)
  t.equal(await waiting.store.get('acknowledged'), 'v', 'and on a single Redis with a replica, a write waits for it and succeeds')
})

t.test('a store connected to a replica warns that its writes fail, whatever waitForReplicas says', async (t) => {
  for (const options of [{}, { waitForReplicas: { replicas: 1 } }]) {
    const { store, log } = storeWithLog(t, { url: replica.url, ...options })
    await until('the warning', () => log.lines.length > 0)
    await checked(store)
    t.match(log.lines, [{ level: 'warn', details: { role: 'slave' }, message: /^jwt-login: the Redis store is connected to a replica \(role:slave\), which refuses writes: every request that writes answers 503; connect it to the master$/ }])
    t.equal(log.lines.length, 1, 'and nothing about waitForReplicas')
  }
})

t.test('a Redis that refuses INFO: the replicas are not checked, said at debug only', async (t) => {
  // no ready check: ioredis's own, which is INFO too, would print its refusal
  const { store, log } = storeWithLog(t, { url: locked.url, redisOptions: { enableReadyCheck: false } })
  await until('the debug line', () => log.lines.some(line => /replication/.test(line.message)))
  await checked(store)
  t.same(log.at('warn'), [], 'no warning')
  t.same(log.at('debug').map(line => line.message).sort(), [
    'jwt-login: could not read the Redis persistence settings; not checked',
    'jwt-login: could not read the Redis replication state; replicas not checked'
  ])
  t.match(log.at('debug').find(line => /replication/.test(line.message)), { details: { err: { message: /^NOPERM .*'info'/ } } }, 'with the refusal')
})

t.test('defect 3 on a cluster with a replica per master: one warning; none with waitForReplicas, none without replicas', async (t) => {
  const warned = storeWithLog(t, { cluster: { nodes: withReplicas.nodes } })
  await until('the warning', () => aboutReplicas(warned.log).length > 0)
  const waiting = storeWithLog(t, { cluster: { nodes: withReplicas.nodes }, waitForReplicas: { replicas: 1 } })
  const noReplicas = storeWithLog(t, { cluster: { nodes: withoutReplicas.nodes } })
  await Promise.all([checked(warned.store), checked(waiting.store), checked(noReplicas.store)])
  t.match(aboutReplicas(warned.log), [{ level: 'warn', details: { replicas: 3 }, message: UNACKNOWLEDGED }])
  t.equal(aboutReplicas(warned.log).length, 1, 'exactly one')
  t.same(aboutReplicas(waiting.log), [], 'waitForReplicas set: none')
  t.same(aboutReplicas(noReplicas.log), [], 'no replicas: none')
  t.ok(noReplicas.log.lines.length > 0, 'though that store did check its servers (it warns that they keep nothing on disk)')
})
