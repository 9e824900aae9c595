// What the plugin prints to stderr when the host created Fastify without a logger: the failures that would otherwise pass unseen.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { LoggedError } from '../adapters/guard.js'
import type { Clock } from '../core/clock.js'
import type { StoreLogger } from '../store/types.js'

/** At most one dependency failure is printed per this many ms; the rest wait for a logger. */
export const FALLBACK_INTERVAL_MS = 60_000

const FURTHER = '(further failures this minute are not printed; pass a logger to Fastify to see all)'

/**
 * Whether `log` is the logger Fastify 5 makes when the host passes none
 * (neither `logger` nor `loggerInstance`): abstract-logging's no-op methods,
 * with no `level`, whose `child()` answers the logger itself (so every
 * request and every encapsulated scope share it). A pino logger has a
 * `level` even when silenced: `logger: { level: 'silent' }` is a choice,
 * and nothing is printed for it.
 */
export function hasNoLogger (log: FastifyBaseLogger): boolean {
  return (log as { level?: unknown }).level === undefined && log.child({}) === log
}

/** One line of text: a message that spans lines (a driver's) is joined with spaces. */
function oneLine (text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** `<type> <code> <message>`, as the log line's `err` carries them. */
function described (logged: LoggedError): string {
  return oneLine([logged.type, logged.code === undefined ? '' : String(logged.code), logged.message].filter(part => part !== '').join(' '))
}

/** The first dependency failure of each minute, printed; the others counted. */
class FailureLine {
  #printedAt = -Infinity
  #notPrinted = 0

  constructor (private readonly clock: Clock) {}

  print (where: string, logged: LoggedError): void {
    const now = this.clock()
    if (now - this.#printedAt < FALLBACK_INTERVAL_MS) {
      this.#notPrinted++
      return
    }
    const skipped = this.#notPrinted === 0 ? '' : ` [${this.#notPrinted} not printed since the last line]`
    this.#printedAt = now
    this.#notPrinted = 0
    process.stderr.write(`jwt-login: dependency failed (${where}): ${described(logged)}${skipped} ${FURTHER}\n`)
  }
}

/** The line of each logger Fastify made without a host logger; one per app, shared by the instances in it. */
const lines = new WeakMap<FastifyBaseLogger, FailureLine>()

/**
 * Called at registration: when the host's Fastify has no logger, the
 * dependency failures of this app are printed to stderr, timed by `clock`.
 */
export function watchFailures (log: FastifyBaseLogger, clock: Clock): void {
  if (hasNoLogger(log) && !lines.has(log)) lines.set(log, new FailureLine(clock))
}

/**
 * Logs a request's dependency failure (a 503: a store, a port), as
 * `logged`, already cut free of the request's values. Without a logger the
 * first one per minute is printed too, with the route's pattern (never its
 * URL, whose query may carry a secret); never a stack.
 */
export function logDependencyFailure (request: FastifyRequest, logged: LoggedError): void {
  request.log.error({ err: logged }, 'jwt-login: dependency failed')
  lines.get(request.log)?.print(`${request.method} ${request.routeOptions.url ?? 'an unknown path'}`, logged)
}

/** `details` as one line of JSON, or nothing when they cannot be written. */
function detailsOf (details: object): string {
  try {
    return ` ${JSON.stringify(details)}`
  } catch {
    return ''
  }
}

/**
 * The logger handed to the state store (`attachLogger`): Fastify's, or,
 * when the host has none, one that prints the store's errors and warnings
 * (a lost connection, a full memory store: the stores space them out
 * themselves) to stderr. Debug lines are dropped.
 */
export function storeLoggerFor (log: FastifyBaseLogger): StoreLogger {
  if (!hasNoLogger(log)) return log
  const print = (details: object, message: string): void => { process.stderr.write(`${oneLine(message)}${detailsOf(details)}\n`) }
  return { error: print, warn: print }
}

/**
 * Logs a problem the plugin started with anyway (`startDegraded`) as an
 * error, and prints it to stderr when the host has no logger.
 */
export function logStartProblem (log: FastifyBaseLogger, message: string): void {
  log.error(message)
  if (hasNoLogger(log)) process.stderr.write(`${oneLine(message)}\n`)
}
