// What of an audit event may reach a span: the rules that keep secrets and personal data out of telemetry.
import type { Attributes } from './otel.js'

/**
 * The fields of the audit events that name kinds, reasons, counts and error
 * numbers: the only ones copied to span events. Never the `ip`, a session,
 * key, passkey or device id, an email, a login, a token or a code.
 */
const SAFE_FIELDS: Record<string, string> = {
  method: 'jwt_login.method',
  provider: 'jwt_login.provider',
  reason: 'jwt_login.reason',
  errorCode: 'jwt_login.error_code',
  step: 'jwt_login.step',
  via: 'jwt_login.via',
  flow: 'jwt_login.oauth_flow',
  attempts: 'jwt_login.attempts',
  attempt: 'jwt_login.attempt',
  register: 'jwt_login.register',
  secondFactor: 'jwt_login.second_factor',
  mail: 'jwt_login.mail',
  reset: 'jwt_login.reset',
  othersEnded: 'jwt_login.others_ended',
  passkeys: 'jwt_login.passkeys',
  stored: 'jwt_login.counter_stored',
  presented: 'jwt_login.counter_presented'
}

/** Events whose `reason` is the host's own note (free text, which may name a person): left out. */
const HOST_NOTES = new Set(['user.locked', 'user.unlocked', 'impersonation.started'])

/**
 * The attributes of an audit event's span event: its safe fields, and its
 * user's and actor's IDs only when `userIds` is on (`user.id`,
 * `jwt_login.actor_id`).
 */
export function eventAttributes (event: string, payload: Readonly<Record<string, unknown>>, userIds: boolean): Attributes {
  const attributes: Attributes = {}
  for (const [field, value] of Object.entries(payload)) {
    const key = SAFE_FIELDS[field]
    if (key === undefined || (field === 'reason' && HOST_NOTES.has(event))) continue
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[key] = value
  }
  if (userIds) {
    if (typeof payload.userId === 'number') attributes['user.id'] = String(payload.userId)
    if (typeof payload.actorId === 'number') attributes['jwt_login.actor_id'] = String(payload.actorId)
  }
  return attributes
}
