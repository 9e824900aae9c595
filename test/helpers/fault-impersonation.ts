// The fault sweep of `impersonate` (a host API call, no route): its answer as the guard's envelope would carry it, and its invariants.
import { toJwtLoginError } from '../../lib/http/error-handler.js'
import { buildRig, expect, noted, ok, runFlow, validate, where, type Flow, type Response, type Rig, type StoreName, type Test } from './fault-rig.js'

/**
 * What `impersonate` did, as an answer: 200 with `data.jwt`, or the
 * envelope of the error it rejected with, as the plugin maps it for a host
 * (`toJwtLoginError`: a failed store or adapter is 503 / 201).
 */
function answerOf (work: Promise<{ jwt: string }>): Promise<Response> {
  const answer = (statusCode: number, body: unknown): Response => {
    const text = JSON.stringify(body)
    return { statusCode, body: text, json: () => JSON.parse(text) } as unknown as Response
  }
  return work.then(
    ({ jwt }) => noted(answer(200, { success: true, data: { jwt } })),
    (error: unknown) => {
      const mapped = toJwtLoginError(error as Parameters<typeof toJwtLoginError>[0])
      return answer(mapped.statusCode, { success: false, data: { message: mapped.message, errorCode: mapped.errorCode, error_code: mapped.errorCode } })
    }
  )
}

function impersonationFlows (rig: Rig, ids: { actor: number, user: number }): Array<Flow<any>> {
  const { app, clock } = rig
  const impersonate = async (): Promise<Response> => await answerOf(app.jwtLogin.impersonate({ actorId: ids.actor, userId: ids.user, reason: 'fault sweep' }))

  const flow: Flow<null> = {
    name: 'impersonate',
    rig,
    setup: async () => {
      // a clean slate: every earlier session of the user ends; the new one starts after the cutoff
      await app.jwtLogin.endAllSessions(ids.user)
      clock.advance(5)
      return null
    },
    act: impersonate,
    check: async (t, _c, res, info) => {
      const listed = (await app.jwtLogin.sessions(ids.user)).filter(session => session.method === 'impersonation')
      if (ok(res)) {
        const jwt = (res.json() as { data: { jwt: string } }).data.jwt
        expect(t, await validate(app, jwt), 200, null, 'the token answered validates', info)
        t.match(listed, [{ actorId: ids.actor }], `its session is listed with its actor [${where(info)}]`)
        t.equal(listed.length, 1, `and only it [${where(info)}]`)
        return
      }
      // nothing answered: no session of it is listed (an index write that landed was taken back, or ended)
      t.same(listed, [], `a failed call leaves no impersonation listed [${where(info)}]`)
      const retry = await impersonate()
      expect(t, retry, 200, null, 'an identical retry completes', info)
      expect(t, await validate(app, (retry.json() as { data: { jwt: string } }).data.jwt), 200, null, 'and its token validates', info)
      t.equal((await app.jwtLogin.sessions(ids.user)).length, 1, `the retry's session alone is listed [${where(info)}]`)
    }
  }
  return [flow]
}

/** The sweep on `store`: the actor and the user, then `impersonate` under each fault. */
export async function impersonationSweep (t: Test, store: StoreName): Promise<void> {
  const rig = await buildRig(t, store, 'impersonation', {})
  const actor = await rig.users.addUser({ login: 'support', email: 'support@example.com', password: 'a long and correct password' })
  const user = await rig.users.addUser({ login: 'acted', email: 'acted@example.com', password: 'a long and correct password' })
  for (const flow of impersonationFlows(rig, { actor: actor.ID, user: user.ID })) {
    await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
  }
}
