// The many-instances step of the API keys (issue 42): a key made through one host works on the others' own route, its limit is counted across them, and its end (deleted, a sign-out everywhere, a lock) holds on every host from the next request.
import type t from 'tap'
import { ALICE, API_KEY_SCOPE } from '../../examples/two-instances/users.js'
import type { Answer, Host } from './example-hosts.js'
import type { AdminApp } from './many-instances-lock.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]
type Trio = [Host, Host, Host]

/** Requests per key per hour in the shared settings (`apiKeys.limits.perKey`): small, so a burst over the hosts reaches it. */
export const PER_KEY = 6

/** The example host's route for scripts (examples/two-instances/host.ts). */
const ROUTE = '/orders'
const KEYS = '/account/api-keys'

const pairOf = (answer: Answer): [number, unknown] => [answer.status, answer.data.errorCode]
/** A host route's refusal: the envelope is the whole body there. */
const refusalOf = (answer: Answer): [number, unknown] => [answer.status, answer.data.data?.errorCode]
const bearer = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` })
const asHeader = (key: string): Record<string, string> => ({ 'x-api-key': key })

async function signIn (on: Host): Promise<string> {
  const answer = await on.call('/auth', { email: ALICE.email, password: ALICE.password })
  if (answer.status !== 200) throw new Error(`login on ${on.name}: ${answer.status} ${JSON.stringify(answer.data)}`)
  return answer.data.jwt as string
}

/** `POST /account/api-keys` on `on` with a recent sign-in's `jwt`: the key and its id. */
async function newKey (t: Test, on: Host, jwt: string, name: string): Promise<{ key: string, id: string }> {
  const answer = await on.call(KEYS, { JWT: jwt, name, scopes: [API_KEY_SCOPE] })
  t.equal(answer.status, 200, `key '${name}' created on ${on.name}`)
  if (answer.status !== 200) throw new Error(`creation on ${on.name}: ${answer.status} ${JSON.stringify(answer.data)}`)
  return answer.data as { key: string, id: string }
}

/** `GET /orders` with `key` on every host at once. */
async function everywhere (hosts: Host[], key: string): Promise<Answer[]> {
  return await Promise.all(hosts.map(async (host) => await host.get(ROUTE, asHeader(key))))
}

/**
 * Alice creates a key on A; it works on B (`X-API-Key`) and C (`Bearer`),
 * is listed on B, and a burst spread over the three reaches its limit
 * exactly (429 / 256 with `Retry-After`); deleted on C, it is refused on A
 * and B (401 / 254, not 429). A second key, made on B, ends on every host
 * with a sign-out everywhere on A; a third, made on C, with a lock from the
 * admin app, and stays ended after the unlock.
 */
export async function keysAcross (t: Test, hosts: Trio, { app: admin, users }: AdminApp): Promise<void> {
  const [a, b, c] = hosts
  const aliceId = (await users.findByEmail(ALICE.email))?.ID as number
  const wrongEverywhere = [[401, 254], [401, 254], [401, 254]]
  const jwt = await signIn(a)

  const first = await newKey(t, a, jwt, 'first')
  const onB = await b.get(ROUTE, asHeader(first.key))
  t.same([onB.status, onB.data], [200, { userId: aliceId, keyId: first.id }], 'the key made on A works on B, as alice, in X-API-Key')
  const onC = await c.get(ROUTE, bearer(first.key))
  t.same([onC.status, onC.data], [200, { userId: aliceId, keyId: first.id }], 'and on C, in Authorization: Bearer')
  const listed = await b.get(`/jwt-login/v1${KEYS}`, bearer(jwt))
  t.match(listed.data.data?.api_keys, [{ id: first.id, name: 'first', prefix: `jwtl_${first.id}`, scopes: [API_KEY_SCOPE] }], 'B lists it')

  // two uses so far: the rest of the window's PER_KEY, and as many again, all at once over the three
  const burst = Array.from({ length: 2 * PER_KEY }, (_, i) => hosts[i % hosts.length] as Host)
  const answers = await Promise.all(burst.map(async (host) => await host.get(ROUTE, asHeader(first.key))))
  const passed = answers.filter(({ status }) => status === 200)
  const limited = answers.filter(({ status }) => status !== 200)
  t.equal(passed.length, PER_KEY - 2, `exactly ${PER_KEY} uses in all, whichever host served them`)
  t.same(limited.map(refusalOf), Array(limited.length).fill([429, 256]), 'the others: the key\'s limit, never a 401')
  t.ok(limited.every(({ retryAfter }) => Number(retryAfter) > 0 && Number(retryAfter) <= 3600), 'each with Retry-After within the window')

  t.same(pairOf(await c.call(`${KEYS}/${first.id}`, { JWT: jwt }, 'DELETE')), [200, undefined], 'deleted on C')
  // issued as soon as C answered, no wait
  t.same((await everywhere([a, b], first.key)).map(refusalOf), [[401, 254], [401, 254]], 'refused on A and B: an ended key, not a limited one')
  t.same(pairOf(await a.call(`${KEYS}/${first.id}`, { JWT: jwt }, 'DELETE')), [404, 258], 'A finds it ended too')

  const second = await newKey(t, b, jwt, 'second')
  t.same((await everywhere(hosts, second.key)).map(({ status }) => status), [200, 200, 200], 'a second key, made on B, works everywhere')
  t.same(pairOf(await a.call('/sessions', { JWT: jwt }, 'DELETE')), [200, undefined], 'sign-out everywhere on A')
  t.same((await everywhere(hosts, second.key)).map(refusalOf), wrongEverywhere, 'the second key is refused on every host')

  const fresh = await signIn(c)
  const third = await newKey(t, c, fresh, 'third')
  t.same((await everywhere(hosts, third.key)).map(({ status }) => status), [200, 200, 200], 'a third key, made on C, works everywhere')
  await admin.jwtLogin.lockUser(aliceId, { reason: 'many instances: API keys' })
  t.same((await everywhere(hosts, third.key)).map(refusalOf), wrongEverywhere, 'alice locked beside the hosts: the third key is refused on every host')
  t.equal(await admin.jwtLogin.unlockUser(aliceId, { reason: 'many instances: API keys' }), true, 'unlocked')
  t.same((await everywhere(hosts, third.key)).map(refusalOf), wrongEverywhere, 'the unlock does not bring it back')
  const after = await b.get(`/jwt-login/v1${KEYS}`, bearer(await signIn(b)))
  t.same([after.status, after.data.data?.api_keys], [200, []], 'alice signs in again, on B, with no live key')
}
