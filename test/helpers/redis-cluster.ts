import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Cluster, Redis } from 'ioredis'

const run = promisify(execFile)

/** A Redis Cluster of this machine's `redis-server` processes, on spare loopback ports, for one test file. */
export interface LocalCluster {
  /** `127.0.0.1:<port>` of every node, masters first. */
  nodes: Array<{ host: string, port: number }>
  /** A new ioredis Cluster client on these nodes (the caller closes it). */
  client: (options?: ConstructorParameters<typeof Cluster>[1]) => Cluster
  /** Sends `signal` to the node on `port`: SIGKILL (no goodbye to the cluster), SIGSTOP, SIGCONT. */
  signal: (port: number, signal: NodeJS.Signals) => void
  /** Starts the killed node on `port` again, with its cluster config: it rejoins (as a replica if it lost its slots). */
  restart: (port: number) => Promise<void>
  /** The port of the replica of the master on `port`. */
  replicaOf: (port: number) => Promise<number>
  /** The port of the master that serves `key` now. */
  masterOf: (key: string) => Promise<number>
  /** Deletes every key under `prefix` (through a client of its own). */
  deleteKeys: (prefix: string) => Promise<void>
  /** Waits until every node says the cluster is ok and every master has its replicas in sync. */
  settled: () => Promise<void>
  stop: () => Promise<void>
}

async function isFree (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { server.close(() => { resolve(true) }) })
  })
}

/**
 * A port whose cluster bus port (+10000) is free too, both below Linux's
 * ephemeral range (32768 and up): a node killed and restarted on its port
 * must find it free, and an outgoing connection of another test could take
 * an ephemeral port meanwhile (seen once: the node never came back).
 */
async function sparePort (taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 12_700)
    if (taken.has(port) || taken.has(port + 10_000)) continue
    if (await isFree(port) && await isFree(port + 10_000)) {
      taken.add(port)
      taken.add(port + 10_000)
      return port
    }
  }
}

function startNode (port: number, dir: string): ChildProcess {
  return spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
    '--cluster-node-timeout', '1000', '--save', '', '--appendonly', 'no',
    // a replica whose master died takes over at once, however stale it thinks it is
    '--cluster-replica-validity-factor', '0'
  ], { stdio: 'ignore' })
}

/**
 * Whether a Redis answers PING on `port` (a refused connection is a plain
 * `false`); no ready check, which is an INFO that an ACL may refuse.
 */
export async function answers (port: number): Promise<boolean> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null })
  // a node not up yet refuses the connection: that is the answer, not an error to print
  probe.on('error', () => {})
  try {
    await probe.connect()
    return await probe.ping() === 'PONG'
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

async function waitFor (what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`the local Redis Cluster: ${what} within ${timeoutMs} ms`)
    await sleep(100)
  }
}

/** Each live node's view: cluster ok, and (for a master) every replica it should have connected and in sync. */
async function nodeSettled (port: number, replicas: number): Promise<boolean> {
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    const info = await client.cluster('INFO') as string
    if (!info.includes('cluster_state:ok')) return false
    const role = await client.info('replication')
    if (!role.includes('role:master')) return role.includes('master_link_status:up')
    return (role.match(/^slave\d+:.*state=online/gm) ?? []).length >= replicas
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/**
 * Starts `masters` masters with `replicas` replicas each, joins them with
 * `redis-cli --cluster create`, and waits until the cluster is ok. Nothing
 * is kept on disk; the processes and their directory go in `stop()`.
 */
export async function startRedisCluster ({ masters = 3, replicas = 0 } = {}): Promise<LocalCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'jwt-login-cluster-'))
  const taken = new Set<number>()
  const ports: number[] = []
  for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await sparePort(taken))
  const processes = new Map(ports.map(port => [port, startNode(port, dir)]))
  // a test process that dies (a tap timeout, Ctrl-C) takes its nodes with it
  const orphans = (): void => { for (const child of processes.values()) child.kill('SIGKILL') }
  process.once('exit', orphans)
  const stop = async (): Promise<void> => {
    await Promise.all([...processes.values()].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }))
    await rm(dir, { recursive: true, force: true })
    process.off('exit', orphans)
  }
  try {
    for (const port of ports) await waitFor(`port ${port} answers`, async () => await answers(port))
    await run('redis-cli', ['--cluster', 'create', ...ports.map(p => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'])
    const live = (): number[] => ports.filter(p => processes.get(p)?.exitCode === null && processes.get(p)?.signalCode === null)
    const settled = async (): Promise<void> => {
      await waitFor('every node ok and in sync', async () => (await Promise.all(live().map(async p => await nodeSettled(p, replicas)))).every(Boolean))
    }
    await settled()
    const nodes = ports.map(port => ({ host: '127.0.0.1', port }))
    return {
      nodes,
      client: (options) => new Cluster(nodes, options),
      deleteKeys: async (prefix) => {
        const admin = new Cluster(nodes)
        try {
          // before 'ready' the client knows no masters, and would delete nothing
          await once(admin, 'ready')
          await deleteClusterKeys(admin, prefix)
        } finally {
          await admin.quit()
        }
      },
      signal: (port, signal) => { processes.get(port)?.kill(signal) },
      restart: async (port) => {
        const old = processes.get(port) as ChildProcess
        if (old.exitCode === null && old.signalCode === null) await new Promise(resolve => old.once('exit', resolve))
        processes.set(port, startNode(port, dir))
        await waitFor(`port ${port} answers again`, async () => await answers(port))
      },
      replicaOf: async (port) => {
        const client = new Redis(port, '127.0.0.1')
        try {
          const info = await client.info('replication')
          const line = /^slave0:ip=[^,]+,port=(\d+)/m.exec(info)
          if (line === null) throw new Error(`the node on ${port} has no replica`)
          return Number(line[1])
        } finally {
          client.disconnect()
        }
      },
      masterOf: async (key) => {
        const client = new Redis(live()[0] as number, '127.0.0.1')
        try {
          const slot = await client.cluster('KEYSLOT', key) as number
          const shards = await client.cluster('SLOTS')
          const shard = shards.find(([from, to]) => slot >= from && slot <= to)
          if (shard?.[2] === undefined) throw new Error(`no master serves slot ${slot}`)
          return shard[2][1]
        } finally {
          client.disconnect()
        }
      },
      settled,
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Deletes every key under `prefix` that `cluster` reaches. */
async function deleteClusterKeys (cluster: Cluster, prefix: string): Promise<void> {
  // every node, replicas too: right after a failover the client's idea of who is master may be the older one
  await Promise.all(cluster.nodes('all').map(async (node) => {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      // one DEL per key, through the cluster client: keys of one node lie in different slots, and a node
      // that has just become a replica (its view of the layout may be the older one) answers MOVED
      await Promise.all(keys.map(async key => await cluster.del(key)))
    } while (cursor !== '0')
  }))
}
