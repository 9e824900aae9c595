import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { closedPort } from './net.js'
import { answers } from './redis-cluster.js'

/** A `redis-server` of one test file's own, on a spare loopback port: it may be frozen or reconfigured freely. */
export interface PrivateRedis {
  port: number
  url: string
  /** SIGSTOP freezes it (the kernel still accepts connections, nothing answers), SIGCONT thaws it. */
  signal: (signal: NodeJS.Signals) => void
  stop: () => Promise<void>
}

/**
 * Starts a `redis-server` with `args` added to its command line (a
 * `--replicaof`, an ACL `--user`), in a temporary directory. It keeps RDB
 * save points, so the store's durability check has nothing to say, but is
 * killed (SIGKILL, no final save) with its directory in `stop()` or when the
 * test process exits.
 */
export async function startRedisServer (args: string[] = []): Promise<PrivateRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'jwt-login-redis-'))
  const port = await closedPort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '3600 1', '--appendonly', 'no', ...args], { stdio: 'ignore' })
  const orphan = (): void => { child.kill('SIGKILL') }
  process.once('exit', orphan)
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
    process.off('exit', orphan)
  }
  const deadline = Date.now() + 10_000
  while (!await answers(port)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop()
      throw new Error(`the private redis-server on port ${port} did not start`)
    }
    await sleep(50)
  }
  return { port, url: `redis://127.0.0.1:${port}`, signal: (signal) => { child.kill(signal) }, stop }
}
