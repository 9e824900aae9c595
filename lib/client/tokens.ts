/**
 * What the client reads of what it keeps: the storage port (with its memory
 * default), the stored tokens, and the claims of a JWT (unverified: the
 * server verifies).
 */

/**
 * Where the client keeps what outlives a page: `localStorage`, a mobile
 * secure store (sync or async), or the default, memory. The same three
 * methods as Web Storage.
 */
export interface ClientStorage {
  getItem: (key: string) => string | null | Promise<string | null>
  setItem: (key: string, value: string) => void | Promise<void>
  removeItem: (key: string) => void | Promise<void>
}

/** A storage that forgets with the page or process: the default. */
export function memoryStorage (): ClientStorage {
  const items = new Map<string, string>()
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => { items.set(key, value) },
    removeItem: (key) => { items.delete(key) }
  }
}

/** The session's tokens: the access token, and the refresh token (bearer mode) or the CSRF token (cookie mode). */
export interface Tokens { jwt?: string | undefined, refresh?: string | undefined, csrf?: string | undefined }

/** A stored JSON object; none when the value is missing or not ours (a corrupt entry must not stop the client for good). */
export function parse (stored: string | null): Record<string, unknown> {
  try {
    const value = JSON.parse(stored ?? '{}') as unknown
    return typeof value === 'object' && value !== null ? value as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/** A JWT's claims, unverified (the server verifies); none when it is not a JWT. */
export function claimsOf (jwt: string): Record<string, unknown> {
  return parse(atobOrNull(jwt.split('.')[1] ?? ''))
}

function atobOrNull (segment: string): string | null {
  try {
    return atob(segment.replace(/-/g, '+').replace(/_/g, '/'))
  } catch {
    return null
  }
}

/** A JWT's own id (`jti`), as a string ('undefined' for none). */
export function jtiOf (jwt: string | undefined): string {
  return String(claimsOf(jwt ?? '').jti)
}

/** Seconds left on a JWT at `now` (ms); -1 when it has no readable `exp`. */
export function secondsLeft (jwt: string, now: number): number {
  const { exp } = claimsOf(jwt)
  return typeof exp === 'number' ? exp - now / 1000 : -1
}
