/**
 * RedisStore on a Redis Cluster beyond the store contract (which
 * test/conformance/state-store-cluster.test.ts checks): a host's own Cluster
 * client, keys of one request in different hash slots, the plugin's routes
 * end to end, what the store logs, and waitForReplicas.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import t from 'tap'
import { RedisStore } from '../../lib/redis.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorOf, login, post } from '../helpers/http.js'
import { Recorder } from '../helpers/log-recorder.js'
import { closedPort } from '../helpers/net.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'
import { clusterStore, sharedCluster } from '../helpers/shared-stores.js'

const cluster = await sharedCluster()

function prefixed (): string {
  return `jwt-login-test:cluster:${randomUUID()}:`
}

t.test('a Cluster client the host owns: keys in several slots read in one getMany, where one MGET would be refused; close() leaves the client open', async (t) => {
  const client = cluster.client()
  const prefix = prefixed()
  t.teardown(async () => { await cluster.deleteKeys(prefix); await client.quit() })
  const store = new RedisStore({ client, prefix })
  const keys = Array.from({ length: 12 }, (_, i) => `k${i}`)
  for (const key of keys) await store.set(key, `v-${key}`, 60_000)
  const slots = new Set(await Promise.all(keys.map(async key => await client.cluster('KEYSLOT', prefix + key))))
  t.ok(slots.size > 1, `the keys lie in ${slots.size} hash slots`)
  await t.rejects(client.mget(keys.map(key => prefix + key)), /CROSSSLOT/, 'one MGET across slots is refused by the cluster')
  t.same(await store.getMany([...keys, 'absent']), [...keys.map(key => `v-${key}`), null])
  await store.close()
  t.equal(await client.get(`${prefix}k0`), 'v-k0', 'the host\'s client still works after close()')
})

t.test('the routes on a cluster: login, validate, refresh, revoke; a revoked token is refused', async (t) => {
  const { store } = await clusterStore(t, 'cluster-routes')
  const { app } = await buildApp({ refresh: { enabled: true } }, { store })
  t.teardown(async () => { await app.close() })
  const first = (await login(app)).json().data
  t.equal((await post(app, '/auth/validate', { JWT: first.jwt })).statusCode, 200)
  const next = (await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).json().data
  t.type(next.refresh_token, 'string', 'rotated')
  t.equal((await post(app, '/auth/revoke', { JWT: next.jwt })).statusCode, 200)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: next.jwt })), [401, 55], 'revoked')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: next.refresh_token })).at(0), 401, 'its refresh token too')
})

t.test('a cluster the store creates: warns when its servers keep nothing on disk, and logs unreachable nodes', async (t) => {
  const log = new Recorder()
  const { lines } = log
  const store = new RedisStore({ cluster: { nodes: cluster.nodes }, prefix: prefixed(), log })
  t.teardown(async () => { await store.close() })
  await store.get('warm-up')
  for (let i = 0; i < 50 && lines.length === 0; i++) await sleep(20)
  t.match(lines, [{ level: 'warn', message: /keeps nothing on disk/ }], 'the durability check runs on a cluster too')

  // with ioredis's defaults the client retries for ever and queues commands meanwhile: the store's deadline answers
  const down = new Recorder()
  const unreachable = new RedisStore({ cluster: { nodes: [{ host: '127.0.0.1', port: await closedPort() }], options: { redisOptions: { commandTimeout: 300 } } }, log: down })
  t.teardown(async () => { await unreachable.close().catch(() => {}) })
  await t.rejects(unreachable.get('k'), /did not answer within 300 ms/, 'a read fails instead of waiting')
  await t.rejects(unreachable.getMany(['a', 'b']), /did not answer within 300 ms/)
  await t.rejects(unreachable.set('k', 'v', 1000), /did not answer within 300 ms/, 'a write too')
  t.match(down.lines[0], { level: 'error', message: /cannot reach Redis/ }, 'logged once, through the store\'s logger')
})

t.test('options that contradict each other, and a cluster reading from replicas, are refused', async (t) => {
  const host = cluster.client({ lazyConnect: true })
  t.teardown(() => { host.disconnect() })
  t.throws(() => new RedisStore({ client: host, url: REDIS_URL }), /give one of client, cluster, or url \/ redisOptions/)
  t.throws(() => new RedisStore({ cluster: { nodes: cluster.nodes }, redisOptions: {} }), /give one of/)
  const replicaReads = cluster.client({ lazyConnect: true, scaleReads: 'slave' })
  t.teardown(() => { replicaReads.disconnect() })
  t.throws(() => new RedisStore({ client: replicaReads }), /reads from replicas \(scaleReads\) could find a revoked session still live/)
  t.throws(() => new RedisStore({ cluster: { nodes: cluster.nodes, options: { scaleReads: 'all' } } }), /scaleReads/)
})

t.test('waitForReplicas on a Redis without replicas: every write fails closed (503 / 201), reads still work', async (t) => {
  const prefix = prefixed()
  const store = new RedisStore({ url: REDIS_URL, prefix, waitForReplicas: { replicas: 1, timeoutMs: 20 } })
  t.teardown(async () => { await store.close(); await deleteKeys(prefix) })
  await t.rejects(store.set('k', 'v', 1000), /only 0 of 1 replicas acknowledged the write within 20 ms/)
  t.equal(await store.get('k'), 'v', 'the write ran on the master: a failure here means "not known to be safe", as with a lost answer')
  const direct = new Redis(REDIS_URL)
  t.teardown(async () => { await direct.quit() })
  await direct.set(`${prefix}text`, 'not a number')
  await t.rejects(store.increment('text', 1000), /not an integer/, 'an error of the write itself comes first')

  const { app } = await buildApp({}, { store })
  t.teardown(async () => { await app.close() })
  t.same(errorOf(await login(app, { email: ALICE.email, password: ALICE.password })), [503, 201], 'through the plugin: 503 / 201')
})
