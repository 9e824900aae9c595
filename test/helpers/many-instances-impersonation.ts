// The many-instances step of impersonation (issue 42): a token the admin app issues with the hosts' key, acting as alice, validates with its actor on one host, is listed with it on another, is refused credential changes on a third, and a revoke on one ends it on all.
import type t from 'tap'
import { ALICE, API_KEY_SCOPE, BOB } from '../../examples/two-instances/users.js'
import type { Answer, Host } from './example-hosts.js'
import type { AdminApp } from './many-instances-lock.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const pairOf = (answer: Answer): [number, unknown] => [answer.status, answer.data.errorCode]

/**
 * The admin app (on the hosts' store, with their signing key) has bob act
 * as alice. On A the token validates with `act.sub`; on B `GET /sessions`
 * lists its session with `actor_id`; on C a sign-out everywhere and a new
 * API key are refused (403 / 252: the example has no account routes, so no
 * `PUT /account/password`). Revoked on A, it is refused on B and C, and
 * alice's own session lives on.
 */
export async function impersonationAcross (t: Test, [a, b, c]: [Host, Host, Host], { app: admin, users }: AdminApp): Promise<void> {
  const aliceId = (await users.findByEmail(ALICE.email))?.ID as number
  const bobId = (await users.findByEmail(BOB.email))?.ID as number
  const own = await c.call('/auth', { email: ALICE.email, password: ALICE.password })
  t.equal(own.status, 200, 'alice\'s own sign-in, on C')

  const { jwt, sessionId } = await admin.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'many instances: support', lifetime: '10m' })
  const validated = await a.call('/auth/validate', { JWT: jwt })
  t.same([validated.status, validated.data.user?.user_email, validated.data.jwt?.[0]?.payload?.act], [200, ALICE.email, { sub: String(bobId) }], 'validates on A as alice, with act.sub bob')

  const listed = await b.get('/jwt-login/v1/sessions', { authorization: `Bearer ${jwt}` })
  t.equal(listed.status, 200, 'GET /sessions on B with the token')
  const sessions = (listed.data.data?.sessions ?? []) as Array<{ id: string, method?: string, actor_id?: number }>
  t.match(sessions.find(({ id }) => id === sessionId), { method: 'impersonation', actor_id: bobId }, 'lists its session with its actor')

  t.same(pairOf(await c.call('/sessions', { JWT: jwt }, 'DELETE')), [403, 252], 'on C: no sign-out everywhere as alice')
  t.same(pairOf(await c.call('/account/api-keys', { JWT: jwt, name: 'by bob', scopes: [API_KEY_SCOPE] })), [403, 252], 'on C: no API key for alice')

  t.same(pairOf(await a.call('/auth/revoke', { JWT: jwt })), [200, undefined], 'revoked on A')
  // issued as soon as A answered, no wait
  const after = await Promise.all([b, c].map(async (host) => await host.call('/auth/validate', { JWT: jwt })))
  t.same(after.map(pairOf), [[401, 55], [401, 55]], 'refused on B and C')
  t.same(pairOf(await b.call('/auth/validate', { JWT: own.data.jwt })), [200, undefined], 'alice\'s own session lives on')
}
