import t from 'tap'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { errorCode, login, post } from '../helpers/http.js'
import { MailBox } from '../helpers/mail-box.js'

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return ((sorted[3] as number) + (sorted[4] as number)) / 2
}

async function timed (fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

t.test('unknown user and wrong password: same status, same body', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const wrongPassword = await login(app, { email: ALICE.email, password: 'not the password' })
  const unknownEmail = await login(app, { email: 'nobody@example.com', password: 'not the password' })
  const unknownLogin = await login(app, { username: 'nobody', password: 'not the password' })
  const wrongByLogin = await login(app, { login: ALICE.login, password: 'not the password' })
  for (const res of [wrongPassword, unknownEmail, unknownLogin, wrongByLogin]) {
    t.equal(res.statusCode, 401)
    t.equal(errorCode(res), 48)
    t.equal(res.body, wrongPassword.body)
    t.equal(res.headers['content-type'], wrongPassword.headers['content-type'])
    t.equal(res.headers['content-length'], wrongPassword.headers['content-length'])
  }
})

t.test('unknown user and wrong password take comparable time; the unknown path runs argon2', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  // warm up both paths
  await login(app, { email: ALICE.email, password: 'warm-up' })
  await login(app, { email: 'warm@example.com', password: 'warm-up' })
  const known: number[] = []
  const unknown: number[] = []
  const baseline: number[] = []
  for (let i = 0; i < 8; i++) {
    known.push(await timed(async () => await login(app, { email: ALICE.email, password: `wrong-${i}` })))
    unknown.push(await timed(async () => await login(app, { email: `nobody-${i}@example.com`, password: `wrong-${i}` })))
    // fails before any password check: the cost of the request alone
    baseline.push(await timed(async () => await login(app, { email: `nobody-${i}@example.com` })))
  }
  const ratio = median(unknown) / median(known)
  t.ok(ratio > 0.5 && ratio < 2, `median ratio unknown/known = ${ratio.toFixed(2)} (${median(unknown).toFixed(1)} ms / ${median(known).toFixed(1)} ms)`)
  t.ok(median(unknown) > 5, `the unknown-user path spends argon2 time (${median(unknown).toFixed(1)} ms)`)
  t.ok(median(unknown) > 4 * median(baseline), `far above a request that hashes nothing (${median(baseline).toFixed(1)} ms)`)
})

t.test('sign-in by email: a known and an unknown address get the same answer, in comparable time', async (t) => {
  const mail = new MailBox()
  const roomy = { max: 1000, window: '1h' }
  const { app } = await buildApp({ emailSignIn: { enabled: true, limits: { perAddress: roomy, perAccount: roomy, perIp: roomy } } }, { mailer: mail })
  t.teardown(() => app.close())
  const ask = async (email: string) => await post(app, '/auth/email', { email })
  const knownAnswer = await ask(ALICE.email)
  const unknownAnswer = await ask('nobody@example.com')
  for (const res of [knownAnswer, unknownAnswer]) {
    t.equal(res.statusCode, 200)
    t.equal(res.body, knownAnswer.body)
    t.equal(res.headers['content-type'], knownAnswer.headers['content-type'])
    t.equal(res.headers['content-length'], knownAnswer.headers['content-length'])
  }
  t.equal((await mail.next()).to, ALICE.email, 'only the known address gets a mail')
  // about a millisecond each, so more samples than above, and the middle of them
  const middle = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 41; i++) {
    known.push(await timed(async () => await ask(ALICE.email)))
    unknown.push(await timed(async () => await ask(`nobody-${i}@example.com`)))
  }
  const ratio = middle(unknown) / middle(known)
  t.ok(ratio > 0.5 && ratio < 2, `median ratio unknown/known = ${ratio.toFixed(2)} (${middle(unknown).toFixed(2)} ms / ${middle(known).toFixed(2)} ms)`)
})

t.test('per-account lockout: after max failures, 429 / 200 with Retry-After, for known and unknown accounts alike', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 3, window: '15m' } } }, { clock })
  t.teardown(() => app.close())
  const failed: Array<Record<string, unknown>> = []
  app.jwtLogin.events.on('login.failed', (e) => failed.push(e))

  const answers: Record<string, Array<{ status: number, body: string, retryAfter: unknown }>> = {}
  for (const email of [ALICE.email, 'nobody@example.com']) {
    const seen: Array<{ status: number, body: string, retryAfter: unknown }> = []
    for (let i = 0; i < 3; i++) {
      const res = await login(app, { email, password: 'wrong' })
      t.equal(res.statusCode, 401, `failure ${i + 1} for ${email}`)
    }
    // locked now: even the right password (for alice) gets 429
    const locked = await login(app, { email, password: ALICE.password })
    seen.push({ status: locked.statusCode, body: locked.body, retryAfter: locked.headers['retry-after'] })
    t.equal(locked.statusCode, 429)
    t.equal(errorCode(locked), 200)
    t.equal(locked.headers['retry-after'], '900')
    answers[email] = seen
  }
  t.same(answers[ALICE.email], answers['nobody@example.com'], 'a known and an unknown account lock the same way')
  t.equal(failed.filter(f => f.reason === 'rate_limited').length, 2)

  // the account identifier is counted case-insensitively
  const upper = await login(app, { email: ALICE.email.toUpperCase(), password: ALICE.password })
  t.equal(upper.statusCode, 429)

  // the lock is per account, whichever identifier names it: alice's login name is locked too
  const byLogin = await login(app, { username: ALICE.login, password: ALICE.password })
  t.equal(byLogin.statusCode, 429, 'the login name shares the account\'s counter')
  t.equal(byLogin.headers['retry-after'], '900')

  clock.advance(60_000)
  const later = await login(app, { email: ALICE.email, password: ALICE.password })
  t.equal(later.headers['retry-after'], '840', 'Retry-After counts down with the clock')

  clock.advance(15 * 60_000)
  const open = await login(app, { email: ALICE.email, password: ALICE.password })
  t.equal(open.statusCode, 200, 'the lock ends with the window')
})

t.test('per-IP lockout across accounts', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ limits: { loginPerIp: { max: 3, window: '10m' } } }, { clock })
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) {
    const res = await login(app, { email: `user-${i}@example.com`, password: 'wrong' }, '10.0.0.1')
    t.equal(res.statusCode, 401)
  }
  const locked = await login(app, undefined, '10.0.0.1')
  t.equal(locked.statusCode, 429)
  t.equal(errorCode(locked), 200)
  t.equal(locked.headers['retry-after'], '600')

  const otherIp = await login(app, undefined, '10.0.0.2')
  t.equal(otherIp.statusCode, 200, 'another IP is not locked')

  clock.advance(10 * 60_000)
  const open = await login(app, undefined, '10.0.0.1')
  t.equal(open.statusCode, 200)
})

t.test('a successful login resets the account counter', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ limits: { loginPerAccount: { max: 3, window: '15m' } } }, { clock })
  t.teardown(() => app.close())
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 2; i++) {
      const res = await login(app, { email: ALICE.email, password: 'wrong' })
      t.equal(res.statusCode, 401)
    }
    const ok = await login(app)
    t.equal(ok.statusCode, 200, `round ${round}: two failures and a success keep the account open`)
  }
})
