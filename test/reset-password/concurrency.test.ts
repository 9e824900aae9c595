import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { redisStore, REDIS_URL } from '../helpers/redis-store.js'
import { clusterStore, postgresStore } from '../helpers/shared-stores.js'
import { ALICE } from '../helpers/app.js'
import { buildResetApp, codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import type { FastifyInstance } from 'fastify'

let smtp: SmtpPeer
t.before(async () => { smtp = await startSmtp() })
t.teardown(() => smtp.close())

async function requestCode (app: FastifyInstance): Promise<string> {
  await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  return codeIn((await smtp.nextMessage()).text)
}

async function putMany (app: FastifyInstance, codes: string[]): Promise<Array<{ status: number, errorCode?: number }>> {
  const answers = await Promise.all(codes.map(async (code, i) =>
    await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: `${NEW_PASSWORD} ${i}` } })))
  return answers.map(res => ({ status: res.statusCode, errorCode: res.statusCode === 200 ? undefined : res.json().data.errorCode }))
}

const backends: Array<{ name: string, make: (t: Test) => Promise<StateStore> }> = [
  { name: 'memory', make: async () => new MemoryStore() },
  {
    name: 'redis',
    make: async (t) => redisStore(t, 'reset-race').store
  },
  { name: 'redis cluster', make: async (t) => (await clusterStore(t, 'reset-race')).store },
  { name: 'postgres', make: async (t) => (await postgresStore(t, 'reset-race')).store }
]

for (const backend of backends) {
  t.test(`${backend.name}: of concurrent PUTs with one valid code exactly one succeeds`, async (t) => {
    const store = await backend.make(t)
    const { app } = await buildResetApp(smtp.port, {}, {}, { store })
    t.teardown(() => app.close())
    const code = await requestCode(app)
    const answers = await putMany(app, Array.from({ length: 8 }, () => code))
    t.equal(answers.filter(a => a.status === 200).length, 1, 'one success')
    t.same(answers.filter(a => a.status !== 200), Array.from({ length: 7 }, () => ({ status: 400, errorCode: 62 })), 'every other answer is 62')
  })

  t.test(`${backend.name}: concurrent wrong guesses cannot exceed the tries of a code`, async (t) => {
    const store = await backend.make(t)
    const { app } = await buildResetApp(smtp.port, {}, {}, { store })
    t.teardown(() => app.close())
    const code = await requestCode(app)
    const answers = await putMany(app, Array.from({ length: 12 }, (_, i) => `WRONG${i}`))
    t.ok(answers.every(a => a.status === 400 && a.errorCode === 62))
    const [last] = await putMany(app, [code])
    t.same(last, { status: 400, errorCode: 62 }, 'the code died after five counted tries')
  })
}

t.test('redis: only the keyed hash of a code is stored, and it expires with the code', async (t) => {
  const { store, prefix } = redisStore(t, 'reset-keys')
  const client = new Redis(REDIS_URL)
  t.teardown(async () => { await client.quit() })
  const { app } = await buildResetApp(smtp.port, {}, {}, { store })
  t.teardown(() => app.close())
  const code = await requestCode(app)
  const keys = await client.keys(`${prefix}*`)
  t.ok(keys.includes(`${prefix}reset:1`), 'one record for the user')
  for (const key of keys) {
    const value = await client.get(key)
    t.notMatch(value, code, `${key.slice(prefix.length)} does not hold the code`)
    t.notMatch(key, code)
  }
  const ttl = await client.pttl(`${prefix}reset:1`)
  t.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000, 'the record lives as long as the code')
  t.notMatch(keys.join(' '), ALICE.email, 'no email in clear in the keys')
})
