import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { MemoryStore, type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { ruledStore } from '../helpers/faults.js'
import { errorCode, loginTokens, multipart, post, PREFIX } from '../helpers/http.js'

interface LogLine { level: number, msg: string }

interface LoggedApp {
  app: FastifyInstance
  /** Log lines at error level or above (pino: error is 50, fatal 60). */
  errors: () => LogLine[]
}

/** The plugin on a host whose logger writes into an array; `routes` are host routes. */
async function buildLoggedApp (
  settings: Partial<SettingsInput> = {},
  options: Partial<JwtLoginOptions> = {},
  routes: (app: FastifyInstance) => void = () => {}
): Promise<LoggedApp> {
  const lines: LogLine[] = []
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  routes(app)
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings }, ...options })
  await app.ready()
  return { app, errors: () => lines.filter(line => line.level >= 50) }
}

const BOUNDARY = 'jwtLoginEdgeBoundary'
const PARTS = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="email"\r\n\r\n${ALICE.email}\r\n` +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="password"\r\n\r\n${ALICE.password}\r\n--${BOUNDARY}--\r\n`

/** Multipart bodies busboy cannot read; @fastify/multipart passes its errors on without a status. */
const BROKEN_MULTIPART: Array<[string, string, string]> = [
  ['no boundary', 'multipart/form-data', PARTS],
  ['wrong boundary', 'multipart/form-data; boundary=notTheOneInTheBody', PARTS],
  ['truncated body', `multipart/form-data; boundary=${BOUNDARY}`, PARTS.slice(0, PARTS.indexOf('\r\n\r\n') + 10)],
  ['truncated after a whole part', `multipart/form-data; boundary=${BOUNDARY}`, PARTS.slice(0, PARTS.lastIndexOf(`--${BOUNDARY}--`) - 2)],
  ['boundary longer than the parser takes', `multipart/form-data; boundary=${'b'.repeat(300)}`, PARTS]
]

function assertEnvelope (t: Test, res: LightMyRequestResponse, status: number, code: number, name: string): void {
  t.equal(res.statusCode, status, `${name}: status`)
  t.equal(errorCode(res), code, `${name}: errorCode`)
  t.same(Object.keys(res.json()), ['success', 'data'], `${name}: the envelope and nothing else`)
}

t.test('malformed multipart bodies: 400 / 203 on every route, nothing logged at error level', async (t) => {
  const { app, errors } = await buildLoggedApp({ refresh: { enabled: true } }, { multipart: true })
  t.teardown(() => app.close())
  for (const [method, path] of [['POST', '/auth'], ['POST', '/auth/revoke'], ['PUT', '/user/reset_password'], ['POST', '/no-such-route']] as const) {
    for (const [name, contentType, payload] of BROKEN_MULTIPART) {
      const res = await app.inject({ method, url: `${PREFIX}${path}`, headers: { 'content-type': contentType }, payload })
      assertEnvelope(t, res, 400, 203, `${method} ${path} ${name}`)
    }
  }
  const viaRestRoute = await app.inject({ method: 'POST', url: '/?rest_route=/jwt-login/v1/auth', headers: { 'content-type': 'multipart/form-data' }, payload: PARTS })
  assertEnvelope(t, viaRestRoute, 400, 203, 'through ?rest_route=')
  t.same(errors(), [], 'no error-level log line')

  const good = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, payload: PARTS })
  t.equal(good.statusCode, 200, 'a well-formed multipart login still works')
})

t.test('a dependency failing after a multipart body was read is still 503 / 201, and logged', async (t) => {
  const memory = new MemoryStore()
  const store = ruledStore(memory)
  const { app, errors } = await buildLoggedApp({}, { store, multipart: true })
  t.teardown(async () => { await app.close(); await memory.close() })
  const { jwt } = await loginTokens(app)
  store.rule = (method) => method === 'get'
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, ...multipart({ JWT: jwt }) })
  assertEnvelope(t, res, 503, 201, 'store down')
  t.equal(errors().length, 1, 'the dependency failure is logged')
})

t.test('unknown paths and methods under the prefix: 404 / 207 in the envelope', async (t) => {
  const { app, errors } = await buildLoggedApp({}, {}, (host) => {
    host.get('/host-page', async () => ({ host: true }))
  })
  t.teardown(() => app.close())
  for (const [method, url] of [
    ['GET', `${PREFIX}/nope`],
    ['POST', `${PREFIX}/nope`],
    ['GET', `${PREFIX}/auth/validate/extra`],
    ['GET', PREFIX],
    ['GET', `${PREFIX}/`],
    ['DELETE', `${PREFIX}/auth`],
    ['PATCH', `${PREFIX}/auth/refresh`],
    ['GET', `${PREFIX}/auth`],
    ['OPTIONS', `${PREFIX}/auth`],
    ['GET', `${PREFIX}/jwks`],
    ['GET', '/?rest_route=/jwt-login/v1/nope'],
    ['POST', '/?rest_route=/jwt-login/v1/nope'],
    ['GET', '/?rest_route=/jwt-login/v1']
  ] as const) {
    const res = await app.inject({ method, url })
    assertEnvelope(t, res, 404, 207, `${method} ${url}`)
    t.equal(res.json().data.message, 'No such route.')
  }
  t.same(errors(), [])

  // outside the prefix the host's own 404 answers, untouched
  for (const url of ['/nope', '/jwt-login/v1x', '/jwt-login']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, url)
    t.same(res.json(), { message: `Route GET:${url} not found`, error: 'Not Found', statusCode: 404 }, `${url}: Fastify's default 404`)
  }
  // on `/`, a namespace that is not the plugin's goes on to the host's 404, given the URL with its query values redacted
  const notOurs = await app.inject({ method: 'GET', url: '/?rest_route=/wp/v2/users&JWT=abc' })
  t.same(notOurs.json(), { message: 'Route GET:/?rest_route=[redacted]&JWT=[redacted] not found', error: 'Not Found', statusCode: 404 }, 'another namespace: the host\'s 404')
  for (const method of ['OPTIONS', 'HEAD', 'TRACE'] as const) {
    const res = await app.inject({ method, url: '/?rest_route=/jwt-login/v1/auth' })
    t.equal(res.statusCode, 404, `${method}: every method Fastify routes reaches the plugin through the query form`)
    if (method !== 'HEAD') assertEnvelope(t, res, 404, 207, `${method} /?rest_route=`)
  }
  t.same((await app.inject({ method: 'GET', url: '/host-page' })).json(), { host: true })
})

t.test('a host with its own 404 handler keeps it outside the prefix', async (t) => {
  const { app } = await buildLoggedApp({}, {}, (host) => {
    host.setNotFoundHandler(async (_request, reply) => await reply.code(404).send({ hostNotFound: true }))
  })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'GET', url: '/nope' })).json(), { hostNotFound: true })
  assertEnvelope(t, await app.inject({ method: 'GET', url: `${PREFIX}/nope` }), 404, 207, 'under the prefix')
})

t.test('a custom prefix scopes the 404 handler to it; an empty prefix sets none', async (t) => {
  const custom = await buildLoggedApp({}, { prefix: '/api/login/v2', restRoute: false })
  t.teardown(() => custom.app.close())
  assertEnvelope(t, await custom.app.inject({ method: 'GET', url: '/api/login/v2/nope' }), 404, 207, 'custom prefix')
  t.equal((await custom.app.inject({ method: 'GET', url: `${PREFIX}/nope` })).json().error, 'Not Found')

  for (const prefix of ['', '/']) {
    const { app } = await buildLoggedApp({}, { prefix, restRoute: false })
    t.equal((await app.inject({ method: 'POST', url: '/auth', payload: { email: ALICE.email, password: ALICE.password } })).statusCode, 200, `prefix ${JSON.stringify(prefix)}: the routes work`)
    const res = await app.inject({ method: 'GET', url: '/nope' })
    t.equal(res.json().error, 'Not Found', `prefix ${JSON.stringify(prefix)}: the host's 404 stays the host's`)
    await app.close()
  }
})

t.test('unknown routes count against the per-IP request limit', async (t) => {
  const { app } = await buildLoggedApp({ limits: { requestsPerIp: { max: 3, window: '1m' } } })
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'GET', url: `${PREFIX}/scan-${i}` })).statusCode, 404)
  const limited = await app.inject({ method: 'GET', url: `${PREFIX}/scan-3` })
  assertEnvelope(t, limited, 429, 200, 'the fourth')
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).statusCode, 429, 'one budget for routes and scans')
})

t.test('body-parser errors on every method answer the envelope', async (t) => {
  const { app, errors } = await buildLoggedApp({ resetPassword: { enabled: true } }, { mailer: { send: async () => {} } })
  t.teardown(() => app.close())
  const big = JSON.stringify({ email: ALICE.email, padding: 'x'.repeat(20_000) })
  const cases: Array<[string, string, string, string]> = [
    ['bad JSON', 'application/json', '{"email":', ''],
    ['empty JSON', 'application/json', '', ''],
    ['unsupported content type', 'application/xml', '<email/>', ''],
    ['invalid content type', 'no/such; type===', '{}', ''],
    ['body over bodyLimit', 'application/json', big, ''],
    ['form over bodyLimit', 'application/x-www-form-urlencoded', `email=${'x'.repeat(20_000)}`, '']
  ]
  for (const [method, path] of [['POST', '/auth'], ['PUT', '/user/reset_password'], ['POST', '/user/reset_password'], ['POST', '/auth/validate'], ['POST', '/oauth/token']] as const) {
    for (const [name, contentType, payload] of cases) {
      const res = await app.inject({ method, url: `${PREFIX}${path}`, headers: { 'content-type': contentType }, payload })
      assertEnvelope(t, res, 400, 203, `${method} ${path} ${name}`)
    }
  }
  // an unknown route reads the body first: a broken body is a 400 there too, an unknown type a 404
  assertEnvelope(t, await app.inject({ method: 'DELETE', url: `${PREFIX}/auth`, headers: { 'content-type': 'application/json' }, payload: '{' }), 400, 203, 'DELETE with bad JSON')
  assertEnvelope(t, await app.inject({ method: 'PATCH', url: `${PREFIX}/nope`, headers: { 'content-type': 'application/xml' }, payload: '<a/>' }), 404, 207, 'PATCH with XML')
  t.same(errors(), [])
})

t.test('answers Fastify would give outside the envelope: a too-long path parameter, a method it does not route, on the prefix and an alias', async (t) => {
  const ALIAS = '/wp-json/simple-jwt-login/v1'
  const { app, errors } = await buildLoggedApp({}, { aliases: [ALIAS] })
  t.teardown(() => app.close())
  const long = 'a'.repeat(200)
  for (const base of [PREFIX, ALIAS]) {
    for (const [method, path] of [
      ['DELETE', `/sessions/${long}`], ['DELETE', `/devices/${long}`], ['POST', `/oauth/${long}/backchannel-logout`], ['PATCH', `/nope/${long}`],
      ['TRACE', '/auth'], ['PURGE', '/auth'], ['PROPFIND', '/auth'], ['OPTIONS', '/auth']
    ] as const) {
      const res = await app.inject({ method, url: `${base}${path}` })
      assertEnvelope(t, res, 404, 207, `${method} ${base}${path.slice(0, 30)}`)
    }
  }
  // an unknown type on the catch-all of too-long parameters is not read, as on any unknown path
  assertEnvelope(t, await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions/${long}`, headers: { 'content-type': 'application/xml' }, payload: '<a/>' }), 404, 207, 'XML')
  assertEnvelope(t, await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions/${long}`, headers: { 'content-type': 'application/json' }, payload: '{' }), 400, 203, 'bad JSON')
  const head = await app.inject({ method: 'HEAD', url: `${ALIAS}/auth/validate` })
  t.equal(head.statusCode, (await app.inject({ method: 'HEAD', url: `${PREFIX}/auth/validate` })).statusCode, 'HEAD on an alias answers as on the prefix')
  t.same(errors(), [])
})

t.test('a host route on / for a method the query form does not need stays the host\'s', async (t) => {
  const { app } = await buildLoggedApp({}, {}, (host) => {
    host.head('/', async (_request, reply) => await reply.header('x-host', 'yes').send())
    host.route({ method: 'TRACE', url: '*', handler: async () => 'host trace' })
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'HEAD', url: `/?rest_route=${PREFIX}/auth` })).headers['x-host'], 'yes', 'HEAD /: the host\'s')
  t.equal((await app.inject({ method: 'TRACE', url: '/' })).body, 'host trace', 'TRACE *: the host\'s, / included')
  assertEnvelope(t, await app.inject({ method: 'PUT', url: `/?rest_route=${PREFIX}/nope` }), 404, 207, 'the query form still serves the others')
})
