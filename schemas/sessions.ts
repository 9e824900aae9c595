import { Type } from '@sinclair/typebox'
import { Field, Fields, Success } from './common.js'

/**
 * One of a user's sessions, as `GET /sessions` answers it. A session id is
 * no secret: it cannot refresh or sign anything. A field with no value is
 * left out (no `null`: Swagger 2 has no form for it).
 */
export const SessionItem = Type.Object({
  id: Type.String(),
  /** Whether it is the session of the token that asked. */
  current: Type.Boolean(),
  /** When its sign-in started (ISO 8601, UTC). */
  started_at: Type.String(),
  /** When its refresh token last rotated; absent before the first refresh. */
  last_refreshed_at: Type.Optional(Type.String()),
  /**
   * The first factor: `password`, `provider`, `passkey` (passwordless) or
   * `email` (a mailed code); `impersonation` for a token the host issued to
   * someone acting as the user (`actor_id`); absent for a session from before 0.3.
   */
  method: Type.Optional(Type.String({ enum: ['password', 'provider', 'passkey', 'email', 'impersonation'] })),
  /** For `impersonation`: the id of the user acting as this one (the token's `act.sub`). */
  actor_id: Type.Optional(Type.Integer()),
  /** The provider's name, for `provider`. */
  provider: Type.Optional(Type.String()),
  /**
   * What completed the sign-in after the first factor: `totp`, `email`,
   * `backup_codes`, `passkey`, `trusted_device`, `user_verification` (a
   * passwordless passkey verified with its user), or the name a host's own
   * second-factor gate answers; absent without one.
   */
  second_factor: Type.Optional(Type.String()),
  /** The client's address at sign-in, as the request gave it. */
  ip: Type.Optional(Type.String()),
  /** The client's `User-Agent` at sign-in, cut to 256 characters. */
  user_agent: Type.Optional(Type.String())
})

/** One trusted device (second factor), as `GET /sessions` answers it. Its id is no secret: it cannot sign anyone in. */
export const DeviceItem = Type.Object({
  id: Type.String(),
  /** When it was trusted (ISO 8601, UTC). */
  trusted_at: Type.String(),
  /** When it last stood in for the second factor; absent before its first use. */
  last_used_at: Type.Optional(Type.String()),
  /** When it stops being trusted. */
  expires_at: Type.String(),
  ip: Type.String(),
  user_agent: Type.Optional(Type.String())
})

export const SessionsReply = Success({
  sessions: Type.Array(SessionItem),
  devices: Type.Array(DeviceItem)
})

/** A session or device id in the path: the form the plugin writes, bounded. */
export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })
})

/** `DELETE /sessions`: `keep_current=true` keeps the caller's own session. */
export const EndAllQuery = Fields({
  JWT: Field,
  keep_current: Type.Optional(Type.String({ pattern: '^(true|false)$' }))
})
