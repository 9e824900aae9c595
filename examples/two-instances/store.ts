/**
 * Where the instances keep their shared state, chosen by the environment.
 * Every instance of one service must get the same answer here: the same
 * kind, the same server, the same namespace (key prefix, schema).
 *
 *   STORE=redis (the default)  REDIS_URL, REDIS_PREFIX
 *
 * A new kind is one more `case` below, reading its own variables; the test
 * that runs three instances on it then passes those variables to the hosts.
 */
import type { StateStore } from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'

/** The store named by `env.STORE`; refuses a kind it does not know (no silent fallback to memory). */
export async function storeFromEnv (env: NodeJS.ProcessEnv): Promise<StateStore> {
  const { STORE = 'redis' } = env
  switch (STORE) {
    case 'redis': {
      const { REDIS_URL = 'redis://127.0.0.1:6379', REDIS_PREFIX = 'jwt-login-example:' } = env
      return new RedisStore({ url: REDIS_URL, prefix: REDIS_PREFIX })
    }
    // further kinds (a Redis Cluster, PostgreSQL) go here, one case each
    default:
      throw new Error(`unknown STORE '${STORE}' (known: redis)`)
  }
}
