/**
 * The suites under jest, where a test file runs in a vm context of its own
 * and `structuredClone` (MemoryPasskeyStore's copies), `Buffer` and node's
 * own modules answer objects of the host's realm: ports whose answers come
 * from another realm pass as they do elsewhere, a wrong answer still fails,
 * and a failure quotes another realm's error by its message.
 */
import assert from 'node:assert/strict'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { ConformanceError, mailerSuite, passkeyPortSuite, stateStoreSuite, userAdapterRules, userAdapterSuite, type MailerFixture, type Rule, type SeedUser } from '../../lib/conformance.js'
import { describe } from '../../lib/conformance/users-kit.js'
import { inSuiteRealm } from '../../lib/conformance/realm.js'
import { MemoryStore, type MailMessage, type StateStore } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryUserAdapter } from '../../lib/testing.js'
import { testClock } from '../helpers/app.js'
import { runSuite } from '../helpers/conformance.js'

/** A deep copy made in a realm of its own, as jest's host realm makes `structuredClone`'s. */
const foreign = runInNewContext(`(function copy (value) {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return Array.from(value, copy)
  if (value instanceof Date || Object.prototype.toString.call(value) === '[object Date]') return new Date(value.getTime())
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copy(inner)]))
})`) as <T>(value: T) => T

/** Every method of `port` (or those named) answering through the foreign copy. */
function answeringFromAnotherRealm<P extends object> (port: P, only?: readonly string[]): P {
  return new Proxy(port, {
    get (target, name) {
      const member: unknown = Reflect.get(target, name, target)
      if (typeof member !== 'function') return member
      // the port's own methods on the port itself, not on the proxy: its private fields are the port's
      if (only !== undefined && !only.includes(String(name))) return member.bind(target)
      return (...args: unknown[]) => {
        const answer: unknown = (member as (...args: unknown[]) => unknown).apply(target, args)
        return answer instanceof Promise ? answer.then(foreign) : foreign(answer)
      }
    }
  })
}

const clock = testClock()

t.test('the copy is of another realm: node:assert tells it apart from the same data of this one', async (t) => {
  const copy = foreign({ list: [1], at: new Date(0) })
  t.not(Object.getPrototypeOf(copy.list), Array.prototype)
  t.not(Object.getPrototypeOf(copy.at), Date.prototype)
  t.throws(() => { assert.deepEqual(copy, { list: [1], at: new Date(0) }) }, /not reference-equal/)
  assert.deepEqual(inSuiteRealm(copy), { list: [1], at: new Date(0) })
})

t.test('rebuilt in this realm: arrays (holes kept), plain objects and dates; nothing else', async (t) => {
  const holey = foreign([1, 2])
  delete holey[0]
  const rebuilt = inSuiteRealm(holey)
  t.equal(Object.getPrototypeOf(rebuilt), Array.prototype)
  t.same([0 in rebuilt, rebuilt[1]], [false, 2], 'a hole stays a hole')
  t.equal(inSuiteRealm('text'), 'text')
  t.equal(inSuiteRealm(null), null)
  const map = new Map([[1, 2]])
  t.equal(inSuiteRealm(map), map, 'a Map is left as it is')
  const bare = Object.assign(Object.create(null) as object, { a: 1 })
  t.equal(inSuiteRealm(bare), bare, 'an object without a prototype is left as it is')
  class Point { x = 1 }
  const point = new Point()
  t.equal(inSuiteRealm({ point }).point, point, 'an instance of a class is left as it is')
  const objectLike = Object.create({ constructor: 'Object' }) as object
  t.equal(inSuiteRealm(objectLike), objectLike, 'an object whose prototype has no constructor function is left as it is')
  // a wrong type still differs: a date answered as a string, an array as an object
  t.throws(() => { assert.deepEqual(inSuiteRealm(foreign({ at: '1970-01-01T00:00:00.000Z' })), { at: new Date(0) }) })
  t.throws(() => { assert.deepEqual(inSuiteRealm(foreign({ 0: 'a', length: 1 })), ['a']) })
})

t.test('MemoryPasskeyStore, its answers made in another realm, passes every rule', async (t) => {
  const result = await runSuite(test => passkeyPortSuite({ test, create: async () => ({ port: answeringFromAnotherRealm(new MemoryPasskeyStore()) }) }))
  t.same([...result.failed].map(([name, error]) => `${name}: ${error.message}`), [])
  t.equal(result.passed.length, 19)
})

t.test('a store whose lists come from another realm passes every rule', async (t) => {
  const wait = async (ms: number): Promise<void> => { clock.advance(ms) }
  const result = await runSuite(test => stateStoreSuite({ test, wait, create: async () => answeringFromAnotherRealm(new MemoryStore({ clock })) as StateStore }))
  t.same([...result.failed].map(([name, error]) => `${name}: ${error.message}`), [])
  t.same(result.skipped, [], 'every rule ran: getMany and readAndIncrement among them')
})

t.test('a mailbox that answers from another realm passes every rule', async (t) => {
  const result = await runSuite(test => mailerSuite({
    test,
    create: async () => {
      const arrived: MailMessage[] = []
      let refusing = false
      const fixture: MailerFixture = {
        mailer: {
          send: async (message) => {
            if (refusing) {
              refusing = false
              throw new Error('550 refused')
            }
            arrived.push({ ...message })
          }
        },
        delivered: async () => foreign(arrived),
        refuse: () => { refusing = true }
      }
      return fixture
    }
  }))
  t.same([...result.failed].map(([name, error]) => `${name}: ${error.message}`), [])
  t.same(result.skipped, [])
})

t.test('MemoryUserAdapter, its lists of links made in another realm, passes every rule', async (t) => {
  // the lists alone: a copy of a user's record would be a stale record, not the same user in another realm
  const result = await runSuite(test => userAdapterSuite({
    test,
    create: async () => {
      const adapter = new MemoryUserAdapter()
      return { adapter: answeringFromAnotherRealm(adapter, ['listIdentities']), addUser: async (user: SeedUser) => await adapter.addUser({ ...user, emailVerified: true }) }
    }
  }))
  t.same([...result.failed].map(([name, error]) => `${name}: ${error.message}`), [])
  t.equal(result.passed.length + result.skipped.length, userAdapterRules.length)
})

t.test('a failure quotes an error of another realm by its message', async (t) => {
  const rule: Rule<never, never> = { name: 'answers', contract: 'It answers.', run: async () => {} }
  const error = runInNewContext('new TypeError("from elsewhere")') as unknown
  t.notOk(error instanceof Error, 'not an instance of this realm\'s Error')
  t.equal(new ConformanceError('Port', rule, error).message, 'Port: answers\nthe contract: "It answers."\nseen: from elsewhere')
  t.equal(describe(Object.assign(error as object, { code: 'E_ELSEWHERE' })), 'TypeError: from elsewhere (code E_ELSEWHERE)', 'the user adapter\'s rules show it by name and message too')
})
