// A lock racing 50 concurrent refreshes of the user's sessions, and 50 concurrent sign-ins, on the memory store and on Redis: after the lock, none of the tokens any of them answered works.
import t from 'tap'
import type { StateStore } from '../../lib/index.js'
import { buildApp } from '../helpers/app.js'
import { errorOf, login, post } from '../helpers/http.js'
import { redisStore } from '../helpers/redis-store.js'

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

const SETTINGS = {
  refresh: { enabled: true },
  sessions: { enabled: true, maxPerUser: 500 },
  limits: { loginPerAccount: { max: 1000, window: '15m' }, loginPerIp: { max: 1000, window: '15m' }, requestsPerIp: { max: 100_000, window: '1m' }, signInsPerAccount: { max: 1000, window: '15m' } }
}
const ALICE_ID = 1
const RACERS = 50

interface Tokens { jwt: string, refresh_token: string }

/**
 * Runs `requests` at once and the lock among them: it starts once a fifth
 * of them have answered, so some answer before it, some while it is
 * written and some after.
 */
async function withLockAmong<R> (requests: Array<() => Promise<R>>, lock: () => Promise<void>): Promise<R[]> {
  let answered = 0
  let locking: Promise<void> | null = null
  const answers = await Promise.all(requests.map(async (request) => {
    const answer = await request()
    if (++answered === Math.ceil(requests.length / 5)) locking = lock()
    return answer
  }))
  await (locking ?? lock())
  return answers
}

/** What a racing request may answer: tokens, the lock's refusal, or a store that gave up under contention (fails closed). */
function tokensOf (t: TapTest, res: Awaited<ReturnType<typeof post>>, what: string): Tokens | null {
  if (res.statusCode === 200) return res.json().data as Tokens
  t.ok([403, 503].includes(res.statusCode), `${what}: ${res.statusCode} ${res.body}`)
  if (res.statusCode === 403) t.same(errorOf(res), [403, 251])
  return null
}

/** Not one token survives: every access token is refused, and every refresh token too. */
async function noneSurvives (t: TapTest, app: Awaited<ReturnType<typeof buildApp>>['app'], tokens: Tokens[]): Promise<void> {
  const answers = await Promise.all(tokens.map(async ({ jwt, refresh_token: refresh }) => [
    (await post(app, '/auth/validate', { JWT: jwt })).statusCode,
    (await post(app, '/auth/refresh', { refresh_token: refresh })).statusCode
  ]))
  t.same(answers.filter(([valid, refreshed]) => valid !== 401 || refreshed !== 403), [], `none of ${tokens.length} tokens validates or refreshes`)
}

async function raceRefreshes (t: TapTest, store?: StateStore): Promise<void> {
  const { app } = await buildApp(SETTINGS, { store })
  t.teardown(() => app.close())
  const sessions: Tokens[] = []
  for (let i = 0; i < 10; i++) sessions.push((await login(app)).json().data as Tokens)
  // five refreshes of each session at once (one rotates, the others get its successor or a reuse), the lock in the middle
  const refreshes = Array.from({ length: RACERS }, (_, i) => async () => await post(app, '/auth/refresh', { refresh_token: (sessions[i % sessions.length] as Tokens).refresh_token }))
  const answers = await withLockAmong(refreshes, async () => { await app.jwtLogin.lockUser(ALICE_ID, { reason: 'racing refreshes' }) })
  const issued = answers.map((res, i) => tokensOf(t, res, `refresh ${i}`)).filter((x): x is Tokens => x !== null)
  t.comment(`${issued.length} of ${RACERS} refreshes answered tokens around the lock`)
  await noneSurvives(t, app, [...sessions, ...issued])
}

async function raceSignIns (t: TapTest, store?: StateStore): Promise<void> {
  const { app } = await buildApp(SETTINGS, { store })
  t.teardown(() => app.close())
  const signIns = Array.from({ length: RACERS }, () => async () => await login(app))
  const answers = await withLockAmong(signIns, async () => { await app.jwtLogin.lockUser(ALICE_ID, { reason: 'racing sign-ins' }) })
  const issued = answers.map((res, i) => tokensOf(t, res, `sign-in ${i}`)).filter((x): x is Tokens => x !== null)
  t.comment(`${issued.length} of ${RACERS} sign-ins answered tokens around the lock`)
  await noneSurvives(t, app, issued)
  t.same(errorOf(await login(app)), [403, 251], 'and the next sign-in is refused')
  // unlocked: what raced the lock stays dead, and a new sign-in lives
  await app.jwtLogin.unlockUser(ALICE_ID)
  const answersAfter = await Promise.all(issued.map(async ({ jwt }) => (await post(app, '/auth/validate', { JWT: jwt })).statusCode))
  t.same(answersAfter.filter(status => status !== 401), [], 'the raced tokens stay refused after the unlock')
  const fresh = (await login(app)).json().data as Tokens
  t.equal((await post(app, '/auth/validate', { JWT: fresh.jwt })).statusCode, 200)
}

t.test('memory store: a lock racing 50 refreshes', async (t) => { await raceRefreshes(t) })
t.test('memory store: a lock racing 50 sign-ins', async (t) => { await raceSignIns(t) })
t.test('Redis: a lock racing 50 refreshes', async (t) => { await raceRefreshes(t, redisStore(t, 'lock-races').store) })
t.test('Redis: a lock racing 50 sign-ins', async (t) => { await raceSignIns(t, redisStore(t, 'lock-races').store) })
