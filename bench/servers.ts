/**
 * The parent's side of the server children: start one per kind, bracket a
 * load run with its own measurement, stop it. Every child still alive when
 * the parent exits is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChildMessage, ParentMessage, Seeded, ServerKind, Usage } from './shared.js'

const SERVER_SCRIPT = fileURLToPath(new URL('./server.ts', import.meta.url))
const START_TIMEOUT_MS = 60_000
const STOP_GRACE_MS = 5_000

const live = new Set<ChildProcess>()
const running = new Set<ServerProcess>()
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

export class ServerProcess {
  readonly kind: ServerKind
  readonly url: string
  readonly #child: ChildProcess
  readonly #waiting = new Map<number, { resolve: (message: ChildMessage) => void, reject: (error: Error) => void }>()
  #nextId = 1
  #exited: Promise<void>

  private constructor (kind: ServerKind, child: ChildProcess, port: number, exited: Promise<void>) {
    this.kind = kind
    this.#child = child
    this.url = `http://127.0.0.1:${port}`
    this.#exited = exited
    running.add(this)
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') return
      const waiter = this.#waiting.get(message.id)
      this.#waiting.delete(message.id)
      waiter?.resolve(message)
    })
    child.once('exit', () => {
      running.delete(this)
      for (const waiter of this.#waiting.values()) waiter.reject(new Error(`bench server ${kind} exited`))
      this.#waiting.clear()
    })
  }

  static async start (kind: ServerKind, ...args: string[]): Promise<ServerProcess> {
    return await ServerProcess.startFrom(SERVER_SCRIPT, kind, ...args)
  }

  /** A server of `kind` from another checkout's bench (`script`: its bench/server.ts), for `BENCH_AGAINST`. */
  static async startFrom (script: string, kind: ServerKind, ...args: string[]): Promise<ServerProcess> {
    // a memory store's heap is weighed after a full collection
    const flags = kind === 'subject-memory' ? ['--expose-gc'] : []
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', script, kind, ...args], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    live.add(child)
    const exited = new Promise<void>(resolve => {
      child.once('exit', () => {
        live.delete(child)
        resolve()
      })
    })
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`bench server ${kind} did not start in ${START_TIMEOUT_MS / 1000} s`)) }, START_TIMEOUT_MS)
      child.on('message', (message: ChildMessage) => {
        if (message.type !== 'ready') return
        clearTimeout(timer)
        resolve(message.port)
      })
      child.once('exit', () => {
        clearTimeout(timer)
        reject(new Error(`bench server ${kind} exited before it listened (code ${child.exitCode ?? child.signalCode})`))
      })
    }).catch((error: unknown) => {
      child.kill('SIGKILL')
      throw error
    })
    return new ServerProcess(kind, child, port, exited)
  }

  async #ask (message: Exclude<ParentMessage, { type: 'close' }>): Promise<ChildMessage> {
    const id = message.id
    return await new Promise<ChildMessage>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject })
      // a child gone meanwhile: the callback gets the error instead of an unhandled 'error' event
      this.#child.send(message, (error) => {
        if (error === null) return
        this.#waiting.delete(id)
        reject(new Error(`bench server ${this.kind} is gone`, { cause: error }))
      })
    })
  }

  /** Runs `work` (the load) between the child's `start` and `stop`, and answers what the child measured. */
  async measure<T> (work: () => Promise<T>): Promise<{ result: T, usage: Usage }> {
    await this.#ask({ type: 'start', id: this.#nextId++ })
    const result = await work()
    const answer = await this.#ask({ type: 'stop', id: this.#nextId++ })
    if (answer.type !== 'measured') throw new Error(`bench server ${this.kind}: unexpected answer ${answer.type}`)
    return { result, usage: { cpuMicros: answer.cpuMicros, loopDelayP99Ms: answer.loopDelayP99Ms, loopDelayMaxMs: answer.loopDelayMaxMs } }
  }

  /** Has a `subject-memory` child write `count` more sessions like the one under `key`, and answers what its store holds then. */
  async seed (key: string, count: number, ttlMs: number): Promise<Seeded> {
    const answer = await this.#ask({ type: 'seed', id: this.#nextId++, key, count, ttlMs })
    if (answer.type !== 'seeded') throw new Error(`bench server ${this.kind}: unexpected answer ${answer.type}`)
    return { entries: answer.entries, heapBytes: answer.heapBytes, rssBytes: answer.rssBytes }
  }

  /** Asks the child to close (it cleans up its store), and kills it if it has not exited in time. */
  async stop (): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    if (this.#child.connected) this.#child.send({ type: 'close' } satisfies ParentMessage, () => {})
    const timer = setTimeout(() => { this.#child.kill('SIGKILL') }, STOP_GRACE_MS)
    await this.#exited
    clearTimeout(timer)
  }
}

/** Stops every child still running (after a failed run, or on SIGINT/SIGTERM), so each cleans its store. */
export async function stopAll (): Promise<void> {
  await Promise.all([...running].map(async server => { await server.stop() }))
}
