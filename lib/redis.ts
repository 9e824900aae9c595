/** `jwt-login/redis`: the state store on Redis (needs the optional peer `ioredis`). */
export { RedisStore, type RedisStoreOptions } from './store/redis.js'
