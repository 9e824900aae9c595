// completeSignIn, prepareSession and countSignIn called directly, on a context built as the plugin builds it: no Fastify, no HTTP.
import t from 'tap'
import type { SignInResult } from '../../lib/adapters/second-factor.js'
import { completeSignIn, countSignIn, prepareSession } from '../../lib/sessions/sign-in.js'
import type { TokenClaims } from '../../lib/tokens/jwt.js'
import { sessionStart } from '../../lib/tokens/session-id.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import type { MemoryUser } from '../../lib/testing.js'
import { collect, flowKit, type FlowKit } from '../helpers/flows.js'

/** Whether each session's refresh family is in the store (not ended, not expired). */
async function familiesLive (kit: { store: { get: (key: string) => Promise<string | null> } }, ids: string[]): Promise<boolean[]> {
  return await Promise.all(ids.map(async (id) => { const raw = await kit.store.get(`session:${id}`); return raw !== null && raw !== 'revoked' }))
}

const LIMITED = { code: 'ERR_JWT_LOGIN_RATE_LIMITED', errorCode: 200, statusCode: 429 }
const UNAVAILABLE = { code: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201, statusCode: 503 }

/** Alice as the adapter holds her: what a first factor hands to completeSignIn. */
async function alice (kit: FlowKit): Promise<unknown> {
  return await kit.users.findById(kit.aliceId)
}

/** The claims of the final token a sign-in answered. */
function claimsOf (kit: FlowKit, result: SignInResult): TokenClaims {
  if ('two_factor_required' in result) throw new Error('a challenge, not a session')
  return kit.ctx.tokens.verify(kit.settings, result.jwt, 'access').payload
}

/** The session ids in alice's index, in the order they joined. */
async function indexedSessions (kit: FlowKit): Promise<string[]> {
  const raw = await kit.store.get(sessionIndexKey(kit.aliceId))
  return raw === null ? [] : (JSON.parse(raw) as Array<[string]>).map(([sessionId]) => sessionId)
}

/** What `work` answered, and the names of the store methods it called, in order. */
async function withStoreCalls<T> (kit: FlowKit, work: () => Promise<T>): Promise<{ value: T, calls: string[] }> {
  const calls: string[] = []
  type Method = (...args: unknown[]) => Promise<unknown>
  const store = kit.store as unknown as Record<string, Method>
  const methods = ['get', 'getMany', 'set', 'delete', 'consume', 'increment', 'compareAndSet']
  const originals = methods.map(method => store[method] as Method)
  methods.forEach((method, i) => {
    store[method] = async (...args) => {
      calls.push(method)
      return await (originals[i] as Method).apply(kit.store, args)
    }
  })
  try {
    return { value: await work(), calls }
  } finally {
    methods.forEach((method, i) => { store[method] = originals[i] as Method })
  }
}

t.test('completeSignIn: a new session, started when the request did, with its tokens, in the user\'s index', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true } })
  const call = kit.call()
  kit.clock.advance(2000)
  const result = await completeSignIn(kit.ctx, call, await alice(kit))
  const claims = claimsOf(kit, result)
  t.equal(claims.sub, String(kit.aliceId))
  t.equal(sessionStart(claims.sid), call.startedAt, 'the session starts at call.startedAt, not when the flow ran')
  t.equal('refresh_token' in result ? result.refresh_token?.split('.')[0] : undefined, claims.sid, 'the refresh token is of the same session')
  t.same(await familiesLive(kit, [claims.sid]), [true])
  t.same(await indexedSessions(kit), [claims.sid])

  const earlier = call.startedAt - 60_000
  const second = claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit), earlier))
  t.equal(sessionStart(second.sid), earlier, 'or at the startedAt given (a second step that began earlier)')
  t.same(await indexedSessions(kit), [claims.sid, second.sid], 'in the order they joined')
})

t.test('sessions.maxPerUser: the oldest session beyond it ends, with session.evicted', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true }, sessions: { maxPerUser: 2 } })
  const evicted = collect(kit, 'session.evicted')
  const sessions: TokenClaims[] = []
  for (let i = 0; i < 3; i++) {
    sessions.push(claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit))))
    kit.clock.advance(1000)
  }
  const [first, second, third] = sessions as [TokenClaims, TokenClaims, TokenClaims]
  t.same(evicted, [{ userId: kit.aliceId, sessionId: first.sid, reason: 'max_per_user' }])
  t.same(await Promise.all(sessions.map(async claims => await kit.ctx.tokens.isRevoked(claims))), [true, false, false], 'the oldest is revoked')
  t.same(await familiesLive(kit, sessions.map(claims => claims.sid)), [false, true, true], 'its refresh family with it')
  t.same(await indexedSessions(kit), [second.sid, third.sid])
})

t.test('limits.signInsPerAccount: over it a sign-in is 429 with Retry-After and signin.limited, and starts no session', async (t) => {
  const kit = await flowKit({ limits: { signInsPerAccount: { max: 2, window: '1h' } } })
  const limited = collect(kit, 'signin.limited')
  for (let i = 0; i < 2; i++) await completeSignIn(kit.ctx, kit.call(), await alice(kit))
  kit.clock.advance(60_000)
  await t.rejects(completeSignIn(kit.ctx, kit.call('192.0.2.4'), await alice(kit)), { ...LIMITED, retryAfter: 3540 })
  t.same(limited, [{ userId: kit.aliceId, ip: '192.0.2.4' }])
  t.equal((await indexedSessions(kit)).length, 2, 'no third session')
  kit.clock.advance(3540_000)
  const next = claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit)))
  t.ok((await indexedSessions(kit)).includes(next.sid), 'a new window, a new sign-in')
})

t.test('countSignIn counts under its key: one key over the limit leaves another alone', async (t) => {
  const kit = await flowKit({ limits: { signInsPerAccount: { max: 1, window: '1h' } } })
  const limited = collect(kit, 'signin.limited')
  await countSignIn(kit.ctx, kit.call(), kit.aliceId, 'signins:1:198.51.100.1')
  await t.rejects(countSignIn(kit.ctx, kit.call('198.51.100.1'), kit.aliceId, 'signins:1:198.51.100.1'), { ...LIMITED, retryAfter: 3600 })
  await countSignIn(kit.ctx, kit.call(), kit.aliceId, 'signins:1:198.51.100.2')
  t.same(limited, [{ userId: kit.aliceId, ip: '198.51.100.1' }])
})

t.test('prepareSession makes no store call; start() writes the refresh family and joins the index in one round trip, and settle() ends the oldest beyond the bound', async (t) => {
  const off = await flowKit({ sessions: { maxPerUser: 1 } })
  const user = off.users.toPublicUser(await off.users.findById(off.aliceId) as MemoryUser)
  const held = claimsOf(off, await completeSignIn(off.ctx, off.call(), await alice(off)))
  const prepared = await withStoreCalls(off, async () => prepareSession(off.ctx, off.call(), user, 1234))
  t.same(prepared.calls, [], 'prepared: no store call')
  const session = prepared.value
  t.same(Object.keys(session.tokens), ['jwt'])
  t.equal(sessionStart(session.sessionId), 1234, 'it starts at the startedAt given')
  t.same(await indexedSessions(off), [held.sid], 'prepared, not recorded: the index is untouched')
  t.equal(await off.ctx.tokens.isRevoked(held), false, 'and so are its sessions')
  const started = await withStoreCalls(off, async () => { await session.start() })
  t.same(started.calls, ['get', 'compareAndSet'], 'refresh off: the index is read, then written')
  t.same(await indexedSessions(off), [held.sid, session.sessionId], 'started, it is listed; no other session ended yet')
  t.equal(await off.ctx.tokens.isRevoked(held), false)
  await session.settle()
  t.same(await indexedSessions(off), [session.sessionId], 'settled, the index is within its bound')
  t.equal(await off.ctx.tokens.isRevoked(held), true, 'and the session beyond the bound ends')

  const on = await flowKit({ refresh: { enabled: true } })
  const family = prepareSession(on.ctx, on.call(), user)
  t.equal(family.tokens.refresh_token?.split('.')[0], family.sessionId)
  t.same(await familiesLive(on, [family.sessionId]), [false], 'the family is not written before start()')
  const index = await on.store.get(`sessions:user:${user.ID}`)
  const written = await withStoreCalls(on, async () => { await family.start(index) })
  t.same(written.calls.sort(), ['compareAndSet', 'set'], 'refresh on, the index read already: one write of the family and one of the index, together')
  t.same(await familiesLive(on, [family.sessionId]), [true])
  t.same(await indexedSessions(on), [family.sessionId])
})

t.test('an index that cannot be written: 503 / 201, the session is ended, and no other session', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true }, sessions: { maxPerUser: 1 } })
  const held = claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit)))
  const before = kit.store.counts.state
  // every compare-and-set loses, as to writers that never stop
  kit.store.compareAndSet = async () => false
  await t.rejects(completeSignIn(kit.ctx, kit.call(), await alice(kit)), UNAVAILABLE)
  t.equal(kit.store.counts.state, before + 1, 'its family became its revoked mark (until its access token would have expired): nothing else left behind')
  t.equal(await kit.ctx.tokens.isRevoked(held), false, 'the session the bound would have ended is live: the sign-in failed')
  t.same(await indexedSessions(kit), [held.sid], 'and the index is as it was')
})

t.test('a trim that fails after it ended the oldest session: the sign-in answers, that session stays ended and is told, the next sign-in trims', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true }, sessions: { maxPerUser: 1 } })
  const evicted = collect(kit, 'session.evicted')
  const ended = collect(kit, 'session.ended')
  const held = claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit)))
  const compareAndSet = kit.store.compareAndSet.bind(kit.store)
  let calls = 0
  // the join's write goes through; the trim's fails
  kit.store.compareAndSet = async (...args) => { if (calls++ === 0) return await compareAndSet(...args); throw new Error('the store went away') }
  const second = claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit)))
  t.equal(await kit.ctx.tokens.isRevoked(held), true, 'the session beyond the bound was ended before the write failed')
  t.equal(await kit.ctx.tokens.isRevoked(second), false, 'the new session is live')
  t.same(evicted, [{ userId: kit.aliceId, sessionId: held.sid, reason: 'max_per_user' }], 'and the event says so')
  t.same(ended, [{ userId: kit.aliceId, sessionId: held.sid, reason: 'limit' }])
  t.match(kit.log, [{ level: 'warn', message: /could not be trimmed/ }], 'the failed trim is logged')
  t.same(await indexedSessions(kit), [held.sid, second.sid], 'the index still lists the ended one; it is not listed as live')
  t.same((await kit.ctx.sessions.list(kit.aliceId)).map(session => session.id), [second.sid])
  kit.store.compareAndSet = compareAndSet
  claimsOf(kit, await completeSignIn(kit.ctx, kit.call(), await alice(kit)))
  t.equal(evicted.length, 2, 'the next sign-in ends the one before it, and nothing more: the ended family left the index')
})

t.test('a host\'s own second-factor gate is counted per account and client before it is asked', async (t) => {
  const challenges: string[] = []
  const kit = await flowKit({ limits: { signInsPerAccount: { max: 2, window: '1h' } } }, {
    secondFactor: async (_user, publicUser, call) => {
      challenges.push(call.ip)
      return { two_factor_required: true, jwt: `host-challenge-${publicUser.ID}` }
    }
  })
  const limited = collect(kit, 'signin.limited')
  for (let i = 0; i < 2; i++) t.same(await completeSignIn(kit.ctx, kit.call(), await alice(kit)), { two_factor_required: true, jwt: `host-challenge-${kit.aliceId}` })
  await t.rejects(completeSignIn(kit.ctx, kit.call(), await alice(kit)), LIMITED, 'the third from the same client')
  t.same(limited, [{ userId: kit.aliceId, ip: '203.0.113.7' }])
  t.same(await completeSignIn(kit.ctx, kit.call('198.51.100.9'), await alice(kit)), { two_factor_required: true, jwt: `host-challenge-${kit.aliceId}` }, 'another client is counted apart')
  t.equal(challenges.length, 3, 'the gate was not asked over the limit')
})

t.test('20 concurrent sign-ins of one user with sessions.maxPerUser 3 keep the bound', async (t) => {
  const max = 3
  const kit = await flowKit({ refresh: { enabled: true }, sessions: { maxPerUser: max } })
  const evicted = collect(kit, 'session.evicted')
  const user = await alice(kit)
  const answers = await Promise.allSettled(Array.from({ length: 20 }, async () => await completeSignIn(kit.ctx, kit.call(), user)))
  const signedIn = answers.flatMap(answer => answer.status === 'fulfilled' ? [claimsOf(kit, answer.value)] : [])
  const failed = answers.flatMap(answer => answer.status === 'rejected' ? [answer.reason as Error] : [])
  // an index update that keeps losing its compare-and-set fails closed (503) rather than lose a session
  t.ok(failed.every(error => (error as { code?: string }).code === UNAVAILABLE.code), 'every other sign-in is 503 / 201')
  t.ok(signedIn.length > max, `${signedIn.length} sign-ins, more than the bound`)

  const index = await indexedSessions(kit)
  t.equal(index.length, max, 'the index holds the bound')
  const live = await Promise.all(signedIn.map(async claims => !await kit.ctx.tokens.isRevoked(claims)))
  t.same(signedIn.filter((_, i) => live[i]).map(claims => claims.sid).sort(), [...index].sort(), 'the live sessions are exactly those in the index')
  t.equal(evicted.length, signedIn.length - max, 'one eviction for each session beyond it')
  t.ok(evicted.every(event => !index.includes(event.sessionId) && signedIn.some(claims => claims.sid === event.sessionId)), 'the evicted were signed in and are gone')
  t.equal(kit.store.counts.state, 1 + max + evicted.length + failed.length, 'the index, the live families, the evicted ones and the failed sign-ins\' sessions, each revoked until its access token would have expired')
})
