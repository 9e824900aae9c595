/**
 * One benchmark server in its own process:
 * `node --import tsx bench/server.ts <kind> [arg]`, started by `run.ts` with
 * an IPC channel. It listens on 127.0.0.1:0, reports its port, and measures
 * its own CPU time and event-loop delay between the parent's `start` and
 * `stop`. It shuts down on `close`, SIGINT, SIGTERM or a lost parent.
 *
 * Arguments: `bare-validate <answer bytes>`, `subject-redis <key prefix>`
 * (the prefix's keys are deleted on shutdown).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { RedisStore } from '../lib/redis.js'
import { bareArgon2App, bareHookApp, bareValidateApp, subjectApp, subjectHookApp } from './apps.js'
import { isServerKind, type ChildMessage, type ParentMessage } from './shared.js'

const REDIS_URL = 'redis://127.0.0.1:6379'

/** A parent that is gone gets nothing (the `disconnect` handler shuts down). */
function send (message: ChildMessage): void {
  if (process.connected) process.send?.(message)
}

async function deleteKeys (prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    for await (const keys of client.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await client.del(...keys)
    }
  } finally {
    await client.quit()
  }
}

async function build (kind: string, arg: string | undefined): Promise<{ app: FastifyInstance, cleanup: () => Promise<void> }> {
  const nothing = async (): Promise<void> => {}
  switch (kind) {
    case 'bare-validate': {
      const bytes = Number(arg)
      if (!Number.isInteger(bytes) || bytes <= 0) throw new Error('bare-validate needs the answer size in bytes')
      return { app: await bareValidateApp(bytes), cleanup: nothing }
    }
    case 'bare-hook': return { app: await bareHookApp(), cleanup: nothing }
    case 'bare-argon2': return { app: await bareArgon2App(), cleanup: nothing }
    case 'subject': return { app: await subjectApp(), cleanup: nothing }
    case 'subject-hook': return { app: await subjectHookApp(), cleanup: nothing }
    default: {
      // subject-redis (the kind was checked before)
      if (arg === undefined || !arg.startsWith('bench:')) throw new Error('subject-redis needs a key prefix starting with bench:')
      const store = new RedisStore({ url: REDIS_URL, prefix: arg })
      return {
        app: await subjectApp(store),
        cleanup: async () => {
          await store.close()
          await deleteKeys(arg)
        }
      }
    }
  }
}

async function main (): Promise<void> {
  const [kind, arg] = process.argv.slice(2)
  if (!isServerKind(kind) || process.send === undefined) {
    throw new Error('usage: started by bench/run.ts with an IPC channel, as server.ts <kind> [arg]')
  }
  const { app, cleanup } = await build(kind, arg)

  let closing: Promise<void> | null = null
  const shutdown = (): void => {
    closing ??= (async () => {
      try {
        await app.close()
        await cleanup()
      } finally {
        process.exit(0)
      }
    })()
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
  process.on('disconnect', shutdown)
  // a parent lost while the app was being built
  if (!process.connected) shutdown()

  const delay = monitorEventLoopDelay({ resolution: 10 })
  let cpuAt = process.cpuUsage()
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'start') {
      delay.reset()
      delay.enable()
      cpuAt = process.cpuUsage()
      send({ type: 'started', id: message.id })
    } else if (message.type === 'stop') {
      const cpu = process.cpuUsage(cpuAt)
      delay.disable()
      send({
        type: 'measured',
        id: message.id,
        cpuMicros: cpu.user + cpu.system,
        loopDelayP99Ms: delay.percentile(99) / 1e6,
        loopDelayMaxMs: delay.max / 1e6
      })
    } else {
      shutdown()
    }
  })

  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  send({ type: 'ready', port: address.port })
}

try {
  await main()
} catch (error) {
  console.error(`bench server ${process.argv[2] ?? '?'}:`, error)
  process.exit(1)
}
