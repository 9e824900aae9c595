/**
 * One host process of the two-instances example: run it twice (or N times)
 * behind a load balancer, every process on the same Redis prefix and signing
 * key, and a token, a revocation, a spent refresh token or a lockout made
 * through one process holds on all of them.
 *
 *   REDIS_PREFIX=myapp: JWT_SECRET=... PORT=3001 node --import tsx examples/two-instances/host.ts
 *
 * A host imports 'jwt-login', 'jwt-login/redis' and its own user adapter;
 * this example imports the plugin's source and its in-memory test users.
 */
import Fastify from 'fastify'
import jwtLogin from '../../lib/index.js'
import { RedisStore } from '../../lib/redis.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { LOCKOUT_MAX, SEEDED_USERS } from './users.js'

const { REDIS_URL = 'redis://127.0.0.1:6379', REDIS_PREFIX = 'jwt-login-example:', JWT_SECRET, PORT = '0' } = process.env
// No default key: a made-up one would let each process sign tokens the others refuse.
if (JWT_SECRET === undefined) throw new Error('JWT_SECRET is required (the same one in every instance, at least 32 bytes)')

// Same users, same order, same IDs in every process (a real host has one user database).
const users = new MemoryUserAdapter()
for (const user of SEEDED_USERS) await users.addUser(user)

// Everything the instances must agree on lives in Redis under one prefix: sessions and
// their refresh families, revocations, reset and two-factor codes, lockout counters.
const store = new RedisStore({ url: REDIS_URL, prefix: REDIS_PREFIX })

const app = Fastify({ logger: { level: 'warn' } })
await app.register(jwtLogin, {
  users,
  store,
  settings: {
    // The same key id and secret everywhere: a token signed by one process verifies on the others.
    tokens: { keys: [{ kid: 'shared-1', secret: JWT_SECRET }] },
    refresh: { enabled: true },
    limits: { loginPerAccount: { max: LOCKOUT_MAX, window: '15m' } }
  }
})
app.addHook('onClose', async () => { await store.close() })

const address = await app.listen({ host: '127.0.0.1', port: Number(PORT) })
// One JSON line on stdout tells a supervisor (or the test) where this instance listens.
console.log(JSON.stringify({ listening: address }))

// Close gracefully: in-flight requests finish and the Redis connection is released.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
}
