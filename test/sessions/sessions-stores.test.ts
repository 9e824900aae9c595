// The session routes' core on every store: sign-ins listed with how each began, one ended, every other ended (keep_current), all ended.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { ALICE, HS_SECRET, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, post, PREFIX } from '../helpers/http.js'
import { providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp, type TestIdp } from '../helpers/oidc-provider.js'
import { storeOf, type StoreKind } from '../helpers/shared-stores.js'
import { BOB, totpAt } from '../helpers/two-factor.js'

const SESSIONS = `${PREFIX}/sessions`
const LIVE: [number, undefined] = [200, undefined]
const REVOKED: [number, number] = [401, 55]

interface Session { jwt: string, refresh_token: string, sid: string }

const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })

function sessionOf (res: LightMyRequestResponse): Session {
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
  const data = res.json().data as { jwt: string, refresh_token: string }
  return { ...data, sid: claimsOf(data.jwt).sid as string }
}

const validate = async (app: FastifyInstance, jwt: string): Promise<[number, number | undefined]> =>
  errorOf(await post(app, '/auth/validate', { JWT: jwt }))
const validateAll = async (app: FastifyInstance, sessions: Session[]): Promise<Array<[number, number | undefined]>> =>
  await Promise.all(sessions.map(async session => await validate(app, session.jwt)))
const refreshStatus = async (app: FastifyInstance, session: Session): Promise<[number, number | undefined]> =>
  errorOf(await post(app, '/auth/refresh', { refresh_token: session.refresh_token }))
/** `[id, current, method, provider, second_factor, ip, user_agent]` of each session `GET /sessions` lists for `jwt`. */
async function listed (app: FastifyInstance, jwt: string): Promise<unknown[][]> {
  const res = await app.inject({ method: 'GET', url: SESSIONS, headers: bearer(jwt) })
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.body}`)
  return (res.json().data.sessions as Array<Record<string, unknown>>).map(s => [s.id, s.current, s.method, s.provider, s.second_factor, s.ip, s.user_agent])
}

for (const kind of ['memory', 'redis', 'cluster', 'postgres'] as StoreKind[]) {
  t.test(`${kind}: sign-ins listed; one ended; every other ended (keep_current); all ended`, async (t) => {
    const clock = testClock()
    const store = await storeOf(t, kind, 'sessions-stores', clock)
    // the provider sign-in on the memory store only (a real provider on loopback; its session is stored as any other)
    const idp: TestIdp | undefined = kind === 'memory' ? await startIdp() : undefined
    if (idp !== undefined) t.teardown(async () => { await idp.close() })
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
      store,
      twoFactor: { port },
      settings: {
        tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
        sessions: { enabled: true },
        refresh: { enabled: true },
        ...(idp === undefined ? {} : { oauth: { providers: providers(idp) } })
      }
    })
    await app.ready()
    t.teardown(() => app.close())

    const password = async (who: { email: string, password: string }, ip: string, ua: string): Promise<LightMyRequestResponse> =>
      await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: who.email, password: who.password }, headers: { 'user-agent': ua }, remoteAddress: ip })
    const withTotp = async (ip: string, ua: string): Promise<Session> => {
      const interim = (await password(BOB, ip, ua)).json().data as { jwt: string, two_factor_required?: boolean }
      t.equal(interim.two_factor_required, true)
      return sessionOf(await app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: interim.jwt, code: await totpAt(secret, clock.now) }, headers: { 'user-agent': ua }, remoteAddress: ip }))
    }

    const alice = sessionOf(await password(ALICE, '192.0.2.1', 'UA alice'))
    const p1 = sessionOf(await password(BOB, '198.51.100.1', 'UA one'))
    clock.advance(1000)
    const p2 = sessionOf(await password(BOB, '198.51.100.2', 'UA two'))
    const viaProvider: Session[] = []
    if (idp !== undefined) {
      clock.advance(1000)
      const { code } = await idp.code({ account: ACCOUNTS.bob })
      viaProvider.push(sessionOf(await app.inject({ method: 'POST', url: `${PREFIX}/oauth/token`, payload: { provider: 'idp1', code }, headers: { 'user-agent': 'UA idp' }, remoteAddress: '198.51.100.4' })))
    }
    clock.advance(1000)
    port.enable(bob.ID, 'totp')
    const t1 = await withTotp('198.51.100.3', 'UA totp')

    const provided = viaProvider.map(s => [s.sid, false, 'provider', 'idp1', undefined, '198.51.100.4', 'UA idp'])
    t.strictSame(await listed(app, t1.jwt), [
      [p1.sid, false, 'password', undefined, undefined, '198.51.100.1', 'UA one'],
      [p2.sid, false, 'password', undefined, undefined, '198.51.100.2', 'UA two'],
      ...provided,
      [t1.sid, true, 'password', undefined, 'totp', '198.51.100.3', 'UA totp']
    ], 'every sign-in listed with how it began')
    t.strictSame((await listed(app, alice.jwt)).map(s => s[0]), [alice.sid], 'alice\'s own only')

    // one ended
    clock.advance(1000)
    const one = await app.inject({ method: 'DELETE', url: `${SESSIONS}/${p2.sid}`, headers: bearer(t1.jwt) })
    t.same([one.statusCode, one.json().data.message], [200, 'The session was ended.'])
    t.same(await validateAll(app, [p1, p2, ...viaProvider, t1, alice]), [LIVE, REVOKED, ...viaProvider.map(() => LIVE), LIVE, LIVE], 'exactly that one is refused')
    t.same(await refreshStatus(app, p2), [401, 51], 'its refresh token too')
    t.same((await listed(app, t1.jwt)).map(s => s[0]), [p1.sid, ...viaProvider.map(s => s.sid), t1.sid])
    t.same(errorOf(await app.inject({ method: 'DELETE', url: `${SESSIONS}/${alice.sid}`, headers: bearer(t1.jwt) })), [404, 213], 'another user\'s: 404')
    t.same(await validate(app, alice.jwt), LIVE)

    // every other ended
    clock.advance(1000)
    const others = await app.inject({ method: 'DELETE', url: `${SESSIONS}?keep_current=true`, headers: bearer(t1.jwt) })
    t.same([others.statusCode, others.json().data.message], [200, 'Every other session was ended.'])
    t.same(await validateAll(app, [p1, ...viaProvider, t1, alice]), [REVOKED, ...viaProvider.map(() => REVOKED), LIVE, LIVE], 'the caller\'s session only stays')
    t.same(await refreshStatus(app, p1), [401, 51])
    t.same((await listed(app, t1.jwt)).map(s => s[0]), [t1.sid])

    // a new sign-in joins the kept one; then all end
    clock.advance(30_000)
    const t2 = await withTotp('198.51.100.5', 'UA totp 2')
    t.same((await listed(app, t2.jwt)).map(s => s[0]), [t1.sid, t2.sid])
    clock.advance(1000)
    const all = await app.inject({ method: 'DELETE', url: SESSIONS, headers: bearer(t2.jwt) })
    t.same([all.statusCode, all.json().data.message], [200, 'Every session was ended.'])
    t.same(await validateAll(app, [t1, t2, alice]), [REVOKED, REVOKED, LIVE], 'all of bob\'s are refused, alice\'s lives on')
    t.same([await refreshStatus(app, t1), await refreshStatus(app, t2)], [[401, 51], [401, 51]])
    t.strictSame(await app.jwtLogin.sessions(bob.ID), [], 'none listed')
    t.same((await app.jwtLogin.sessions(1)).map(s => s.id), [alice.sid])
  })
}
