// completePasswordReset called as a flow: a context built as the plugin builds it, a recording mailer, no Fastify.
import t from 'tap'
import type { PasswordPolicy, PublicUser } from '../../lib/adapters/users.js'
import type { SettingsInput } from '../../lib/index.js'
import type { MailMessage } from '../../lib/mail/types.js'
import { parseRecord } from '../../lib/reset-password/codes.js'
import { completePasswordReset, type ResetCompleteInput } from '../../lib/reset-password/complete.js'
import { requestPasswordReset } from '../../lib/reset-password/request.js'
import type { JwtLoginEventMap, JwtLoginEventName } from '../../lib/services/events.js'
import { authenticateToken } from '../../lib/sessions/authenticate.js'
import { refreshSession } from '../../lib/sessions/refresh.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { isClaimed } from '../../lib/store/claim.js'
import type { MemoryUser } from '../../lib/testing.js'
import { ALICE, codeIn } from '../helpers/fixtures.js'
import { flowKit, type FlowKit } from '../helpers/flows.js'

const CHANGED = { message: 'User Password has been changed.' }

// as in helpers/reset.ts, which loads Fastify with the app it builds
const NEW_PASSWORD = 'a brand new passphrase'

interface ResetKit extends FlowKit {
  /** Asks for a code for alice and answers it once it is mailed. */
  requestCode: () => Promise<string>
  /** PUT with alice's email, `code` and `newPassword` (the new password by default). */
  complete: (code: string | undefined, newPassword?: string, ip?: string) => Promise<{ message: string }>
  /** A session of alice's, started now: its access and refresh tokens. */
  signIn: () => Promise<{ jwt: string, refresh_token?: string }>
  /** The payloads of one audit event, from now on. */
  collect: <E extends JwtLoginEventName>(event: E) => Array<JwtLoginEventMap[E]>
  /** Alice's code record in the store, as it is written. */
  record: () => Promise<string | null>
}

/** Reset on (refresh too), a recording mailer, the host's policy if given. */
async function resetKit (passwordPolicy?: PasswordPolicy, settings: Partial<SettingsInput> = {}): Promise<ResetKit> {
  const sent: MailMessage[] = []
  const kit = await flowKit(
    { resetPassword: { enabled: true }, refresh: { enabled: true }, ...settings },
    { mailer: { send: async (message) => { sent.push(message) } }, passwordPolicy }
  )
  const { ctx, call, users, store, aliceId } = kit
  return {
    ...kit,
    requestCode: async () => {
      const mailed = new Promise(resolve => ctx.events.once('reset.code_sent', resolve))
      await requestPasswordReset(ctx, call(), { email: ALICE.email })
      await mailed
      return codeIn((sent.at(-1) as MailMessage).text)
    },
    complete: async (code, newPassword = NEW_PASSWORD, ip) => await completePasswordReset(ctx, call(ip), { email: ALICE.email, code, newPassword }),
    signIn: async () => await completeSignIn(ctx, call(), await users.findById(aliceId)) as { jwt: string, refresh_token?: string },
    collect: (event) => {
      const seen: Array<JwtLoginEventMap[typeof event]> = []
      ctx.events.on(event, (payload) => { seen.push(payload) })
      return seen
    },
    record: async () => await store.get(`reset:${aliceId}`)
  }
}

/** Whether alice's password is `password` now. */
async function hasPassword (kit: FlowKit, password: string): Promise<boolean> {
  return await kit.users.verifyPassword(await kit.users.findById(kit.aliceId) as MemoryUser, password)
}

t.test('the fields, then the length policy, before the code is looked at: 59, 60, 61, 95, 204', async (t) => {
  const kit = await resetKit()
  const { ctx, call } = kit
  const failed = kit.collect('reset.failed')
  const put = async (input: Partial<ResetCompleteInput>): Promise<unknown> =>
    await completePasswordReset(ctx, call(), { email: ALICE.email, code: 'ABCDEFGH', newPassword: NEW_PASSWORD, ...input })
  await t.rejects(put({ email: undefined }), { code: 'ERR_JWT_LOGIN_RESET_EMAIL_MISSING', errorCode: 59 })
  await t.rejects(put({ code: undefined }), { code: 'ERR_JWT_LOGIN_RESET_CODE_MISSING', errorCode: 60 })
  await t.rejects(put({ newPassword: undefined }), { code: 'ERR_JWT_LOGIN_RESET_PASSWORD_MISSING', errorCode: 61 })
  await t.rejects(put({ email: 'alice@example' }), { code: 'ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED', errorCode: 95 })
  t.same(failed, [], 'no audit event for a malformed request')

  const code = await kit.requestCode()
  const { id } = parseRecord(await kit.record()) as { id: string }
  await t.rejects(kit.complete(code, 'short'), { code: 'ERR_JWT_LOGIN_PASSWORD_POLICY', errorCode: 204, statusCode: 400 })
  await t.rejects(kit.complete(code, 'x'.repeat(1025)), { code: 'ERR_JWT_LOGIN_PASSWORD_POLICY' }, 'too long')
  t.same(failed, Array.from({ length: 2 }, () => ({ step: 'complete', userId: null, ip: '203.0.113.7', reason: 'password_policy', errorCode: 204 })), 'told without the account')
  t.equal(await kit.store.get(`reset-tries:${id}`), null, 'the code was not tried')
  t.same(await kit.complete(code), CHANGED)
  t.ok(await hasPassword(kit, NEW_PASSWORD))
})

t.test('the right code changes the password and ends every session from before; the code is spent', async (t) => {
  const kit = await resetKit()
  const { ctx, call, clock, aliceId } = kit
  const completed = kit.collect('reset.completed')
  const before = await kit.signIn()
  clock.advance(1000)
  const code = await kit.requestCode()

  t.same(await kit.complete(code, NEW_PASSWORD, '198.51.100.2'), CHANGED)
  t.same(completed, [{ userId: aliceId, ip: '198.51.100.2' }])
  t.ok(await hasPassword(kit, NEW_PASSWORD), 'the new password works')
  t.notOk(await hasPassword(kit, ALICE.password), 'the old one does not')
  await t.rejects(authenticateToken(ctx, call(), before.jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', errorCode: 55 }, 'an access token from before is revoked')
  await t.rejects(refreshSession(ctx, call(), { refreshToken: before.refresh_token, jwt: undefined }), { code: 'ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID', errorCode: 51 }, 'and its refresh token')
  t.ok(isClaimed(await kit.record() as string), 'the code is spent in the store')
  await t.rejects(kit.complete(code, 'another new passphrase'), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID', errorCode: 62 }, 'and works once')

  // the provisional cutoff was replaced by the moment of the change: a sign-in right after it lives
  const after = await kit.signIn()
  t.equal((await authenticateToken(ctx, call(), after.jwt)).publicUser.ID, aliceId)
})

t.test('every bad code answers 62 alike; a good one is taken in lower case, with spaces', async (t) => {
  const kit = await resetKit()
  const { ctx, call, aliceId } = kit
  const failed = kit.collect('reset.failed')
  const code = await kit.requestCode()
  await t.rejects(kit.complete('WRONGONE'), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID', errorCode: 62, statusCode: 400 })
  await t.rejects(completePasswordReset(ctx, call(), { email: 'nobody@example.com', code, newPassword: NEW_PASSWORD }), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' }, 'alice\'s code for an unknown email')
  t.same(failed, [
    { step: 'complete', userId: aliceId, ip: '203.0.113.7', reason: 'code_invalid', errorCode: 62 },
    { step: 'complete', userId: null, ip: '203.0.113.7', reason: 'code_invalid', errorCode: 62 }
  ])
  t.same(await kit.complete(`  ${code.toLowerCase()} `), CHANGED)
})

t.test('a code dies after maxTries wrong tries, and with its lifetime', async (t) => {
  const kit = await resetKit(undefined, { resetPassword: { enabled: true, code: { maxTries: 3 } } })
  const tried = await kit.requestCode()
  for (const guess of ['WRONG001', 'WRONG002', 'WRONG003']) await t.rejects(kit.complete(guess), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' })
  await t.rejects(kit.complete(tried), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' }, 'the right code after three wrong tries')

  const expired = await kit.requestCode()
  kit.clock.advance(15 * 60_000)
  await t.rejects(kit.complete(expired), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' }, 'at its expiry')
  t.ok(await hasPassword(kit, ALICE.password), 'the password never changed')
})

t.test('the host\'s policy is asked once the code is right; its refusal (204) and a failing setPassword (205) leave the code usable', async (t) => {
  const seen: PublicUser[] = []
  const kit = await resetKit(async (password, user) => {
    seen.push(user)
    return !password.includes(user.user_login)
  })
  const { ctx, call, users, aliceId } = kit
  const failed = kit.collect('reset.failed')
  const code = await kit.requestCode()
  await t.rejects(kit.complete('WRONGONE', 'alice forever and ever'), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' })
  t.equal(seen.length, 0, 'not asked before the code is right')
  await t.rejects(kit.complete(code, 'alice forever and ever'), { code: 'ERR_JWT_LOGIN_PASSWORD_POLICY', errorCode: 204 })
  t.equal(seen[0]?.ID, aliceId, 'asked with alice')
  t.same(failed.at(-1), { step: 'complete', userId: aliceId, ip: '203.0.113.7', reason: 'password_policy', errorCode: 204 })

  const before = await kit.signIn()
  kit.clock.advance(1000)
  const setPassword = users.setPassword.bind(users)
  users.setPassword = async () => { throw new Error('the user database is down') }
  await t.rejects(kit.complete(code), { code: 'ERR_JWT_LOGIN_RESET_INCOMPLETE', errorCode: 205, statusCode: 503 })
  t.ok(await hasPassword(kit, ALICE.password), 'the password did not change')
  t.notOk(isClaimed(await kit.record() as string), 'the code was given back')
  await t.rejects(authenticateToken(ctx, call(), before.jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'failing safe: a session from before ended')
  const during = await kit.signIn()
  t.equal((await authenticateToken(ctx, call(), during.jwt)).publicUser.ID, aliceId, 'a sign-in after the failure is not held by the provisional cutoff')

  users.setPassword = setPassword
  t.same(await kit.complete(code), CHANGED, 'the code works again')
})

t.test('a store that fails in the change: a code that cannot be given back is logged; a final cutoff that fails keeps the provisional one for a minute', async (t) => {
  const kit = await resetKit()
  const { ctx, call, clock, store, log, aliceId } = kit
  const compareAndSet = store.compareAndSet.bind(store)
  /** The store's compare-and-set throws for the writes `fails` picks. */
  const failing = (fails: (key: string) => boolean): void => {
    store.compareAndSet = async (key, expected, value, ttlMs) => {
      if (fails(key)) throw new Error('the store is down')
      return await compareAndSet(key, expected, value, ttlMs)
    }
  }

  // the provisional cutoff fails, and so does the code's give-back (its record's second write)
  const lost = await kit.requestCode()
  let codeWrites = 0
  failing((key) => key.startsWith('revoked:user:') || (key.startsWith('reset:') && ++codeWrites === 2))
  await t.rejects(kit.complete(lost), { code: 'ERR_JWT_LOGIN_RESET_INCOMPLETE', errorCode: 205 })
  t.match(log, [{ level: 'error', message: 'jwt-login: a reset code could not be given back after a failure; the user needs a new one', fields: { userId: aliceId } }])
  store.compareAndSet = compareAndSet
  await t.rejects(kit.complete(lost), { code: 'ERR_JWT_LOGIN_RESET_CODE_INVALID' }, 'the code is lost: the user asks for a new one')
  t.ok(await hasPassword(kit, ALICE.password), 'the password did not change')

  // the password changes, then the write of the moment of the change fails
  const code = await kit.requestCode()
  let cutoffWrites = 0
  failing((key) => key.startsWith('revoked:user:') && ++cutoffWrites === 2)
  t.same(await kit.complete(code), CHANGED, 'the change stands')
  store.compareAndSet = compareAndSet
  t.match(log[1], { level: 'warn', message: 'jwt-login: the password changed, but its session cutoff stays a minute ahead; new sign-ins of this user are refused until then' })
  await t.rejects(authenticateToken(ctx, call(), (await kit.signIn()).jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'a sign-in within the minute is refused (fails closed)')
  clock.advance(60_001)
  t.equal((await authenticateToken(ctx, call(), (await kit.signIn()).jwt)).publicUser.ID, aliceId, 'after it, sign-ins work')
})

t.test('20 concurrent PUTs with the same right code: exactly one password change, the others 62', async (t) => {
  const kit = await resetKit()
  const { ctx, call, users, clock, aliceId } = kit
  const completed = kit.collect('reset.completed')
  const changes: string[] = []
  const setPassword = users.setPassword.bind(users)
  users.setPassword = async (user, password) => { changes.push(password); await setPassword(user, password) }
  const before = await kit.signIn()
  clock.advance(1000)
  const code = await kit.requestCode()

  const settled = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) => await kit.complete(code, `${NEW_PASSWORD} ${i}`)))
  t.equal(settled.filter(s => s.status === 'fulfilled').length, 1, 'one success')
  t.same(settled.flatMap(s => s.status === 'rejected' ? [(s.reason as { code: string }).code] : []), Array.from({ length: 19 }, () => 'ERR_JWT_LOGIN_RESET_CODE_INVALID'), 'every other: 62')
  t.equal(changes.length, 1, 'the host set one password')
  t.ok(await hasPassword(kit, changes[0] as string), 'the winner\'s')
  t.same(completed, [{ userId: aliceId, ip: '203.0.113.7' }])
  t.ok(isClaimed(await kit.record() as string), 'the code is spent')
  await t.rejects(authenticateToken(ctx, call(), before.jwt), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'the session from before ended')
})
