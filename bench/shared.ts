/** What the bench's parent (`run.ts`) and its server children (`server.ts`) agree on. */

export const SECRET = 'bench-secret-that-is-at-least-32-bytes!!'
export const USER = { login: 'bench', email: 'bench@example.com', password: 'bench-password-123' }
/** jwt-login's default issuer and audience; the baselines check them too. */
export const ISSUER = 'jwt-login'
export const AUDIENCE = 'jwt-login'
export const PREFIX = '/jwt-login/v1'

export const SERVER_KINDS = ['bare-validate', 'bare-hook', 'bare-argon2', 'subject', 'subject-hook', 'subject-redis'] as const
export type ServerKind = typeof SERVER_KINDS[number]

export function isServerKind (value: unknown): value is ServerKind {
  return (SERVER_KINDS as readonly unknown[]).includes(value)
}

/** Parent → child: start or stop a measurement window, or shut down. */
export type ParentMessage =
  | { type: 'start', id: number }
  | { type: 'stop', id: number }
  | { type: 'close' }

/** What a child measured in its own process between `start` and `stop`. */
export interface Usage {
  /** user + system CPU time of the whole process (event loop and thread pool), µs */
  cpuMicros: number
  loopDelayP99Ms: number
  loopDelayMaxMs: number
}

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready', port: number }
  | { type: 'started', id: number }
  | ({ type: 'measured', id: number } & Usage)
