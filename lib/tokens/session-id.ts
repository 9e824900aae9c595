// The form of a session id: its start time in ms (base 36), a dash, a random UUID; made, recognised and read back here only.
import { randomUUID } from 'node:crypto'

const SESSION_ID = /^[0-9a-z]{1,12}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A new session id for a session that starts at `startedAt`. */
export function newSessionId (startedAt: number): string {
  return `${startedAt.toString(36)}-${randomUUID()}`
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
