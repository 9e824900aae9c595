/**
 * Where the instances keep their shared state, chosen by the environment.
 * Every instance of one service must get the same answer here: the same
 * kind, the same server, the same namespace (key prefix, schema).
 *
 *   STORE=redis (the default)  REDIS_URL, REDIS_PREFIX
 *   STORE=redis-cluster        REDIS_CLUSTER_NODES (host:port,host:port,...), REDIS_PREFIX
 *   STORE=postgres             DATABASE_URL, PG_TABLE (table or schema.table)
 *
 * A new kind is one more `case` below, reading its own variables; the test
 * that runs three instances on it then passes those variables to the hosts.
 */
import type { StateStore } from '../../lib/index.js'
import { PostgresStore } from '../../lib/postgres.js'
import { RedisStore } from '../../lib/redis.js'

/** The store named by `env.STORE`; refuses a kind it does not know (no silent fallback to memory). */
export async function storeFromEnv (env: NodeJS.ProcessEnv): Promise<StateStore> {
  const { STORE = 'redis' } = env
  switch (STORE) {
    case 'redis': {
      const { REDIS_URL = 'redis://127.0.0.1:6379', REDIS_PREFIX = 'jwt-login-example:' } = env
      return new RedisStore({ url: REDIS_URL, prefix: REDIS_PREFIX })
    }
    case 'redis-cluster': {
      const { REDIS_CLUSTER_NODES = '127.0.0.1:7000', REDIS_PREFIX = 'jwt-login-example:' } = env
      // seed nodes: the client learns the rest of the cluster from them
      const nodes = REDIS_CLUSTER_NODES.split(',').map((node) => {
        const [host = '127.0.0.1', port = '6379'] = node.trim().split(':')
        return { host, port: Number(port) }
      })
      return new RedisStore({ cluster: { nodes }, prefix: REDIS_PREFIX })
    }
    case 'postgres': {
      const { DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres', PG_TABLE = 'jwt_login_state' } = env
      const store = new PostgresStore({ connectionString: DATABASE_URL, table: PG_TABLE })
      // idempotent, and safe when every instance runs it at once on start
      await store.migrate()
      return store
    }
    default:
      throw new Error(`unknown STORE '${STORE}' (known: redis, redis-cluster, postgres)`)
  }
}
