import { randomUUID } from 'node:crypto'
import t from 'tap'
import { runManyInstances } from '../helpers/many-instances.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'

// Three host processes on the local Redis, under a key prefix of this run (deleted at the end).
const prefix = `jwt-login-test:many-instances:${randomUUID()}:`

await runManyInstances(t, {
  kind: 'redis',
  env: { REDIS_URL, REDIS_PREFIX: prefix },
  cleanup: async () => { await deleteKeys(prefix) }
})
