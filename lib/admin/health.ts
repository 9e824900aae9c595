// `fastify.jwtLogin.health()`: whether the state store and the host's ports answer one cheap read each within a deadline.
import { HostPortError, loggedError } from '../adapters/logged-error.js'
import type { JwtLoginContext } from '../context/context.js'
import { storeProblem } from '../store/guard.js'

/** The options of `health`. */
export interface HealthOptions {
  /** How long each check waits for its answer, in ms (default 1000). */
  deadlineMs?: number
}

/** One check of `health`: a part, whether it answered in time, and how long it took. */
export interface HealthCheck {
  /** `store`: the state store; `users`: the user adapter; `passkeys`: the passkey port (with the `passkeys` option only). */
  name: 'store' | 'users' | 'passkeys'
  healthy: boolean
  /** How long the check took, in whole ms. */
  durationMs: number
  /**
   * What is wrong, when unhealthy. For a port, only `did not answer within
   * N ms` or `failed (<error class>[ <error code>])`, never what the port
   * threw; for the store, what the check at `ready()` says (credentials in
   * a URL cut out).
   */
  problem?: string
}

/** What `health` answers: healthy when every check is. */
export interface HealthReport {
  healthy: boolean
  checks: HealthCheck[]
}

export const DEFAULT_HEALTH_DEADLINE_MS = 1000
/** The longest a timer waits: a longer one would fire at once. */
const MAX_DEADLINE_MS = 2 ** 31 - 1

/** An address no user can have: `.invalid` is reserved (RFC 2606), and the answer is not used. */
export const HEALTH_CHECK_EMAIL = 'health-check@jwt-login.invalid'
/** A credential id no authenticator makes (9 bytes; WebAuthn's are at least 16). */
export const HEALTH_CHECK_CREDENTIAL = 'health-check'

/** An error's code as the report may show it: a number, or a string that reads like one (a message put in `code` is left out). */
const CODE_LIKE = /^[A-Za-z0-9_.:-]{1,64}$/

const LATE = Symbol('late')

function deadlineOf (options: HealthOptions | undefined): number {
  const deadlineMs: unknown = options?.deadlineMs === undefined ? DEFAULT_HEALTH_DEADLINE_MS : options.deadlineMs
  if (typeof deadlineMs === 'number' && Number.isFinite(deadlineMs) && deadlineMs > 0 && deadlineMs <= MAX_DEADLINE_MS) return deadlineMs
  throw new TypeError(`health: deadlineMs must be a positive finite number of ms, at most ${MAX_DEADLINE_MS}`)
}

/** `call`'s answer, or `LATE` once `deadlineMs` passed; the timer never keeps the process alive. */
async function inTime<T> (call: Promise<T>, deadlineMs: number): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(resolve, deadlineMs, LATE)
    timer.unref()
  })
  try {
    return await Promise.race([call, late])
  } finally {
    clearTimeout(timer)
  }
}

/** A port's failure by its class and code only: its message may quote a secret or personal data. */
function failure (error: unknown): string {
  const { type, code } = error instanceof HostPortError ? { type: error.originalType, code: error.code } : loggedError(error)
  const shown = typeof code === 'number' || (typeof code === 'string' && CODE_LIKE.test(code)) ? ` ${code}` : ''
  return `failed (${type}${shown})`
}

/** The problem of one read of a guarded port, or `null` when it answered in time. */
async function portProblem (read: () => Promise<unknown>, deadlineMs: number): Promise<string | null> {
  try {
    return await inTime(read(), deadlineMs) === LATE ? `did not answer within ${deadlineMs} ms` : null
  } catch (error) {
    return failure(error)
  }
}

/** The store's problem as the check at `ready()` words it; should reading what it threw throw too, a plain one. */
async function storeCheck (ctx: JwtLoginContext, deadlineMs: number): Promise<string | null> {
  try {
    return await storeProblem(ctx.store, deadlineMs)
  } catch {
    return 'a read failed (what the store threw could not be read)'
  }
}

async function timed (name: HealthCheck['name'], probe: () => Promise<string | null>): Promise<HealthCheck> {
  const started = performance.now()
  const problem = await probe()
  const durationMs = Math.round(performance.now() - started)
  return problem === null ? { name, healthy: true, durationMs } : { name, healthy: false, durationMs, problem }
}

/**
 * One cheap read of the store and of each of the host's ports, all at once,
 * each bounded by the deadline: the user adapter behind its guard (never the
 * user cache, whose answer says nothing of the database) and the passkey
 * port when there is one. Rejects only for a bad `deadlineMs` (`TypeError`).
 */
export async function health (ctx: JwtLoginContext, options?: HealthOptions): Promise<HealthReport> {
  const deadlineMs = deadlineOf(options)
  const passkeys = ctx.passkeys
  const checks = await Promise.all([
    timed('store', async () => await storeCheck(ctx, deadlineMs)),
    timed('users', async () => await portProblem(() => ctx.hostUsers.findByEmail(HEALTH_CHECK_EMAIL), deadlineMs)),
    ...passkeys === null ? [] : [timed('passkeys', async () => await portProblem(() => passkeys.port.findById(HEALTH_CHECK_CREDENTIAL), deadlineMs))]
  ])
  return { healthy: checks.every(check => check.healthy), checks }
}
