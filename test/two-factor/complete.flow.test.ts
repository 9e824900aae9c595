// completeTwoFactor and the challenge of the two-factor gate, called as flows: a context built as the plugin builds it, no Fastify.
import { PASSWORD } from '../../lib/sessions/sign-in.js'
import t from 'tap'
import type { SignInResult } from '../../lib/adapters/second-factor.js'
import type { TwoFactorMethod } from '../../lib/adapters/two-factor.js'
import type { SettingsInput } from '../../lib/index.js'
import { passwordLogin } from '../../lib/login/flow.js'
import type { MailMessage } from '../../lib/mail/types.js'
import type { JwtLoginEventMap, JwtLoginEventName } from '../../lib/services/events.js'
import { authenticateToken } from '../../lib/sessions/authenticate.js'
import { isClaimed } from '../../lib/store/claim.js'
import { MemoryTwoFactorStore, type MemoryUser } from '../../lib/testing.js'
import { completeTwoFactor } from '../../lib/two-factor/flow.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { ALICE, totpAt, wrongCode } from '../helpers/fixtures.js'
import { flowKit, type FlowKit } from '../helpers/flows.js'

type TwoFactorInput = NonNullable<SettingsInput['twoFactor']>

interface TwoFactorKit extends FlowKit {
  port: MemoryTwoFactorStore
  secret: string
  /** The mails the two-factor mailer was given. */
  sent: MailMessage[]
  /** A challenge from the gate, as a password login meets it: its interim token and challenge id. */
  challenge: () => Promise<{ token: string, challengeId: string }>
  /** The challenge's record in the store. */
  challengeRecord: (challengeId: string) => Promise<string | null>
  /** The payloads of one audit event, from now on. */
  collect: <E extends JwtLoginEventName>(event: E) => Array<JwtLoginEventMap[E]>
}

/** A flow context with the two-factor module (a memory port and a recording mailer); alice has `method` on. */
async function twoFactorKit (method: TwoFactorMethod = 'totp', twoFactor: TwoFactorInput = {}, settings: Partial<SettingsInput> = {}): Promise<TwoFactorKit> {
  const port = new MemoryTwoFactorStore()
  const sent: MailMessage[] = []
  const kit = await flowKit({ twoFactor: { enabled: true, ...twoFactor }, ...settings }, {
    twoFactor: { port, mailer: { send: async (message) => { sent.push(message) } } }
  })
  const { secret } = createTotpSecret('jwt-login test', ALICE.email)
  await port.setTotpSecret(kit.aliceId, secret)
  port.enable(kit.aliceId, method)
  const alice = await kit.users.findById(kit.aliceId) as MemoryUser
  return {
    ...kit,
    port,
    secret,
    sent,
    challenge: async () => {
      const result = await kit.ctx.secondFactor?.(alice, kit.users.toPublicUser(alice), kit.call(), PASSWORD) as SignInResult
      if (!('two_factor_required' in result)) throw new Error('no challenge')
      return { token: result.jwt, challengeId: kit.ctx.tokens.verify(kit.settings, result.jwt, 'interim').payload.sid }
    },
    challengeRecord: async (challengeId) => await kit.store.get(`2fa:challenge:${kit.aliceId}:${challengeId}`),
    collect: (event) => {
      const seen: Array<JwtLoginEventMap[typeof event]> = []
      kit.ctx.events.on(event, (payload) => { seen.push(payload) })
      return seen
    }
  }
}

/** The settled outcomes of concurrent calls: the answers, and the codes of the refusals. */
async function race<T> (calls: Array<Promise<T>>): Promise<{ answers: T[], refusals: string[] }> {
  const settled = await Promise.allSettled(calls)
  return {
    answers: settled.flatMap(s => s.status === 'fulfilled' ? [s.value] : []),
    refusals: settled.flatMap(s => s.status === 'rejected' ? [(s.reason as { code: string }).code] : [])
  }
}

t.test('without the two-factor module the flow answers 105, and a password login needs no second step', async (t) => {
  const { ctx, call } = await flowKit()
  t.equal(ctx.twoFactor, null)
  await t.rejects(completeTwoFactor(ctx, call(), { token: 'any', code: '123456' }), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE', errorCode: 105, statusCode: 403 })
  const result = await passwordLogin(ctx, call(), { email: ALICE.email, password: ALICE.password, username: undefined, login: undefined, passwordHash: undefined })
  t.notOk('two_factor_required' in result, 'a final token at once')
})

t.test('a password login of a TOTP user gets a challenge; the right code ends it with a session, once', async (t) => {
  const kit = await twoFactorKit('totp', {}, { refresh: { enabled: true } })
  const { ctx, call, clock, secret, aliceId } = kit
  const issued = kit.collect('two_factor.challenge_issued')
  const accepted = kit.collect('two_factor.code_accepted')
  const rejected = kit.collect('two_factor.code_rejected')

  const login = await passwordLogin(ctx, call('198.51.100.4'), { email: ALICE.email, password: ALICE.password, username: undefined, login: undefined, passwordHash: undefined })
  t.match(login, { two_factor_required: true, jwt: String })
  const interim = ctx.tokens.verify(kit.settings, login.jwt, 'interim').payload
  t.same(JSON.parse(await kit.challengeRecord(interim.sid) as string), { method: 'totp' }, 'the challenge is in the store, bound to the interim token')
  t.same(issued, [{ userId: aliceId, method: 'totp', ip: '198.51.100.4' }])

  await t.rejects(completeTwoFactor(ctx, call(), { token: login.jwt, code: undefined }), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING', statusCode: 400 })
  await t.rejects(completeTwoFactor(ctx, call(), { token: login.jwt, code: await wrongCode(secret, clock.now) }), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG', errorCode: 109, statusCode: 401 })
  t.same(rejected, [{ userId: aliceId, ip: '203.0.113.7', attempt: 1 }])

  const tokens = await completeTwoFactor(ctx, call(), { token: login.jwt, code: await totpAt(secret, clock.now) })
  t.type(tokens.refresh_token, 'string', 'a refresh token too, with refresh on')
  const { publicUser, verified } = await authenticateToken(ctx, call(), tokens.jwt)
  t.equal(publicUser.ID, aliceId, 'the final token is alice\'s')
  t.not(verified.payload.sid, interim.sid, 'a session of its own, not the challenge')
  t.same(accepted, [{ userId: aliceId, method: 'totp', ip: '203.0.113.7' }])
  t.ok(isClaimed(await kit.challengeRecord(interim.sid) as string), 'the challenge is spent in the store')

  await t.rejects(completeTwoFactor(ctx, call(), { token: login.jwt, code: await totpAt(secret, clock.now) }), { code: 'ERR_JWT_LOGIN_CHALLENGE_CLOSED', errorCode: 107 })
})

t.test('an interim token that is not one is 106; a cutoff after the challenge ends it (55)', async (t) => {
  const kit = await twoFactorKit()
  const { ctx, call, clock, secret, aliceId } = kit
  const code = await totpAt(secret, clock.now)
  await t.rejects(completeTwoFactor(ctx, call(), { token: 'not.a.token', code }), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', errorCode: 106 })
  const access = ctx.tokens.sign(kit.settings, kit.users.toPublicUser(await kit.users.findById(aliceId) as MemoryUser), 'access', { sessionId: ctx.tokens.newSessionId(clock.now) }).token
  await t.rejects(completeTwoFactor(ctx, call(), { token: access, code }), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' }, 'a final token is no interim token')

  // the challenge id is a session id: a password reset between the two steps ends the sign-in too
  const { token } = await kit.challenge()
  clock.advance(1000)
  await ctx.tokens.revokeUserTokens(kit.settings, aliceId)
  await t.rejects(completeTwoFactor(ctx, call(), { token, code: await totpAt(secret, clock.now) }), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55 })
})

t.test('the attempt that reaches attemptsPerChallenge closes the challenge; failures past perAccount lock the account', async (t) => {
  const kit = await twoFactorKit('totp', { attemptsPerChallenge: 3, perAccount: { max: 4 } })
  const { ctx, call, clock, secret, aliceId } = kit
  const closed = kit.collect('two_factor.challenge_closed')
  const locked = kit.collect('two_factor.account_locked')
  const wrong = await wrongCode(secret, clock.now)

  const first = await kit.challenge()
  for (const attempt of [1, 2]) {
    await t.rejects(completeTwoFactor(ctx, call(), { token: first.token, code: wrong }), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG' }, `attempt ${attempt}`)
  }
  await t.rejects(completeTwoFactor(ctx, call(), { token: first.token, code: wrong }), { code: 'ERR_JWT_LOGIN_CHALLENGE_CLOSED' }, 'the third closes it')
  t.same(closed, [{ userId: aliceId, ip: '203.0.113.7' }])
  t.equal(await kit.challengeRecord(first.challengeId), null, 'and deletes it')
  await t.rejects(completeTwoFactor(ctx, call(), { token: first.token, code: await totpAt(secret, clock.now) }), { code: 'ERR_JWT_LOGIN_CHALLENGE_CLOSED' }, 'even the right code')
  t.same(locked, [], 'three failures: the account is not at its limit')

  const second = await kit.challenge()
  await t.rejects(completeTwoFactor(ctx, call(), { token: second.token, code: wrong }), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG' })
  t.same(locked, [{ userId: aliceId, ip: '203.0.113.7' }], 'the fourth failure reaches perAccount')
  const refused = completeTwoFactor(ctx, call(), { token: second.token, code: await totpAt(secret, clock.now) })
  await t.rejects(refused, { code: 'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', errorCode: 108, statusCode: 429 }, 'past it, whatever the code')
  t.ok(((await refused.catch((error: { retryAfter: number }) => error)) as { retryAfter: number }).retryAfter > 0, 'with Retry-After')
  t.same(JSON.parse(await kit.challengeRecord(second.challengeId) as string), { method: 'totp' }, 'the locked attempt left the challenge as it was')
})

t.test('20 concurrent right TOTP codes on one challenge: exactly one final token, the others refused', async (t) => {
  // the account's limit is raised so that only the challenge decides: at the default
  // of 10, attempts past it are refused (108) before the code is looked at
  const kit = await twoFactorKit('totp', { attemptsPerChallenge: 10, perAccount: { max: 100 } })
  const { ctx, call, clock, secret, aliceId } = kit
  const accepted = kit.collect('two_factor.code_accepted')
  const { token, challengeId } = await kit.challenge()
  const code = await totpAt(secret, clock.now)

  const { answers, refusals } = await race(Array.from({ length: 20 }, async () => await completeTwoFactor(ctx, call(), { token, code })))
  t.equal(answers.length, 1, 'one final token')
  // a loser that reads the challenge after the winner claimed it gets 107; one that checks the code
  // after the winner spent the TOTP step, 109 (on the memory store every loser is the first kind)
  t.equal(refusals.length, 19)
  t.ok(refusals.every(code => code === 'ERR_JWT_LOGIN_CHALLENGE_CLOSED' || code === 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG'), 'every other call: 107 or 109')
  t.equal(accepted.length, 1, 'one code_accepted')
  t.equal((await authenticateToken(ctx, call(), (answers[0] as { jwt: string }).jwt)).publicUser.ID, aliceId, 'the winner\'s token works')
  t.ok(isClaimed(await kit.challengeRecord(challengeId) as string), 'the challenge is spent')
  const step = Math.floor(clock.now / 30_000)
  t.equal(await kit.store.get(`2fa:totp-used:${aliceId}:${step}`), challengeId, 'the TOTP step is spent, by this challenge')
})

t.test('one backup code raced over 10 challenges is spent once; the losers\' challenges stay open', async (t) => {
  const kit = await twoFactorKit('totp', { perAccount: { max: 100 } })
  const { ctx, call, clock, secret, aliceId, port } = kit
  const accepted = kit.collect('two_factor.code_accepted')
  const [backup] = await (ctx.twoFactor?.enrollment.regenerateBackupCodes(aliceId) as Promise<string[]>)
  const challenges = await Promise.all(Array.from({ length: 10 }, async () => await kit.challenge()))

  const calls = challenges.map(async ({ token }) => await completeTwoFactor(ctx, call(), { token, code: backup }))
  const { answers, refusals } = await race(calls)
  t.equal(answers.length, 1, 'one sign-in')
  t.same(refusals, Array.from({ length: 9 }, () => 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG'), 'the spent code is wrong for every other challenge')
  t.same(accepted, [{ userId: aliceId, method: 'backup_codes', ip: '203.0.113.7' }])
  t.equal(port.backupCodesLeft(aliceId), 9, 'the host spent the code once')

  const open: string[] = []
  for (const { challengeId } of challenges) {
    const raw = await kit.challengeRecord(challengeId) as string
    if (!isClaimed(raw)) open.push(challengeId)
  }
  t.equal(open.length, 9, 'a loser gives its challenge back')
  const loser = challenges.find(c => c.challengeId === open[0]) as { token: string }
  t.type((await completeTwoFactor(ctx, call(), { token: loser.token, code: await totpAt(secret, clock.now) })).jwt, 'string', 'and it still takes the TOTP code')
})

t.test('a store that fails at the claim: the challenge stays usable and the prepared session is ended and not listed; an index that fails before the spend spends nothing', async (t) => {
  const kit = await twoFactorKit('totp', {}, { refresh: { enabled: true } })
  const { ctx, call, clock, secret, store, log, aliceId } = kit
  const { token, challengeId } = await kit.challenge()
  const code = await totpAt(secret, clock.now)
  const compareAndSet = store.compareAndSet.bind(store)
  const failing = (prefix: string) => async (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> => {
    if (key.startsWith(prefix)) throw new Error('the store is down')
    return await compareAndSet(key, expected, value, ttlMs)
  }

  // the claim and its give-back both fail: the error goes on, and the loss is logged
  store.compareAndSet = failing('2fa:challenge:')
  await t.rejects(completeTwoFactor(ctx, call(), { token, code }), { message: 'the store is down' })
  t.match(log, [{ level: 'warn', message: 'jwt-login: a two-factor challenge could not be given back; it ends with its interim token', fields: { userId: aliceId } }])
  t.same(await ctx.sessions.list(aliceId), [], 'the prepared session was ended, and is not listed')
  t.same(JSON.parse(await kit.challengeRecord(challengeId) as string), { method: 'totp' }, 'the challenge is as it was')

  // the user's session index fails before anything is spent: 503, and the code still works
  store.compareAndSet = failing('sessions:user:')
  await t.rejects(completeTwoFactor(ctx, call(), { token, code }), { message: 'the store is down' })
  t.same(JSON.parse(await kit.challengeRecord(challengeId) as string), { method: 'totp' }, 'the challenge was not claimed')
  store.compareAndSet = compareAndSet
  const tokens = await completeTwoFactor(ctx, call(), { token, code })
  t.equal((await authenticateToken(ctx, call(), tokens.jwt)).publicUser.ID, aliceId, 'the retry with the same code signs in')
  t.same((await ctx.sessions.list(aliceId)).map(session => session.origin), [{ method: 'password', secondFactor: 'totp' }], 'listed once, with its factors')
})

t.test('an email user: the code is mailed after the answer, and it signs in once', async (t) => {
  const kit = await twoFactorKit('email', { attemptsPerChallenge: 10, perAccount: { max: 100 } })
  const { ctx, call, aliceId } = kit
  const mailed = new Promise(resolve => ctx.events.once('two_factor.code_sent', resolve))
  const { token, challengeId } = await kit.challenge()
  t.equal(kit.sent.length, 0, 'no mail before the answer')
  t.same(await mailed, { userId: aliceId })
  const mail = kit.sent[0] as MailMessage
  t.equal(mail.to, ALICE.email)
  const code = (/\b(\d{6})\b/.exec(mail.text) as RegExpExecArray)[1]
  t.notMatch(await kit.store.get(`2fa:email:${challengeId}`), code as string, 'only the code\'s hash is stored')

  const { answers, refusals } = await race(Array.from({ length: 5 }, async () => await completeTwoFactor(ctx, call(), { token, code })))
  t.equal(answers.length, 1, 'one sign-in')
  t.equal(refusals.length, 4)
  t.ok(refusals.every(code => code === 'ERR_JWT_LOGIN_CHALLENGE_CLOSED' || code === 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG'), 'the others: the challenge closed (107), or the code already spent (109)')
  t.equal(await kit.store.get(`2fa:email:${challengeId}`), null, 'the spent code is tidied away')
})

t.test('the gate: switched off it refuses a user who needs a second factor (206); an email user without a mailer is 201', async (t) => {
  const off = await twoFactorKit('totp', { enabled: false })
  await t.rejects(off.challenge(), { code: 'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', errorCode: 206, statusCode: 403 })

  const port = new MemoryTwoFactorStore()
  const { ctx, users, aliceId, call } = await flowKit({ twoFactor: { enabled: true } }, { twoFactor: { port } })
  port.enable(aliceId, 'email')
  const alice = await users.findById(aliceId) as MemoryUser
  await t.rejects(ctx.secondFactor?.(alice, users.toPublicUser(alice), call(), PASSWORD) as Promise<unknown>, { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 })
  port.disable(aliceId)
  t.equal(await ctx.secondFactor?.(alice, users.toPublicUser(alice), call(), PASSWORD), null, 'a user with two-factor off gets no challenge')
})
