// bearer.allowBareToken: `Authorization: <jwt>` without the `Bearer ` scheme, as Simple JWT Login takes it, on the plugin's routes and in the host's authenticate hook; off, such a header keeps its refusal.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { parseBearer } from '../../lib/http/fields.js'
import { buildHost } from '../helpers/host.js'
import { errorCode, loginTokens, PREFIX } from '../helpers/http.js'

function hostRoutes (app: FastifyInstance): void {
  app.get('/private', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ id: request.jwtLogin?.user.ID }))
}

const INVALID_REQUEST = 'Bearer error="invalid_request"'

async function get (app: FastifyInstance, url: string, authorization: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url, headers: { authorization } })
}

/** Values that are not one whole JWT: refused with the setting on as without it. */
function notOneJwt (jwt: string): Record<string, string> {
  return {
    'the scheme alone': 'Bearer',
    'another scheme': `Basic ${jwt}`,
    'two tokens': `${jwt} ${jwt}`,
    'two parts': jwt.split('.').slice(0, 2).join('.'),
    'four parts': `${jwt}.x`,
    'not base64url': `${jwt.slice(0, -1)}!`,
    'an empty part': jwt.replace(/\.[^.]+$/, '.'),
    empty: ''
  }
}

t.test('parseBearer: Bearer always; a bare JWT only when allowed; anything else is malformed', async (t) => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl'
  t.equal(parseBearer(`Bearer ${jwt}`, 'ERR_JWT_LOGIN_BAD_REQUEST'), jwt)
  t.equal(parseBearer(`bearer  ${jwt} `, 'ERR_JWT_LOGIN_BAD_REQUEST', true), jwt, 'the scheme in any case, with the setting too')
  t.throws(() => parseBearer(jwt, 'ERR_JWT_LOGIN_BAD_REQUEST'), { code: 'ERR_JWT_LOGIN_BAD_REQUEST' }, 'off by default')
  t.equal(parseBearer(jwt, 'ERR_JWT_LOGIN_BAD_REQUEST', true), jwt)
  t.equal(parseBearer(` ${jwt} `, 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED', true), jwt, 'blanks around it')
  for (const [name, header] of Object.entries(notOneJwt(jwt))) {
    t.throws(() => parseBearer(header, 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED', true), { code: 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED' }, name)
  }
})

t.test('off (the default): a bare JWT is 400 / 203 on the routes and 401 / 2 in the authenticate hook, as before', async (t) => {
  const { app } = await buildHost(hostRoutes)
  t.teardown(() => app.close())
  t.equal(app.jwtLogin.settings.bearer.allowBareToken, false, 'the default')
  const { jwt } = await loginTokens(app)
  const validate = await get(app, `${PREFIX}/auth/validate`, jwt)
  t.same([validate.statusCode, errorCode(validate)], [400, 203])
  const host = await get(app, '/private', jwt)
  t.same([host.statusCode, errorCode(host)], [401, 2])
  t.equal(host.headers['www-authenticate'], INVALID_REQUEST)
  t.equal((await get(app, '/private', `Bearer ${jwt}`)).statusCode, 200, 'Bearer still works')
})

t.test('on: a bare JWT is read on the routes and in the hook; anything that is not one JWT is refused as before', async (t) => {
  const { app } = await buildHost(hostRoutes, { bearer: { allowBareToken: true } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)

  const validated = await get(app, `${PREFIX}/auth/validate`, jwt)
  t.equal(validated.statusCode, 200, validated.body)
  t.equal(validated.json().data.jwt[0].token, jwt)
  const posted = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: { authorization: jwt }, payload: { JWT: jwt } })
  t.equal(posted.statusCode, 200, 'the header and the same JWT field')
  const host = await get(app, '/private', jwt)
  t.equal(host.statusCode, 200, host.body)
  t.same(host.json(), { id: 1 })

  for (const [name, header] of Object.entries(notOneJwt(jwt))) {
    const route = await get(app, `${PREFIX}/auth/validate`, header)
    t.same([route.statusCode, errorCode(route)], [400, 203], `route: ${name}`)
    const hook = await get(app, '/private', header)
    t.same([hook.statusCode, errorCode(hook)], [401, 2], `hook: ${name}`)
    t.equal(hook.headers['www-authenticate'], INVALID_REQUEST)
  }
  const bad = await get(app, '/private', 'e30.e30.e30')
  t.same([bad.statusCode, errorCode(bad)], [401, 8], 'a JWT that does not verify: refused as a Bearer one is')

  const revoked = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, headers: { authorization: jwt } })
  t.equal(revoked.statusCode, 200, revoked.body)
  const after = await get(app, '/private', jwt)
  t.same([after.statusCode, errorCode(after)], [401, 55], 'revoked through a bare header')
})

t.test('on, with bearer.enabled off: the routes read no header at all; the hook still does', async (t) => {
  const { app } = await buildHost(hostRoutes, { bearer: { enabled: false, allowBareToken: true } })
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  const route = await get(app, `${PREFIX}/auth/validate`, jwt)
  t.same([route.statusCode, errorCode(route)], [400, 53], 'no token: the header is not read')
  t.equal((await get(app, '/private', jwt)).statusCode, 200)
})
