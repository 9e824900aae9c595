// The edges of the session and device answers: entries from before 0.3, a device without a User-Agent, a bad remember_device, an empty device cookie, a kept session a concurrent cutoff had ended.
import t from 'tap'
import { ALICE } from '../helpers/app.js'
import { BOB, buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'
import { sessionIndexKey } from '../../lib/tokens/session-index.js'
import { MemoryStore } from '../../lib/index.js'
import { endAllSessions } from '../../lib/sessions/manage.js'
import { flowKit } from '../helpers/flows.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'

const PREFIX = '/jwt-login/v1'
const ON = { sessions: { enabled: true }, twoFactor: { rememberDevice: { enabled: true } } }
const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })

t.test('a session from before 0.3 (id, end and family only) is listed without how it began; the host API says null', async (t) => {
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  const { app } = await buildTwoFactorApp({ settings: ON, plugin: { store } })
  t.teardown(() => app.close())
  const signedIn = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  const jwt = signedIn.json().data.jwt as string
  const raw = JSON.parse(await store.get(sessionIndexKey(1)) as string) as unknown[][]
  await store.set(sessionIndexKey(1), JSON.stringify(raw.map(entry => entry.slice(0, 3))), 60_000)
  const listed = await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: bearer(jwt) })
  t.equal(listed.statusCode, 200)
  t.same(Object.keys(listed.json().data.sessions[0]).sort(), ['current', 'id', 'started_at'], 'no method, provider, factor, address or user agent')
  t.match(await app.jwtLogin.sessions(1), [{ method: null, provider: null, secondFactor: null, ip: null, userAgent: null, lastRefreshedAt: null }])
})

t.test('a device trusted without a User-Agent is listed without one; remember_device takes true, "true", false, "false" only; an empty device cookie is no token', async (t) => {
  const { app, interim, secret, clock, submit } = await buildTwoFactorApp({ settings: { ...ON, refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const token = await interim()
  for (const bad of ['yes', 1, 'TRUE']) {
    const res = await submit({ JWT: token, code: await totpAt(secret, clock.now), remember_device: bad })
    t.same([res.statusCode, res.json().data.errorCode], [400, 203], `remember_device ${JSON.stringify(bad)}`)
  }
  const done = await submit({ JWT: token, code: await totpAt(secret, clock.now), remember_device: true }, { 'user-agent': '' })
  t.equal(done.statusCode, 200, 'the code was not spent by the refused ones')
  const listed = await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: bearer(done.json().data.jwt as string) })
  t.notOk('user_agent' in listed.json().data.devices[0], 'a device without a User-Agent has none listed')
  t.match(await app.jwtLogin.devices(2), [{ userAgent: null }])
})

t.test('cookie mode: an empty device cookie is no device token', async (t) => {
  const { app } = await buildTwoFactorApp({ settings: { ...ON, refresh: { enabled: true, cookie: { enabled: true } } } })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: BOB.email, password: BOB.password }, headers: { cookie: '__Host-jwt-login-device=' } })
  t.equal(res.json().data.two_factor_required, true, 'the second factor is asked')
})

t.test('a sign-out everywhere that keeps a session a concurrent cutoff had already ended writes nothing, keeps none, and answers 401 / 55', async (t) => {
  const kit = await flowKit({ refresh: { enabled: true } })
  const signedIn = await completeSignIn(kit.ctx, kit.call(), await kit.users.findById(kit.aliceId))
  const sid = ((signedIn as { refresh_token: string }).refresh_token).split('.')[0] as string
  kit.clock.advance(5)
  // another sign-out everywhere landed between this request's check of its token and its write
  await kit.ctx.tokens.revokeUserTokens(kit.settings, kit.aliceId)
  await t.rejects(endAllSessions(kit.ctx, kit.settings, kit.aliceId, 'sign_out_everywhere', sid), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', statusCode: 401 })
  t.same(await kit.ctx.sessions.list(kit.aliceId), [], 'nothing kept')
})
