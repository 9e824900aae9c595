// Impersonation (issue 42): `impersonate` issues an access token naming its actor, listed with it, refused where credentials change or the account ends, and named in every event while used.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import jwtLogin, { JwtLoginSettingsError, type JwtLoginEventName, type JwtLoginEventPayload, type SettingsInput } from '../../lib/index.js'
import { impersonate } from '../../lib/admin/impersonation.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import { ALICE, buildAccountApp, type AccountApp } from '../helpers/account.js'
import { flowKit } from '../helpers/flows.js'
import { HS_SECRET } from '../helpers/fixtures.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'

const BOB = { login: 'bob', email: 'bob@example.com', password: 'another horse battery staple', displayName: 'Bob Support' }
const CAROL = { login: 'carol', email: 'carol@example.com', password: 'a third horse battery staple', displayName: 'Carol Admin' }

/** Every part the refused routes need on. */
const EVERY_PART: Partial<SettingsInput> = {
  account: { enabled: true, identities: { enabled: true } },
  users: { register: { enabled: true }, delete: { enabled: true } },
  passkeys: { enabled: true, rpId: 'example.com', origins: ['https://app.example.com'] },
  sessions: { enabled: true }
}

const REGISTRATION = {
  id: 'f1NO4xX9Fq1mLrZ0o3kVJg',
  rawId: 'f1NO4xX9Fq1mLrZ0o3kVJg',
  type: 'public-key',
  response: { clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0', attestationObject: 'o2NmbXRkbm9uZQ' },
  clientExtensionResults: {}
}

interface Kit extends AccountApp {
  aliceId: number
  bobId: number
  carolId: number
  /** An impersonation token of bob acting as alice. */
  actAsAlice: (lifetime?: number | string) => Promise<string>
  inject: (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, jwt: string, payload?: Record<string, unknown>) => Promise<LightMyRequestResponse>
}

async function kitOf (t: Test, settings: Partial<SettingsInput> = {}): Promise<Kit> {
  const kit = await buildAccountApp(t, { ...EVERY_PART, ...settings })
  const alice = await kit.users.findByEmail(ALICE.email)
  const bob = await kit.users.addUser({ ...BOB, emailVerified: true })
  const carol = await kit.users.addUser({ ...CAROL, emailVerified: true })
  const aliceId = (alice as { ID: number }).ID
  return {
    ...kit,
    aliceId,
    bobId: bob.ID,
    carolId: carol.ID,
    actAsAlice: async (lifetime) => (await kit.app.jwtLogin.impersonate({ actorId: bob.ID, userId: aliceId, reason: 'ticket 4711', lifetime })).jwt,
    inject: async (method, path, jwt, payload) => await kit.app.inject({ method, url: `/jwt-login/v1${path}`, headers: { authorization: `Bearer ${jwt}` }, ...(payload === undefined ? {} : { payload }) })
  }
}

/** A JWT's claims, decoded without a check. */
function claimsOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
}

/** Every payload of `event` from now on. */
function seen<E extends JwtLoginEventName> (app: FastifyInstance, event: E): Array<JwtLoginEventPayload<E>> {
  const payloads: Array<JwtLoginEventPayload<E>> = []
  app.jwtLogin.events.on(event, (payload) => { payloads.push(payload) })
  return payloads
}

function refused (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.statusCode, 403, `${what}: 403`)
  t.equal(res.json().data?.errorCode, 252, `${what}: 252`)
}

t.test('done when: the token carries act.sub, validates, lists its actor, and is refused by PUT /account/password and DELETE /users', async (t) => {
  const kit = await kitOf(t)
  const { jwt, sessionId, expiresAt } = await kit.app.jwtLogin.impersonate({ actorId: kit.bobId, userId: kit.aliceId, reason: 'ticket 4711' })
  const claims = claimsOf(jwt)
  t.same(claims.act, { sub: String(kit.bobId) }, 'act.sub is the actor')
  t.equal(claims.sub, String(kit.aliceId), 'sub is the user')
  t.equal(claims.sid, sessionId, 'its session')
  t.equal(claims.exp as number * 1000, expiresAt.getTime(), 'expiresAt is its exp')
  t.notOk('auth_time' in claims, 'no auth_time: never a recent sign-in')
  t.notOk('amr' in claims, 'no amr')

  const validated = await kit.inject('POST', '/auth/validate', jwt)
  t.equal(validated.statusCode, 200, 'validate answers it')
  t.same(validated.json().data.jwt[0].payload.act, { sub: String(kit.bobId) }, 'its payload shows act')

  const listed = await kit.app.jwtLogin.sessions(kit.aliceId)
  t.match(listed, [{ id: sessionId, method: 'impersonation', actorId: kit.bobId, provider: null, secondFactor: null, ip: null, userAgent: null, lastRefreshedAt: null }], 'sessions() lists it with its actor')
  const own = await kit.token()
  const mine = (await kit.inject('GET', '/sessions', own)).json().data.sessions as Array<Record<string, unknown>>
  t.same(mine.find(session => session.id === sessionId), { id: sessionId, current: false, started_at: new Date(listed[0]?.startedAt as Date).toISOString(), method: 'impersonation', actor_id: kit.bobId }, 'the user sees it in GET /sessions with actor_id')
  t.equal(mine.find(session => session.id !== sessionId)?.actor_id, undefined, 'the user\'s own session has no actor')
  t.equal((await kit.app.jwtLogin.sessions(kit.aliceId)).find(session => session.id !== sessionId)?.actorId, null, 'nor in sessions()')

  refused(t, await kit.inject('PUT', '/account/password', jwt, { current_password: ALICE.password, new_password: 'a new horse battery staple' }), 'PUT /account/password')
  refused(t, await kit.inject('DELETE', '/users', jwt), 'DELETE /users')
  t.ok(await kit.users.verifyPassword(await kit.users.findByEmail(ALICE.email) as never, ALICE.password), 'the password did not change')
  t.not(await kit.users.findByEmail(ALICE.email), null, 'the user is there')
})

t.test('every route that changes credentials or ends the account refuses it with 403 / 252, before asking for any proof', async (t) => {
  const kit = await kitOf(t)
  const jwt = await kit.actAsAlice()
  const own = await kit.token()
  const other = claimsOf(own).sid as string
  const routes: Array<[method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, payload?: Record<string, unknown>]> = [
    ['PUT', '/account/password', { new_password: 'a new horse battery staple' }],
    ['POST', '/account/email', { new_email: 'new@example.com' }],
    ['POST', '/account/email/confirm', { code: '12345678' }],
    ['POST', '/account/2fa/totp'],
    ['POST', '/account/2fa/totp/confirm', { code: '123456' }],
    ['POST', '/account/2fa/backup-codes'],
    ['PUT', '/account/2fa', { method: 'totp' }],
    ['DELETE', '/account/2fa'],
    ['POST', '/passkeys/register/options'],
    ['POST', '/passkeys/register', { credential: REGISTRATION, name: 'Laptop' }],
    ['PATCH', '/passkeys/f1NO4xX9Fq1mLrZ0o3kVJg', { name: 'Laptop' }],
    ['DELETE', '/passkeys/f1NO4xX9Fq1mLrZ0o3kVJg'],
    ['PATCH', `/passkeys/${'a'.repeat(120)}`, { name: 'Laptop' }],
    ['DELETE', `/passkeys/${'a'.repeat(120)}`],
    ['POST', '/account/identities', { provider: 'gh', code: 'a-code', code_verifier: 'a-verifier' }],
    ['DELETE', '/account/identities/gh'],
    ['POST', '/auth/step-up/options'],
    ['POST', '/auth/step-up', { password: ALICE.password }],
    ['DELETE', '/users'],
    ['DELETE', '/sessions'],
    ['DELETE', '/sessions?keep_current=true'],
    ['DELETE', `/sessions/${other}`],
    ['DELETE', '/devices/a-device']
  ]
  const events = seen(kit.app, 'session.ended')
  for (const [method, path, payload] of routes) refused(t, await kit.inject(method, path, jwt, payload), `${method} ${path}`)
  t.same(events, [], 'no session ended')
  t.equal((await kit.inject('GET', '/auth/validate', own)).statusCode, 200, 'the user\'s own session lives')
  t.equal((await kit.inject('GET', '/auth/validate', jwt)).statusCode, 200, 'and the impersonation\'s')
  t.equal((await kit.inject('PUT', '/account/password', own, { current_password: ALICE.password, new_password: 'a new horse battery staple' })).statusCode, 200, 'the user\'s own token changes the password')
})

t.test('the routes that read, and ending its own session, work', async (t) => {
  const kit = await kitOf(t)
  const jwt = await kit.actAsAlice()
  const sid = claimsOf(jwt).sid as string
  for (const path of ['/auth/validate', '/account', '/sessions', '/passkeys', '/account/identities']) {
    t.equal((await kit.inject('GET', path, jwt)).statusCode, 200, `GET ${path}`)
  }
  const listed = (await kit.inject('GET', '/sessions', jwt)).json().data.sessions as Array<Record<string, unknown>>
  t.match(listed, [{ id: sid, current: true, method: 'impersonation', actor_id: kit.bobId }], 'GET /sessions marks it current, with its actor')
  t.equal((await kit.inject('DELETE', `/sessions/${sid}`, jwt)).statusCode, 200, 'DELETE /sessions/{own id} ends it')
  t.equal((await kit.inject('GET', '/auth/validate', jwt)).statusCode, 401, 'then it is refused')

  const again = await kit.actAsAlice()
  const revoked = seen(kit.app, 'token.revoked')
  const ended = seen(kit.app, 'session.ended')
  t.equal((await kit.inject('POST', '/auth/revoke', again)).statusCode, 200, 'POST /auth/revoke ends it')
  t.match(revoked, [{ userId: kit.aliceId, sessionId: claimsOf(again).sid, actorId: kit.bobId }], 'token.revoked names the actor')
  t.match(ended, [{ userId: kit.aliceId, reason: 'sign_out', actorId: kit.bobId }], 'session.ended too')
  const failed = seen(kit.app, 'validation.failed')
  t.equal((await kit.inject('GET', '/auth/validate', again)).statusCode, 401, 'then it is refused')
  t.match(failed, [{ errorCode: 55, actorId: kit.bobId }], 'validation.failed names the actor of the revoked token')

  // a route without a token gate that reads one itself: the actor of the token it was given, wherever it travelled
  const verification = async (where: 'header' | 'body' | 'query'): Promise<number> => (await kit.app.inject({
    method: 'POST',
    url: `/jwt-login/v1/account/email/verification${where === 'query' ? `?JWT=${again}` : ''}`,
    headers: where === 'header' ? { authorization: `Bearer ${again}` } : {},
    payload: where === 'body' ? { JWT: again } : {}
  })).statusCode
  for (const where of ['header', 'body', 'query'] as const) t.equal(await verification(where), 401, `the revoked token in the ${where} is refused`)
  t.match(failed.slice(1), [{ errorCode: 55, actorId: kit.bobId }, { errorCode: 55, actorId: kit.bobId }, { errorCode: 55, actorId: kit.bobId }], 'each refusal names the actor')
  failed.length = 1

  const own = await kit.token()
  t.equal((await kit.app.jwtLogin.verify(own)).act, undefined, 'verify: the user\'s own token has no act')
  await kit.inject('POST', '/auth/revoke', own)
  await kit.inject('GET', '/auth/validate', own)
  t.equal(revoked.length, 2, 'a normal token\'s revoke is told')
  t.notOk('actorId' in (revoked[1] as object), 'without an actor')
  t.notOk('actorId' in (failed[1] as object), 'nor its refusal')
})

t.test('the API: revoke and verify name the actor in their events; lock after impersonation ends the token', async (t) => {
  const kit = await kitOf(t)
  const jwt = await kit.actAsAlice()
  t.same((await kit.app.jwtLogin.verify(jwt)).act, { sub: String(kit.bobId) }, 'verify answers act')
  const revoked = seen(kit.app, 'token.revoked')
  await kit.app.jwtLogin.revoke(jwt)
  t.match(revoked, [{ userId: kit.aliceId, actorId: kit.bobId }], 'revoke() names the actor')

  const second = await kit.actAsAlice()
  await kit.app.jwtLogin.lockUser(kit.aliceId, { reason: 'compromised' })
  t.equal((await kit.inject('GET', '/auth/validate', second)).statusCode, 401, 'a lock ends the impersonation token on the next request')
  t.same(await kit.app.jwtLogin.sessions(kit.aliceId), [], 'and it is no longer listed')
})

t.test('authenticateWith checks allowImpersonation when the host makes its hook', async (t) => {
  const kit = await kitOf(t)
  const { app } = kit
  t.throws(() => app.jwtLogin.authenticateWith({ allowImpersonation: 'no' as unknown as boolean }), JwtLoginSettingsError, 'allowImpersonation must be a boolean')
  t.throws(() => app.jwtLogin.authenticateWith({ allowImpersonation: 0 as unknown as boolean }), { message: /authenticateWith\/allowImpersonation/ }, 'the refusal names the option')
  t.type(app.jwtLogin.authenticateWith({ allowImpersonation: true }), 'function', 'true is taken')
})

/** A host of its own (not ready yet, for its routes): the plugin on alice, bob and carol, none of them verified. */
async function hostApp (): Promise<{ app: FastifyInstance, users: MemoryUserAdapter, alice: MemoryUser, bob: MemoryUser, carol: MemoryUser }> {
  const users = new MemoryUserAdapter()
  const [alice, bob, carol] = [await users.addUser(ALICE), await users.addUser(BOB), await users.addUser(CAROL)]
  const app = Fastify()
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  return { app, users, alice, bob, carol }
}

t.test('host routes behind the guard', async (t) => {
  const { app, users, alice, bob } = await hostApp()
  app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ actor: request.jwtLogin === null ? 'none' : request.jwtLogin.actor }))
  app.get('/billing', { preHandler: app.jwtLogin.authenticateWith({ allowImpersonation: false }) }, async () => ({ ok: true }))
  app.get('/recent', { preHandler: app.jwtLogin.authenticateWith({ maxAge: '5m' }) }, async () => ({ ok: true }))
  app.get('/both', { preHandler: app.jwtLogin.authenticateWith({ maxAge: '5m', allowImpersonation: false }) }, async () => ({ ok: true }))
  await app.ready()
  t.teardown(async () => { await app.close() })
  const { jwt } = await app.jwtLogin.impersonate({ actorId: bob.ID, userId: alice.ID, reason: 'ticket' })
  const own = app.jwtLogin.sign(users.toPublicUser(alice))
  const get = async (url: string, token: string): Promise<LightMyRequestResponse> => await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
  t.same((await get('/me', jwt)).json(), { actor: { id: bob.ID } }, 'request.jwtLogin.actor is the actor')
  t.same((await get('/me', own)).json(), { actor: null }, 'null for the user\'s own token')
  const billing = await get('/billing', jwt)
  t.equal(billing.statusCode, 403, 'allowImpersonation: false refuses it: 403')
  t.match(billing.json(), { success: false, data: { message: 'Not while acting as another user: this needs the user\'s own sign-in.', errorCode: 252 } }, 'in the envelope, 252')
  t.equal((await get('/billing', own)).statusCode, 200, 'a token of the user passes')
  t.equal((await get('/recent', jwt)).json().data.errorCode, 220, 'never recent: maxAge refuses it (220)')
  t.equal((await get('/both', jwt)).json().data.errorCode, 252, '252 before 220')
})

t.test('lifetime: 15 minutes by default, at most an hour', async (t) => {
  const kit = await kitOf(t)
  const life = (jwt: string): number => (claimsOf(jwt).exp as number) - (claimsOf(jwt).iat as number)
  t.equal(life(await kit.actAsAlice()), 900, 'default: 15 minutes')
  t.equal(life(await kit.actAsAlice('1h')), 3600, '\'1h\' is the maximum')
  t.equal(life(await kit.actAsAlice(60)), 60, 'seconds as a number')
  for (const lifetime of [3601, '2h', 0, -5, 'soon', '0s', Number.NaN]) {
    await t.rejects(kit.actAsAlice(lifetime), JwtLoginSettingsError, `lifetime ${String(lifetime)} is refused`)
  }
  kit.clock.advance(900_000 + 60_000)
  t.same((await kit.app.jwtLogin.sessions(kit.aliceId)).map(session => session.actorId), [kit.bobId], 'once expired, they leave the list: the hour\'s stays')
})

t.test('refusals change nothing: bad options, unknown users, the same id, a locked user, a chain', async (t) => {
  const kit = await kitOf(t)
  const { app, aliceId, bobId, carolId } = kit
  const started = seen(app, 'impersonation.started')
  const good = { actorId: bobId, userId: aliceId, reason: 'ticket' }
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...good, actorId: 0 }, /impersonate\/actorId/],
    [{ ...good, actorId: '2' }, /impersonate\/actorId/],
    [{ ...good, userId: 1.5 }, /impersonate\/userId/],
    [{ ...good, reason: '' }, /impersonate\/reason/],
    [{ ...good, reason: 'x'.repeat(501) }, /impersonate\/reason/],
    [{ ...good, reason: undefined }, /impersonate\/reason/],
    [{ ...good, actorId: aliceId }, /impersonate\/actorId.*another user/],
    [{ ...good, userId: 999 }, /impersonate\/userId.*adapter/],
    [{ ...good, actorId: 999 }, /impersonate\/actorId.*adapter/]
  ]
  for (const [options, message] of bad) {
    await t.rejects(app.jwtLogin.impersonate(options as never), { name: 'JwtLoginSettingsError', message }, `refused: ${JSON.stringify(options)}`)
  }
  await t.rejects(app.jwtLogin.impersonate(undefined as never), JwtLoginSettingsError, 'no options')

  await app.jwtLogin.lockUser(aliceId, { reason: 'abuse' })
  await t.rejects(app.jwtLogin.impersonate(good), { code: 'ERR_JWT_LOGIN_USER_LOCKED', errorCode: 251, statusCode: 403 }, 'a locked user: 251')
  await app.jwtLogin.unlockUser(aliceId)

  // carol acts as bob: bob cannot act as anyone meanwhile
  const { jwt: carolAsBob } = await app.jwtLogin.impersonate({ actorId: carolId, userId: bobId, reason: 'audit' })
  await t.rejects(app.jwtLogin.impersonate(good), { code: 'ERR_JWT_LOGIN_IMPERSONATION_REFUSED', errorCode: 252, statusCode: 403 }, 'no chain: 252')
  t.same(await app.jwtLogin.sessions(aliceId), [], 'nothing was written for alice')
  t.equal(started.length, 1, 'only carol\'s impersonation was told')
  t.match(started[0], { actorId: carolId, userId: bobId, reason: 'audit', sessionId: claimsOf(carolAsBob).sid, expiresAt: new Date((claimsOf(carolAsBob).exp as number) * 1000).toISOString() }, 'impersonation.started')
  await app.jwtLogin.revoke(carolAsBob)
  t.ok((await app.jwtLogin.impersonate(good)).jwt, 'once it ended, bob may act again')
  await app.jwtLogin.lockUser(bobId, { reason: 'staff account taken over' })
  await t.rejects(app.jwtLogin.impersonate({ ...good, reason: 'again' }), { code: 'ERR_JWT_LOGIN_USER_LOCKED', errorCode: 251 }, 'a locked actor acts as nobody: 251')
})

t.test('a chain racing in: of two calls acting as each other\'s actor, the one whose actor became acted as is taken back', async (t) => {
  const kit = await kitOf(t)
  const { app, aliceId, bobId, carolId } = kit
  const [bobAsAlice, carolAsBob] = await Promise.allSettled([
    app.jwtLogin.impersonate({ actorId: bobId, userId: aliceId, reason: 'one' }),
    app.jwtLogin.impersonate({ actorId: carolId, userId: bobId, reason: 'two' })
  ])
  t.equal(bobAsAlice.status, 'rejected', 'bob, acted as meanwhile, is refused')
  t.equal(carolAsBob.status, 'fulfilled', 'carol acts as bob')
  t.same(await app.jwtLogin.sessions(aliceId), [], 'the refused session is not listed')
})

t.test('the user\'s own sessions are not evicted under sessions.maxPerUser', async (t) => {
  const kit = await kitOf(t, { sessions: { enabled: true, maxPerUser: 2 } })
  const first = await kit.token()
  kit.clock.advance(1000)
  const second = await kit.token()
  const acting = [await kit.actAsAlice(), await kit.actAsAlice(), await kit.actAsAlice()]
  for (const jwt of [first, second, ...acting]) t.equal((await kit.inject('GET', '/auth/validate', jwt)).statusCode, 200, 'every session lives')
  t.equal((await kit.app.jwtLogin.sessions(kit.aliceId)).length, 5, 'all five are listed')
  kit.clock.advance(1000)
  const evicted = seen(kit.app, 'session.evicted')
  const third = await kit.token()
  t.same(evicted.map(event => event.sessionId), [claimsOf(first).sid], 'a new sign-in evicts the oldest own session only')
  for (const jwt of [second, third, ...acting]) t.equal((await kit.inject('GET', '/auth/validate', jwt)).statusCode, 200, 'the others live')
})

t.test('the flow: a failure once the session joined the index ends it, and it is never listed', async (t) => {
  const kit = await flowKit({ sessions: { enabled: true } })
  const bob = await kit.users.addUser(BOB)
  const { sessions } = kit.ctx
  const list = sessions.list.bind(sessions)
  let reads = 0
  // the actor's index read again after the write fails
  sessions.list = async (userId) => {
    reads++
    if (reads === 2) throw new Error('the store is down')
    return await list(userId)
  }
  await t.rejects(impersonate(kit.ctx, kit.settings, { actorId: bob.ID, userId: kit.aliceId, reason: 'ticket' }), { message: 'the store is down' }, 'the failure is answered')
  sessions.list = list
  t.same(await sessions.list(kit.aliceId), [], 'the session is not listed')
  const stored = JSON.parse(await kit.store.get(sessionIndexKey(kit.aliceId)) ?? '[]') as unknown[]
  t.same(stored, [], 'and it left the index')
  const { jwt } = await impersonate(kit.ctx, kit.settings, { actorId: bob.ID, userId: kit.aliceId, reason: 'ticket' })
  t.ok(await kit.ctx.tokens.verify(kit.settings, jwt, 'access'), 'a retry completes')
})

t.test('events a host route\'s handler causes carry the actor; two interleaved requests keep their own, and nothing outlives the handler', async (t) => {
  const { app, users, alice, bob, carol } = await hostApp()
  // both requests wait in their handlers until both are there, so their awaits interleave
  let arrived = 0
  let release: () => void = () => {}
  const both = new Promise<void>((resolve) => { release = resolve })
  app.post('/host/out', { preHandler: app.jwtLogin.authenticate }, async (request) => {
    if (++arrived === 2) release()
    await both
    await app.jwtLogin.endAllSessions(request.jwtLogin!.user.ID)
    return { ok: true }
  })
  // a route without the guard: an impersonation token there is no admitted one
  app.post('/host/plain/:id', async (request) => {
    await app.jwtLogin.endAllSessions(Number((request.params as { id: string }).id))
    return { ok: true }
  })
  await app.ready()
  t.teardown(async () => { await app.close() })
  const { jwt } = await app.jwtLogin.impersonate({ actorId: bob.ID, userId: alice.ID, reason: 'ticket' })
  const own = app.jwtLogin.sign(users.toPublicUser(carol))
  const ended = seen(app, 'session.ended')
  const post = async (url: string, token: string): Promise<LightMyRequestResponse> => await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` } })
  const answers = await Promise.all([post('/host/out', jwt), post('/host/out', own)])
  t.same(answers.map(res => res.statusCode), [200, 200], 'both handled')
  t.match(ended.find(event => event.userId === alice.ID), { actorId: bob.ID }, 'the impersonated request\'s event names its actor')
  t.notOk('actorId' in (ended.find(event => event.userId === carol.ID) ?? { actorId: 'missing' }), 'the other request\'s event names none')
  ended.length = 0
  t.equal((await post(`/host/plain/${carol.ID}`, jwt)).statusCode, 200, 'an unguarded route')
  t.same(ended, [{ userId: carol.ID, sessionId: null, reason: 'host' }], 'no actor where no guard admitted one')
})
