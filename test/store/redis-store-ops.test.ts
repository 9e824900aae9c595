import { randomUUID } from 'node:crypto'
import { connect, createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { RedisStore } from '../../lib/redis.js'
import { durabilityWarnings, type RedisDurability } from '../../lib/store/redis-server.js'
import { HS_SECRET } from '../helpers/app.js'
import { deleteKeys, REDIS_URL } from '../helpers/redis-store.js'
import { closedPort } from '../helpers/net.js'
import { Recorder, stderrDuring, until } from '../helpers/log-recorder.js'

/** What the test Redis itself says, to know which warnings it calls for. */
async function testRedisDurability (): Promise<RedisDurability> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    const answers = await Promise.all(['save', 'appendonly', 'maxmemory-policy'].map(async (name) => await client.config('GET', name) as [string, string]))
    return Object.fromEntries(answers)
  } finally {
    await client.quit()
  }
}

const durability = await testRedisDurability()
const expectedWarnings = durabilityWarnings(durability).map(warning => warning.message)
t.comment(`the test Redis: ${JSON.stringify(durability)}`)

function prefixed (t: { teardown: (fn: () => Promise<void>) => void }): string {
  const prefix = `jwt-login-test:ops:${randomUUID()}:`
  t.teardown(async () => { await deleteKeys(prefix) })
  return prefix
}

t.test('what the server settings call for', async (t) => {
  const nothingOnDisk = /keeps nothing on disk/
  const evicts = /may evict keys/
  const messages = (config: RedisDurability): string[] => durabilityWarnings(config).map(warning => warning.message)
  t.match(messages({ save: '', appendonly: 'no', 'maxmemory-policy': 'noeviction' }), [nothingOnDisk])
  t.same(messages({ save: '3600 1 300 100 60 10000', appendonly: 'no', 'maxmemory-policy': 'noeviction' }), [], 'RDB snapshots')
  t.same(messages({ save: '', appendonly: 'yes', 'maxmemory-policy': 'noeviction' }), [], 'AOF')
  t.match(messages({ save: '', appendonly: 'no', 'maxmemory-policy': 'allkeys-lru' }), [nothingOnDisk, evicts])
  t.match(messages({ save: '60 1', appendonly: 'yes', 'maxmemory-policy': 'volatile-ttl' }), [evicts], 'every jwt-login key has a TTL, so volatile-* policies evict them too')
  t.same(messages({}), [], 'nothing known, nothing said')
  t.same(durabilityWarnings({ save: '', appendonly: 'no' })[0]?.details, { save: '', appendonly: 'no' })
})

t.test('a store at a closed port logs one line for the burst, and ioredis prints nothing', async (t) => {
  const log = new Recorder()
  const stderr = await stderrDuring(async () => {
    const store = new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log })
    await t.rejects(store.get('key'), 'a request that needs Redis fails (the plugin answers 503)')
    // ioredis keeps reconnecting meanwhile, every failure an error event
    await sleep(1000)
    await store.close()
  })
  t.equal(log.at('error').length, 1, 'one line, not one per reconnect')
  t.match(log.lines[0], { level: 'error', details: { err: { code: 'ECONNREFUSED', message: /ECONNREFUSED/ }, notLogged: 0 }, message: 'jwt-login: the Redis store cannot reach Redis; requests that need it answer 503' })
  t.notMatch(stderr, /Unhandled error event/)
  t.equal(stderr, '', 'nothing on stderr')
})

t.test('without a logger the one line goes to stderr instead of ioredis\'s flood', async (t) => {
  const stderr = await stderrDuring(async () => {
    const store = new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}` })
    await sleep(1000)
    await store.close()
  })
  t.equal(stderr.match(/jwt-login: the Redis store cannot reach Redis/g)?.length, 1)
  t.notMatch(stderr, /Unhandled error event/)
})

t.test('the plugin hands the Fastify logger to the store', async (t) => {
  const logs: Array<Record<string, any>> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  const store = new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}` })
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }, store })
  t.teardown(async () => { await app.close(); await store.close() })
  await until('the error line', () => logs.length > 0)
  t.match(logs, [{ level: 50, msg: 'jwt-login: the Redis store cannot reach Redis; requests that need it answer 503', err: { code: 'ECONNREFUSED' } }])
})

t.test('the persistence check runs once, at the first connection, through the plugin\'s logger', async (t) => {
  const logs: Array<Record<string, any>> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  const store = new RedisStore({ url: REDIS_URL, prefix: prefixed(t) })
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }, store })
  t.teardown(async () => { await app.close(); await store.close() })
  await until('the warnings', () => logs.length >= expectedWarnings.length)
  await store.set('key', 'value', 1000)
  t.same(logs.map(line => [line.level, line.msg]), expectedWarnings.map(message => [40, message]))
  if (durability.save === '' && durability.appendonly === 'no') {
    t.match(logs[0], { save: '', appendonly: 'no' }, 'the local test Redis has no persistence, and the warning says so')
  }
})

t.test('a lost connection is logged, its return too; the check does not run again', async (t) => {
  const target = new URL(REDIS_URL)
  const port = await closedPort()
  const log = new Recorder()
  const store = new RedisStore({ url: `redis://127.0.0.1:${port}`, log, prefix: prefixed(t) })
  await until('the error line', () => log.at('error').length === 1)

  // Redis comes up at that port: a TCP relay to the test Redis
  const sockets = new Set<Socket>()
  const relay = createServer((socket) => {
    const upstream = connect(Number(target.port === '' ? 6379 : target.port), target.hostname)
    for (const end of [socket, upstream]) {
      sockets.add(end)
      end.on('error', () => {})
      end.on('close', () => { socket.destroy(); upstream.destroy() })
    }
    socket.pipe(upstream).pipe(socket)
  })
  await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve))
  t.teardown(async () => {
    await store.close()
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => relay.close(() => resolve()))
  })

  await until('the connection', () => log.at('warn').some(line => line.message === 'jwt-login: the Redis store reaches Redis again'))
  await store.set('key', 'value', 5000)
  t.equal(await store.get('key'), 'value')
  t.match(log.at('warn')[0], { details: { notLogged: Number }, message: 'jwt-login: the Redis store reaches Redis again' })
  await until('the persistence check', () => log.at('warn').length === 1 + expectedWarnings.length)

  // the relay drops every connection; ioredis reconnects
  for (const socket of sockets) socket.destroy()
  t.equal(await store.get('key'), 'value', 'reconnected')
  await sleep(200)
  t.equal(log.at('warn').length, 1 + expectedWarnings.length, 'no second persistence check')
})

t.test('CONFIG refused (as on managed Redis): no warning, a debug line', async (t) => {
  const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  const user = `jwt-login-test-${randomUUID()}`
  await admin.call('ACL', 'SETUSER', user, 'on', '>test-password-0123456789', '~*', '+@all', '-config')
  t.teardown(async () => {
    await admin.call('ACL', 'DELUSER', user)
    await admin.quit()
  })
  const url = new URL(REDIS_URL)
  url.username = user
  url.password = 'test-password-0123456789'
  const log = new Recorder()
  const store = new RedisStore({ url: url.toString(), log, prefix: prefixed(t) })
  t.teardown(async () => { await store.close() })
  await until('the debug line', () => log.lines.length > 0)
  t.match(log.lines, [{ level: 'debug', details: { err: { message: /NOPERM/ } }, message: 'jwt-login: could not read the Redis persistence settings; not checked' }])
  await store.set('key', 'value', 1000)
  t.equal(await store.get('key'), 'value', 'the store works as usual')
})

t.test('a client the host owns keeps its own error handling; a logger given later is used once', async (t) => {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  await client.ping()
  const listeners = { error: client.listenerCount('error'), ready: client.listenerCount('ready') }
  const store = new RedisStore({ client, prefix: prefixed(t) })
  t.equal(client.listenerCount('error'), listeners.error, 'no error listener added to the host\'s client')

  const first = new Recorder()
  const second = new Recorder()
  store.attachLogger(first)
  store.attachLogger(second)
  await until('the warnings', () => first.lines.length >= expectedWarnings.length)
  await client.ping()
  t.same(first.lines.map(line => line.message), expectedWarnings, 'checked at once: the client was connected')
  t.same(second.lines, [], 'the first logger stays')

  await store.close()
  t.equal(client.listenerCount('ready'), listeners.ready, 'close leaves the host\'s client as it was')
  t.equal(await client.ping(), 'PONG', 'and open')
  await client.quit()
})

t.test('a logger given to the constructor wins over the plugin\'s', async (t) => {
  const own = new Recorder()
  const store = new RedisStore({ url: `redis://127.0.0.1:${await closedPort()}`, log: own })
  store.attachLogger(new Recorder())
  await until('the error line', () => own.lines.length > 0)
  await store.close()
  t.equal(own.at('error').length, 1)
})
