import { setTimeout as sleep } from 'node:timers/promises'
import type { StoreLogger } from '../../lib/index.js'

export interface Line { level: 'error' | 'warn' | 'debug', details: Record<string, any>, message: string }

/** A pino-shaped logger that keeps its lines. */
export class Recorder implements StoreLogger {
  readonly lines: Line[] = []
  error (details: object, message: string): void { this.lines.push({ level: 'error', details, message }) }
  warn (details: object, message: string): void { this.lines.push({ level: 'warn', details, message }) }
  debug (details: object, message: string): void { this.lines.push({ level: 'debug', details, message }) }
  at (level: Line['level']): Line[] { return this.lines.filter(line => line.level === level) }
}

/** Polls `check` every 20 ms until it holds; throws naming `what` after `ms`. */
export async function until (what: string, check: () => boolean | Promise<boolean>, ms = 8_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** Everything written to stderr while `run` runs (console.error included). */
export async function stderrDuring (run: () => Promise<void>): Promise<string> {
  let written = ''
  const write = process.stderr.write
  process.stderr.write = ((chunk: string | Uint8Array) => { written += String(chunk); return true }) as typeof process.stderr.write
  try {
    await run()
  } finally {
    process.stderr.write = write
  }
  return written
}

/** How one call settled: its name, how long it took (ms) and its error, if any. */
export interface Settled { call: string, ms: number, error: Error | null }

/** Runs `run` and answers how long it took to settle, never rejecting. */
export async function timed (call: string, run: () => Promise<unknown>): Promise<Settled> {
  const start = performance.now()
  try {
    await run()
    return { call, ms: performance.now() - start, error: null }
  } catch (error) {
    return { call, ms: performance.now() - start, error: error as Error }
  }
}
