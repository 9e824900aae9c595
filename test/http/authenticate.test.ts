import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { ALICE, testClock } from '../helpers/app.js'
import { ruledStore } from '../helpers/faults.js'
import { buildHost } from '../helpers/host.js'
import { claimsOf, errorCode, loginTokens, post } from '../helpers/http.js'

function hostRoutes (app: FastifyInstance): void {
  app.get('/private', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ state: request.jwtLogin }))
  app.get('/public', async (request) => ({ state: request.jwtLogin }))
}

async function getPrivate (app: FastifyInstance, headers: Record<string, string> = {}, url = '/private'): Promise<ReturnType<FastifyInstance['inject']>> {
  return await app.inject({ method: 'GET', url, headers })
}

t.test('a valid token sets request.jwtLogin to the user and the claims', async (t) => {
  const { app } = await buildHost(hostRoutes)
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const res = await getPrivate(app, { authorization: `Bearer ${jwt}` })
  t.equal(res.statusCode, 200, res.body)
  const state = res.json().state
  t.same(state.user, { ID: 1, user_login: ALICE.login, user_email: ALICE.email, display_name: ALICE.displayName, roles: ['subscriber'] })
  t.same(state.claims, claimsOf(jwt))

  const open = await app.inject({ method: 'GET', url: '/public', headers: { authorization: `Bearer ${jwt}` } })
  t.equal(open.statusCode, 200)
  t.same(open.json(), { state: null }, 'request.jwtLogin is null where the hook does not run')
})

const INVALID_TOKEN = 'Bearer error="invalid_token"'
const INVALID_REQUEST = 'Bearer error="invalid_request"'

t.test('401 in the envelope with WWW-Authenticate for a missing, malformed, bad, expired or revoked token and a removed user', async (t) => {
  const clock = testClock()
  const { app, users } = await buildHost(hostRoutes, {}, { clock })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)

  const cases: Array<[string, Record<string, string>, number, string]> = [
    // RFC 6750 §3.1: no credentials at all, a bare challenge without an error
    ['missing header', {}, 53, 'Bearer'],
    ['empty bearer', { authorization: 'Bearer ' }, 2, INVALID_REQUEST],
    ['empty header', { authorization: '' }, 2, INVALID_REQUEST],
    ['not bearer', { authorization: `Basic ${jwt}` }, 2, INVALID_REQUEST],
    ['two values', { authorization: `Bearer ${jwt} ${jwt}` }, 2, INVALID_REQUEST],
    ['not a JWT', { authorization: 'Bearer not-a-jwt' }, 2, INVALID_TOKEN],
    ['bad signature', { authorization: `Bearer ${jwt.slice(0, -3)}${jwt.endsWith('abc') ? 'xyz' : 'abc'}` }, 11, INVALID_TOKEN],
    ['bad segments', { authorization: 'Bearer e30.e30.e30' }, 8, INVALID_TOKEN]
  ]
  for (const [name, headers, code, challenge] of cases) {
    const res = await getPrivate(app, headers)
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().success, false)
    t.equal(errorCode(res), code, `${name}: errorCode`)
    t.equal(res.headers['www-authenticate'], challenge, `${name}: WWW-Authenticate`)
  }
  const missing = await getPrivate(app)
  t.equal(missing.json().data.message, 'The JWT is missing.', 'the message of 53')
  t.equal(missing.headers['cache-control'], undefined, 'host routes keep their own caching headers')
  const malformed = await getPrivate(app, { authorization: 'Basic abc' })
  t.equal(malformed.json().data.message, 'The Authorization header is not a Bearer token.')

  const inQuery = await getPrivate(app, {}, `/private?JWT=${jwt}`)
  t.equal(inQuery.statusCode, 401, 'host routes read the Bearer header only')
  t.equal(errorCode(inQuery), 53)

  clock.advance(16 * 60_000)
  const expired = await getPrivate(app, { authorization: `Bearer ${jwt}` })
  t.equal(expired.statusCode, 401)
  t.equal(errorCode(expired), 14)
  t.equal(expired.headers['www-authenticate'], INVALID_TOKEN)

  const fresh = (await loginTokens(app)).jwt
  t.equal((await post(app, '/auth/revoke', { JWT: fresh })).statusCode, 200)
  const revoked = await getPrivate(app, { authorization: `Bearer ${fresh}` })
  t.equal(revoked.statusCode, 401)
  t.equal(errorCode(revoked), 55)
  t.equal(revoked.headers['www-authenticate'], INVALID_TOKEN)

  const other = (await loginTokens(app)).jwt
  await users.removeUser(1)
  const gone = await getPrivate(app, { authorization: `Bearer ${other}` })
  t.equal(gone.statusCode, 401)
  t.equal(errorCode(gone), 24)
  t.equal(gone.headers['www-authenticate'], INVALID_TOKEN)
})

t.test('authentication disabled: 403 / 45', async (t) => {
  const { app } = await buildHost(hostRoutes, { authentication: { enabled: false } })
  t.teardown(() => app.close())
  const token = app.jwtLogin.sign({ ID: 1, user_login: ALICE.login, user_email: ALICE.email, display_name: 'A', roles: [] })
  const res = await getPrivate(app, { authorization: `Bearer ${token}` })
  t.equal(res.statusCode, 403)
  t.equal(errorCode(res), 45)
  t.equal(res.headers['www-authenticate'], undefined, 'no challenge on a 403')
})

t.test('host routes read the Bearer header even when bearer delivery is off for the plugin routes', async (t) => {
  const { app } = await buildHost(hostRoutes, { bearer: { enabled: false } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  t.equal((await getPrivate(app, { authorization: `Bearer ${jwt}` })).statusCode, 200)
})

t.test('a failing store: 503 / 201, not a 401 and not a 500', async (t) => {
  const memory = new MemoryStore()
  const store = ruledStore(memory)
  const { app } = await buildHost(hostRoutes, {}, { store })
  t.teardown(async () => { await app.close(); await memory.close() })
  const { jwt } = await loginTokens(app)
  store.rule = (method) => method === 'get'
  const res = await getPrivate(app, { authorization: `Bearer ${jwt}` })
  t.equal(res.statusCode, 503)
  t.equal(errorCode(res), 201)
  t.equal(res.headers['www-authenticate'], undefined)
})
