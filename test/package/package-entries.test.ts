import t from 'tap'
import { requirePeer } from '../../lib/core/peer.js'
import { MemoryUserAdapter } from '../../lib/testing.js'

t.test('a missing optional peer is named, with the command that installs it', async (t) => {
  t.throws(() => requirePeer('jwt-login-no-such-peer', 'fastify-jwt-login/example'), {
    message: 'fastify-jwt-login/example needs the package "jwt-login-no-such-peer", an optional peer dependency of fastify-jwt-login: npm install jwt-login-no-such-peer'
  })
  const ioredis = requirePeer<typeof import('ioredis')>('ioredis', 'fastify-jwt-login/redis')
  t.type(ioredis.Redis, 'function', 'an installed peer loads')
  const pg = requirePeer<typeof import('pg')>('pg', 'fastify-jwt-login/postgres')
  t.type(pg.Pool, 'function', 'and so does pg')
})

t.test('MemoryUserAdapter finds users by email and login through its indexes', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ login: 'alice', email: 'Alice@Example.com', password: 'pw-alice-123' })
  t.equal(await users.findByEmail('ALICE@example.COM'), alice, 'email lookups ignore case')
  t.equal(await users.findByLogin('alice'), alice)
  t.equal(await users.findByLogin('Alice'), null, 'logins are exact')
  await t.rejects(users.addUser({ login: 'alice2', email: 'alice@example.com', password: 'x-123456789' }), /exists/)
  await t.rejects(users.addUser({ login: 'alice', email: 'other@example.com', password: 'x-123456789' }), /exists/)
  await users.removeUser(alice.ID)
  await users.removeUser(alice.ID)
  t.equal(await users.findByEmail('alice@example.com'), null, 'removal drops the email index entry')
  t.equal(await users.findByLogin('alice'), null, 'and the login one')
  const again = await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'pw-alice-456' })
  t.not(again.ID, alice.ID, 'the email and login can be reused once removed')
})

t.test('MemoryUserAdapter: of two concurrent sign-ups with one email, exactly one gets in', async (t) => {
  const users = new MemoryUserAdapter()
  const results = await Promise.allSettled([
    users.createUser({ login: 'bob', email: 'bob@example.com', displayName: 'Bob', role: 'subscriber' }),
    users.createUser({ login: 'bob2', email: 'BOB@example.com', displayName: 'Bob', role: 'subscriber' })
  ])
  t.same(results.map((result) => result.status).sort(), ['fulfilled', 'rejected'])
  const winner = results.find((result) => result.status === 'fulfilled') as PromiseFulfilledResult<{ ID: number }>
  t.equal((await users.findByEmail('bob@example.com'))?.ID, winner.value.ID, 'the index names the one user made')
})
