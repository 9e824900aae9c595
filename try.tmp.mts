import { startRedisCluster } from './test/helpers/redis-cluster.ts'
import { RedisStore } from './lib/redis.ts'
const t0 = Date.now()
const c = await startRedisCluster({ masters: 3, replicas: 1 })
console.log('started in', Date.now() - t0, c.nodes.map(n => n.port))
const store = new RedisStore({ cluster: { nodes: c.nodes }, prefix: 'x:', waitForReplicas: { replicas: 1 } })
await store.set('a', '1', 10000); await store.set('b', '2', 10000)
console.log(await store.getMany(['a', 'b', 'zz']), await store.increment('n', 5000), await store.compareAndSet('a', '1', '9', 1000), await store.consume('a'))
const port = await c.masterOf('x:b')
console.log('killing', port)
c.kill(port)
const start = Date.now()
for (let i = 0; i < 60; i++) {
  const r = await store.get('b').then(v => 'ok ' + v, e => 'err ' + e.message)
  console.log(Date.now() - start, r)
  if (r.startsWith('ok')) break
  await new Promise(r => setTimeout(r, 200))
}
console.log(await store.set('c', '1', 1000).then(() => 'set ok', e => e.message))
await store.close(); await c.stop()
