// Issue 34: a sign-out everywhere that keeps the caller's session says what happened under a race, on every store; the host's endAllSessions keeps a session too.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { JwtLoginSettingsError } from '../../lib/index.js'
import { endAllSessions } from '../../lib/sessions/manage.js'
import { completeSignIn } from '../../lib/sessions/sign-in.js'
import { buildApp } from '../helpers/app.js'
import { claimsOf, errorOf, login, post, PREFIX } from '../helpers/http.js'
import { flowKit } from '../helpers/flows.js'
import { storeOf, type StoreKind } from '../helpers/shared-stores.js'

type Answer = [number, number | undefined]
const OK: Answer = [200, undefined]
const REVOKED: Answer = [401, 55]

interface Session { jwt: string, sid: string }

async function signIn (app: FastifyInstance): Promise<Session> {
  const jwt = (await login(app)).json().data.jwt as string
  return { jwt, sid: claimsOf(jwt).sid as string }
}

const validate = async (app: FastifyInstance, session: Session): Promise<Answer> => errorOf(await post(app, '/auth/validate', { JWT: session.jwt }))

async function endOthers (app: FastifyInstance, session: Session): Promise<Answer> {
  return errorOf(await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions?keep_current=true`, headers: { authorization: `Bearer ${session.jwt}` } }))
}

for (const kind of ['memory', 'redis', 'postgres'] as StoreKind[]) {
  t.test(`${kind}: two sessions each ending every other at once: one is kept and says so, the other answers 401 / 55 (10 rounds)`, async (t) => {
    const store = await storeOf(t, kind, 'keep-current-race')
    const { app } = await buildApp({ sessions: { enabled: true } }, { store })
    t.teardown(() => app.close())
    for (let round = 0; round < 10; round++) {
      const [x, y] = [await signIn(app), await signIn(app)]
      const answers = await Promise.all([endOthers(app, x), endOthers(app, y)])
      const after = [await validate(app, x), await validate(app, y)]
      t.same(after, answers, `round ${round}: each answer says what happened to its own session (answers ${JSON.stringify(answers)}, validate after ${JSON.stringify(after)})`)
      t.same([...answers].sort(), [OK, REVOKED], `round ${round}: exactly one session is kept`)
    }
  })

  t.test(`${kind}: one session ending every other twice at once: both answer 200 and it lives`, async (t) => {
    const store = await storeOf(t, kind, 'keep-current-twice')
    const { app } = await buildApp({ sessions: { enabled: true } }, { store })
    t.teardown(() => app.close())
    for (let round = 0; round < 5; round++) {
      const [x, other] = [await signIn(app), await signIn(app)]
      t.same(await Promise.all([endOthers(app, x), endOthers(app, x)]), [OK, OK])
      t.same([await validate(app, x), await validate(app, other)], [OK, REVOKED], `round ${round}`)
    }
  })
}

/** A flow kit with two sessions of Alice's, x then y, and the clock 5 ms on. */
async function twoSessions (): Promise<{ kit: Awaited<ReturnType<typeof flowKit>>, x: string, y: string }> {
  const kit = await flowKit({ sessions: { enabled: true } })
  const alice = await kit.users.findById(kit.aliceId)
  const sidOf = (signedIn: unknown): string => claimsOf((signedIn as { jwt: string }).jwt).sid as string
  const x = sidOf(await completeSignIn(kit.ctx, kit.call(), alice))
  const y = sidOf(await completeSignIn(kit.ctx, kit.call(), alice))
  kit.clock.advance(5)
  return { kit, x, y }
}

t.test('a request from a session a concurrent cutoff had ended changes nothing: the session that cutoff kept stays', async (t) => {
  const { kit, x, y } = await twoSessions()
  const ended: unknown[] = []
  kit.ctx.events.on('session.ended', (event) => { ended.push(event) })
  t.equal(await endAllSessions(kit.ctx, kit.settings, kit.aliceId, 'sign_out_everywhere', x), true, 'x ends every other')
  // y's request had passed its token check before x's cutoff landed
  await t.rejects(endAllSessions(kit.ctx, kit.settings, kit.aliceId, 'sign_out_everywhere', y), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED', statusCode: 401 })
  t.same((await kit.ctx.sessions.list(kit.aliceId)).map(s => s.id), [x], 'x is still kept and listed')
  t.equal(ended.length, 1, 'no second session.ended: nothing happened')
})

t.test('the caller\'s session ended on its own meanwhile (DELETE /sessions/{id} from another): the others end, and the answer is 401 / 55', async (t) => {
  const { kit, x, y } = await twoSessions()
  await kit.ctx.tokens.revokeSession(kit.settings, x)
  await t.rejects(endAllSessions(kit.ctx, kit.settings, kit.aliceId, 'sign_out_everywhere', x), { code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' })
  t.same(await kit.ctx.sessions.list(kit.aliceId), [], `neither x nor y (${y}) is live`)
})

t.test('host API: endAllSessions(userId, { keep }) keeps that session, answers whether it did, and refuses a keep that is no session id', async (t) => {
  const { app } = await buildApp({ sessions: { enabled: true } })
  t.teardown(() => app.close())
  const [x, y, z] = [await signIn(app), await signIn(app), await signIn(app)]
  t.equal(await app.jwtLogin.endAllSessions(1, { keep: x.sid }), true, 'kept')
  t.same([await validate(app, x), await validate(app, y), await validate(app, z)], [OK, REVOKED, REVOKED])
  t.same((await app.jwtLogin.sessions(1)).map(s => s.id), [x.sid], 'the index keeps it only')

  // y had already ended: keeping it is not possible, so every session ends, x too
  t.equal(await app.jwtLogin.endAllSessions(1, { keep: y.sid }), false, 'not kept: it had ended')
  t.same(await validate(app, x), REVOKED, 'every session ended')
  t.same(await app.jwtLogin.sessions(1), [])

  const w = await signIn(app)
  t.equal(await app.jwtLogin.endAllSessions(1, {}), false, 'no keep: nothing kept')
  t.same(await validate(app, w), REVOKED)

  for (const keep of ['not a session id', 42, null]) {
    const refused = await app.jwtLogin.endAllSessions(1, { keep } as unknown as { keep: string }).catch((error: unknown) => error)
    t.ok(refused instanceof JwtLoginSettingsError, `keep ${JSON.stringify(keep)} refused`)
    t.match(refused, { message: /endAllSessions\/keep/ })
  }
})
