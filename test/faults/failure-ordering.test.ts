import Fastify from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { MemoryStore, type Mailer, type MailMessage, type StateStore } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from '../helpers/app.js'
import { mailCode } from '../helpers/account.js'
import { ruledStore } from '../helpers/faults.js'
import { errorCode, post } from '../helpers/http.js'
import { codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

class CapturingMailer implements Mailer {
  readonly messages: MailMessage[] = []
  async send (message: MailMessage): Promise<void> { this.messages.push(message) }
}

async function resetApp (t: Test) {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  const store = ruledStore(memory)
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const mailer = new CapturingMailer()
  const logs: Array<{ level: number, msg: string }> = []
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  await app.register(jwtLogin, {
    users,
    store,
    clock,
    mailer,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true }, resetPassword: { enabled: true } }
  })
  t.teardown(async () => { await app.close(); await memory.close() })
  const requestCode = async (): Promise<string> => {
    const sent = mailer.messages.length
    t.equal((await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })).statusCode, 200)
    for (let i = 0; i < 50 && mailer.messages.length === sent; i++) await new Promise(resolve => setImmediate(resolve))
    return codeIn((mailer.messages.at(-1) as MailMessage).text)
  }
  const put = async (code: string) => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })
  const signIn = async (password: string) => await post(app, '/auth', { email: ALICE.email, password })
  return { app, store, clock, logs, requestCode, put, signIn }
}

t.test('reset: a claim that fails gives the code back, and the code still works', async (t) => {
  const { store, requestCode, put } = await resetApp(t)
  const code = await requestCode()
  store.rule = (method, key) => method === 'compareAndSet' && key.startsWith('reset:')
  const failed = await put(code)
  t.same([failed.statusCode, errorCode(failed)], [503, 201])
  store.rule = null
  t.equal((await put(code)).statusCode, 200)
})

t.test('reset: a claim that fails takes its cutoff back; when that fails too, it is logged and sign-ins are refused for the minute', async (t) => {
  const { store, logs, requestCode, put, signIn } = await resetApp(t)
  const code = await requestCode()
  // the claim fails; the hold (the first write of the user's cutoff) runs, and its cancel (the second) fails
  let cutoffs = 0
  store.rule = (method, key) => (method === 'compareAndSet' && key.startsWith('reset:')) ||
    (method === 'compareAndSet' && key.startsWith('revoked:user:') && ++cutoffs === 2)
  const failed = await put(code)
  t.same([failed.statusCode, errorCode(failed)], [503, 201], 'the claim\'s failure answers')
  t.ok(logs.some(l => l.level === 40 && l.msg.includes('could not take its session cutoff back')), 'the cutoff left held is logged')
  store.rule = null
  t.equal((await signIn(ALICE.password)).statusCode, 200, 'the password did not change')
  t.equal((await put(code)).statusCode, 200, 'and the code still works')
})

t.test('reset: when the code cannot be given back either, the loss is logged and the answer says sessions may have ended', async (t) => {
  const { store, logs, requestCode, put, signIn } = await resetApp(t)
  const code = await requestCode()
  // the provisional cutoff fails, and so does giving the code back (the second compare-and-set on its record)
  let writes = 0
  store.rule = (method, key) => (method === 'compareAndSet' && key.startsWith('revoked:user:')) ||
    (method === 'compareAndSet' && key.startsWith('reset:') && ++writes === 2)
  const failed = await put(code)
  t.same([failed.statusCode, errorCode(failed)], [503, 205])
  t.ok(logs.some(l => l.level === 50 && l.msg.includes('could not be given back')), 'the lost code is logged')
  store.rule = null
  t.equal(errorCode(await put(code)), 62, 'the code is gone: the user asks for a new one')
  t.equal((await signIn(ALICE.password)).statusCode, 200, 'the password did not change')
})

t.test('reset: when the final cutoff fails, the change stands and the provisional cutoff fails closed for a minute', async (t) => {
  const { app, store, clock, logs, requestCode, put, signIn } = await resetApp(t)
  const before = (await signIn(ALICE.password)).json().data
  const code = await requestCode()
  let cutoffs = 0
  // the first write of the user's cutoff holds it a minute ahead, the second sets the moment of the change
  store.rule = (method, key) => method === 'compareAndSet' && key.startsWith('revoked:user:') && ++cutoffs === 2
  const done = await put(code)
  t.equal(done.statusCode, 200, 'the password changed: the answer says so')
  store.rule = null
  t.ok(logs.some(l => l.level === 40 && l.msg.includes('cutoff stays a minute ahead')), 'the lasting cutoff is logged')
  const old = await post(app, '/auth/validate', { JWT: before.jwt })
  t.same([old.statusCode, errorCode(old)], [401, 55], 'the session from before is ended')
  t.equal(errorCode(await post(app, '/auth/refresh', { refresh_token: before.refresh_token })), 51)
  const early = (await signIn(NEW_PASSWORD)).json().data
  t.equal(errorCode(await post(app, '/auth/validate', { JWT: early.jwt })), 55, 'a sign-in within the minute is refused too')
  clock.advance(60_001)
  const later = (await signIn(NEW_PASSWORD)).json().data
  t.equal((await post(app, '/auth/validate', { JWT: later.jwt })).statusCode, 200, 'after the minute, sign-ins work')
})

t.test('2FA: a failing challenge consume or factor spend gives the challenge back; the same code then works', async (t) => {
  for (const failing of ['2fa:challenge:', '2fa:totp-used:']) {
    const memory = new MemoryStore()
    const store = ruledStore(memory)
    const { app, bobId, submit, interim, secret, clock } = await buildTwoFactorApp({ plugin: { store }, settings: { refresh: { enabled: true } } })
    t.teardown(async () => { await memory.close() })
    const token = await interim()
    const code = await totpAt(secret, clock.now)
    store.rule = (method, key) => method === 'compareAndSet' && key.startsWith(failing)
    const failed = await submit({ JWT: token, code })
    t.same([failed.statusCode, errorCode(failed)], [503, 201], `${failing} failed`)
    t.same(await app.jwtLogin.sessions(bobId), [], `${failing}: the prepared session was ended, and is not listed`)
    t.ok(memory.counts.state <= 3, `${failing}: beside the challenge, only the session's revoked mark and the emptied index (${memory.counts.state})`)
    store.rule = null
    const retried = await submit({ JWT: token, code })
    t.equal(retried.statusCode, 200, `${failing}: the retry with the same code succeeds`)
    const replay = await submit({ JWT: token, code })
    t.equal(errorCode(replay), 107, `${failing}: and the challenge is then spent`)
  }
})

t.test('refresh: a session that keeps changing under the rotation answers 503 and changes nothing', async (t) => {
  const memory = new MemoryStore()
  const store = ruledStore(memory)
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, store, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } } })
  t.teardown(async () => { await app.close(); await memory.close() })
  const first = (await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).json().data
  const cas = store.compareAndSet.bind(store)
  store.compareAndSet = async () => false
  const res = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.same([res.statusCode, errorCode(res)], [503, 201])
  store.compareAndSet = cas
  t.equal((await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).statusCode, 200, 'the token still works')
})

t.test('refresh: a user database that fails changes nothing, and a retry long after still rotates (never a reuse)', async (t) => {
  const clock = testClock()
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, clock, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true, reuseInterval: 0 } } })
  t.teardown(async () => { await app.close() })
  const reused: unknown[] = []
  app.jwtLogin.events.on('refresh.reused', (event) => { reused.push(event) })
  const first = (await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).json().data
  const findById = users.findById.bind(users)
  users.findById = async () => { throw new Error('injected: the user database is down') }
  const failed = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.same([failed.statusCode, errorCode(failed)], [503, 201])
  users.findById = findById
  clock.advance(60_000)
  const retry = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(retry.statusCode, 200, 'the same token rotates, a minute later and with no reuse interval')
  t.same(reused, [], 'no reuse was reported')
  t.equal((await post(app, '/auth/refresh', { refresh_token: retry.json().data.refresh_token })).statusCode, 200, 'its successor works')
})

/**
 * A store whose first compare-and-set on a key under `prefix` waits until a
 * second one has run, then fails without running: a request whose claim never
 * reached the store while another request's claim did.
 */
function lostClaimStore (inner: StateStore, prefix: string): StateStore {
  let first = true
  let second: () => void = () => {}
  const secondRan = new Promise<void>(resolve => { second = resolve })
  const store = ruledStore(inner)
  const cas = store.compareAndSet.bind(store)
  store.compareAndSet = async (key, expected, value, ttlMs) => {
    if (!key.startsWith(prefix)) return await cas(key, expected, value, ttlMs)
    if (first) {
      first = false
      await secondRan
      throw new Error('injected: this claim never reached the store')
    }
    const written = await cas(key, expected, value, ttlMs)
    second()
    return written
  }
  return store
}

t.test('reset: a claim that failed never revives a code another request claimed', async (t) => {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const mailer = new CapturingMailer()
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    store: lostClaimStore(memory, 'reset:'),
    clock,
    mailer,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, resetPassword: { enabled: true } }
  })
  t.teardown(async () => { await app.close(); await memory.close() })
  await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  for (let i = 0; i < 50 && mailer.messages.length === 0; i++) await new Promise(resolve => setImmediate(resolve))
  const code = codeIn((mailer.messages[0] as MailMessage).text)
  const put = async (password: string) => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: password } })
  const [a, b] = await Promise.all([put('first new password'), put('second new password')])
  t.same([a.statusCode, errorCode(a)], [503, 201], 'the lost claim answers 503')
  t.equal(b.statusCode, 200, 'the other request changed the password')
  t.equal(errorCode(await put('third new password')), 62, 'the code is spent: it was not given back over the other claim')
  t.equal((await post(app, '/auth', { email: ALICE.email, password: 'second new password' })).statusCode, 200)
})

t.test('2FA: a claim that failed never revives a challenge another request claimed', async (t) => {
  const memory = new MemoryStore()
  const { submit, interim, secret, clock } = await buildTwoFactorApp({ plugin: { store: lostClaimStore(memory, '2fa:challenge:') } })
  t.teardown(async () => { await memory.close() })
  const token = await interim()
  const code = await totpAt(secret, clock.now)
  const [a, b] = await Promise.all([submit({ JWT: token, code }), submit({ JWT: token, code })])
  t.same([a.statusCode, errorCode(a)], [503, 201])
  t.equal(b.statusCode, 200)
  clock.advance(30_000)
  const again = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.same([again.statusCode, errorCode(again)], [401, 107], 'the interim token is spent: one challenge, one session')
})

t.test('2FA: checks that did not run (the host failed) use up no attempt of the challenge', async (t) => {
  const { submit, interim, secret, clock, port } = await buildTwoFactorApp({ settings: { twoFactor: { attemptsPerChallenge: 3 } } })
  const token = await interim()
  const getTotpSecret = port.getTotpSecret.bind(port)
  port.getTotpSecret = async () => { throw new Error('two-factor database down') }
  for (let i = 0; i < 5; i++) {
    const failed = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
    t.equal(failed.statusCode, 503, `failure ${i + 1}: 503`)
  }
  port.getTotpSecret = getTotpSecret
  const res = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(res.statusCode, 200, 'the challenge is still open after more failures than it has attempts')
})

t.test('login: a correct password stands when only the success bookkeeping fails', async (t) => {
  const memory = new MemoryStore()
  const store = ruledStore(memory)
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, store, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  t.teardown(async () => { await app.close(); await memory.close() })
  t.equal((await post(app, '/auth', { email: ALICE.email, password: 'wrong' })).statusCode, 401)
  store.rule = (method, key) => (method === 'increment' || method === 'set') && (key.startsWith('released:') || key.startsWith('forgiven:'))
  const res = await post(app, '/auth', { email: ALICE.email, password: ALICE.password })
  t.equal(res.statusCode, 200, res.body)
  t.type(res.json().data.jwt, 'string')
})

/** An app with sign-in by email on a memory store behind `ruledStore`, and the mailer's last code for an address. */
async function emailSignInApp (t: Test, settings: Record<string, unknown> = {}) {
  const clock = testClock()
  const memory = new MemoryStore({ clock })
  const store = ruledStore(memory)
  const users = new MemoryUserAdapter()
  const mailer = new CapturingMailer()
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    store,
    clock,
    mailer,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true }, emailSignIn: { enabled: true }, ...settings }
  })
  t.teardown(async () => { await app.close(); await memory.close() })
  const requestCode = async (email: string): Promise<string> => {
    const sent = mailer.messages.length
    t.equal((await post(app, '/auth/email', { email })).statusCode, 200)
    for (let i = 0; i < 50 && mailer.messages.length === sent; i++) await new Promise(resolve => setImmediate(resolve))
    return mailCode(mailer.messages.at(-1) as MailMessage)
  }
  const verify = async (email: string, code: string) => await post(app, '/auth/email/verify', { email, code })
  return { app, store, users, clock, requestCode, verify }
}

t.test('email sign-in: a code write that fails leaves the older code with the tries it used', async (t) => {
  const { app, store, users, requestCode, verify } = await emailSignInApp(t, { limits: { loginPerAccount: { max: 100 } } })
  await users.addUser({ ...ALICE })
  const older = await requestCode(ALICE.email)
  const wrong = older === '000000' ? '111111' : '000000'
  // the code's five tries (emailSignIn.code.maxTries), all wrong
  for (let i = 0; i < 5; i++) t.equal(errorCode(await verify(ALICE.email, wrong)), 246)
  store.rule = (method, key) => method === 'set' && key.startsWith('email-signin:')
  const failed = await post(app, '/auth/email', { email: ALICE.email })
  t.same([failed.statusCode, errorCode(failed)], [503, 201], 'the new code was not written')
  store.rule = null
  const res = await verify(ALICE.email, older)
  t.same([res.statusCode, errorCode(res)], [401, 246], 'the older code has no try left: the failed request gave it none')
})

t.test('email sign-in: the retry after a failure past the proof of an unverified address starts a session that validates', async (t) => {
  const { app, users, clock, requestCode, verify } = await emailSignInApp(t, { sessions: { clockSkew: '2s' } })
  const user = await users.addUser({ ...ALICE, emailVerified: false })
  const code = await requestCode(ALICE.email)
  // the address is proven (the sessions ended, the password retired, the user marked verified); the re-read then fails
  const findById = users.findById.bind(users)
  users.findById = async () => { throw new Error('injected: the user database is down') }
  const failed = await verify(ALICE.email, code)
  users.findById = findById
  t.same([failed.statusCode, errorCode(failed)], [503, 201])
  t.equal(user.emailVerified, true, 'the failed request proved the address')
  // a client's retry, within the clock skew
  clock.advance(500)
  const retry = await verify(ALICE.email, code)
  t.equal(retry.statusCode, 200, 'the same code signs in (it was given back)')
  const validated = await post(app, '/auth/validate', { JWT: retry.json().data.jwt })
  t.same([validated.statusCode, errorCode(validated)], [200, undefined], 'and its session validates')
})
