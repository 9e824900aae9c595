/**
 * Fault injection: for every route's flow, the k-th store call (and,
 * separately, the k-th host-adapter call) fails, for every k; then, with
 * faults off, the flow's invariants must hold:
 *
 * 1. never a 500; a failed dependency answers the envelope 503 / 201;
 * 2. either the operation completed, or nothing changed and an identical
 *    retry succeeds;
 * 3. a revoked token never validates, a single-use secret is used once.
 *
 * Cases are named `<store> <flow> <layer>:<mode> k=<k>`. N (the calls of a
 * clean run) is measured first; k = N+1 is the clean run that must pass.
 * The call sequence of every flow is printed as a test comment.
 */
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { Faults, faultyAdapter, faultyStore, measure } from '../helpers/faults.js'
import { faultSuite } from '../helpers/fault-suite.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'

// ---- the harness itself -------------------------------------------------------------

t.test('the harness: counts every call, fails the k-th before or after it runs', async (t) => {
  // a method a store adds beyond the port is counted without a change to the wrapper
  class GrownStore extends MemoryStore {
    async swap (key: string, value: string): Promise<string | null> {
      const old = await this.get(key)
      await this.set(key, value, 60_000)
      return old
    }
  }
  const inner = new GrownStore()
  t.teardown(() => inner.close())
  const faults = new Faults()
  const store = faultyStore(inner, faults)
  t.equal(store.faults, faults)

  await store.set('a', '1', 60_000)
  t.equal(faults.calls.length, 0, 'nothing is counted while disarmed')

  const { result, calls } = await measure(faults, async () => await (store as unknown as GrownStore).swap('a', '2'))
  t.equal(result, '1')
  t.same(calls.map(c => `${c.n} ${c.method}:${c.key}`), ['1 swap:a'], 'its own inner calls are not counted')

  faults.arm({ k: 2, mode: 'before' })
  t.equal(await store.get('a'), '2')
  await t.rejects(store.set('a', '3', 60_000), { name: 'InjectedFault', call: { n: 2, method: 'set', key: 'a' }, mode: 'before' })
  t.equal(await store.get('a'), '2', 'before: the call did not run')
  t.equal(faults.disarm(), 3)
  t.same(faults.fired, { n: 2, method: 'set', key: 'a' })
  t.match(faults.describe(), /^1 → get:a\n2 → set:a {2}<= fault\n3 → get:a$/)

  faults.arm({ k: 1, mode: 'after' })
  await t.rejects(store.consume('a'), { name: 'InjectedFault', mode: 'after' })
  t.equal(faults.disarm(), 1)
  t.equal(await inner.get('a'), null, 'after: the call ran')

  faults.arm({ k: 1, mode: 'before' })
  await store.close()
  t.equal(faults.disarm(), 0, 'close is never counted')
  t.equal(faults.describe(), '(no calls)')
})

t.test('the harness: adapters share a switch; sync toPublicUser is left alone', async (t) => {
  const users = new MemoryUserAdapter()
  const port = new MemoryTwoFactorStore()
  const faults = new Faults()
  const wrappedUsers = faultyAdapter(users, faults)
  const wrappedPort = faultyAdapter(port, faults)
  faults.arm()
  const created = await wrappedUsers.createUser({ email: 'h@example.com', login: 'h', displayName: 'H', role: 'subscriber' })
  t.same(wrappedUsers.toPublicUser(created).ID, created.ID, 'toPublicUser stays sync')
  t.equal(await wrappedPort.methodOf(created.ID), null)
  faults.disarm()
  t.same(faults.calls.map(c => `${c.method}:${c.key}`), ['createUser:h@example.com', 'methodOf:1'], 'one count across both, addUser inside createUser not counted')

  faults.arm({ k: 1, mode: 'before' })
  await t.rejects(wrappedUsers.findById(created.ID), { name: 'InjectedFault', call: { key: '1' } })
  faults.disarm()
  faults.arm({ k: 1, mode: 'before' })
  t.equal(wrappedUsers.toPublicUser(created).ID, created.ID, 'the sync toPublicUser is neither counted nor failed')
  t.equal(faults.disarm(), 0)
})

t.test('the harness: the ports\' optional account methods are counted and failable, and stay absent where a port lacks them', async (t) => {
  const users = new MemoryUserAdapter()
  const port = new MemoryTwoFactorStore()
  const faults = new Faults()
  const wrappedUsers = faultyAdapter(users, faults)
  const wrappedPort = faultyAdapter(port, faults)
  const user = await users.addUser({ login: 'o', email: 'o@example.com', password: 'a long enough password' })
  faults.arm()
  await wrappedUsers.setEmailVerified(user, false)
  await wrappedUsers.setEmail(user, 'p@example.com')
  await wrappedPort.setMethod(user.ID, 'totp')
  t.equal(await wrappedPort.countBackupCodes(user.ID), 0)
  faults.disarm()
  t.same(faults.calls.map(c => `${c.method}:${c.key}`), ['setEmailVerified:user=1', 'setEmail:user=1', 'setMethod:1', 'countBackupCodes:1'])
  t.same({ email: user.user_email, verified: user.emailVerified, method: await port.methodOf(user.ID) }, { email: 'p@example.com', verified: true, method: 'totp' }, 'they reach the inner port')

  faults.arm({ k: 1, mode: 'after' })
  await t.rejects(wrappedUsers.setEmailVerified(user, false), { name: 'InjectedFault', mode: 'after' })
  faults.disarm()
  t.equal(user.emailVerified, false, 'after: the write ran')

  // the plugin asks `typeof port.setMethod === 'function'`: a port without the method must not grow one
  const bare = faultyAdapter({ methodOf: async () => null } as Record<string, unknown>, faults)
  t.equal(typeof bare.setMethod, 'undefined')
  t.equal(typeof bare.countBackupCodes, 'undefined')
})

faultSuite(['memory', 'redis'])
