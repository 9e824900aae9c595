// The session routes' contract (GET /sessions, DELETE /sessions/{id}, DELETE /sessions, DELETE /devices/{id}), the host API and the session events, on the memory store.
import { randomUUID } from 'node:crypto'
import { Validator } from '@seriousme/openapi-schema-validator'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { BEARER_SCHEME, jwtLoginOpenApi, type MailMessage } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { ALICE, buildApp, HS_SECRET, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, post, PREFIX } from '../helpers/http.js'
import { collect, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { buildDocumentedHost } from '../helpers/openapi.js'
import { codeIn } from '../helpers/reset.js'
import { BOB, buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

const SESSIONS = `${PREFIX}/sessions`
const ON = { sessions: { enabled: true }, refresh: { enabled: true } }
const OK_ONE = { success: true, data: { message: 'The session was ended.' } }
const OK_ALL = { success: true, data: { message: 'Every session was ended.' } }
const OK_OTHERS = { success: true, data: { message: 'Every other session was ended.' } }
const LIVE: [number, undefined] = [200, undefined]
const REVOKED: [number, number] = [401, 55]

interface Session { jwt: string, refresh_token: string, sid: string }
interface Who { email: string, password: string }
interface From { ip?: string, ua?: string, who?: Who }

const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })
const iso = (ms: number): string => new Date(ms).toISOString()

/** A password sign-in from `ip` with `ua` (light-my-request's own `lightMyRequest` unless told), as `who` (alice). */
async function signIn (app: FastifyInstance, { ip = '127.0.0.1', ua, who = ALICE }: From = {}): Promise<Session> {
  const res = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    payload: { email: who.email, password: who.password },
    headers: ua === undefined ? {} : { 'user-agent': ua },
    remoteAddress: ip
  })
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
  const data = res.json().data as { jwt: string, refresh_token: string }
  return { ...data, sid: claimsOf(data.jwt).sid as string }
}

const list = async (app: FastifyInstance, jwt: string): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'GET', url: SESSIONS, headers: bearer(jwt) })
const endOne = async (app: FastifyInstance, jwt: string, id: string): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'DELETE', url: `${SESSIONS}/${id}`, headers: bearer(jwt) })
const endAll = async (app: FastifyInstance, jwt: string, keepCurrent?: string): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'DELETE', url: keepCurrent === undefined ? SESSIONS : `${SESSIONS}?keep_current=${keepCurrent}`, headers: bearer(jwt) })
const validate = async (app: FastifyInstance, jwt: string): Promise<[number, number | undefined]> =>
  errorOf(await post(app, '/auth/validate', { JWT: jwt }))
const refresh = async (app: FastifyInstance, refreshToken: string): Promise<LightMyRequestResponse> =>
  await post(app, '/auth/refresh', { refresh_token: refreshToken })
/** The ids `GET /sessions` lists for `jwt`'s user, oldest first. */
async function listedIds (app: FastifyInstance, jwt: string): Promise<string[]> {
  const res = await list(app, jwt)
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.body}`)
  return (res.json().data.sessions as Array<{ id: string }>).map(session => session.id)
}
const validateAll = async (app: FastifyInstance, sessions: Session[]): Promise<Array<[number, number | undefined]>> =>
  await Promise.all(sessions.map(async session => await validate(app, session.jwt)))

function noStore (t: Test, res: LightMyRequestResponse, name: string): void {
  t.equal(res.headers['cache-control'], 'no-store', `${name}: Cache-Control: no-store`)
}

/** A second user of the memory adapter; answers its id. */
async function addBob (users: MemoryUserAdapter): Promise<number> {
  return (await users.addUser(BOB)).ID
}

t.test('sessions.enabled off (the default): 403 / 212 on the four routes, nothing ends; the host API works either way', async (t) => {
  const { app } = await buildApp({ refresh: { enabled: true } })
  t.teardown(() => app.close())
  const session = await signIn(app)
  const other = await signIn(app)
  const ended = collect(app, 'session.ended')
  const routes: Array<['GET' | 'DELETE', string]> = [['GET', SESSIONS], ['DELETE', `${SESSIONS}/${other.sid}`], ['DELETE', SESSIONS], ['DELETE', `${PREFIX}/devices/abc`]]
  for (const [method, url] of routes) {
    const res = await app.inject({ method, url, headers: bearer(session.jwt) })
    t.strictSame(res.json(), { success: false, data: { message: 'Session management is not enabled.', errorCode: 212, error_code: 212 } }, `${method} ${url}`)
    t.equal(res.statusCode, 403)
    noStore(t, res, `${method} ${url}`)
    t.same(errorOf(await app.inject({ method, url })), [403, 212], 'the switch before the token')
  }
  t.same(await validateAll(app, [session, other]), [LIVE, LIVE], 'no session ended')
  t.equal((await refresh(app, other.refresh_token)).statusCode, 200)
  t.strictSame(ended, [])
  t.same((await app.jwtLogin.sessions(1)).map(s => s.id), [session.sid, other.sid], 'the index is kept with the routes off')
})

t.test('GET /sessions: the user\'s live sessions, oldest first, with how each began; last_refreshed_at once refreshed', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const bobId = await addBob(users)
  const t0 = clock.now
  const first = await signIn(app, { ip: '198.51.100.7', ua: 'Firefox/140.0' })
  clock.advance(1000)
  const second = await signIn(app, { ip: '2001:db8::1', ua: 'x'.repeat(300) })
  clock.advance(1000)
  const third = await signIn(app, { ip: '203.0.113.9', ua: '' })
  const bobs = await signIn(app, { who: BOB })

  const res = await list(app, second.jwt)
  t.equal(res.statusCode, 200)
  noStore(t, res, 'GET /sessions')
  const item = { method: 'password' }
  t.strictSame(res.json(), {
    success: true,
    data: {
      sessions: [
        { id: first.sid, current: false, started_at: iso(t0), ...item, ip: '198.51.100.7', user_agent: 'Firefox/140.0' },
        { id: second.sid, current: true, started_at: iso(t0 + 1000), ...item, ip: '2001:db8::1', user_agent: 'x'.repeat(256) },
        { id: third.sid, current: false, started_at: iso(t0 + 2000), ...item, ip: '203.0.113.9' }
      ],
      devices: []
    }
  }, 'every field; the User-Agent cut to 256 characters, none is null; bob\'s session is not there')
  t.same(await listedIds(app, bobs.jwt), [bobs.sid], 'bob sees his own only')

  clock.advance(5000)
  const refreshed = await refresh(app, first.refresh_token)
  t.equal(refreshed.statusCode, 200)
  const next = refreshed.json().data as { jwt: string }
  t.equal(claimsOf(next.jwt).sid, first.sid, 'a refresh stays in its session')
  const after = (await list(app, next.jwt)).json().data.sessions as Array<{ id: string, current: boolean, last_refreshed_at?: string, started_at: string }>
  t.strictSame(after.map(s => [s.id, s.current, s.started_at, s.last_refreshed_at]), [
    [first.sid, true, iso(t0), iso(t0 + 7000)],
    [second.sid, false, iso(t0 + 1000), undefined],
    [third.sid, false, iso(t0 + 2000), undefined]
  ], 'the refreshed session, current for its new token, with the time of its rotation; the others have none')
  t.same((await app.jwtLogin.sessions(bobId)).map(s => s.id), [bobs.sid])
})

t.test('DELETE /sessions/{id} ends exactly that session; another user\'s, an ended or an unknown one is 404 / 213; a malformed id 400', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  await addBob(users)
  const [a, b, c] = [await signIn(app), await signIn(app), await signIn(app)]
  const bobs = await signIn(app, { who: BOB })
  const ended = collect(app, 'session.ended')
  clock.advance(1000)

  const res = await endOne(app, a.jwt, b.sid)
  t.equal(res.statusCode, 200)
  t.same(res.json(), OK_ONE)
  noStore(t, res, 'DELETE /sessions/{id}')
  t.same(await validateAll(app, [a, b, c, bobs]), [LIVE, REVOKED, LIVE, LIVE], 'that one session is refused, the others validate')
  t.same(errorOf(await refresh(app, b.refresh_token)), [401, 51], 'its refresh token too')
  t.same(await listedIds(app, a.jwt), [a.sid, c.sid])
  t.strictSame(ended, [{ userId: 1, sessionId: b.sid, reason: 'sign_out' }])

  const notFound = { success: false, data: { message: 'No such session.', errorCode: 213, error_code: 213 } }
  const bobsId = await endOne(app, a.jwt, bobs.sid)
  t.same([bobsId.statusCode, bobsId.json()], [404, notFound], 'another user\'s session')
  noStore(t, bobsId, '404')
  t.same(await validate(app, bobs.jwt), LIVE, 'and it still validates')
  t.same(await listedIds(app, bobs.jwt), [bobs.sid])
  t.same(errorOf(await endOne(app, a.jwt, b.sid)), [404, 213], 'an ended session')
  t.same(errorOf(await endOne(app, a.jwt, `${clock.now.toString(36)}-${randomUUID()}`)), [404, 213], 'an unknown id of the right form')
  t.same(errorOf(await endOne(app, a.jwt, 'not-a-session')), [404, 213], 'an id of another form')
  for (const id of ['a'.repeat(65), 'bad.id', 'bad%20id', 'bad%2Fid', '%C3%A9t%C3%A9']) {
    t.same(errorOf(await endOne(app, a.jwt, id)), [400, 203], `malformed: ${id}`)
  }
  t.same(ended.length, 1, 'nothing else ended')
  t.same(await validateAll(app, [a, c, bobs]), [LIVE, LIVE, LIVE])
  t.same(await listedIds(app, a.jwt), [a.sid, c.sid])

  t.same((await endOne(app, a.jwt, a.sid)).json(), OK_ONE, 'its own session, by its id')
  t.same(await validateAll(app, [a, c]), [REVOKED, LIVE])
  t.same(errorOf(await list(app, a.jwt)), REVOKED, 'refused on the next request')
})

t.test('DELETE /sessions: every access token already issued is refused, one the host signed too; a sign-in afterwards works', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  await addBob(users)
  const [a, b] = [await signIn(app), await signIn(app)]
  const refreshed = (await refresh(app, b.refresh_token)).json().data as { jwt: string, refresh_token: string }
  const alice = users.toPublicUser(await users.findById(1) as NonNullable<Awaited<ReturnType<typeof users.findById>>>)
  const signed = app.jwtLogin.sign(alice)
  const bobs = await signIn(app, { who: BOB })
  t.same(await validate(app, signed), LIVE, 'the host\'s token validates before')
  const ended = collect(app, 'session.ended')
  clock.advance(1000)

  const res = await endAll(app, a.jwt)
  t.equal(res.statusCode, 200)
  t.same(res.json(), OK_ALL)
  noStore(t, res, 'DELETE /sessions')
  const issued: Array<[string, string]> = [['the caller', a.jwt], ['another', b.jwt], ['a refreshed one', refreshed.jwt], ['signed by fastify.jwtLogin.sign', signed]]
  for (const [name, jwt] of issued) {
    t.same(await validate(app, jwt), REVOKED, name)
  }
  t.same(errorOf(await refresh(app, refreshed.refresh_token)), [401, 51], 'refresh tokens too')
  t.same(errorOf(await list(app, a.jwt)), REVOKED)
  t.same(await validate(app, bobs.jwt), LIVE, 'another user is untouched')
  t.strictSame(ended, [{ userId: 1, sessionId: null, reason: 'sign_out_everywhere' }])
  t.same(await app.jwtLogin.sessions(1), [], 'none is listed')

  clock.advance(1000)
  const fresh = await signIn(app)
  t.same(await validate(app, fresh.jwt), LIVE, 'a new sign-in afterwards works')
  const listed = (await list(app, fresh.jwt)).json().data.sessions as Array<{ id: string, current: boolean }>
  t.same(listed.map(s => [s.id, s.current]), [[fresh.sid, true]], 'and is listed alone')
})

t.test('DELETE /sessions?keep_current=true keeps the caller\'s session only, and only until the next sign-out everywhere', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const [a, b, c] = [await signIn(app), await signIn(app), await signIn(app)]
  const ended = collect(app, 'session.ended')
  clock.advance(1000)

  const res = await endAll(app, b.jwt, 'true')
  t.same([res.statusCode, res.json()], [200, OK_OTHERS])
  t.same(await validateAll(app, [a, b, c]), [REVOKED, LIVE, REVOKED], 'only the caller\'s stays')
  t.same(errorOf(await refresh(app, a.refresh_token)), [401, 51])
  const kept = await refresh(app, b.refresh_token)
  t.equal(kept.statusCode, 200, 'the kept session refreshes')
  const b2 = { ...b, ...kept.json().data as { jwt: string, refresh_token: string } }
  t.same(await listedIds(app, b2.jwt), [b.sid])
  t.strictSame(ended, [{ userId: 1, sessionId: null, reason: 'sign_out_everywhere', kept: b.sid }])

  clock.advance(1000)
  const d = await signIn(app)
  t.same(await listedIds(app, d.jwt), [b.sid, d.sid], 'a sign-in afterwards joins it')
  t.same(errorOf(await endAll(app, d.jwt, 'yes')), [400, 203], 'keep_current takes true or false only')
  t.same(await validateAll(app, [b2, d]), [LIVE, LIVE], 'nothing ended by the malformed one')
  clock.advance(1000)
  t.same((await endAll(app, d.jwt, 'false')).json(), OK_ALL, 'keep_current=false ends them all')
  t.same(await validateAll(app, [b2, d]), [REVOKED, REVOKED], 'the session kept before is not kept again')
  t.same(errorOf(await refresh(app, b2.refresh_token)), [401, 51])
})

t.test('the token: Bearer or the JWT field (query, or body on DELETE); missing 400 / 53; an interim token 401 / 110; a bad one 401', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const [a, b, c, d] = [await signIn(app), await signIn(app), await signIn(app), await signIn(app)]
  clock.advance(1000)

  const byQuery = await app.inject({ method: 'GET', url: `${SESSIONS}?JWT=${a.jwt}` })
  t.equal(byQuery.statusCode, 200, 'GET with ?JWT=')
  t.same((byQuery.json().data.sessions as Array<{ current: boolean }>).map(s => s.current), [true, false, false, false])
  t.same((await app.inject({ method: 'DELETE', url: `${SESSIONS}/${d.sid}?JWT=${a.jwt}` })).json(), OK_ONE, 'DELETE one with ?JWT=')
  t.same((await app.inject({ method: 'DELETE', url: `${SESSIONS}/${c.sid}`, payload: { JWT: a.jwt } })).json(), OK_ONE, 'DELETE one with the JWT in the body')
  t.same(await validateAll(app, [a, b, c, d]), [LIVE, LIVE, REVOKED, REVOKED])
  t.same(errorOf(await app.inject({ method: 'GET', url: `${SESSIONS}?JWT=${a.jwt}`, headers: bearer(b.jwt) })), [400, 203], 'two different tokens')

  const routes: Array<['GET' | 'DELETE', string]> = [['GET', SESSIONS], ['DELETE', `${SESSIONS}/${b.sid}`], ['DELETE', SESSIONS], ['DELETE', `${PREFIX}/devices/abc`]]
  for (const [method, url] of routes) {
    const missing = await app.inject({ method, url })
    t.same([missing.statusCode, missing.json()], [400, { success: false, data: { message: 'The JWT is missing.', errorCode: 53, error_code: 53 } }], `${method} ${url} without a token`)
    noStore(t, missing, 'no token')
    t.same(errorOf(await app.inject({ method, url, headers: bearer('a.b.c') })), [401, 22], 'a token that is no JWT')
  }
  t.same(await validateAll(app, [a, b]), [LIVE, LIVE], 'nothing ended by the refused requests')

  t.same((await app.inject({ method: 'DELETE', url: `${SESSIONS}?JWT=${b.jwt}&keep_current=true` })).json(), OK_OTHERS, 'DELETE all with ?JWT= and keep_current')
  t.same(await validateAll(app, [a, b]), [REVOKED, LIVE])

  // an interim token (a password sign-in of a two-factor user) is refused before anything is read or ended
  const twoFactor = await buildTwoFactorApp({ settings: ON })
  t.teardown(() => twoFactor.app.close())
  const { app: tf, interim, submit, secret } = twoFactor
  const bobs = (await submit({ JWT: await interim(), code: await totpAt(secret, twoFactor.clock.now) })).json().data as { jwt: string }
  const token = await interim()
  for (const [method, url] of [['GET', SESSIONS], ['DELETE', `${SESSIONS}/${claimsOf(bobs.jwt).sid as string}`], ['DELETE', SESSIONS], ['DELETE', `${PREFIX}/devices/abc`]] as const) {
    t.same(errorOf(await tf.inject({ method, url, headers: bearer(token) })), [401, 110], `${method} ${url} with an interim token`)
    t.same(errorOf(await tf.inject({ method, url: `${url}?JWT=${token}` })), [401, 110], 'in the query too')
  }
  t.same(await validate(tf, bobs.jwt), LIVE, 'bob\'s session lives on')
  t.same(await listedIds(tf, bobs.jwt), [claimsOf(bobs.jwt).sid])
})

t.test('/?rest_route=: GET and DELETE reach the session routes', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const [a, b, c] = [await signIn(app), await signIn(app), await signIn(app)]
  clock.advance(1000)
  const rest = `/?rest_route=${SESSIONS}`
  const listed = await app.inject({ method: 'GET', url: `${rest}&JWT=${a.jwt}` })
  t.equal(listed.statusCode, 200, listed.body)
  noStore(t, listed, 'GET through ?rest_route=')
  t.same((listed.json().data.sessions as Array<{ id: string }>).map(s => s.id), [a.sid, b.sid, c.sid])
  t.same((await app.inject({ method: 'DELETE', url: `/?rest_route=${SESSIONS}/${c.sid}`, headers: bearer(a.jwt) })).json(), OK_ONE)
  t.same(await validateAll(app, [a, b, c]), [LIVE, LIVE, REVOKED])
  t.same(errorOf(await app.inject({ method: 'DELETE', url: `/?rest_route=${SESSIONS}/${c.sid}`, headers: bearer(a.jwt) })), [404, 213])
  t.same((await app.inject({ method: 'DELETE', url: `${rest}&keep_current=true`, headers: bearer(b.jwt) })).json(), OK_OTHERS)
  t.same(await validateAll(app, [a, b]), [REVOKED, LIVE])
  t.same((await app.inject({ method: 'DELETE', url: rest, headers: bearer(b.jwt) })).json(), OK_ALL)
  t.same(await validate(app, b.jwt), REVOKED)
  t.same(errorOf(await app.inject({ method: 'GET', url: rest })), [400, 53], 'rest_route is not taken for a token')
})

interface Operation {
  operationId?: string
  tags?: string[]
  security?: unknown
  parameters?: Array<{ in: string, name: string, schema?: Record<string, unknown> }>
  requestBody?: unknown
  responses: Record<string, { content?: { 'application/json': { schema: { properties: { data: { properties: { errorCode?: { enum?: number[] } } } } } } } }>
}

t.test('OpenAPI: the four routes are documented, tagged, secured by the Bearer scheme, with their errors', async (t) => {
  const app = await buildDocumentedHost({ openapi: { openapi: '3.0.3', info: { title: 'host', version: '1.0.0' } } })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>>, tags?: Array<{ name: string }> }
  const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0])
  t.same(result.errors, undefined, 'the document is valid OpenAPI 3')
  const errorsOf = (op: Operation | undefined, status: string): number[] =>
    op?.responses[status]?.content?.['application/json'].schema.properties.data.properties.errorCode?.enum ?? []
  const params = (op: Operation | undefined): string[] => (op?.parameters ?? []).map(p => `${p.in}:${p.name}`).sort()

  const operations: Array<[string, string, string, string[]]> = [
    [`${PREFIX}/sessions`, 'get', 'jwtLoginSessions', ['query:JWT']],
    [`${PREFIX}/sessions/{id}`, 'delete', 'jwtLoginEndSession', ['path:id', 'query:JWT']],
    [`${PREFIX}/sessions`, 'delete', 'jwtLoginEndSessions', ['query:JWT', 'query:keep_current']],
    [`${PREFIX}/devices/{id}`, 'delete', 'jwtLoginForgetDevice', ['path:id', 'query:JWT']]
  ]
  for (const [path, method, operationId, parameters] of operations) {
    const op = doc.paths[path]?.[method]
    t.ok(op, `${method.toUpperCase()} ${path} is documented`)
    t.equal(op?.operationId, operationId)
    t.same(op?.tags, ['sessions'])
    t.same(op?.security, [{ [BEARER_SCHEME]: [] }, {}], 'the header or the JWT field')
    t.same(params(op), parameters)
    t.notOk(op?.requestBody, 'no body')
    t.ok(errorsOf(op, '403').includes(212), 'the switch: 212')
    t.ok(errorsOf(op, '400').includes(53), 'no token: 53')
    t.ok([110, 55, 24].every(code => errorsOf(op, '401').includes(code)), 'an interim, revoked or orphaned token')
    t.notOk(Object.hasOwn(op?.responses ?? {}, '429'), 'no per-IP limit')
  }
  t.same(errorsOf(doc.paths[`${PREFIX}/sessions/{id}`]?.delete, '404'), [213])
  t.same(errorsOf(doc.paths[`${PREFIX}/devices/{id}`]?.delete, '404'), [214])
  t.notOk(Object.hasOwn(doc.paths[`${PREFIX}/sessions`]?.get?.responses ?? {}, '404'))
  const id = doc.paths[`${PREFIX}/sessions/{id}`]?.delete?.parameters?.find(p => p.name === 'id')
  t.match(id?.schema, { maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }, 'the id\'s form')
  const keep = doc.paths[`${PREFIX}/sessions`]?.delete?.parameters?.find(p => p.name === 'keep_current')
  t.match(keep?.schema, { type: 'string', pattern: '^(true|false)$' }, 'keep_current: true or false')
  t.ok(jwtLoginOpenApi.tags.some(tag => tag.name === 'sessions'), 'the sessions tag is one of the plugin\'s')
  t.ok(doc.tags?.some(tag => tag.name === 'sessions'), 'and described in the document')
})

t.test('events: session.started on a sign-in; session.ended for sign_out (DELETE one, /auth/revoke), sign_out_everywhere, reuse, host', async (t) => {
  const clock = testClock()
  const { app } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const started = collect(app, 'session.started')
  const ended = collect(app, 'session.ended')
  const [a, b, c] = [await signIn(app, { ip: '198.51.100.1' }), await signIn(app), await signIn(app)]
  t.strictSame(started, [
    { userId: 1, sessionId: a.sid, method: 'password', provider: null, secondFactor: null, ip: '198.51.100.1' },
    { userId: 1, sessionId: b.sid, method: 'password', provider: null, secondFactor: null, ip: '127.0.0.1' },
    { userId: 1, sessionId: c.sid, method: 'password', provider: null, secondFactor: null, ip: '127.0.0.1' }
  ])
  clock.advance(1000)

  await endOne(app, a.jwt, b.sid)
  t.equal((await post(app, '/auth/revoke', { JWT: c.jwt })).statusCode, 200)
  t.same(await listedIds(app, a.jwt), [a.sid], 'a session signed out by /auth/revoke is not listed')

  // a refresh token two rotations old is a reuse: the session ends
  const r1 = (await refresh(app, a.refresh_token)).json().data as Session
  const r2 = (await refresh(app, r1.refresh_token)).json().data as Session
  t.same(errorOf(await refresh(app, a.refresh_token)), [401, 51], 'the reuse is refused')
  t.same(await validateAll(app, [a, r1, r2]), [REVOKED, REVOKED, REVOKED], 'and its session ended')

  const d = await signIn(app)
  const e = await signIn(app)
  clock.advance(1000)
  await endAll(app, d.jwt, 'true')
  t.ok(await app.jwtLogin.endSession(1, d.sid))
  clock.advance(1000)
  await app.jwtLogin.endAllSessions(1)
  t.strictSame(ended, [
    { userId: 1, sessionId: b.sid, reason: 'sign_out' },
    { userId: 1, sessionId: c.sid, reason: 'sign_out' },
    { userId: 1, sessionId: a.sid, reason: 'reuse' },
    { userId: 1, sessionId: null, reason: 'sign_out_everywhere', kept: d.sid },
    { userId: 1, sessionId: d.sid, reason: 'host' },
    { userId: 1, sessionId: null, reason: 'host' }
  ])
  t.equal(started.length, 5, 'one session.started per sign-in, none for a refresh')
  t.same(await validate(app, e.jwt), REVOKED)
  t.notOk(JSON.stringify([...started, ...ended]).includes(a.jwt.split('.')[2] as string), 'no token in the events')
})

t.test('events: a password reset ends every session (session.ended, password_reset); none is listed', async (t) => {
  const clock = testClock()
  const sent: MailMessage[] = []
  const { app } = await buildApp({ ...ON, resetPassword: { enabled: true } }, { clock, mailer: { send: async (message) => { sent.push(message) } } })
  t.teardown(() => app.close())
  const [a, b] = [await signIn(app), await signIn(app)]
  const ended = collect(app, 'session.ended')
  clock.advance(1000)
  const mailed = new Promise(resolve => app.jwtLogin.events.once('reset.code_sent', resolve))
  t.equal((await post(app, '/user/reset_password', { email: ALICE.email })).statusCode, 200)
  await mailed
  const code = codeIn((sent.at(-1) as MailMessage).text)
  const done = await app.inject({ method: 'PUT', url: `${PREFIX}/user/reset_password`, payload: { email: ALICE.email, code, new_password: 'a brand new passphrase' } })
  t.equal(done.statusCode, 200, done.body)
  t.strictSame(ended, [{ userId: 1, sessionId: null, reason: 'password_reset' }])
  t.same(await validateAll(app, [a, b]), [REVOKED, REVOKED])
  t.same(await app.jwtLogin.sessions(1), [])
  clock.advance(1000)
  const fresh = await signIn(app, { who: { email: ALICE.email, password: 'a brand new passphrase' } })
  t.same(await listedIds(app, fresh.jwt), [fresh.sid])
})

t.test('host API: sessions, endSession (true for the user\'s live session only), endAllSessions', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const bobId = await addBob(users)
  const t0 = clock.now
  const a = await signIn(app, { ip: '198.51.100.4', ua: 'curl/8.0' })
  clock.advance(1000)
  const b = await signIn(app)
  const bobs = await signIn(app, { who: BOB })
  clock.advance(1000)
  t.strictSame(await app.jwtLogin.sessions(1), [
    { id: a.sid, startedAt: new Date(t0), lastRefreshedAt: null, method: 'password', provider: null, secondFactor: null, actorId: null, ip: '198.51.100.4', userAgent: 'curl/8.0' },
    { id: b.sid, startedAt: new Date(t0 + 1000), lastRefreshedAt: null, method: 'password', provider: null, secondFactor: null, actorId: null, ip: '127.0.0.1', userAgent: 'lightMyRequest' }
  ])
  await refresh(app, a.refresh_token)
  t.same((await app.jwtLogin.sessions(1))[0]?.lastRefreshedAt, new Date(t0 + 2000))
  t.same(await app.jwtLogin.sessions(999), [], 'a user without sessions')

  t.equal(await app.jwtLogin.endSession(1, b.sid), true)
  t.same(await validateAll(app, [a, b, bobs]), [LIVE, REVOKED, LIVE])
  t.same(errorOf(await refresh(app, b.refresh_token)), [401, 51])
  t.equal(await app.jwtLogin.endSession(1, b.sid), false, 'an ended session')
  t.equal(await app.jwtLogin.endSession(1, bobs.sid), false, 'another user\'s session')
  t.equal(await app.jwtLogin.endSession(1, 'no-such-session'), false, 'an unknown id')
  t.same(await validate(app, bobs.jwt), LIVE, 'bob\'s session lives on')
  t.same((await app.jwtLogin.sessions(1)).map(s => s.id), [a.sid])

  await app.jwtLogin.endAllSessions(1)
  t.same(await validate(app, a.jwt), REVOKED)
  t.same(await app.jwtLogin.sessions(1), [])
  t.same((await app.jwtLogin.sessions(bobId)).map(s => s.id), [bobs.sid], 'another user untouched')
  t.same(await validate(app, bobs.jwt), LIVE)
})

t.test('sessions.maxPerUser: 2: a third sign-in ends the oldest (session.ended, limit); two are listed', async (t) => {
  const clock = testClock()
  const { app } = await buildApp({ ...ON, sessions: { enabled: true, maxPerUser: 2 } }, { clock })
  t.teardown(() => app.close())
  const ended = collect(app, 'session.ended')
  const a = await signIn(app)
  clock.advance(1000)
  const b = await signIn(app)
  clock.advance(1000)
  t.strictSame(ended, [], 'two fit')
  const c = await signIn(app)
  t.same(await validateAll(app, [a, b, c]), [REVOKED, LIVE, LIVE])
  t.same(errorOf(await refresh(app, a.refresh_token)), [401, 51])
  t.same(await listedIds(app, c.jwt), [b.sid, c.sid])
  t.strictSame(ended, [{ userId: 1, sessionId: a.sid, reason: 'limit' }])
})

t.test('three sign-ins of one user (password, provider, password + TOTP) are listed with how each began', async (t) => {
  const idp = await startIdp()
  t.teardown(() => idp.close())
  const clock = testClock()
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const bob = await users.addUser(BOB)
  const port = new MemoryTwoFactorStore()
  const { secret } = createTotpSecret('jwt-login test', BOB.email)
  await port.setTotpSecret(bob.ID, secret)
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    clock,
    twoFactor: { port },
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...ON, oauth: { providers: providers(idp) } }
  })
  await app.ready()
  t.teardown(() => app.close())
  const started = collect(app, 'session.started')
  const t0 = clock.now

  const password = await signIn(app, { who: BOB, ip: '198.51.100.1', ua: 'UA password' })
  clock.advance(1000)
  const { code } = await idp.code({ account: ACCOUNTS.bob })
  const byProvider = await app.inject({ method: 'POST', url: `${PREFIX}/oauth/token`, payload: { provider: 'idp1', code }, headers: { 'user-agent': 'UA provider' }, remoteAddress: '198.51.100.2' })
  t.equal(byProvider.statusCode, 200, byProvider.body)
  const provider = byProvider.json().data.jwt as string
  clock.advance(1000)
  port.enable(bob.ID, 'totp')
  const from = { headers: { 'user-agent': 'UA totp' }, remoteAddress: '198.51.100.3' }
  const interim = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: BOB.email, password: BOB.password }, ...from })
  t.equal(interim.json().data.two_factor_required, true)
  const second = await app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: interim.json().data.jwt, code: await totpAt(secret, clock.now) }, ...from })
  t.equal(second.statusCode, 200, second.body)
  const totp = second.json().data.jwt as string

  const sessions = (await list(app, totp)).json().data.sessions as Array<Record<string, unknown>>
  t.strictSame(sessions, [
    { id: password.sid, current: false, started_at: iso(t0), method: 'password', ip: '198.51.100.1', user_agent: 'UA password' },
    { id: claimsOf(provider).sid, current: false, started_at: iso(t0 + 1000), method: 'provider', provider: 'idp1', ip: '198.51.100.2', user_agent: 'UA provider' },
    { id: claimsOf(totp).sid, current: true, started_at: iso(t0 + 2000), method: 'password', second_factor: 'totp', ip: '198.51.100.3', user_agent: 'UA totp' }
  ])
  t.same((await app.jwtLogin.sessions(bob.ID)).map(s => [s.method, s.provider, s.secondFactor]), [['password', null, null], ['provider', 'idp1', null], ['password', null, 'totp']], 'the host API alike')
  t.same(started.map(e => [e.userId, e.sessionId, e.method, e.provider, e.secondFactor, e.ip]), [
    [bob.ID, password.sid, 'password', null, null, '198.51.100.1'],
    [bob.ID, claimsOf(provider).sid, 'provider', 'idp1', null, '198.51.100.2'],
    [bob.ID, claimsOf(totp).sid, 'password', null, 'totp', '198.51.100.3']
  ])
  const alice = await signIn(app)
  t.same(await listedIds(app, alice.jwt), [alice.sid], 'alice has none of them')

  // the provider's session ends by its id like any other
  clock.advance(1000)
  t.same((await endOne(app, totp, claimsOf(provider).sid as string)).json(), OK_ONE)
  t.same([await validate(app, password.jwt), await validate(app, provider), await validate(app, totp)], [LIVE, REVOKED, LIVE])
})
