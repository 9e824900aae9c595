/**
 * The lock's flows of the fault sweep (test/helpers/fault-suite.ts says
 * what it checks): `lockUser` and `unlockUser` of the host API, with each
 * store call (and the adapter's `findById`) failing before and after it
 * ran. Either the call completed (locked: every session ended, sign-in
 * refused; unlocked: sign-in works), or it rejected with 503 / 201 and —
 * unless the failure came after the one write — nothing changed; a retry
 * completes it. The API answers no HTTP: its outcome is turned into the
 * envelope a route would answer (`answerOf`), so the shared checks apply.
 */
import { HostPortError, JwtLoginError } from '../../lib/index.js'
import { expect, hashLogin, ok, refresh, session, validate, where, type FaultInfo, type Flow, type Response, type Rig, type Session } from './fault-rig.js'

type Test = Parameters<Flow<unknown>['check']>[0]

/**
 * An API call's outcome as the envelope a route would answer: 200, or the
 * error's status and codes; the host's own adapter failing (`HostPortError`,
 * which the API hands to the host as it is) as a route answers it, 503 / 201.
 * Anything else is thrown on (a bug, never a 503).
 */
async function answerOf (call: Promise<unknown>): Promise<Response> {
  let status = 200
  let body: unknown = { success: true, data: {} }
  try {
    await call
  } catch (error) {
    const failure = error instanceof HostPortError ? new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error }) : error
    if (!(failure instanceof JwtLoginError)) throw error
    status = failure.statusCode
    body = { success: false, data: { message: failure.message, errorCode: failure.errorCode, error_code: failure.errorCode } }
  }
  const text = JSON.stringify(body)
  return { statusCode: status, body: text, json: () => JSON.parse(text) } as unknown as Response
}

/** The lock holds: the session from before is ended (401 / 55, its refresh 403 / 251) and the user's sign-in is refused (403 / 251). */
async function holds (t: Test, rig: Rig, email: string, before: Session, info: FaultInfo): Promise<void> {
  t.equal(await rig.app.jwtLogin.isLocked((await rig.users.findByEmail(email))?.ID as number), true, `locked [${where(info)}]`)
  expect(t, await validate(rig.app, before.jwt), 401, 55, 'the session from before the lock is ended', info)
  expect(t, await refresh(rig.app, before.refresh_token), 403, 251, 'its refresh token is a refused sign-in', info)
  expect(t, await hashLogin(rig, email), 403, 251, 'sign-in is refused', info)
}

/** `lockUser` and `unlockUser` of one user of their own, locked or unlocked afresh by each case's setup. */
export function lockFlows (rig: Rig, user: { id: number, email: string }): Array<Flow<Session>> {
  const { app } = rig
  const { id, email } = user

  const lockFlow: Flow<Session> = {
    name: 'lock',
    rig,
    // unlocked, with a live session
    setup: async () => {
      await app.jwtLogin.unlockUser(id)
      return await session(rig, email)
    },
    act: async () => await answerOf(app.jwtLogin.lockUser(id, { reason: 'fault sweep' })),
    check: async (t, before, res, info) => {
      if (!ok(res)) {
        // the write ran (a failure after it): the lock holds and every session ended; before it: nothing changed
        if (await app.jwtLogin.isLocked(id)) {
          expect(t, await validate(app, before.jwt), 401, 55, 'a lock written under a 503 ended the session', info)
        } else {
          expect(t, await validate(app, before.jwt), 200, null, 'a lock not written changed nothing', info)
        }
        t.equal((await answerOf(app.jwtLogin.lockUser(id, { reason: 'fault sweep, retried' }))).statusCode, 200, `a retry completes it [${where(info)}]`)
      }
      await holds(t, rig, email, before, info)
    }
  }

  const unlockFlow: Flow<Session> = {
    name: 'unlock',
    rig,
    // a session, then the lock that ended it
    setup: async () => {
      await app.jwtLogin.unlockUser(id)
      const before = await session(rig, email)
      await app.jwtLogin.lockUser(id, { reason: 'fault sweep' })
      return before
    },
    act: async () => await answerOf(app.jwtLogin.unlockUser(id, { reason: 'fault sweep' })),
    check: async (t, before, res, info) => {
      if (!ok(res)) {
        if (await app.jwtLogin.isLocked(id)) await holds(t, rig, email, before, info)
        t.equal((await answerOf(app.jwtLogin.unlockUser(id))).statusCode, 200, `a retry completes it [${where(info)}]`)
      }
      t.equal(await app.jwtLogin.isLocked(id), false, `unlocked [${where(info)}]`)
      expect(t, await validate(app, before.jwt), 401, 55, 'the session from before the lock stays ended', info)
      const after = await hashLogin(rig, email)
      if (expect(t, after, 200, null, 'sign-in works again', info)) {
        expect(t, await validate(app, (after.json() as { data: Session }).data.jwt), 200, null, 'and its token validates', info)
      }
    }
  }

  return [lockFlow, unlockFlow]
}
