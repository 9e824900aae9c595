// The many-instances step of the lock (issue 42): a lock made by an admin app in this process, on the hosts' own store, ends a user's live tokens on the next request on every host and refuses the user's sign-ins there until the unlock. The admin app itself, which the API-key and impersonation steps use too.
import Fastify, { type FastifyInstance } from 'fastify'
import type t from 'tap'
import jwtLogin, { type SettingsInput, type StateStore } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { storeFromEnv } from '../../examples/two-instances/store.js'
import { ALICE, SEEDED_USERS } from '../../examples/two-instances/users.js'
import type { Answer, Host } from './example-hosts.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const pairOf = (answer: Answer): [number, unknown] => [answer.status, answer.data.errorCode]

/** The admin app of the administration steps (lock, API keys, impersonation): the plugin in this process, beside the hosts. */
export interface AdminApp {
  app: FastifyInstance
  users: MemoryUserAdapter
  /** Closes the app and its store client. */
  close: () => Promise<void>
}

/**
 * The admin app: the plugin on the hosts' store (the same kind, server and
 * namespace), their settings and their signing key (`settings` as the hosts
 * read them, keys included), and the example's users seeded in the same
 * order, so its user ids are the hosts' and a token it signs (an
 * impersonation) validates on every host.
 */
export async function adminApp (kind: string, env: Record<string, string>, settings: SettingsInput): Promise<AdminApp> {
  const store: StateStore = await storeFromEnv({ ...env, STORE: kind })
  const users = new MemoryUserAdapter()
  for (const { twoFactor: _factor, ...user } of SEEDED_USERS) await users.addUser(user)
  const app = Fastify()
  const close = async (): Promise<void> => {
    await app.close()
    await store.close?.()
  }
  try {
    await app.register(jwtLogin, { users, store, settings })
    await app.ready()
  } catch (error) {
    await close()
    throw error
  }
  return { app, users, close }
}

/**
 * Alice signs in on A and on C; the admin app locks her. At once, on every
 * host: both access tokens are refused (401 / 55), both refresh tokens are
 * a refused sign-in (403 / 251), and her sign-in answers 403 / 251 for the
 * right password and a wrong one alike. Unlocked: she signs in on B, and
 * the tokens from before stay refused everywhere.
 */
export async function lockAcross (t: Test, hosts: [Host, Host, Host], { app: admin, users }: AdminApp): Promise<void> {
  const [a, b, c] = hosts
  const signIn = async (on: Host): Promise<{ jwt: string, refresh_token: string }> => {
    const answer = await on.call('/auth', { email: ALICE.email, password: ALICE.password })
    if (answer.status !== 200) throw new Error(`login on ${on.name}: ${answer.status} ${JSON.stringify(answer.data)}`)
    return answer.data as { jwt: string, refresh_token: string }
  }
  const before = [await signIn(a), await signIn(c)]
  const aliceId = Number((await b.call('/auth/validate', { JWT: before[0]?.jwt })).data.user?.ID)
  t.equal((await users.findById(aliceId))?.user_email, ALICE.email, 'the admin app\'s user of that id is the hosts\' alice')

  await admin.jwtLogin.lockUser(aliceId, { reason: 'many instances' })
  // issued as soon as the lock was written, no wait
  for (const [i, { jwt, refresh_token: refresh }] of before.entries()) {
    const validated = await Promise.all(hosts.map(async (host) => await host.call('/auth/validate', { JWT: jwt })))
    t.same(validated.map(pairOf), [[401, 55], [401, 55], [401, 55]], `the token from ${i === 0 ? 'A' : 'C'} is refused on every host`)
    t.same(pairOf(await (hosts[i + 1] as Host).call('/auth/refresh', { refresh_token: refresh })), [403, 251], 'its refresh token is a refused sign-in')
  }
  for (const host of hosts) {
    const right = await host.call('/auth', { email: ALICE.email, password: ALICE.password })
    const wrong = await host.call('/auth', { email: ALICE.email, password: 'not alice\'s password' })
    t.same([pairOf(right), pairOf(wrong)], [[403, 251], [403, 251]], `sign-in on ${host.name} is refused, right password or wrong`)
  }
  t.equal(await admin.jwtLogin.isLocked(aliceId), true)

  t.equal(await admin.jwtLogin.unlockUser(aliceId, { reason: 'many instances' }), true)
  const after = await signIn(b)
  t.same((await Promise.all(hosts.map(async (host) => await host.call('/auth/validate', { JWT: after.jwt })))).map(pairOf), [[200, undefined], [200, undefined], [200, undefined]], 'unlocked: a new sign-in validates everywhere')
  for (const { jwt } of before) {
    t.same(pairOf(await c.call('/auth/validate', { JWT: jwt })), [401, 55], 'the tokens from before the lock stay refused')
  }
}
