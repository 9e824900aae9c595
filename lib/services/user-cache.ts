import type { Clock } from '../core/clock.js'
import type { UserAdapter } from '../adapters/users.js'

/** The `userCache` option resolved: how long a user is served from memory, and how many are kept. */
export interface UserCacheLimits {
  ttlMs: number
  max: number
}

/** The host's adapter with `findById` answered from memory for a short while. */
export interface CachedUserAdapter<U> extends UserAdapter<U> {
  /** Drops the user's entry, and any lookup under way is not kept. */
  forget: (userId: number) => void
}

/**
 * Every adapter method but `findById`, called on the host's adapter as it is
 * at the time of the call. A record, so a method added to the port and not
 * listed here fails the type check.
 */
const PASSED_THROUGH: Record<Exclude<keyof UserAdapter, 'findById'>, true> = {
  findByEmail: true,
  findByLogin: true,
  verifyPassword: true,
  rehashPassword: true,
  getPasswordHash: true,
  toPublicUser: true,
  setPassword: true,
  createUser: true,
  deleteUser: true,
  setEmailVerified: true,
  setEmail: true,
  passwordFingerprint: true,
  hasPassword: true,
  findByIdentity: true,
  linkIdentity: true,
  listIdentities: true,
  unlinkIdentity: true
}

interface Entry<U> {
  user: U
  expiresAt: number
}

/**
 * Wraps the host's adapter so that `findById` (every validate, refresh and
 * authenticated host request) hits the database at most once per user and
 * `ttlMs`. Only found users are kept: an absent user is asked for again,
 * and so is one whose lookup failed. Concurrent misses of one user share
 * one lookup. At most `max` users are kept; the oldest goes first.
 * An entry expires `ttlMs` after its lookup started, on the plugin's clock.
 */
export function cacheUsers<U> (users: UserAdapter<U>, limits: UserCacheLimits, clock: Clock): CachedUserAdapter<U> {
  const entries = new Map<number, Entry<U>>()
  const pending = new Map<number, Promise<U | null>>()

  const remember = (id: number, user: U, expiresAt: number): void => {
    entries.delete(id)
    if (entries.size >= limits.max) entries.delete(entries.keys().next().value as number)
    entries.set(id, { user, expiresAt })
  }

  const lookUp = (id: number, startedAt: number): Promise<U | null> => {
    // started a tick later, so that `pending` holds it before it can settle (an adapter may throw synchronously)
    const lookup: Promise<U | null> = Promise.resolve().then(async () => await users.findById(id)).then((user) => {
      // a `forget` while the lookup ran took it out of `pending`: what it read may be older than the change
      if (pending.get(id) === lookup) {
        pending.delete(id)
        if (user !== null) remember(id, user, startedAt + limits.ttlMs)
      }
      return user
    }, (error: unknown) => {
      if (pending.get(id) === lookup) pending.delete(id)
      throw error
    })
    pending.set(id, lookup)
    return lookup
  }

  const cached: Record<string, unknown> = {
    findById: async (id: number): Promise<U | null> => {
      const now = clock()
      const entry = entries.get(id)
      if (entry !== undefined) {
        if (entry.expiresAt > now) return entry.user
        entries.delete(id)
      }
      return await (pending.get(id) ?? lookUp(id, now))
    },
    forget: (userId: number): void => {
      entries.delete(userId)
      pending.delete(userId)
    }
  }
  const adapter = users as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const method of Object.keys(PASSED_THROUGH)) {
    // an optional method the adapter lacks stays absent: the plugin checks for it
    if (typeof adapter[method] === 'function') cached[method] = (...args: unknown[]) => (adapter[method] as (...args: unknown[]) => unknown).call(adapter, ...args)
  }
  return cached as unknown as CachedUserAdapter<U>
}
