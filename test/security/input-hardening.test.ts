import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { errorCode, loginTokens, multipart, post, PREFIX } from '../helpers/http.js'

const SETTINGS = {
  refresh: { enabled: true },
  // one counted failure would lock: a bad request that counted shows at once
  limits: { loginPerAccount: { max: 1, window: '15m' }, loginPerIp: { max: 1, window: '15m' } }
}
const BODY_LIMIT = 16384
const MEGABYTE = 'p'.repeat(1024 * 1024)

interface BadRequest {
  name: string
  payload: string
  contentType: string
}

const json = (value: unknown): string => JSON.stringify(value)

/** Every malformed request for a route whose string fields are `base`. */
function badRequests (base: Record<string, string>): BadRequest[] {
  const cases: BadRequest[] = []
  const asJson = (name: string, value: unknown): void => { cases.push({ name, payload: json(value), contentType: 'application/json' }) }
  for (const field of Object.keys(base)) {
    asJson(`${field}: number`, { ...base, [field]: 12345 })
    asJson(`${field}: boolean`, { ...base, [field]: true })
    asJson(`${field}: array`, { ...base, [field]: [base[field]] })
    asJson(`${field}: object`, { ...base, [field]: { value: base[field] } })
    asJson(`${field}: NUL byte`, { ...base, [field]: `${base[field] as string}\u0000` })
    asJson(`${field}: over 4096 characters`, { ...base, [field]: 'x'.repeat(5000) })
    asJson(`${field}: 1 MB`, { ...base, [field]: MEGABYTE })
  }
  const fields = json(base).slice(1, -1)
  cases.push({ name: '__proto__ key', payload: `{"__proto__":{"polluted":"yes"},${fields}}`, contentType: 'application/json' })
  cases.push({ name: 'constructor.prototype key', payload: `{"constructor":{"prototype":{"polluted":"yes"}},${fields}}`, contentType: 'application/json' })
  cases.push({ name: 'oversized body', payload: json({ ...base, padding: 'x'.repeat(BODY_LIMIT) }), contentType: 'application/json' })
  cases.push({ name: 'text/xml', payload: `<xml>${Object.values(base).join('')}</xml>`, contentType: 'text/xml' })
  cases.push({ name: 'text/plain', payload: json(base), contentType: 'text/plain' })
  cases.push({ name: 'no content type', payload: json(base), contentType: '' })
  cases.push({ name: 'malformed JSON', payload: `{${fields}`, contentType: 'application/json' })
  cases.push({ name: 'JSON array body', payload: json([base]), contentType: 'application/json' })
  cases.push({ name: 'form with repeated field', payload: new URLSearchParams([...Object.entries(base), ...Object.entries(base)]).toString(), contentType: 'application/x-www-form-urlencoded' })
  cases.push({ name: 'form with NUL byte', payload: new URLSearchParams(Object.entries(base).map(([k, v]) => [k, `${v}\u0000`] as [string, string])).toString(), contentType: 'application/x-www-form-urlencoded' })
  const withFile = multipart(base, { upload: 'file content' })
  cases.push({ name: 'multipart with a file part', payload: withFile.payload, contentType: withFile.headers['content-type'] as string })
  return cases
}

t.test('every route answers 400 / 203 to malformed input, never 500, and nothing changes', async (t) => {
  const { app } = await buildApp(SETTINGS)
  t.teardown(() => app.close())
  const session = await loginTokens(app)
  const statuses = new Set<number>()
  const routes: Array<[string, Record<string, string>]> = [
    ['/auth', { email: ALICE.email, password: ALICE.password }],
    ['/auth', { username: ALICE.login, password: 'a wrong password' }],
    ['/auth/validate', { JWT: session.jwt }],
    ['/auth/refresh', { refresh_token: session.refresh_token as string }],
    ['/auth/revoke', { JWT: session.jwt }]
  ]
  for (const [route, base] of routes) {
    for (const bad of badRequests(base)) {
      const res = await app.inject({ method: 'POST', url: `${PREFIX}${route}`, payload: bad.payload, headers: { 'content-type': bad.contentType } })
      statuses.add(res.statusCode)
      t.equal(res.statusCode, 400, `${route} ${bad.name}`)
      t.equal(errorCode(res), 203, `${route} ${bad.name}: errorCode`)
    }
  }
  t.same([...statuses], [400], 'nothing but 400')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')

  // nothing changed: no failure counted, nothing revoked, the refresh token unspent
  t.equal((await post(app, '/auth/validate', { JWT: session.jwt })).statusCode, 200, 'the JWT is not revoked')
  const refreshed = await post(app, '/auth/refresh', { refresh_token: session.refresh_token })
  t.equal(refreshed.statusCode, 200, 'the refresh token was not spent')
  const again = await post(app, '/auth', { email: ALICE.email, password: ALICE.password })
  t.equal(again.statusCode, 200, 'no lockout counter was incremented')
})

t.test('query strings: wrong shapes and NUL bytes on GET validate and on the query JWT', async (t) => {
  const { app } = await buildApp(SETTINGS)
  t.teardown(() => app.close())
  const { jwt } = await loginTokens(app)
  for (const query of [`JWT=${jwt}&JWT=${jwt}`, `JWT=${jwt}%00`, `JWT=${'x'.repeat(5000)}`]) {
    for (const method of ['GET', 'POST'] as const) {
      const res = await app.inject({ method, url: `${PREFIX}/auth/validate?${query}` })
      t.equal(res.statusCode, 400, `${method} ${query.slice(0, 20)}`)
      t.equal(errorCode(res), 203)
    }
    const revoke = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke?${query}` })
    t.equal(errorCode(revoke), 203)
  }
  const malformedHeader = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: { authorization: 'Bearer a b' } })
  t.equal(errorCode(malformedHeader), 203)
  t.equal((await post(app, '/auth/validate', { JWT: jwt })).statusCode, 200)
})

t.test('an auth code of the wrong type is a 400 on every gated route', async (t) => {
  const { app } = await buildApp({
    refresh: { enabled: true },
    authCodes: { codes: [{ code: 'gate' }], requireFor: { auth: true, validate: true, refresh: true, revoke: true } }
  })
  t.teardown(() => app.close())
  for (const [route, body] of [
    ['/auth', { email: ALICE.email, password: ALICE.password }],
    ['/auth/validate', { JWT: 'a.b.c' }],
    ['/auth/refresh', { refresh_token: 'r' }],
    ['/auth/revoke', { JWT: 'a.b.c' }]
  ] as const) {
    for (const code of [1, ['gate'], { code: 'gate' }, 'gate\u0000']) {
      const res = await post(app, route, { ...body, AUTH_KEY: code })
      t.equal(res.statusCode, 400, `${route} ${JSON.stringify(code)}`)
      t.equal(errorCode(res), 203)
    }
  }
})

t.test('logs never hold the password, the JWT or the refresh token', async (t) => {
  const lines: string[] = []
  const stream = new Writable({
    write (chunk, _encoding, callback) {
      lines.push(chunk.toString())
      callback()
    }
  })
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'trace', stream } })
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } } })
  await app.ready()
  t.teardown(() => app.close())

  const logged = await post(app, '/auth', { email: ALICE.email, password: ALICE.password })
  t.equal(logged.statusCode, 200)
  const wrong = await post(app, '/auth', { email: ALICE.email, password: 'a wrong secret password' })
  t.equal(wrong.statusCode, 401)
  const { jwt, refresh_token: refreshToken } = logged.json().data
  const viaQuery = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}` })
  t.equal(viaQuery.statusCode, 200)
  const viaRestRoute = await app.inject({ method: 'GET', url: `/?rest_route=/jwt-login/v1/auth/validate&JWT=${jwt}` })
  t.equal(viaRestRoute.statusCode, 200)
  const bad = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate?JWT=${jwt}x` })
  t.equal(bad.statusCode, 401)
  const refreshed = await post(app, '/auth/refresh', { refresh_token: refreshToken })
  t.equal(refreshed.statusCode, 200)
  const revoked = await post(app, '/auth/revoke', {}, { authorization: `Bearer ${refreshed.json().data.jwt as string}` })
  t.equal(revoked.statusCode, 200)

  const text = lines.join('')
  t.ok(lines.length >= 8, `the log captured lines (${lines.length})`)
  t.match(text, /\/jwt-login\/v1\/auth\/validate\?JWT=\[redacted\]/, 'the path is logged with the value redacted')
  const secrets = {
    password: ALICE.password,
    wrongPassword: 'a wrong secret password',
    jwt,
    jwtSignature: jwt.split('.')[2],
    refreshToken,
    newRefreshToken: refreshed.json().data.refresh_token,
    newJwt: refreshed.json().data.jwt
  }
  for (const [name, secret] of Object.entries(secrets)) {
    t.notOk(text.includes(secret), `no ${name} in the log`)
  }
})

t.test('multipart and form bodies: dangerous keys, repeated fields, NUL bytes, big fields', async (t) => {
  const { app } = await buildApp(SETTINGS, { multipart: true })
  t.teardown(() => app.close())
  const named = (fields: Array<[string, string]>): { payload: string, headers: Record<string, string> } => {
    const body = multipart(Object.fromEntries(fields.map(([, value], i) => [`field${i}`, value])))
    fields.forEach(([name], i) => { body.payload = body.payload.replace(`name="field${i}"`, `name="${name}"`) })
    return body
  }
  const alice: Array<[string, string]> = [['email', ALICE.email], ['password', ALICE.password]]
  for (const [name, fields] of [
    ['__proto__ part', [['__proto__', 'x'], ...alice]],
    ['constructor part', [['constructor', 'x'], ...alice]],
    ['repeated part', [...alice, ['password', 'another']]],
    ['NUL byte', [['email', ALICE.email], ['password', `${ALICE.password}\u0000`]]],
    ['field over the body limit', [['email', ALICE.email], ['password', 'x'.repeat(BODY_LIMIT + 1)]]]
  ] as Array<[string, Array<[string, string]>]>) {
    const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, ...named(fields) })
    t.equal(res.statusCode, 400, name)
    t.equal(errorCode(res), 203)
  }

  // form-encoded keys land in a prototype-less object: harmless, and nothing is polluted
  const form = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `__proto__[polluted]=yes&constructor[prototype][polluted]=yes&email=${encodeURIComponent(ALICE.email)}&password=${encodeURIComponent(ALICE.password)}`
  })
  t.not(form.statusCode, 500)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
  t.equal((await post(app, '/auth', { email: ALICE.email, password: ALICE.password })).statusCode, 200, 'nothing counted')
})
