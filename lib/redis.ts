/** `fastify-jwt-login/redis`: the state store on Redis (needs the optional peer `ioredis`). */
export { RedisStore } from './store/redis.js'
export type { RedisStoreOptions } from './store/redis-connection.js'
