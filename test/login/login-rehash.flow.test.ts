// The adapter's rehashPassword at a password sign-in: awaited before the session starts, never failing the sign-in.
import t from 'tap'
import type { SignInResult } from '../../lib/adapters/second-factor.js'
import type { UserAdapter } from '../../lib/adapters/users.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { buildContext } from '../../lib/http/context.js'
import { Messages } from '../../lib/i18n/messages.js'
import { passwordLogin, type LoginInput } from '../../lib/login/flow.js'
import { MemoryStore } from '../../lib/store/memory.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import { ALICE, HS_SECRET, testClock } from '../helpers/fixtures.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

/** A login as the route reads it: the fields given, the others absent. */
function input (fields: Partial<LoginInput>): LoginInput {
  return { email: undefined, username: undefined, login: undefined, password: undefined, passwordHash: undefined, ...fields }
}

const RIGHT = input({ email: ALICE.email, password: ALICE.password })
const WRONG = { code: 'ERR_JWT_LOGIN_WRONG_CREDENTIALS', errorCode: 48, statusCode: 401 }

/** The memory adapter with a `rehashPassword` of the test's (the guard finds it at the time of the call). */
type Rehash = (user: MemoryUser, password: string) => Promise<boolean>
function giveRehash (kit: FlowKit, rehash: Rehash | undefined): void {
  (kit.users as unknown as { rehashPassword?: Rehash }).rehashPassword = rehash
}

/** How many sessions the user's index holds. */
async function indexed (kit: FlowKit): Promise<number> {
  const raw = await kit.store.get(sessionIndexKey(kit.aliceId))
  return raw === null ? 0 : (JSON.parse(raw) as unknown[]).length
}

/** The final token of a sign-in: a challenge fails the test. */
function finalJwt (result: SignInResult): string {
  if ('two_factor_required' in result) throw new Error('a two-factor challenge, not a session')
  return result.jwt
}

t.test('a right password: rehashPassword gets the user and the password, and the session starts after it', async (t) => {
  const kit = await flowKit()
  const calls: Array<{ userId: number, password: string, sessions: number }> = []
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  let entered = (): void => {}
  const called = new Promise<void>((resolve) => { entered = resolve })
  giveRehash(kit, async (user, password) => {
    calls.push({ userId: kit.users.toPublicUser(user).ID, password, sessions: await indexed(kit) })
    entered()
    await held
    // an upgrade stores a new hash: the session that starts next sees the user as it is now
    await kit.users.setPassword(user, password)
    return true
  })
  const started = collect(kit, 'session.started')
  let answered = false
  const signingIn = passwordLogin(kit.ctx, kit.call(), RIGHT).then((result) => { answered = true; return result })
  await called
  t.same(calls, [{ userId: kit.aliceId, password: ALICE.password, sessions: 0 }], 'called once, before any session')
  t.equal(answered, false, 'the sign-in waits for it')
  t.same(started, [], 'no session started meanwhile')
  release()
  t.ok(finalJwt(await signingIn))
  t.equal(await indexed(kit), 1, 'then the session starts')
  t.equal(started.length, 1)
  t.same(kit.log, [], 'nothing logged')
})

t.test('no rehash for a wrong password, an unknown user or a password_hash sign-in', async (t) => {
  const kit = await flowKit({ login: { allowPasswordHash: true } })
  const calls: string[] = []
  giveRehash(kit, async (_user, password) => { calls.push(password); return false })
  await t.rejects(passwordLogin(kit.ctx, kit.call(), input({ email: ALICE.email, password: 'wrong' })), WRONG)
  await t.rejects(passwordLogin(kit.ctx, kit.call(), input({ email: 'nobody@example.com', password: ALICE.password })), WRONG)
  const hash = (await kit.users.findByEmail(ALICE.email))?.passwordHash as string
  t.ok(finalJwt(await passwordLogin(kit.ctx, kit.call(), input({ email: ALICE.email, passwordHash: hash }))), 'password_hash signs in')
  t.same(calls, [], 'never called')
  t.ok(finalJwt(await passwordLogin(kit.ctx, kit.call(), RIGHT)))
  t.same(calls, [ALICE.password], 'a password sign-in calls it')
})

t.test('a rehash that fails: the sign-in succeeds, one warning without the password, and password.rehash_failed', async (t) => {
  const kit = await flowKit()
  const failed = collect(kit, 'password.rehash_failed')
  const succeeded = collect(kit, 'login.succeeded')
  giveRehash(kit, async (user, password) => {
    const error = new Error(`UPDATE command denied to user 'wp_ro' for table 'wp_users' (password ${password}, hash ${user.passwordHash})`)
    throw Object.assign(error, { code: 'ER_TABLEACCESS_DENIED_ERROR' })
  })
  t.ok(finalJwt(await passwordLogin(kit.ctx, kit.call('198.51.100.4'), RIGHT)), 'signed in')
  t.same(succeeded, [{ userId: kit.aliceId, ip: '198.51.100.4', method: 'password' }])
  t.same(failed, [{ userId: kit.aliceId, ip: '198.51.100.4' }], 'the event')
  t.equal(kit.log.length, 1, 'one log line')
  const [line] = kit.log
  t.equal(line?.level, 'warn')
  t.match(line?.message, /password hash could not be upgraded/)
  t.match(line?.fields, { userId: kit.aliceId, err: { type: 'HostPortError', code: 'ER_TABLEACCESS_DENIED_ERROR' } })
  const logged = JSON.stringify(line?.fields)
  t.match(logged, /users\.rehashPassword failed: Error \(ER_TABLEACCESS_DENIED_ERROR\): UPDATE command denied/, 'the adapter\'s message, as every port\'s is logged')
  t.notMatch(logged, ALICE.password, 'never the password')
  const hash = (await kit.users.findByEmail(ALICE.email))?.passwordHash as string
  t.notOk(logged.includes(hash), 'never the hash')
  t.equal(await indexed(kit), 1, 'the session started')
})

t.test('an adapter without rehashPassword signs in as before', async (t) => {
  const kit = await flowKit()
  giveRehash(kit, undefined)
  t.equal(kit.ctx.users.rehashPassword, undefined, 'the guard shows none')
  t.ok(finalJwt(await passwordLogin(kit.ctx, kit.call(), RIGHT)))
  t.same(kit.log, [])
})

t.test('with the user cache on, a rehashed user is read again: the cache holds the new hash; a sign-in with nothing to upgrade keeps the cached copy', async (t) => {
  const clock = testClock()
  const memory = new MemoryUserAdapter()
  const alice = await memory.addUser(ALICE)
  // a store that answers copies, as a database does: what the cache keeps is not the record the sign-in changes
  const copy = (user: MemoryUser | null): MemoryUser | null => user === null ? null : { ...user, roles: [...user.roles] }
  let due = true
  const users: UserAdapter<MemoryUser> = {
    findByEmail: async (email) => copy(await memory.findByEmail(email)),
    findByLogin: async (login) => copy(await memory.findByLogin(login)),
    findById: async (id) => copy(await memory.findById(id)),
    verifyPassword: async (user, password) => await memory.verifyPassword(user, password),
    toPublicUser: (user) => memory.toPublicUser(user),
    rehashPassword: async (user, password) => {
      if (!due) return false
      await memory.setPassword(user, password)
      ;(await memory.findById(user.ID) as MemoryUser).passwordHash = user.passwordHash
      return true
    }
  }
  const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } })
  const store = new MemoryStore({ clock })
  const ctx = await buildContext({ users }, { log: console as never, cacheLimits: { ttlMs: 60_000, max: 10 }, initial: settings, store, clock, messages: new Messages() })
  const before = (await ctx.users.findById(alice.ID))?.passwordHash
  t.equal((await ctx.users.findById(alice.ID))?.passwordHash, before, 'cached')
  finalJwt(await passwordLogin(ctx, { settings, ip: '203.0.113.7', startedAt: clock() }, RIGHT))
  const after = (await ctx.users.findById(alice.ID))?.passwordHash
  t.not(after, before, 'the cache forgot the user: the new hash is read')
  t.equal(after, (await memory.findById(alice.ID))?.passwordHash)

  due = false
  const cached = await ctx.users.findById(alice.ID)
  finalJwt(await passwordLogin(ctx, { settings, ip: '203.0.113.7', startedAt: clock() }, RIGHT))
  t.equal(await ctx.users.findById(alice.ID), cached, 'nothing upgraded: the cached copy stays')
})
