// The form of a session id: its start time in ms (base 36), a dash, a random UUID; made, recognised and read back here only.
import { randomUUID } from 'node:crypto'

const SESSION_ID = /^[0-9a-z]{1,12}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The longest an impersonation token lives (ms): one hour. Its session's revocation and its users' cutoffs outlive it on every instance. */
export const IMPERSONATION_MAX_MS = 3_600_000

/** Where a session id's UUID keeps its version: `8` (RFC 9562's custom version) marks an impersonation's session, `4` any other. */
const VERSION_AT = 14

/**
 * A new session id for a session that starts at `startedAt`; an
 * impersonation's (`impersonation`) says so in its UUID's version, so that
 * ending it by id alone, on any instance, keeps it ended as long as its
 * token may live.
 */
export function newSessionId (startedAt: number, impersonation = false): string {
  const uuid = randomUUID()
  return `${startedAt.toString(36)}-${impersonation ? `${uuid.slice(0, VERSION_AT)}8${uuid.slice(VERSION_AT + 1)}` : uuid}`
}

/** Whether a session id is an impersonation's (`newSessionId(…, true)`). */
export function isImpersonationSession (sessionId: string): boolean {
  return sessionId[sessionId.indexOf('-') + 1 + VERSION_AT] === '8'
}

/** Whether `value` has the form of a session id. */
export function isSessionId (value: string): boolean {
  return SESSION_ID.test(value)
}

/** The start time (ms) written at the head of a session id; NaN-safe (0 for a foreign id). */
export function sessionStart (sessionId: string): number {
  const dash = sessionId.indexOf('-')
  const start = dash > 0 ? parseInt(sessionId.slice(0, dash), 36) : 0
  return Number.isFinite(start) ? start : 0
}
