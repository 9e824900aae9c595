/**
 * Defect: a stalled Redis held requests past the 2 s deadline. On a single
 * Redis the store's own client auto-pipelined, so a call made while a batch
 * was unanswered waited for that batch to time out before it was even sent
 * (calls took up to 3.5 s, a sign-in 8.1 s during an 8 s stall), and a
 * client of the host's without `commandTimeout` waited until Redis answered
 * again. Now every call on a single Redis has the cluster's deadline (the
 * client's `commandTimeout`, default 2 s), and the store's own client does
 * not auto-pipeline.
 *
 * Each test freezes a redis-server of its own (SIGSTOP: connections stay
 * open, nothing answers) for STALL_MS, and fires a wave of every store call
 * every 500 ms meanwhile; each call must fail within the deadline (plus a
 * slack for a busy machine), measured from its own start.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import t from 'tap'
import { RedisStore } from '../../lib/redis.js'
import { deadlineOf } from '../../lib/store/deadline.js'
import { buildApp } from '../helpers/app.js'
import { errorOf, login } from '../helpers/http.js'
import { allFailedInTime, DEADLINE_MS, inWaves, STALL_MS, WAVE_EVERY_MS, WAVES_FOR_MS, wave } from '../helpers/deadlines.js'
import { Recorder, timed, until, type Settled } from '../helpers/log-recorder.js'
import { startRedisCluster } from '../helpers/redis-cluster.js'
import { startRedisServer, type PrivateRedis } from '../helpers/redis-server.js'

/** Waves of every call on each store, plus `extra` calls per wave; answers how each settled. */
async function waves (stores: Record<string, RedisStore>, extra: () => Array<Promise<Settled>> = () => []): Promise<Settled[]> {
  return await inWaves(() => [...Object.entries(stores).flatMap(([name, store]) => wave(store, name)), ...extra()])
}

/** Freezes `server` for STALL_MS (the teardown thaws it at the latest). */
function freeze (server: PrivateRedis): void {
  server.signal('SIGSTOP')
  setTimeout(() => { server.signal('SIGCONT') }, STALL_MS).unref()
}

t.test('the deadline is the client\'s commandTimeout when it sets one, else 2 s (0 means none in ioredis)', async (t) => {
  t.equal(deadlineOf(undefined), DEADLINE_MS)
  t.equal(deadlineOf(0), DEADLINE_MS)
  t.equal(deadlineOf(350), 350)
})

t.test('defect 4, stalled single Redis: every call of a RedisStore made from just `url`, a host client without commandTimeout, and the WAIT pipeline fail within the 2 s deadline; a sign-in answers 503 / 201 in time', async (t) => {
  const server = await startRedisServer()
  const prefix = `jwt-login-test:deadlines:${randomUUID()}:`
  const log = new Recorder()
  const defaults = new RedisStore({ url: server.url, prefix, log })
  const hostClient = new Redis(server.url)
  // the host's own handling of its client's errors
  hostClient.on('error', () => {})
  const hosted = new RedisStore({ client: hostClient, prefix, log })
  const waiting = new RedisStore({ url: server.url, prefix, log, waitForReplicas: { replicas: 1, timeoutMs: 10 } })
  const { app } = await buildApp({}, { store: defaults })
  t.teardown(async () => {
    server.signal('SIGCONT')
    try {
      await app.close()
      await Promise.all([defaults.close(), waiting.close(), hosted.close()])
    } finally {
      hostClient.disconnect()
      await server.stop()
    }
  })
  // every client connected, before the stall
  await Promise.all([defaults.get('warm-up'), hosted.get('warm-up'), waiting.get('warm-up')])

  freeze(server)
  const signIn = async (): Promise<Settled> => {
    const start = performance.now()
    const res = await login(app)
    const ms = performance.now() - start
    const [status, code] = errorOf(res)
    return { call: `sign-in ${status}/${String(code)}`, ms, error: status === 503 && code === 201 ? new Error('503 / 201') : null }
  }
  // a WAIT blocks its connection for at least 100 ms (Redis's timer resolution): two writes a wave that wait
  const waitingWrites = (): Array<Promise<Settled>> => [
    timed('waiting set', async () => { await waiting.set(`set:${randomUUID()}`, 'secret-value', 60_000) }),
    timed('waiting consume', async () => await waiting.consume(`code:${randomUUID()}`))
  ]
  const results = await waves({ defaults, hosted }, () => [signIn(), ...waitingWrites()])
  allFailedInTime(t, results, prefix)
  t.ok(results.some(result => /^hosted /.test(result.call) && /^Redis did not answer within 2000 ms$/.test(result.error?.message ?? '')), 'a host client without commandTimeout fails by the store\'s deadline, with a generic message')
  t.equal(results.filter(result => /^sign-in/.test(result.call)).length, WAVES_FOR_MS / WAVE_EVERY_MS + 1, 'every sign-in answered 503 / 201')

  // thawed, everything works again
  server.signal('SIGCONT')
  await defaults.set('after', 'v', 60_000)
  t.equal(await hosted.get('after'), 'v', 'the stores work again once Redis answers')
  // once the WAITs held back by the stall are served (one client's commands run in order)
  const waitAnswers = async (): Promise<boolean> => await waiting.set('after', 'v', 60_000).then(() => false, (error: Error) => /only 0 of 1 replicas acknowledged/.test(error.message))
  await until('a waiting write to fail as before: no replica has it', waitAnswers)
  t.equal(await waitAnswers(), true, 'a write that waits for a replica Redis has not got fails as before, with the replicas named')
})

t.test('a stalled master of a Redis Cluster: every call on its keys fails within the deadline (a store-created cluster, and a host Cluster without commandTimeout)', async (t) => {
  const cluster = await startRedisCluster({ masters: 3 })
  const prefix = `jwt-login-test:deadlines-cluster:${randomUUID()}:`
  const log = new Recorder()
  const defaults = new RedisStore({ cluster: { nodes: cluster.nodes }, prefix, log })
  const hostCluster = cluster.client()
  hostCluster.on('error', () => {})
  const hosted = new RedisStore({ client: hostCluster, prefix, log })
  await Promise.all([defaults.get('warm-up'), hosted.get('warm-up')])
  // freeze the master of a key every call below may touch: every wave reaches it with high odds, and the first key surely
  const master = await cluster.masterOf(`${prefix}get`)
  const stalled = cluster.nodes.findIndex(node => node.port === master)
  t.ok(stalled >= 0, `the master on ${master} is frozen`)
  cluster.signal(master, 'SIGSTOP')
  setTimeout(() => { cluster.signal(master, 'SIGCONT') }, STALL_MS).unref()
  t.teardown(async () => {
    cluster.signal(master, 'SIGCONT')
    try {
      await Promise.all([defaults.close(), hosted.close()])
    } finally {
      hostCluster.disconnect()
      await cluster.stop()
    }
  })

  const onFrozen = (store: RedisStore, name: string): Array<Promise<Settled>> => [
    timed(`${name} get on the frozen master`, async () => await store.get('get')),
    timed(`${name} getMany with a key on the frozen master`, async () => await store.getMany(['get', `other-${randomUUID()}`])),
    timed(`${name} set on the frozen master`, async () => { await store.set('get', 'secret-value', 60_000) }),
    timed(`${name} increment on the frozen master`, async () => await store.increment('get', 60_000)),
    timed(`${name} compareAndSet on the frozen master`, async () => await store.compareAndSet('get', 'x', 'secret-value', 60_000)),
    timed(`${name} consume on the frozen master`, async () => await store.consume('get'))
  ]
  const results = await inWaves(() => [...onFrozen(defaults, 'store-created'), ...onFrozen(hosted, 'host Cluster')])
  allFailedInTime(t, results, prefix)
  t.ok(results.some(result => /^host Cluster /.test(result.call) && /^Redis did not answer within 2000 ms$/.test(result.error?.message ?? '')), 'a host Cluster without commandTimeout fails by the store\'s deadline')
})
