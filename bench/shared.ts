/** What the bench's parent (`run.ts`) and its server children (`server.ts`) agree on. */

export const SECRET = 'bench-secret-that-is-at-least-32-bytes!!'
export const USER = { login: 'bench', email: 'bench@example.com', password: 'bench-password-123' }
/** jwt-login's default issuer and audience; the baselines check them too. */
export const ISSUER = 'jwt-login'
export const AUDIENCE = 'jwt-login'
export const PREFIX = '/jwt-login/v1'
/** jwt-login's default refresh lifetime, set explicitly so the scaling run seeds sessions with the same TTL. */
export const REFRESH_LIFETIME = '14d'
export const REFRESH_LIFETIME_MS = 14 * 24 * 60 * 60 * 1000

/** The shared local Redis of the store comparisons. */
export const REDIS_URL = 'redis://127.0.0.1:6379'
/** The local PostgreSQL; the bench works in a schema of its own, dropped at the end. */
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * The passkey sign-in's relying party: `subject-passkeys` accepts ceremonies
 * for this RP ID from this origin, and the parent's software authenticator
 * writes the origin into clientDataJSON (it is not the server's real URL:
 * nothing checks one against the other but the ceremony).
 */
export const PASSKEY_RP_ID = 'localhost'
export const PASSKEY_ORIGIN = 'http://localhost'

/**
 * The users of the latency run besides the bench user (`BenchUsers`), with
 * its password: the i-th sign-in user and the i-th TOTP user. Their ids
 * have eight digits, as a host with millions of users has them, so the keys
 * that hold an id have their real size.
 */
export function signInUser (i: number): { id: number, login: string, email: string } {
  return { id: 10_000_000 + i, login: `signin-${i}`, email: `signin-${i}@example.com` }
}

export function totpUser (i: number): { id: number, login: string, email: string } {
  return { id: 20_000_000 + i, login: `totp-${i}`, email: `totp-${i}@example.com` }
}

/** The sizing run's user whose stored hash has Keycloak's default argon2 parameters (the bench user's password). */
export const KEYCLOAK_USER = { id: 30_000_000, login: 'keycloak-params', email: 'keycloak-params@example.com' }

export const SERVER_KINDS = [
  'bare-validate', 'bare-hook', 'bare-argon2', 'subject', 'subject-hook', 'subject-passkeys',
  'subject-memory', 'subject-redis', 'subject-cluster', 'subject-postgres',
  'bare-redis-validate', 'bare-cluster-validate', 'bare-postgres-validate', 'subject-flood', 'remote-redis', 'remote-postgres', 'subject-sizing'
] as const
export type ServerKind = typeof SERVER_KINDS[number]

export function isServerKind (value: unknown): value is ServerKind {
  return (SERVER_KINDS as readonly unknown[]).includes(value)
}

/** Parent → child: start or stop a measurement window, seed sessions (`subject-memory`), or shut down. */
export type ParentMessage =
  | { type: 'start', id: number }
  | { type: 'stop', id: number }
  | { type: 'seed', id: number, key: string, count: number, ttlMs: number }
  | { type: 'close' }

/** What a child measured in its own process between `start` and `stop`. */
export interface Usage {
  /** user + system CPU time of the whole process (event loop and thread pool), µs */
  cpuMicros: number
  loopDelayP99Ms: number
  loopDelayMaxMs: number
}

/** What a `subject-memory` child holds after seeding: its store's state entries and its memory growth since the first seed. */
export interface Seeded {
  entries: number
  /** V8 heap in use (after a full GC) minus the same before the first seed, bytes */
  heapBytes: number
  /** resident set size minus the same before the first seed, bytes */
  rssBytes: number
}

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready', port: number }
  | { type: 'started', id: number }
  | ({ type: 'measured', id: number } & Usage)
  | ({ type: 'seeded', id: number } & Seeded)
