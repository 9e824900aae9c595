import { randomUUID } from 'node:crypto'
import { JwtLoginError } from '../core/errors.js'
import { withinDeadline } from './deadline.js'
import type { Telemetry } from '../telemetry/telemetry.js'
import type { StateStore } from './types.js'

function unavailable (error: unknown): never {
  if (error instanceof JwtLoginError) throw error
  throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
}

/**
 * The store as flows see it: any failure becomes 503 / errorCode 201, so
 * requests fail closed. The optional methods (`getMany`, `readAndIncrement`)
 * are there only when the store has them. With `telemetry`, each call is
 * timed and traced (`store.<method>`) while an SDK records.
 */
export function guardStore (store: StateStore, telemetry?: Telemetry): StateStore {
  const system = typeof store.system === 'string' ? store.system : undefined
  const run = telemetry?.runner('store', system) ?? (<T>(_operation: string, work: () => Promise<T>) => work())
  const guarded: StateStore = {
    get: (key) => mapFailure(() => run('get', () => store.get(key))),
    set: (key, value, ttlMs) => mapFailure(() => run('set', () => store.set(key, value, ttlMs))),
    consume: (key) => mapFailure(() => run('consume', () => store.consume(key))),
    increment: (key, ttlMs) => mapFailure(() => run('increment', () => store.increment(key, ttlMs))),
    compareAndSet: (key, expected, value, ttlMs) => mapFailure(() => run('compareAndSet', () => store.compareAndSet(key, expected, value, ttlMs))),
    delete: (key) => mapFailure(() => run('delete', () => store.delete(key))),
    close: async () => { await store.close?.() },
    ordered: store.ordered === true
  }
  if (system !== undefined) Object.assign(guarded, { system })
  // only when the store has it: without it, readers fall back to one get per key
  if (store.getMany !== undefined) {
    const batched = store as Required<Pick<StateStore, 'getMany'>>
    guarded.getMany = (keys) => mapFailure(() => run('getMany', () => batched.getMany(keys)))
  }
  // without it, the attempt limiter reads with getMany and counts with increment
  if (store.readAndIncrement !== undefined) {
    const batched = store as Required<Pick<StateStore, 'readAndIncrement'>>
    guarded.readAndIncrement = (read, increments, options) => mapFailure(() => run('readAndIncrement', () => batched.readAndIncrement(read, increments, options)))
  }
  return guarded
}

/**
 * A store call's promise with its failure mapped, without another async
 * step (every authenticated request reads through here); a store that
 * throws before it answers a promise fails alike.
 */
function mapFailure<T> (call: () => Promise<T>): Promise<T> {
  try {
    return call().catch(unavailable)
  } catch (error) {
    return Promise.reject(error).catch(unavailable)
  }
}

/** Driver codes of a server that could not be reached (Node's, and PostgreSQL's "cannot connect now"). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', '57P03'])
/** The user and password of a URL (`redis://user:secret@host`). */
const URL_CREDENTIALS = /\/\/[^/\s@]+@/g
/** PostgreSQL's refused logins (invalid_password, invalid_authorization_specification). */
const REFUSED_LOGIN = new Set(['28P01', '28000'])

/** A field of what a store threw, when it is a string or a number. */
function fieldOf (thrown: unknown, name: 'code' | 'message'): string | undefined {
  const value: unknown = (thrown as Record<string, unknown> | null)?.[name]
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** What a failed read at start says about the store, and the fix. */
function adviceFor (thrown: unknown, code: string | undefined, message: string): string {
  if (code === '42P01') return 'its table does not exist: call `await store.migrate()` before `ready()` (or run postgresSchemaSql(...) in your migrations)'
  if (code === '42501') return 'the database user may not use its table: grant it SELECT, INSERT, UPDATE and DELETE on the table (GRANT SELECT, INSERT, UPDATE, DELETE ON <table> TO <user>)'
  if (code === '3D000') return 'the database does not exist: check the database name in the URL'
  if ((code !== undefined && REFUSED_LOGIN.has(code)) || /^(WRONGPASS|NOAUTH)\b/.test(message)) return 'the server refused the login: check the user and password of the URL'
  const name = (thrown as { name?: unknown } | null)?.name
  if ((code !== undefined && UNREACHABLE.has(code)) || name === 'MaxRetriesPerRequestError') return 'its server cannot be reached: check the URL (host and port) and that the server runs'
  if (/did not answer within/.test(message)) return 'its server did not answer in time: check the URL and that the server runs'
  return 'a read failed'
}

/** How long the check at `ready()` waits at most, for a store without a deadline of its own (ours have 2 s). */
export const READY_CHECK_DEADLINE_MS = 10_000

/**
 * Reads a key that cannot exist (`ready-check:<random>`, under the store's
 * prefix) through the guarded store, bounded by the store's own deadline
 * and at most `deadlineMs`: the plugin's check at `ready()`. Answers `null`
 * when the store answered, else what is wrong and how to fix it, followed
 * by the error's class, code and message (a store's error names no key or
 * value; the key read is random anyway).
 */
export async function storeProblem (store: StateStore, deadlineMs = READY_CHECK_DEADLINE_MS): Promise<string | null> {
  try {
    await withinDeadline(store.get(`ready-check:${randomUUID()}`), deadlineMs, 'the state store')
    return null
  } catch (error) {
    const thrown = error instanceof JwtLoginError && error.cause !== undefined ? error.cause : error
    const code = fieldOf(thrown, 'code')
    // a host's store may quote its connection URL: its password is cut out
    const message = (fieldOf(thrown, 'message') ?? String(thrown)).replace(URL_CREDENTIALS, '//[redacted]@')
    const type = (thrown as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof thrown
    return `${adviceFor(thrown, code, message)} (${[type, code, message].filter(part => part !== undefined && part !== '').join(' ')})`
  }
}
