import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { RedisStore } from '../../lib/redis.js'

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

interface Teardown { teardown: (fn: () => Promise<void>) => void }

/** Deletes every key under `prefix` on the test Redis. */
export async function deleteKeys (prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      if (keys.length > 0) await client.del(...keys)
    } while (cursor !== '0')
  } finally {
    await client.quit()
  }
}

/**
 * A RedisStore on the real test Redis with a unique key prefix; its keys
 * are deleted and the store closed when the test ends.
 */
export function redisStore (t: Teardown, name: string): { store: RedisStore, prefix: string } {
  const prefix = `jwt-login-test:${name}:${randomUUID()}:`
  const store = new RedisStore({ url: REDIS_URL, prefix })
  t.teardown(async () => {
    await store.close()
    await deleteKeys(prefix)
  })
  return { store, prefix }
}
