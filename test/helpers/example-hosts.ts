import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { MailMessage } from '../../lib/index.js'

/**
 * The hosts load TypeScript as the test process does (tap's loader, which
 * keeps line numbers), so their coverage of lib/ merges with the tests'.
 * With tsx, whose output is one minified line, the merged line coverage of
 * every module a host loads would be wrong.
 */
const LOADERS = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')

/** examples/two-instances/host.ts: one host process of a service that runs on several. */
export const HOST = fileURLToPath(new URL('../../examples/two-instances/host.ts', import.meta.url))

export interface Answer { status: number, data: Record<string, any>, retryAfter: string | null }

/** What a host answered, kept for checks over a whole run (never a 5xx). */
export interface Answered { host: string, method: string, path: string, status: number }

/** How long a test waits for a host to start or to mail (generous: a loaded machine). */
const WAIT_MS = 60_000

/** One running host process: its address, what it answered, and the mail it "sent" (JSON lines on its stdout). */
export class Host {
  readonly answered: Answered[] = []
  /** The host's log lines (Fastify's JSON logger, level warn and above). */
  readonly logged: Array<Record<string, unknown>> = []
  readonly #mails: MailMessage[] = []
  readonly #waiting = new Set<() => void>()

  constructor (readonly name: string, readonly base: string, readonly child: ChildProcess) {}

  /** Called for every `{"mail": …}` line the host prints. */
  received (mail: MailMessage): void {
    this.#mails.push(mail)
    for (const wake of this.#waiting) wake()
  }

  /** A call to a plugin route; the answer's status is kept in `answered`. */
  async call (path: string, body: Record<string, unknown>, method = 'POST'): Promise<Answer> {
    const res = await fetch(`${this.base}/jwt-login/v1${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    this.answered.push({ host: this.name, method, path, status: res.status })
    return { status: res.status, data: (await res.json() as { data: Record<string, any> }).data, retryAfter: res.headers.get('retry-after') }
  }

  /** A GET of one of the host's own routes (outside the plugin's prefix) with `headers`; the answer's status is kept in `answered`, its whole body in `data`. */
  async get (path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${this.base}${path}`, { headers })
    this.answered.push({ host: this.name, method: 'GET', path, status: res.status })
    return { status: res.status, data: await res.json() as Record<string, any>, retryAfter: res.headers.get('retry-after') }
  }

  /** The oldest mail to `to` not taken yet, waiting for it if none came. */
  async nextMail (to: string): Promise<MailMessage> {
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      const index = this.#mails.findIndex((mail) => mail.to === to)
      if (index >= 0) return this.#mails.splice(index, 1)[0] as MailMessage
      if (Date.now() > deadline) throw new Error(`host ${this.name} sent no mail to ${to}`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { this.#waiting.delete(wake); clearTimeout(timer); resolve() }
        const timer = setTimeout(wake, 1000)
        this.#waiting.add(wake)
      })
    }
  }
}

/** Starts one host process and resolves once it prints where it listens. */
export async function startHost (env: Record<string, string>, name = 'host'): Promise<Host> {
  const child = spawn(process.execPath, [...LOADERS, HOST], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> })
  return await new Promise((resolve, reject) => {
    let host: Host | undefined
    const timer = setTimeout(() => { child.kill('SIGTERM'); reject(new Error(`host ${name} did not listen within ${WAIT_MS} ms`)) }, WAIT_MS)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`host ${name} exited with ${String(code)} before listening`)) })
    // stdout carries JSON lines: the address, the mail, and the host's log (Fastify's JSON logger)
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return
      const parsed = JSON.parse(line) as { listening?: string, mail?: MailMessage, level?: number }
      const { listening, mail } = parsed
      if (mail !== undefined) host?.received(mail)
      if (parsed.level !== undefined) host?.logged.push(parsed)
      if (listening === undefined) return
      clearTimeout(timer)
      host = new Host(name, listening, child)
      resolve(host)
    })
  })
}

/** SIGTERM and wait: the host closes the app and its store connections, then exits. */
export async function stopHost ({ child }: Host): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** Runs a host that must refuse to start: its exit code and what it printed on stderr. */
export async function refusedStart (env: NodeJS.ProcessEnv): Promise<{ code: number | null, stderr: string }> {
  const child = spawn(process.execPath, [...LOADERS, HOST], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { code, stderr }
}
