// The client's sign-in and its errors against a listening host: JwtLoginClientError's status, number, name and Retry-After; answers that are not the envelope; no answer at all.
import t from 'tap'
import { createClient, JwtLoginClientError } from '../../lib/client.js'
import { retryAfterOf } from '../../lib/client/errors.js'
import { de } from '../../lib/i18n/catalogues/de.js'
import { en } from '../../lib/i18n/catalogues/en.js'
import { closedPort } from '../helpers/net.js'
import { ALICE, serve } from '../helpers/client.js'

/** What `work` threw, which must be a JwtLoginClientError. */
async function refusal (work: () => Promise<unknown>): Promise<JwtLoginClientError> {
  try {
    await work()
  } catch (error) {
    if (error instanceof JwtLoginClientError) return error
    throw error
  }
  throw new Error('no error')
}

t.test('a refused sign-in throws JwtLoginClientError with status, number and name; a right one starts the session', async (t) => {
  const { base } = await serve(t)
  const client = createClient({ baseUrl: base })
  t.teardown(() => { client.close() })
  const events: string[] = []
  client.onSession((event) => { events.push(`${event.type}/${String(event.fromOtherTab)}`) })
  const error = await refusal(async () => await client.signIn({ email: ALICE.email, password: 'wrong' }))
  t.ok(error instanceof Error)
  t.equal(error.name, 'JwtLoginClientError')
  t.equal(error.status, 401)
  t.equal(error.errorCode, 48)
  t.equal(error.code, 'ERR_JWT_LOGIN_WRONG_CREDENTIALS')
  t.equal(error.message, en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS)
  t.equal(error.retryAfter, undefined)
  t.equal(client.jwt, undefined)
  t.same(events, [])

  const answer = await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.type(answer.jwt, 'string')
  t.type(answer.refresh_token, 'string')
  t.equal(client.jwt, answer.jwt)
  t.equal(client.twoFactorPending, false)
  t.equal(await client.token(), answer.jwt, 'a fresh token is given as it is')
  t.same(events, ['signed-in/false'])
  t.equal((await client.validate()).user.user_login, 'alice')
})

t.test('language is sent as Accept-Language: the message comes in German', async (t) => {
  const { base } = await serve(t)
  const client = createClient({ baseUrl: base, language: 'de-DE' })
  t.teardown(() => { client.close() })
  const error = await refusal(async () => await client.signIn({ email: ALICE.email, password: 'falsch' }))
  t.equal(error.message, de.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS)
  t.not(error.message, en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS)
  t.equal(error.code, 'ERR_JWT_LOGIN_WRONG_CREDENTIALS')
})

t.test('the auth code goes in the body of a POST and in the query of a GET or DELETE, under AUTH_KEY or its own name', async (t) => {
  const { base, seen } = await serve(t, {
    authCodes: { codes: [{ code: 'the-code' }], requireFor: { auth: true } },
    users: { delete: { enabled: true, requireAuthCode: true } },
    sessions: { enabled: true }
  })
  const without = createClient({ baseUrl: base })
  t.teardown(() => { without.close() })
  t.match(await refusal(async () => await without.signIn({ email: ALICE.email, password: ALICE.password })), { status: 400, code: 'ERR_JWT_LOGIN_AUTH_CODE_MISSING' })
  const wrong = createClient({ baseUrl: base, authCode: { value: 'not-it' } })
  t.teardown(() => { wrong.close() })
  t.match(await refusal(async () => await wrong.signIn({ email: ALICE.email, password: ALICE.password })), { status: 401, code: 'ERR_JWT_LOGIN_AUTH_CODE_INVALID' })

  const client = createClient({ baseUrl: base, authCode: { value: 'the-code' } })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal((await client.sessions()).sessions.length, 1)
  t.equal(seen.at(-1), 'GET /jwt-login/v1/sessions?AUTH_KEY=the-code')
  await client.endAllSessions({ keepCurrent: true })
  t.equal(seen.at(-1), 'DELETE /jwt-login/v1/sessions?keep_current=true&AUTH_KEY=the-code', 'joined to a query of its own')
  const named = createClient({ baseUrl: base, authCode: { name: 'AUTH_CODE', value: 'the-code' } })
  t.teardown(() => { named.close() })
  t.match(await refusal(async () => await named.signIn({ email: ALICE.email, password: ALICE.password })), { status: 400, code: 'ERR_JWT_LOGIN_AUTH_CODE_MISSING' }, 'sent as AUTH_CODE, which /auth does not read')
  await client.deleteUser()
  t.equal(seen.at(-1), 'DELETE /jwt-login/v1/users?AUTH_KEY=the-code')
  t.equal(client.jwt, undefined, 'the session ended with the user')
})

t.test('the plugin\'s own 429: the account locked after failed sign-ins, with Retry-After in seconds', async (t) => {
  const { base } = await serve(t, { limits: { loginPerAccount: { max: 2, window: '15m' } } })
  const client = createClient({ baseUrl: base })
  t.teardown(() => { client.close() })
  for (const password of ['wrong 1', 'wrong 2']) t.match(await refusal(async () => await client.signIn({ email: ALICE.email, password })), { status: 401 })
  const locked = await refusal(async () => await client.signIn({ email: ALICE.email, password: ALICE.password }))
  t.equal(locked.status, 429)
  t.type(locked.errorCode, 'number')
  t.match(locked.code, /^ERR_JWT_LOGIN_/)
  t.ok(locked.retryAfter !== undefined && locked.retryAfter > 0 && locked.retryAfter <= 900, `retryAfter ${String(locked.retryAfter)} s, within the window`)
})

t.test('Retry-After, by seconds and by HTTP date; answers that are not the envelope; no answer', async (t) => {
  const now = Date.parse('2026-11-29T12:00:00Z')
  const { base } = await serve(t, {}, {}, (app) => {
    app.post('/fake/auth', async (request, reply) => {
      const { password } = request.body as { password: string }
      if (password === 'seconds') return await reply.code(429).header('retry-after', '17').send({ success: false, data: { message: 'Slow down.', errorCode: 48 } })
      if (password === 'date') return await reply.code(503).header('retry-after', new Date(now + 90_000).toUTCString()).send({ success: false, data: { message: 'Busy.' } })
      if (password === 'past') return await reply.code(429).header('retry-after', new Date(now - 90_000).toUTCString()).send({ success: false, data: { message: 'Was busy.' } })
      if (password === 'garbled') return await reply.code(429).header('retry-after', 'soon').send({ success: false, data: { message: 'Soon.', errorCode: '48' } })
      if (password === 'html') return await reply.code(502).type('text/html').send('<h1>Bad gateway</h1>')
      return await reply.code(200).send({ hello: 'not the envelope' })
    })
    app.get('/fake/jwks', async (_request, reply) => await reply.type('text/plain').send('no keys here'))
  })
  const client = createClient({ baseUrl: base, prefix: '/fake', now: () => now })
  t.teardown(() => { client.close() })
  const by = async (password: string): Promise<JwtLoginClientError> => await refusal(async () => await client.signIn({ email: 'a@example.com', password }))

  t.match(await by('seconds'), { status: 429, errorCode: 48, code: undefined, retryAfter: 17, message: 'Slow down.' }, 'a number no route answers with this status has no name')
  t.match(await by('date'), { status: 503, errorCode: undefined, retryAfter: 90, message: 'Busy.' })
  t.match(await by('past'), { retryAfter: 0 }, 'a date gone by: no wait')
  t.match(await by('garbled'), { status: 429, errorCode: undefined, retryAfter: undefined, message: 'Soon.' }, 'neither a number nor a date, and an errorCode that is no number')
  t.match(await by('html'), { status: 502, errorCode: undefined, code: undefined, message: '502 Bad Gateway' }, 'an answer that is no JSON')
  t.match(await by('ok'), { status: 200, message: '200 OK' }, 'a 200 that is not the envelope')
  t.match(await refusal(async () => await client.jwks()), { status: 200, message: '200 OK' }, 'a /jwks answer that is no JSON')
  t.equal(retryAfterOf(null, now), undefined)
})

t.test('no answer at all: status 0, the network error as cause', async (t) => {
  const client = createClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` })
  t.teardown(() => { client.close() })
  const error = await refusal(async () => await client.signIn({ email: ALICE.email, password: ALICE.password }))
  t.equal(error.status, 0)
  t.equal(error.errorCode, undefined)
  t.equal(error.code, undefined)
  t.type(error.cause, TypeError)
  t.match(error.message, /fetch failed/)
})
