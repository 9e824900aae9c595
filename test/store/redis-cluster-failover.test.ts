/**
 * Failover of a Redis Cluster under load: three masters with one replica
 * each, on this machine's redis-server. A master is killed while requests
 * run; until its replica has taken over, the requests that need it fail
 * closed (503 / 201, never a 500), and after it no revoked token validates
 * and no refresh token is spent twice.
 *
 * Redis replicates asynchronously, so a write a master acknowledged may die
 * with it. `waitForReplicas` makes each write wait for a replica; the last
 * tests freeze a replica (SIGSTOP) to show both sides deterministically: with
 * the option the write fails closed, without it a revocation is lost.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import { RedisStore, type RedisStoreOptions } from '../../lib/redis.js'
import { buildApp } from '../helpers/app.js'
import { claimsOf, errorOf, login, post } from '../helpers/http.js'
import { startRedisCluster } from '../helpers/redis-cluster.js'
import { clusterStore } from '../helpers/shared-stores.js'

t.setTimeout(240_000)

const MANY = { max: 1_000_000 }
const SETTINGS = { refresh: { enabled: true }, limits: { loginPerAccount: MANY, loginPerIp: MANY, requestsPerIp: MANY, signInsPerAccount: MANY } }
/** Past `refresh.reuseInterval` (30 s): a spent refresh token no longer gets its successor again. */
const PAST_REUSE_INTERVAL_MS = 31_000

const cluster = await startRedisCluster({ masters: 3, replicas: 1 })
t.teardown(async () => { await cluster.stop() })

interface Tokens { jwt: string, refresh_token: string }

/** An app on its own store and prefix, with a clock the test can move past the reuse interval. */
async function appOn (t: Test, options: Pick<RedisStoreOptions, 'waitForReplicas'> = {}): Promise<{ app: FastifyInstance, prefix: string, advance: (ms: number) => void }> {
  const { store, prefix } = await clusterStore(t, 'failover', { cluster, options })
  let offset = 0
  const { app } = await buildApp(SETTINGS, { store, clock: () => Date.now() + offset })
  t.teardown(async () => { await app.close() })
  return { app, prefix, advance: (ms) => { offset += ms } }
}
type Test = Parameters<Parameters<typeof t.test>[0]>[0]

async function signIn (app: FastifyInstance): Promise<Tokens> {
  const res = await login(app)
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data
}

async function validate (app: FastifyInstance, jwt: string): Promise<LightMyRequestResponse> {
  return await post(app, '/auth/validate', { JWT: jwt })
}

/** The replication role of the node on `port`: master, slave, or down. */
async function roleOf (port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    return /^role:(\w+)/m.exec(await client.info('replication'))?.[1] ?? 'unknown'
  } catch {
    return 'down'
  } finally {
    client.disconnect()
  }
}

/** Kills `master`, waits for `replica` to take its slots over, starts `master` again (it rejoins as a replica) and waits until all is in sync. */
async function failOver (master: number, replica: number): Promise<void> {
  cluster.signal(master, 'SIGKILL')
  cluster.signal(replica, 'SIGCONT')
  const deadline = Date.now() + 30_000
  while (await roleOf(replica) !== 'master') {
    if (Date.now() > deadline) throw new Error(`the replica on ${replica} did not take over`)
    await sleep(100)
  }
  await cluster.restart(master)
  await cluster.settled()
}

/**
 * Sends a request again while it fails closed, as a client would after a
 * 503 / 201, until the client's view of the cluster has caught up (30 s at most).
 */
async function untilServed (send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const res = await send()
    if (res.statusCode !== 503 || Date.now() > deadline) return res
    if (errorOf(res)[1] !== 201) return res
    await sleep(100)
  }
}

/** Records every answer of the load: statuses, and each failed-closed answer's envelope. */
class Answers {
  readonly statuses = new Map<number, number>()
  readonly unexpected: string[] = []

  see (what: string, res: LightMyRequestResponse, allowed: number[]): void {
    this.statuses.set(res.statusCode, (this.statuses.get(res.statusCode) ?? 0) + 1)
    if (res.statusCode === 503) {
      const [, code] = errorOf(res)
      if (code !== 201) this.unexpected.push(`${what}: 503 with errorCode ${String(code)}`)
    } else if (!allowed.includes(res.statusCode)) {
      this.unexpected.push(`${what}: ${res.statusCode} ${res.body}`)
    }
  }

  get failedClosed (): number { return this.statuses.get(503) ?? 0 }
}

/** What the load learned: revocations that answered 200, refresh tokens spent and the successor each got. */
interface Ledger {
  revoked: Set<string>
  spent: Map<string, string>
  live: Tokens[]
}

/** One worker's turn: validate (a revoked token must never pass), revoke, refresh or sign in. */
async function turn (app: FastifyInstance, step: number, ledger: Ledger, answers: Answers): Promise<void> {
  const pick = ledger.live[step % ledger.live.length] as Tokens
  switch (step % 4) {
    case 0: {
      const jwt = [...ledger.revoked][step % Math.max(1, ledger.revoked.size)] ?? pick.jwt
      const revokedBefore = ledger.revoked.has(jwt)
      const res = await validate(app, jwt)
      answers.see('validate', res, [200, 401])
      if (revokedBefore && res.statusCode === 200) answers.unexpected.push('a revoked token validated')
      return
    }
    case 1: {
      if (ledger.live.length < 4) return
      const res = await post(app, '/auth/revoke', { JWT: pick.jwt })
      // 401: a concurrent refresh put a token of a session already revoked back in the ledger
      answers.see('revoke', res, [200, 401])
      if (res.statusCode === 200) {
        ledger.revoked.add(pick.jwt)
        // another worker may have replaced it meanwhile
        const at = ledger.live.indexOf(pick)
        if (at >= 0) ledger.live.splice(at, 1)
      }
      return
    }
    case 2: {
      const res = await post(app, '/auth/refresh', { refresh_token: pick.refresh_token })
      answers.see('refresh', res, [200, 401])
      if (res.statusCode !== 200) return
      const next = res.json().data as Tokens
      const earlier = ledger.spent.get(pick.refresh_token)
      // within the reuse interval a retry gets the same successor back: anything else is a second use
      if (earlier !== undefined && earlier !== next.refresh_token) answers.unexpected.push('a refresh token was spent twice')
      ledger.spent.set(pick.refresh_token, next.refresh_token)
      const at = ledger.live.indexOf(pick)
      if (at >= 0) ledger.live[at] = next
      return
    }
    default: {
      const res = await login(app)
      answers.see('login', res, [200])
      if (res.statusCode === 200) ledger.live.push(res.json().data)
    }
  }
}

t.test('a master killed under load: requests fail closed until its replica takes over; no revoked token validates, no refresh token is spent twice', async (t) => {
  // a replica starved of CPU on a busy machine must not fail a write before the kill
  const { app, prefix, advance } = await appOn(t, { waitForReplicas: { replicas: 1, timeoutMs: 2000 } })
  const ledger: Ledger = { revoked: new Set(), spent: new Map(), live: [] }
  for (let i = 0; i < 12; i++) ledger.live.push(await signIn(app))
  const master = await cluster.masterOf(`${prefix}session:${claimsOf((ledger.live[0] as Tokens).jwt).sid as string}`)
  const replica = await cluster.replicaOf(master)

  const answers = new Answers()
  const load = { running: true }
  let step = 0
  const workers = Array.from({ length: 4 }, async () => {
    while (load.running) await turn(app, step++, ledger, answers)
  })
  await sleep(500)
  const before = answers.failedClosed
  await failOver(master, replica)
  // the cluster is whole again: load runs on until it meets no failure
  const recovered = Date.now()
  let settledAt = answers.failedClosed
  for (let quiet = 0; quiet < 20 && Date.now() - recovered < 30_000;) {
    await sleep(100)
    quiet = answers.failedClosed === settledAt ? quiet + 1 : 0
    settledAt = answers.failedClosed
  }
  load.running = false
  await Promise.all(workers)

  t.equal(before, 0, 'no failure before the kill')
  t.ok(answers.failedClosed > 0, `requests failed closed during the failover (${answers.failedClosed} answered 503 / 201)`)
  t.same(answers.unexpected, [], 'never a 500, a revoked token never validated, no refresh token was spent twice')
  t.comment(`answers by status: ${JSON.stringify(Object.fromEntries(answers.statuses))}, ${step} requests`)

  t.ok(ledger.revoked.size > 0, `${ledger.revoked.size} tokens revoked during the run`)
  for (const jwt of ledger.revoked) t.same(errorOf(await validate(app, jwt)).at(0), 401, 'a token revoked during the run stays revoked after it')
  advance(PAST_REUSE_INTERVAL_MS)
  t.ok(ledger.spent.size > 0, `${ledger.spent.size} refresh tokens spent during the run`)
  for (const spent of ledger.spent.keys()) {
    const res = await post(app, '/auth/refresh', { refresh_token: spent })
    t.not(res.statusCode, 200, 'a refresh token spent during the run cannot be spent again')
  }
  const fresh = await signIn(app)
  t.equal((await validate(app, fresh.jwt)).statusCode, 200, 'the recovered cluster serves a new sign-in')
})

/** Filler written to a master whose replica is frozen: more than the sockets between them hold, so what follows stays in the master's memory. */
const FILLER_MB = 48

/**
 * Signs in, freezes the replica of the master holding the session, fills the
 * replication stream past what the sockets buffer, and revokes: a write the
 * master acknowledges now is lost with it. Answers that revoke and the ports.
 */
async function revokeWithFrozenReplica (app: FastifyInstance, prefix: string): Promise<{ tokens: Tokens, revoke: LightMyRequestResponse, master: number, replica: number }> {
  const tokens = await signIn(app)
  const sessionKey = `${prefix}session:${claimsOf(tokens.jwt).sid as string}`
  const master = await cluster.masterOf(sessionKey)
  const replica = await cluster.replicaOf(master)
  cluster.signal(replica, 'SIGSTOP')
  const direct = new Redis(master, '127.0.0.1')
  const megabyte = 'x'.repeat(1 << 20)
  // the hash tag puts each filler key in the session key's slot, on that master
  for (let i = 0; i < FILLER_MB; i++) await direct.set(`${prefix}filler:{${sessionKey}}:${i}`, megabyte)
  direct.disconnect()
  const revoke = await post(app, '/auth/revoke', { JWT: tokens.jwt })
  return { tokens, revoke, master, replica }
}

t.test('waitForReplicas: a revoke the replica has not taken fails closed, and a retry after the failover holds', async (t) => {
  const { app, prefix } = await appOn(t, { waitForReplicas: { replicas: 1, timeoutMs: 300 } })
  const { tokens, revoke, master, replica } = await revokeWithFrozenReplica(app, prefix)
  t.same(errorOf(revoke), [503, 201], 'no replica acknowledged the revocation: 503 / 201')
  await failOver(master, replica)
  // the answer said nothing changed; the client retries
  const retry = await untilServed(async () => await post(app, '/auth/revoke', { JWT: tokens.jwt }))
  t.equal(retry.statusCode, 200, 'the retried revoke succeeds on the new master: the first one was lost with the old master')
  t.same(errorOf(await validate(app, tokens.jwt)).at(0), 401, 'and the token is refused')
})

t.test('without waitForReplicas the same failover loses a revocation that answered 200 (why the option exists)', async (t) => {
  const { app, prefix } = await appOn(t)
  const { tokens, revoke, master, replica } = await revokeWithFrozenReplica(app, prefix)
  t.equal(revoke.statusCode, 200, 'the master alone acknowledged the revocation')
  await failOver(master, replica)
  t.equal((await untilServed(async () => await validate(app, tokens.jwt))).statusCode, 200, 'the replica that took over never had it: the revoked token validates again')
})

t.test('waitForReplicas after a graceful failover (CLUSTER FAILOVER): the next write follows the new layout', async (t) => {
  const { store, prefix } = await clusterStore(t, 'failover', { cluster, options: { waitForReplicas: { replicas: 1, timeoutMs: 2000 } } })
  await store.set('k', 'before', 60_000)
  const master = await cluster.masterOf(`${prefix}k`)
  const replica = await cluster.replicaOf(master)
  const promoted = new Redis(replica, '127.0.0.1')
  t.teardown(() => { promoted.disconnect() })
  // the replica takes over with its master's consent: nothing is lost, and no connection of the store's drops
  await promoted.cluster('FAILOVER')
  while (await roleOf(replica) !== 'master') await sleep(50)
  await cluster.settled()
  // the store still sends the key's commands to the old master, which answers MOVED
  await store.set('k', 'after', 60_000)
  t.equal(await store.get('k'), 'after', 'the write was sent again to the new master and a replica acknowledged it')
  t.equal(await promoted.get(`${prefix}k`), 'after')
})

t.test('waitForReplicas is checked at construction', async (t) => {
  t.throws(() => new RedisStore({ cluster: { nodes: cluster.nodes }, waitForReplicas: { replicas: 0 } }), /replicas must be a whole number of at least 1/)
  t.throws(() => new RedisStore({ cluster: { nodes: cluster.nodes }, waitForReplicas: { replicas: 1, timeoutMs: 0.5 } }), /timeoutMs must be a whole number/)
})

// last: it leaves no node of the cluster running
t.test('every node killed: requests fail closed (503 / 201) within the store\'s deadline instead of waiting for the cluster', async (t) => {
  const store = new RedisStore({ cluster: { nodes: cluster.nodes }, prefix: `jwt-login-test:failover:${randomUUID()}:` })
  const { app } = await buildApp(SETTINGS, { store })
  t.teardown(async () => { await app.close(); await store.close() })
  const tokens = await signIn(app)
  for (const { port } of cluster.nodes) cluster.signal(port, 'SIGKILL')
  t.same(errorOf(await validate(app, tokens.jwt)), [503, 201], 'validate')
  t.same(errorOf(await login(app)), [503, 201], 'login')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: tokens.refresh_token })), [503, 201], 'refresh')
})
