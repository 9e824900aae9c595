// Issue 25: sign-ins cannot starve token checks. Password hashing is bounded; past the queue a sign-in gets 503 / 228 with Retry-After.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { processPasswordWork } from '../../lib/services/password-work.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorOf, login, loginTokens, post } from '../helpers/http.js'
import { stderrDuring } from '../helpers/log-recorder.js'
import { buildResetApp, codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp } from '../helpers/smtp.js'

/** One password check at a time, one sign-in waiting: the third is refused. */
const TIGHT = { passwordHashing: { concurrency: 1, maxQueue: 1 } }
const UNKNOWN = { email: 'nobody@example.com', password: 'whatever it is' }

/** Memory users whose password checks wait for the test while `hold` is set. */
class SlowUsers extends MemoryUserAdapter {
  checks = 0
  hold: Promise<void> | null = null

  override async verifyPassword (user: MemoryUser, password: string): Promise<boolean> {
    this.checks++
    if (this.hold !== null) await this.hold
    return await super.verifyPassword(user, password)
  }
}

/** A hold on the users' password checks, and its release. */
function holdChecks (users: SlowUsers): () => void {
  let release!: () => void
  users.hold = new Promise(resolve => { release = resolve })
  return () => {
    users.hold = null
    release()
  }
}

/** Waits (a few event-loop turns at most) until `condition` holds. */
async function until (condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    if (condition()) return
    await new Promise(resolve => setImmediate(resolve))
  }
  throw new Error(`never happened: ${what}`)
}

async function slowApp (settings: Record<string, unknown> = {}): Promise<{ app: FastifyInstance, users: SlowUsers }> {
  const users = new SlowUsers()
  await users.addUser(ALICE)
  const { app } = await buildApp({ ...TIGHT, ...settings }, { users })
  return { app, users }
}

/** Alice's check holds the one slot and a second sign-in waits: the queue is full. */
async function fillQueue (app: FastifyInstance, users: SlowUsers, second: Record<string, unknown> = { email: ALICE.email, password: ALICE.password }): Promise<{ release: () => void, pending: Array<Promise<LightMyRequestResponse>> }> {
  const release = holdChecks(users)
  const first = login(app)
  await until(() => users.checks === 1, 'the first check started')
  const queued = login(app, second)
  await until(() => processPasswordWork.waiting === 1, 'the second sign-in queued')
  return { release, pending: [first, queued] }
}

t.test('sign-ins beyond the queue get 503 / 228 with Retry-After, and their attempts are given back', async (t) => {
  // 4 attempts per client: two held, so a third refusal left counted would be 429, not 503
  const { app, users } = await slowApp({ limits: { loginPerIp: { max: 4 } } })
  t.teardown(() => app.close())
  const { release, pending } = await fillQueue(app, users)

  const refused = [
    await login(app),
    await login(app, { username: ALICE.login, password: 'a wrong password' }),
    await login(app, UNKNOWN)
  ]
  for (const res of refused) {
    t.same(errorOf(res), [503, 228])
    t.equal(res.headers['retry-after'], '1', 'one waiting at about 50 ms a check: a second')
  }
  t.equal(refused[0]?.body, refused[2]?.body, 'an unknown account is refused in the same words')
  t.equal(users.checks, 1, 'no refused sign-in reached the adapter')
  t.same([processPasswordWork.running, processPasswordWork.waiting], [1, 1])

  release()
  for (const res of await Promise.all(pending)) t.equal(res.statusCode, 200, 'the held and the queued sign-ins go through')
  for (let i = 0; i < 3; i++) t.equal((await login(app)).statusCode, 200, 'the refused attempts were given back: later sign-ins are not locked out')
  t.same([processPasswordWork.running, processPasswordWork.waiting], [0, 0])
})

t.test('an unknown account\'s decoy check queues like a known account\'s, and fills the queue alike', async (t) => {
  const { app, users } = await slowApp()
  t.teardown(() => app.close())
  const { release, pending } = await fillQueue(app, users, UNKNOWN)
  t.same(errorOf(await login(app)), [503, 228], 'the decoy took the one place in the queue')
  t.same(errorOf(await login(app, UNKNOWN)), [503, 228])
  release()
  const [held, decoy] = await Promise.all(pending)
  t.equal(held?.statusCode, 200)
  t.same(errorOf(decoy as LightMyRequestResponse), [401, 48], 'the decoy ran in its turn: wrong credentials, as ever')
})

t.test('validate answers while sign-ins are queued', async (t) => {
  const { app, users } = await slowApp()
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const { release, pending } = await fillQueue(app, users)
  const validated = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(validated.statusCode, 200, 'no password to hash: no wait')
  t.equal(processPasswordWork.waiting, 1, 'the sign-ins are still waiting')
  release()
  await Promise.all(pending)
})

t.test('a reset completion waits for a slot instead of being refused', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const users = new SlowUsers()
  await users.addUser(ALICE)
  const { app } = await buildResetApp(smtp.port, {}, TIGHT, { users })
  t.teardown(() => app.close())
  const requested = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  t.equal(requested.statusCode, 200)
  const code = codeIn((await smtp.nextMessage()).text)

  const { release, pending } = await fillQueue(app, users)
  let answered = false
  const completion = app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })
  completion.then(() => { answered = true }, () => {})
  await until(() => processPasswordWork.waiting === 2, 'the new password queued behind the full queue')
  t.equal(answered, false, 'not refused: it waits')
  t.same(errorOf(await login(app)), [503, 228], 'sign-ins are still refused')

  release()
  const completed = await completion
  t.equal(completed.statusCode, 200, completed.body)
  await Promise.all(pending)
  t.equal((await login(app, { email: ALICE.email, password: NEW_PASSWORD })).statusCode, 200, 'the new password works')
})

t.test('a busy refusal is not reported as a dependency failure', async (t) => {
  const { app, users } = await slowApp()
  t.teardown(() => app.close())
  const { release, pending } = await fillQueue(app, users)
  const printed = await stderrDuring(async () => {
    t.same(errorOf(await login(app)), [503, 228])
  })
  release()
  await Promise.all(pending)
  t.notMatch(printed, 'dependency failed', 'without a logger, nothing is printed for it')
})
