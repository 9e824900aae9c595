// The bound on password hashing: slots, the two first-in first-out queues (sign-ins, new passwords) taking turns, refusals with Retry-After, and the adapter wrapped around it.
import t from 'tap'
import type { NewUser, PublicUser, UserAdapter } from '../../lib/adapters/users.js'
import { JwtLoginError } from '../../lib/core/errors.js'
import { boundUsers, hashingLimits, PasswordWork, processPasswordWork, QUEUE_PER_SLOT, type PasswordHashingSettings } from '../../lib/services/password-work.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

function deferred<T = void> (): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((_resolve, _reject) => { resolve = _resolve; reject = _reject })
  return { promise, resolve, reject }
}

/** Lets every pending continuation run. */
async function settle (): Promise<void> {
  await new Promise(resolve => setImmediate(resolve))
}

/** A clock that moves only when told. */
function manualClock (): { now: () => number, advance: (ms: number) => void } {
  let at = 0
  return { now: () => at, advance: (ms) => { at += ms } }
}

const LIMITS = (concurrency: number, maxQueue: number, maxRegistrationQueue = 0): PasswordHashingSettings => ({ concurrency, maxQueue, maxRegistrationQueue })

/** Tasks that start when given a slot and end when the test says, recording the order they started in. */
function taskBoard (): { started: string[], task: (name: string) => { run: () => Promise<string>, end: Deferred<void> } } {
  const started: string[] = []
  return {
    started,
    task: (name) => {
      const end = deferred()
      return { end, run: async () => { started.push(name); await end.promise; return name } }
    }
  }
}

t.test('0 sizes the bound from the machine: one core for the event loop, 48 waiting per slot', async (t) => {
  t.same(hashingLimits(LIMITS(0, 0), 1), { concurrency: 1, maxQueue: QUEUE_PER_SLOT, maxRegistrationQueue: QUEUE_PER_SLOT }, 'one core: still one slot')
  t.same(hashingLimits(LIMITS(0, 0), 2), { concurrency: 1, maxQueue: 48, maxRegistrationQueue: 48 })
  t.same(hashingLimits(LIMITS(0, 0), 8), { concurrency: 7, maxQueue: 7 * 48, maxRegistrationQueue: 7 * 48 })
  t.same(hashingLimits(LIMITS(3, 5, 7), 8), { concurrency: 3, maxQueue: 5, maxRegistrationQueue: 7 }, 'given values stand')
  t.same(hashingLimits(LIMITS(3, 0), 8), { concurrency: 3, maxQueue: 3 * 48, maxRegistrationQueue: 3 * 48 })
  t.type(processPasswordWork, PasswordWork, 'the process has one')
  t.equal(new PasswordWork().running, 0, 'the machine\'s cores and the wall clock by default')
})

t.test('at most `concurrency` at once, the others started first in, first out', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const { started, task } = taskBoard()
  const tasks = ['a', 'b', 'c', 'd', 'e'].map(task)
  const results = tasks.map(async ({ run }) => await work.run(run, 'sign-in', LIMITS(2, 10)))
  await settle()
  t.same(started, ['a', 'b'])
  t.same([work.running, work.waiting], [2, 3])
  tasks[1]?.end.resolve()
  await settle()
  t.same(started, ['a', 'b', 'c'], 'the first waiting takes the free slot')
  tasks[0]?.end.resolve()
  tasks[2]?.end.resolve()
  await settle()
  t.same(started, ['a', 'b', 'c', 'd', 'e'], 'in the order they came')
  t.equal(work.running, 2)
  for (const { end } of tasks) end.resolve()
  t.same(await Promise.all(results), ['a', 'b', 'c', 'd', 'e'], 'each gets its own answer')
  t.same([work.running, work.waiting], [0, 0])
})

t.test('a sign-in that finds its queue full is refused at once, with Retry-After from the queue and the mean hash time', async (t) => {
  const clock = manualClock()
  const work = new PasswordWork({ cores: 4, now: clock.now })
  const { task } = taskBoard()

  // a fresh process assumes 50 ms a hash: one waiting is far less than a second
  const first = task('first')
  const running = work.run(first.run, 'sign-in', LIMITS(1, 1))
  const queued = work.run(async () => 'queued', 'sign-in', LIMITS(1, 1))
  await settle()
  const refusal = await work.run(async () => 'never', 'sign-in', LIMITS(1, 1)).catch((error: unknown) => error)
  t.ok(refusal instanceof JwtLoginError)
  t.match(refusal, { code: 'ERR_JWT_LOGIN_BUSY', statusCode: 503, errorCode: 228, retryAfter: 1 }, 'at least a second')
  t.equal(work.waiting, 1, 'the refused operation did not join the queue')

  // the first takes 2 050 ms, the mean moves a fifth of the way (450 ms); the queued one none (360 ms)
  clock.advance(2050)
  first.end.resolve()
  t.equal(await running, 'first')
  t.equal(await queued, 'queued', 'the queued one ran')

  const slow = task('slow')
  const holding = work.run(slow.run, 'sign-in', LIMITS(2, 10))
  const other = task('other')
  const holding2 = work.run(other.run, 'sign-in', LIMITS(2, 10))
  const waiting = Array.from({ length: 10 }, async () => await work.run(async () => 'waited', 'sign-in', LIMITS(2, 10)))
  await settle()
  const busy = await work.run(async () => 'never', 'sign-in', LIMITS(2, 10)).catch((error: unknown) => error)
  // 10 waiting × 360 ms ÷ 2 slots = 1.8 s
  t.match(busy, { code: 'ERR_JWT_LOGIN_BUSY', retryAfter: 2 })
  slow.end.resolve()
  other.end.resolve()
  await Promise.all([holding, holding2, ...waiting])
})

t.test('a new password (a reset completion) is never refused, and waits in its own queue: the sign-ins\' queue full, it still queues; sign-ins go first at a tie', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const { started, task } = taskBoard()
  const first = task('first')
  const running = work.run(first.run, 'sign-in', LIMITS(1, 1))
  const queued = task('queued')
  const second = work.run(queued.run, 'sign-in', LIMITS(1, 1))
  const change = task('new password')
  const waits = work.run(change.run, 'new-password', LIMITS(1, 1))
  await settle()
  t.equal(work.waiting, 2, 'it queued beside a full sign-ins\' queue')
  t.same([work.waitingSignIns, work.waitingNewPasswords], [1, 1])
  await t.rejects(work.run(async () => 'never', 'sign-in', LIMITS(1, 1)), { code: 'ERR_JWT_LOGIN_BUSY' }, 'sign-ins are still refused')
  first.end.resolve()
  queued.end.resolve()
  change.end.resolve()
  t.same(await Promise.all([running, second, waits]), ['first', 'queued', 'new password'])
  t.same(started, ['first', 'queued', 'new password'])
})

t.test('a failing operation gives its slot back, and its time is not counted in the mean', async (t) => {
  const clock = manualClock()
  const work = new PasswordWork({ cores: 4, now: clock.now })
  const failing = deferred()
  const failed = work.run(async () => { await failing.promise; return 'never' }, 'sign-in', LIMITS(1, 5))
  const next = work.run(async () => 'next', 'sign-in', LIMITS(1, 5))
  await settle()
  t.same([work.running, work.waiting], [1, 1])
  clock.advance(60_000)
  failing.reject(new Error('adapter down'))
  await t.rejects(failed, { message: 'adapter down' }, 'the error goes on unchanged')
  t.equal(await next, 'next', 'the next one got the slot')
  t.same([work.running, work.waiting], [0, 0])

  const held = deferred()
  const holding = work.run(async () => await held.promise, 'sign-in', LIMITS(1, 5))
  const queued = Array.from({ length: 5 }, async () => await work.run(async () => undefined, 'sign-in', LIMITS(1, 5)))
  await settle()
  // had the failed minute counted, the mean would be near 10 s and Retry-After 49 s
  t.match(await work.run(async () => undefined, 'sign-in', LIMITS(1, 5)).catch((error: unknown) => error), { code: 'ERR_JWT_LOGIN_BUSY', retryAfter: 1 })
  held.resolve()
  await Promise.all([holding, ...queued])

  const thrown = work.run(async () => { throw new Error('thrown at once') }, 'new-password', LIMITS(1, 5))
  await t.rejects(thrown, { message: 'thrown at once' })
  t.equal(work.running, 0, 'a task that throws at once gives its slot back too')
})

t.test('the settings are read when a slot is asked for: a reload takes effect at once', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  let settings = LIMITS(1, 1)
  const hashing = work.under(() => settings)
  const { started, task } = taskBoard()
  const a = task('a')
  const b = task('b')
  const runA = hashing(a.run, 'sign-in')
  const runB = hashing(b.run, 'sign-in')
  await settle()
  t.same(started, ['a'])
  await t.rejects(hashing(async () => 'never', 'sign-in'), { code: 'ERR_JWT_LOGIN_BUSY' }, 'one waiting fills a queue of one')

  settings = LIMITS(3, 1)
  const c = task('c')
  const runC = hashing(c.run, 'sign-in')
  t.equal(work.waiting, 0, 'a raised concurrency gives the waiting one its slot before the newcomer takes one')
  await settle()
  t.same([...started].sort(), ['a', 'b', 'c'])
  t.equal(work.running, 3)

  settings = LIMITS(1, 5)
  const d = task('d')
  const runD = hashing(d.run, 'sign-in')
  await settle()
  t.same([work.running, work.waiting], [3, 1], 'a lowered concurrency: the newcomer waits')
  a.end.resolve()
  await settle()
  t.same([work.running, work.waiting], [2, 1], 'above the new bound, a freed slot is not given')
  b.end.resolve()
  await settle()
  t.same([work.running, work.waiting], [1, 1])
  c.end.resolve()
  await settle()
  t.same([work.running, work.waiting], [1, 0], 'below it again: the waiting one starts')
  t.equal(started.at(-1), 'd')
  d.end.resolve()
  t.same(await Promise.all([runA, runB, runC, runD]), ['a', 'b', 'c', 'd'])
})

/** An adapter as a class with private state: a method called with another `this` would throw. */
class PrivateUsers implements UserAdapter<{ id: number }> {
  readonly #name = 'private'
  readonly calls: string[] = []
  passwordCheck: Deferred<boolean> | null = null
  creation: Deferred<void> | null = null

  async findByEmail (email: string): Promise<{ id: number } | null> {
    this.calls.push(`findByEmail ${email} ${this.#name}`)
    return { id: 1 }
  }

  async findByLogin (login: string): Promise<{ id: number } | null> {
    this.calls.push(`findByLogin ${login} ${this.#name}`)
    return null
  }

  async findById (id: number): Promise<{ id: number } | null> {
    this.calls.push(`findById ${id} ${this.#name}`)
    return { id }
  }

  async verifyPassword (user: { id: number }, password: string): Promise<boolean> {
    this.calls.push(`verifyPassword ${user.id} ${this.#name}`)
    return await (this.passwordCheck?.promise ?? Promise.resolve(password === 'right'))
  }

  toPublicUser (user: { id: number }): PublicUser {
    return { ID: user.id, user_login: this.#name, user_email: 'p@example.com', display_name: 'P', roles: [] }
  }

  async setPassword (user: { id: number }): Promise<void> {
    this.calls.push(`setPassword ${user.id} ${this.#name}`)
  }

  async createUser (input: NewUser): Promise<{ id: number }> {
    this.calls.push(`createUser ${input.login} ${this.#name}`)
    await this.creation?.promise
    return { id: 2 }
  }
}

t.test('the bounded adapter: hashing methods take a slot in their queue, the others pass through with the adapter as `this`', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const users = new PrivateUsers()
  const bounded = boundUsers(users, work.under(() => LIMITS(1, 1)))

  t.same(await bounded.findByEmail('a@example.com'), { id: 1 })
  t.equal(await bounded.findByLogin('a'), null)
  t.same(await bounded.findById(7), { id: 7 })
  t.equal(bounded.toPublicUser({ id: 3 }).user_login, 'private', 'a sync method answers synchronously')
  t.equal(await bounded.verifyPassword({ id: 1 }, 'right'), true)
  await bounded.setPassword?.({ id: 1 }, 'new')
  t.same(users.calls, ['findByEmail a@example.com private', 'findByLogin a private', 'findById 7 private', 'verifyPassword 1 private', 'setPassword 1 private'])
  t.equal(bounded.getPasswordHash, undefined, 'a method the adapter lacks stays absent')
  t.equal(bounded.deleteUser, undefined)
  t.same(Object.keys(bounded).sort(), ['createUser', 'deleteUser', 'findByEmail', 'findById', 'findByIdentity', 'findByLogin', 'getPasswordHash', 'hasPassword', 'linkIdentity', 'listIdentities', 'passwordFingerprint', 'rehashPassword', 'setEmail', 'setEmailVerified', 'setPassword', 'toPublicUser', 'unlinkIdentity', 'verifyPassword'])

  // a method added to the adapter later is found at the time of the call
  const late = users as unknown as { getPasswordHash: () => Promise<string> }
  late.getPasswordHash = async () => 'hash'
  t.equal(await bounded.getPasswordHash?.({ id: 1 }), 'hash')

  // the password check is refusable: with the slot held and one waiting, a third is refused
  users.passwordCheck = deferred()
  const first = bounded.verifyPassword({ id: 1 }, 'right')
  const second = bounded.verifyPassword({ id: 1 }, 'right')
  await settle()
  await t.rejects(bounded.verifyPassword({ id: 1 }, 'right'), { code: 'ERR_JWT_LOGIN_BUSY' })
  // a new password waits in the other queue instead
  const setting = bounded.setPassword?.({ id: 1 }, 'new')
  const creating = bounded.createUser?.({ email: 'n@example.com', login: 'n', displayName: 'N', role: 'subscriber', password: 'pw' })
  await settle()
  t.same([work.waitingSignIns, work.waitingNewPasswords], [1, 2], 'setPassword and createUser with a password queued in their own queue, beside the full one')

  // a provider's user has no password: created at once, no slot taken
  const provider = await bounded.createUser?.({ email: 'o@example.com', login: 'o', displayName: 'O', role: 'subscriber' })
  t.same(provider, { id: 2 })
  t.same([work.running, work.waiting], [1, 3])

  users.passwordCheck.resolve(true)
  t.same(await Promise.all([first, second, setting, creating]), [true, true, undefined, { id: 2 }])
  t.same([work.running, work.waiting], [0, 0])
})

t.test('issue 34: 80 waiting registrations and reset completions never make a sign-in refused; the queues take turns', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const settings = LIMITS(1, 10, 100)
  const order: string[] = []
  const held = deferred()
  const holding = work.run(async () => { await held.promise; order.push('held') }, 'registration', settings)
  const newPasswords = Array.from({ length: 80 }, async (_, i) => {
    await work.run(async () => { order.push(`n${i}`) }, i % 2 === 0 ? 'registration' : 'new-password', settings)
  })
  await settle()
  t.same([work.running, work.waitingNewPasswords], [1, 80])
  const signIns = Array.from({ length: 10 }, async (_, i) => {
    await work.run(async () => { order.push(`s${i}`) }, 'sign-in', settings)
  })
  await settle()
  t.same([work.waitingSignIns, work.waitingNewPasswords], [10, 80], 'all ten sign-ins queued: none was refused for the new passwords ahead')
  await t.rejects(work.run(async () => 'never', 'sign-in', settings), { code: 'ERR_JWT_LOGIN_BUSY' }, 'an eleventh finds its own queue full')
  held.resolve()
  await Promise.all([holding, ...newPasswords, ...signIns])
  const turns = Array.from({ length: 10 }, (_, i) => [`s${i}`, `n${i}`]).flat()
  t.same(order.slice(0, 21), ['held', ...turns], 'a sign-in, a new password, in turn, while both wait')
  t.same(order.slice(21), Array.from({ length: 70 }, (_, i) => `n${i + 10}`), 'then the new passwords left, in the order they came')
  t.same([work.running, work.waiting], [0, 0])
})

t.test('a registration that finds the new passwords\' queue full is refused with Retry-After; a reset completion still waits; sign-ins are not refused for it', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const held = deferred()
  const holding = work.run(async () => await held.promise, 'sign-in', LIMITS(1, 40, 2))
  const queued = [
    work.run(async () => 'r1', 'registration', LIMITS(1, 40, 2)),
    work.run(async () => 'r2', 'registration', LIMITS(1, 40, 2))
  ]
  await settle()
  const refused = await work.run(async () => 'never', 'registration', LIMITS(1, 40, 2)).catch((error: unknown) => error)
  t.match(refused, { code: 'ERR_JWT_LOGIN_BUSY', statusCode: 503, errorCode: 228, retryAfter: 1 })
  const reset = work.run(async () => 'reset', 'new-password', LIMITS(1, 40, 2))
  const signIn = work.run(async () => 'sign-in', 'sign-in', LIMITS(1, 40, 2))
  await settle()
  t.same([work.waitingSignIns, work.waitingNewPasswords], [1, 3], 'the reset completion waits beyond the bound; the sign-in queues')
  held.resolve()
  t.same(await Promise.all([holding, ...queued, reset, signIn]), [undefined, 'r1', 'r2', 'reset', 'sign-in'])
})

t.test('Retry-After counts the other queue\'s turns: 40 sign-ins and 40 new passwords waiting at 50 ms a hash on one slot is 4 s', async (t) => {
  const work = new PasswordWork({ cores: 4 })
  const settings = LIMITS(1, 40, 40)
  const held = deferred()
  const holding = work.run(async () => await held.promise, 'sign-in', settings)
  const signIns = Array.from({ length: 40 }, async () => await work.run(async () => 's', 'sign-in', settings))
  await settle()
  t.match(await work.run(async () => 'never', 'sign-in', settings).catch((error: unknown) => error), { retryAfter: 2 }, 'sign-ins alone: 40 × 50 ms')
  const newPasswords = Array.from({ length: 40 }, async () => await work.run(async () => 'n', 'registration', settings))
  await settle()
  t.match(await work.run(async () => 'never', 'sign-in', settings).catch((error: unknown) => error), { retryAfter: 4 }, 'every other slot a new password: 80 × 50 ms')
  t.match(await work.run(async () => 'never', 'registration', settings).catch((error: unknown) => error), { retryAfter: 4 })
  held.resolve()
  await Promise.all([holding, ...signIns, ...newPasswords])
})
