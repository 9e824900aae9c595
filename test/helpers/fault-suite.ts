/**
 * Fault injection: for every route's flow, the k-th store call (and,
 * separately, the k-th host-adapter call) fails, for every k; then, with
 * faults off, the flow's invariants must hold:
 *
 * 1. never a 500; a failed dependency answers the envelope 503 / 201;
 * 2. either the operation completed, or nothing changed and an identical
 *    retry succeeds;
 * 3. a revoked token never validates, a single-use secret is used once.
 *
 * 4. the session index agrees with the token state: a session that
 *    validates is listed, a listed one validates (or, started by a request
 *    whose answer was lost, can be ended), and the session routes end all or
 *    nothing.
 *
 * Cases are named `<store> <flow> <layer>:<mode> k=<k>`. N (the calls of a
 * clean run) is measured first; k = N+1 is the clean run that must pass.
 * The call sequence of every flow is printed as a test comment. A flow whose
 * first calls are another flow's, in the same order (the password check),
 * sweeps from its own first call (`sweepFrom`).
 *
 * The harness (the rig, the requests, the shared assertions, `runFlow`) is
 * in fault-rig.ts; the account routes' flows are in fault-account.ts, sign-in
 * by email's in fault-email-sign-in.ts, plain OAuth 2.0 sign-in's and the
 * identity links' in fault-oauth2.ts, the lock's (`lockUser`, `unlockUser`)
 * in fault-lock.ts, `impersonate`'s in fault-impersonation.ts.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { generateBackupCodes } from '../../lib/index.js'
import { MemoryPasskeyStore } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { SoftAuthenticator } from './authenticator.js'
import { accountFlows, accountOptions, ACCOUNT_SETTINGS } from './fault-account.js'
import { emailSignInSweep } from './fault-email-sign-in.js'
import { lockFlows } from './fault-lock.js'
import { impersonationSweep } from './fault-impersonation.js'
import { oauth2Sweep } from './fault-oauth2.js'
import {
  BASE, bearer, buildRig, checkListConsistent, dataOf, endAllSessions, endSession, errorCodeOf, expect, hashLogin, listedIds, listSessions,
  login, MANY, noted, ok, PASSWORD, post, PREFIX, refresh, registerUser, revoke, runFlow, session, setupData, setupLogin, sidOf, validate, where,
  type FaultInfo, type Flow, type Response, type Rig, type Session, type StoreName, type Test
} from './fault-rig.js'
import { faultyAdapter } from './faults.js'
import { providers, TOKEN_URL } from './oauth.js'
import { ACCOUNTS, CLIENTS, startIdp } from './oidc-provider.js'
import { codeIn, RESET_URL } from './reset.js'
import { totpAt } from './two-factor.js'

t.setTimeout(240_000)

/** The refresh grace interval the design gives (`refresh.reuseInterval`, default 30 s); the clock moves past it. */
const PAST_REUSE_INTERVAL_MS = 31_000

const idp = await startIdp()
t.teardown(() => idp.close())

// ---- requests only some flows make -----------------------------------------

const submit2fa = async (app: FastifyInstance, jwt: string, code: string): Promise<Response> => await post(app, '/auth/2fa', { JWT: jwt, code })
const requestReset = async (app: FastifyInstance, email: string): Promise<Response> => await app.inject({ method: 'POST', url: RESET_URL, payload: { email } })
const completeReset = async (app: FastifyInstance, email: string, code: string, password: string): Promise<Response> =>
  await app.inject({ method: 'PUT', url: RESET_URL, payload: { email, code, new_password: password } })
const oauthToken = async (app: FastifyInstance, payload: Record<string, string>): Promise<Response> => noted(await app.inject({ method: 'POST', url: TOKEN_URL, payload }))

// ---- flows: login, validate, refresh, revoke --------------------------------

function coreFlows (rig: Rig, user: { email: string }): Array<Flow<any>> {
  const { app } = rig
  let validated: { jwt: string, answer: unknown } | null = null

  const loginFlow: Flow<null> = {
    name: 'login',
    rig,
    setup: async () => null,
    act: async () => await login(app, user.email, PASSWORD),
    check: async (t, _c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await login(app, user.email, PASSWORD)
        if (!expect(t, answer, 200, null, 'a retry with the same credentials succeeds', info)) return
      }
      const data = dataOf<Session>(answer)
      t.type(data.refresh_token, 'string', `a refresh token is issued [${where(info)}]`)
      expect(t, await validate(app, data.jwt), 200, null, 'the issued token validates', info)
      // the sign-in joined the index: whatever the fault, what validates is listed and what is listed validates
      await checkListConsistent(t, rig, info, [res, answer].filter(ok).map(one => dataOf<Session>(one).jwt))
    }
  }

  const validateFlow: Flow<{ jwt: string, answer: unknown }> = {
    name: 'validate',
    rig,
    setup: async () => {
      if (validated === null) {
        const { jwt } = await session(rig, user.email)
        const res = await validate(app, jwt)
        const data = dataOf(res)
        validated = { jwt, answer: { user: data.user, payload: data.jwt[0].payload } }
      }
      return validated
    },
    act: async (c) => await validate(app, c.jwt),
    check: async (t, c, res, info) => {
      const answers = ok(res) ? [res] : []
      const retry = await validate(app, c.jwt)
      if (expect(t, retry, 200, null, 'a retry validates', info)) answers.push(retry)
      for (const answer of answers) {
        const data = dataOf(answer)
        t.same({ user: data.user, payload: data.jwt[0].payload }, c.answer, `the same answer [${where(info)}]`)
      }
    }
  }

  const refreshFlow: Flow<Session> = {
    name: 'refresh',
    rig,
    setup: async () => await session(rig, user.email),
    act: async (c) => await refresh(app, c.refresh_token),
    check: async (t, c, _res, info) => {
      // whatever the answer (a 503, or a 200 whose body the client lost), the same token is retried at once
      const retry = await refresh(app, c.refresh_token)
      if (!expect(t, retry, 200, null, 'a retry with the same refresh token within the grace interval succeeds', info)) return
      const retried = dataOf<Session>(retry)
      expect(t, await validate(app, retried.jwt), 200, null, 'the access token of the retry validates', info)
      const next = await refresh(app, retried.refresh_token)
      if (!expect(t, next, 200, null, 'afterwards the newest refresh token still refreshes', info)) return
      const newest = dataOf<Session>(next)

      rig.clock.advance(PAST_REUSE_INTERVAL_MS)
      expect(t, await refresh(app, c.refresh_token), 401, 51, 'outside the grace interval the old token is refused', info)
      expect(t, await refresh(app, newest.refresh_token), 401, 51, 'a reuse outside the interval ends the family: the newest token is refused', info)
      expect(t, await validate(app, newest.jwt), 401, 55, 'a reuse outside the interval ends the family: its access token is refused', info)
    }
  }

  const revokeFlow: Flow<Session> = {
    name: 'revoke',
    rig,
    setup: async () => await session(rig, user.email),
    act: async (c) => await revoke(app, c.jwt),
    check: async (t, c, res, info) => {
      if (!ok(res)) {
        const retry = await revoke(app, c.jwt)
        const answer = `${retry.statusCode}/${String(errorCodeOf(retry))}`
        t.ok(retry.statusCode === 200 || answer === '401/55', `a retry of a failed revoke answers 200 or 401/55, got ${answer} [${where(info)}]`, { calls: info.log.split('\n') })
      }
      expect(t, await validate(app, c.jwt), 401, 55, 'the revoked access token is refused', info)
      expect(t, await refresh(app, c.refresh_token), 401, 51, "the session's refresh token no longer refreshes (a revoke never leaves the family alive)", info)
    }
  }

  return [loginFlow, validateFlow, revokeFlow, refreshFlow]
}

// ---- flows: users (register, delete) -------------------------------------------

const deleteUser = async (app: FastifyInstance, jwt: string): Promise<Response> => await app.inject({ method: 'DELETE', url: `${PREFIX}/users`, headers: bearer(jwt) })

function userFlows (rig: Rig): Array<Flow<any>> {
  const { app, users } = rig
  let serial = 0

  const registerFlow: Flow<{ email: string }> = {
    name: 'register',
    rig,
    setup: async () => ({ email: `registered${++serial}@example.com` }),
    act: async (c) => await registerUser(app, c.email),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        // a host that created the user and then failed (an `after` fault), or a sign-in that failed after
        // the creation (503 / 227), leaves the user created: the retry finds it, and the password signs in
        answer = await registerUser(app, c.email)
        const got = `${answer.statusCode}/${String(errorCodeOf(answer))}`
        const created = errorCodeOf(res) === 227 || (info.layer === 'adapter' && info.mode === 'after' && info.call?.method === 'createUser')
        if (!t.equal(got, created ? '409/38' : '200/undefined', `a retry of a failed registration [${where(info)}]`, { body: answer.body.slice(0, 300) })) return
      }
      const user = await users.findByEmail(c.email)
      if (!t.ok(user, `the user exists once [${where(info)}]`) || user === null) return
      if (ok(answer)) {
        t.equal(dataOf(answer).id, user.ID, `the answer names the registered user [${where(info)}]`)
        expect(t, await validate(app, dataOf(answer).jwt), 200, null, "the new user's token validates", info)
      }
      expect(t, await login(app, c.email, PASSWORD), 200, null, 'the new user signs in with the password', info)
      expect(t, await registerUser(app, c.email), 409, 38, 'a second registration of the email is refused', info)
    }
  }

  const deleteFlow: Flow<Session & { email: string }> = {
    name: 'delete',
    rig,
    setup: async () => {
      const email = `leaving${++serial}@example.com`
      await users.addUser({ login: `leaving${serial}`, email, password: PASSWORD })
      return { ...await session(rig, email), email }
    },
    act: async (c) => await deleteUser(app, c.jwt),
    check: async (t, c, res, info) => {
      if (!ok(res)) {
        const retry = await deleteUser(app, c.jwt)
        const answer = `${retry.statusCode}/${String(errorCodeOf(retry))}`
        if (retry.statusCode !== 200) {
          // the sessions ended before the failure: the client signs in again and deletes (a host that
          // deleted the user and then failed, an `after` fault, has nothing left to delete)
          t.equal(answer, '401/55', `a retry with the same token answers 200 or 401/55 [${where(info)}]`, { calls: info.log.split('\n') })
          if (await users.findByEmail(c.email) !== null) {
            expect(t, await deleteUser(app, dataOf<Session>(await setupLogin(rig, c.email)).jwt), 200, null, 'after a new sign-in the deletion goes through', info)
          }
        }
      }
      t.equal(await users.findByEmail(c.email), null, `the user is gone [${where(info)}]`)
      expect(t, await validate(app, c.jwt), 401, 55, "the deleted user's token is refused", info)
      expect(t, await refresh(app, c.refresh_token), 401, 51, "the deleted user's refresh token no longer refreshes", info)
    }
  }

  return [registerFlow, deleteFlow]
}

// ---- flows: two-factor --------------------------------------------------------

function sixDigits (text: string): string {
  const match = /\b(\d{6})\b/.exec(text)
  if (match === null) throw new Error(`no code in ${text}`)
  return match[1] as string
}

interface Challenge { interim: string, code: string }

function twoFactorFlows (rig: Rig, who: { totp: { email: string, id: number, secret: string }, email: { email: string }, backup: { email: string, id: number } }): Array<Flow<any>> {
  const { app, mailer, port, clock } = rig

  const interimOf = async (email: string): Promise<string> => {
    const res = await setupLogin(rig, email)
    if (dataOf(res).two_factor_required !== true) throw new Error(`setup login gave no challenge: ${res.body}`)
    return dataOf(res).jwt as string
  }

  /** The common part: a failed request burns nothing; a success is final and its code and challenge are spent. */
  const checkSecondStep = async (t: Test, c: Challenge, res: Response, info: FaultInfo): Promise<boolean> => {
    let answer = res
    if (!ok(res)) {
      answer = await submit2fa(app, c.interim, c.code)
      // an `after` fault on consumeBackupCode is a host that spent the code and then threw:
      // it spent it under the challenge's claim, so the same challenge's retry is answered true
      if (!expect(t, answer, 200, null, 'a retry with the same interim token and code succeeds (nothing was burnt)', info)) return false
    }
    expect(t, await validate(app, dataOf<Session>(answer).jwt), 200, null, 'the final token validates', info)
    expect(t, await submit2fa(app, c.interim, c.code), 401, null, 'a replay of the same interim token and code is refused', info)
    await checkListConsistent(t, rig, info, [dataOf<Session>(answer).jwt])
    return true
  }

  const loginFlow: Flow<{ mark: number }> = {
    name: 'login-2fa-email',
    rig,
    setup: async () => ({ mark: mailer.sent.length }),
    act: async () => await login(app, who.email.email, PASSWORD),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await login(app, who.email.email, PASSWORD)
        if (!expect(t, answer, 200, null, 'a retry with the same credentials succeeds', info)) return
      }
      t.equal(dataOf(answer).two_factor_required, true, `a challenge [${where(info)}]`)
      await mailer.waitFor(c.mark + 1)
      const final = await submit2fa(app, dataOf(answer).jwt, sixDigits(mailer.last.text))
      if (expect(t, final, 200, null, 'the code mailed last completes the challenge', info)) await checkListConsistent(t, rig, info, [dataOf<Session>(final).jwt])
    }
  }

  const totpFlow: Flow<Challenge> = {
    name: '2fa-totp',
    rig,
    setup: async () => {
      // a fresh time step for every case: a step is spent once per user
      clock.advance(90_000)
      return { interim: await interimOf(who.totp.email), code: await totpAt(who.totp.secret, clock()) }
    },
    act: async (c) => await submit2fa(app, c.interim, c.code),
    check: async (t, c, res, info) => {
      if (!await checkSecondStep(t, c, res, info)) return
      expect(t, await submit2fa(app, await interimOf(who.totp.email), c.code), 401, 109, 'the TOTP step is spent: the code fails on a new challenge', info)
    }
  }

  const emailFlow: Flow<Challenge> = {
    name: '2fa-email',
    rig,
    setup: async () => {
      const mark = mailer.sent.length
      const interim = await interimOf(who.email.email)
      await mailer.waitFor(mark + 1)
      return { interim, code: sixDigits(mailer.last.text) }
    },
    act: async (c) => await submit2fa(app, c.interim, c.code),
    check: async (t, c, res, info) => { await checkSecondStep(t, c, res, info) }
  }

  const backupFlow: Flow<Challenge> = {
    name: '2fa-backup',
    rig,
    setup: async () => {
      const { codes, hashes } = generateBackupCodes()
      await port.replaceBackupCodes(who.backup.id, hashes)
      return { interim: await interimOf(who.backup.email), code: codes[0] as string }
    },
    act: async (c) => await submit2fa(app, c.interim, c.code),
    check: async (t, c, res, info) => {
      const before = port.backupCodesLeft(who.backup.id)
      if (!await checkSecondStep(t, c, res, info)) return
      t.equal(port.backupCodesLeft(who.backup.id), 9, `the host holds 9 of 10 codes after one sign-in (was ${before} before the retry) [${where(info)}]`)
      expect(t, await submit2fa(app, await interimOf(who.backup.email), c.code), 401, 109, 'the backup code is spent: it fails on a new challenge', info)
    }
  }

  return [loginFlow, totpFlow, emailFlow, backupFlow]
}

// ---- flows: password reset ----------------------------------------------------

function resetFlows (rig: Rig, user: { email: string }): Array<Flow<any>> {
  const { app, mailer } = rig
  let password = PASSWORD
  let serial = 0
  const nextPassword = (): string => `new password number ${++serial}`

  const requestFlow: Flow<{ mark: number }> = {
    name: 'reset-request',
    rig,
    setup: async () => ({ mark: mailer.sent.length }),
    act: async () => await requestReset(app, user.email),
    check: async (t, c, res, info) => {
      let expected = ok(res) ? 1 : 0
      if (!ok(res)) {
        if (!expect(t, await requestReset(app, user.email), 200, null, 'a retry succeeds', info)) return
        expected++
      }
      await mailer.waitFor(c.mark + expected)
      const codes = mailer.sent.slice(c.mark).map(m => codeIn(m.text))
      const last = codes.pop() as string
      for (const older of codes) {
        expect(t, await completeReset(app, user.email, older, 'never this password'), 400, 62, 'an older code is dead: at most one live code per user', info)
      }
      const next = nextPassword()
      if (expect(t, await completeReset(app, user.email, last, next), 200, null, 'the code mailed last works', info)) password = next
    }
  }

  interface Pending { code: string, before: Session, old: string, next: string }

  /** After a completed reset: the new password logs in, the old one does not, no earlier token works. */
  const checkChanged = async (t: Test, c: Pending, info: FaultInfo): Promise<void> => {
    expect(t, await login(app, user.email, c.next), 200, null, 'the new password logs in', info)
    expect(t, await login(app, user.email, c.old), 401, 48, 'the old password does not', info)
    expect(t, await validate(app, c.before.jwt), 401, 55, 'an access token from before the reset is refused', info)
    expect(t, await refresh(app, c.before.refresh_token), 401, 51, 'a refresh token from before the reset is refused', info)
  }

  const completeFlow: Flow<Pending> = {
    name: 'reset-complete',
    rig,
    setup: async () => {
      const mark = mailer.sent.length
      const res = await requestReset(app, user.email)
      if (res.statusCode !== 200) throw new Error(`setup reset request failed: ${res.body}`)
      await mailer.waitFor(mark + 1)
      return { code: codeIn(mailer.last.text), before: await session(rig, user.email), old: password, next: nextPassword() }
    },
    act: async (c) => await completeReset(app, user.email, c.code, c.next),
    check: async (t, c, res, info) => {
      if (ok(res)) {
        password = c.next
        await checkChanged(t, c, info)
        return
      }
      const changed = (await login(app, user.email, c.next)).statusCode === 200
      if (changed) {
        // only a host that changed the password and then errored may leave it changed after a 5xx
        t.ok(info.layer === 'adapter' && info.mode === 'after', `a failed reset left the password unchanged [${where(info)}]`, { calls: info.log.split('\n') })
        password = c.next
        expect(t, await validate(app, c.before.jwt), 401, 55, 'the password changed: a session started before it does not validate', info)
        expect(t, await refresh(app, c.before.refresh_token), 401, 51, 'the password changed: a refresh token from before it is refused', info)
      } else {
        expect(t, await login(app, user.email, c.old), 200, null, 'after a failed reset the old password still logs in', info)
      }
      if (!expect(t, await completeReset(app, user.email, c.code, c.next), 200, null, 'a retry with the same code succeeds', info)) return
      password = c.next
      await checkChanged(t, c, info)
    }
  }

  return [requestFlow, completeFlow]
}

// ---- flows: provider sign-in ---------------------------------------------------

function oauthFlows (rig: Rig, bob: { id: number }): Array<Flow<any>> {
  const { app, users } = rig
  let serial = 0

  const idToken = async (email: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000)
    // bob's subject is his account's at the provider, as in the tokens of its code flow: his first sign-in
    // links it, and a second account of idp1 with his email would be refused (409 / 248)
    const sub = email === ACCOUNTS.bob.email ? ACCOUNTS.bob.id : `acct-${email}`
    // a jti of its own: an ID token signs in once, and two minted in one second would be one token
    return await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub, email, email_verified: true, iat: now, exp: now + 600, jti: randomUUID() })
  }

  const idTokenFlow: Flow<{ idToken: string }> = {
    name: 'oauth-id-token',
    rig,
    setup: async () => ({ idToken: await idToken(ACCOUNTS.bob.email) }),
    act: async (c) => await oauthToken(app, { provider: 'idp1', id_token: c.idToken }),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await oauthToken(app, { provider: 'idp1', id_token: c.idToken })
        if (!expect(t, answer, 200, null, 'a retry with the same ID token succeeds', info)) return
      }
      t.equal(dataOf(answer).user.ID, bob.id, `the existing user signs in [${where(info)}]`)
      expect(t, await validate(app, dataOf(answer).jwt), 200, null, 'the token validates', info)
      await checkListConsistent(t, rig, info, [res, answer].filter(ok).map(one => dataOf<Session>(one).jwt))
    }
  }

  const registerFlow: Flow<{ idToken: string, login: string, email: string }> = {
    name: 'oauth-register',
    rig,
    setup: async () => {
      const login = `newcomer${++serial}x`
      const email = `${login}@example.com`
      return { idToken: await idToken(email), login, email }
    },
    act: async (c) => await oauthToken(app, { provider: 'reg', id_token: c.idToken }),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await oauthToken(app, { provider: 'reg', id_token: c.idToken })
        if (!expect(t, answer, 200, null, 'a retry with the same ID token succeeds', info)) return
      }
      const user = await users.findByEmail(c.email)
      t.equal(dataOf(answer).user.ID, user?.ID, `the answer names the registered user [${where(info)}]`)
      t.equal(await users.findByLogin(`${c.login}2`), null, `no duplicate user was registered [${where(info)}]`)
      expect(t, await oauthToken(app, { provider: 'reg', id_token: c.idToken }), 401, 210, 'the ID token that signed in is spent', info)
      const again = await oauthToken(app, { provider: 'reg', id_token: await idToken(c.email) })
      t.equal(again.statusCode === 200 ? dataOf(again).user.ID : again.statusCode, user?.ID, `a later sign-in finds the same user [${where(info)}]`)
      await checkListConsistent(t, rig, info, [res, answer, again].filter(ok).map(one => dataOf<Session>(one).jwt))
    }
  }

  const codeFlow: Flow<{ code: string }> = {
    name: 'oauth-code',
    rig,
    setup: async () => ({ code: (await idp.code({ account: ACCOUNTS.bob })).code }),
    act: async (c) => await oauthToken(app, { provider: 'idp1', code: c.code }),
    check: async (t, c, res, info) => {
      const claim = info.sequence.findIndex(call => call.key.startsWith('oauth-code:')) + 1
      const answers = [res]
      if (!ok(res)) {
        const retry = await oauthToken(app, { provider: 'idp1', code: c.code })
        answers.push(retry)
        // before the code is claimed nothing is spent, so the retry must sign in; after it, the
        // provider has seen (or will refuse) the code and 401 / 72 is the truth
        const unspent = info.layer === 'store' && info.mode === 'before' && claim > 0 && info.k <= claim
        if (unspent) expect(t, retry, 200, null, 'a fault before the code is claimed burns nothing: a retry signs in', info)
        else if (!ok(retry)) expect(t, retry, 401, 72, 'a retry of a spent code is refused as such', info)
      }
      const replay = await oauthToken(app, { provider: 'idp1', code: c.code })
      answers.push(replay)
      t.ok(answers.filter(ok).length <= 1, `the provider code signs in at most once [${where(info)}]`)
      if (answers.some(ok)) expect(t, replay, 401, 72, 'a replay of a used code is refused', info)
      await checkListConsistent(t, rig, info, answers.filter(ok).map(one => dataOf<Session>(one).jwt), async () => (await session(rig, ACCOUNTS.bob.email)).jwt)
    }
  }

  return [idTokenFlow, registerFlow, codeFlow]
}

// ---- flows: the session routes ---------------------------------------------------

/** A session of the user under test, with its id. */
interface Owned extends Session { sid: string }

/** The session rig's `sessions.maxPerUser`: small, so a sign-in over it ends the oldest (the index's trim is swept too). */
const SESSIONS_MAX = 3

function sessionFlows (rig: Rig, user: { email: string }): Array<Flow<any>> {
  const { app, clock } = rig

  const owned = async (): Promise<Owned> => {
    const started = await session(rig, user.email)
    return { ...started, sid: sidOf(started.jwt) }
  }

  /**
   * A clean slate for one case: every earlier session of the user ends (a
   * clean sign-out everywhere, which also empties the index), then `count`
   * new sessions start, oldest first.
   */
  const fresh = async (count: number): Promise<Owned[]> => {
    const res = await endAllSessions(app, (await owned()).jwt)
    if (res.statusCode !== 200) throw new Error(`setup sign-out everywhere failed: ${res.body}`)
    // the cutoff ends the sessions started up to its own ms: the new ones start after it
    clock.advance(5)
    const sessions: Owned[] = []
    for (let i = 0; i < count; i++) sessions.push(await owned())
    return sessions
  }

  /** The ids `GET /sessions` lists (clean) for `by`'s user, or `null` (asserted) when it does not answer 200. */
  const listed = async (t: Test, by: Owned, info: FaultInfo): Promise<string[] | null> => {
    const res = await listSessions(app, by.jwt)
    return expect(t, res, 200, null, 'GET /sessions (clean) answers', info) ? listedIds(res) : null
  }

  /** A session that was ended: both its tokens are refused and it is not listed. */
  const checkEnded = async (t: Test, ended: Owned, ids: readonly string[], info: FaultInfo): Promise<void> => {
    expect(t, await validate(app, ended.jwt), 401, 55, `the ended session's access token is refused (${ended.sid})`, info)
    expect(t, await refresh(app, ended.refresh_token), 401, 51, `the ended session's refresh token is refused (${ended.sid})`, info)
    t.notOk(ids.includes(ended.sid), `the ended session is not listed [${where(info)}]`, { listed: ids })
  }

  const listFlow: Flow<{ sessions: Owned[], expected: string[] }> = {
    name: 'sessions-list',
    rig,
    setup: async () => {
      const sessions = await fresh(3)
      // the third ends by /auth/revoke, which leaves it in the index: the list must still leave it out
      const revoked = await revoke(app, (sessions[2] as Owned).jwt)
      if (revoked.statusCode !== 200) throw new Error(`setup revoke failed: ${revoked.body}`)
      return { sessions, expected: sessions.slice(0, 2).map(one => one.sid) }
    },
    act: async (c) => await listSessions(app, (c.sessions[0] as Owned).jwt),
    check: async (t, c, res, info) => {
      const [first, second, third] = c.sessions as [Owned, Owned, Owned]
      if (ok(res)) {
        t.same(listedIds(res), c.expected, `the answer lists exactly the live sessions, oldest first [${where(info)}]`)
        t.same(dataOf(res).sessions.map((one: { current: boolean }) => one.current), [true, false], `the caller's own is current [${where(info)}]`)
        t.same(dataOf(res).devices, [], `no device [${where(info)}]`)
      }
      const ids = await listed(t, first, info)
      if (ids !== null) t.same(ids, c.expected, `the list (clean) holds exactly the live sessions [${where(info)}]`)
      expect(t, await validate(app, first.jwt), 200, null, 'a list changes nothing: the caller\'s session validates', info)
      expect(t, await validate(app, second.jwt), 200, null, 'a list changes nothing: the other live session validates', info)
      expect(t, await validate(app, third.jwt), 401, 55, 'the revoked session stays refused', info)
    }
  }

  const endOneFlow: Flow<{ caller: Owned, other: Owned }> = {
    name: 'sessions-end-one',
    rig,
    setup: async () => {
      const [caller, other] = await fresh(2) as [Owned, Owned]
      return { caller, other }
    },
    act: async (c) => await endSession(app, c.caller.jwt, c.other.sid),
    check: async (t, c, res, info) => {
      const live = (await validate(app, c.other.jwt)).statusCode === 200
      let ids = await listed(t, c.caller, info)
      if (ids === null) return
      // never a session that validates but is not listed, nor one listed that is refused
      t.equal(ids.includes(c.other.sid), live, `the session is listed exactly when it validates (validates: ${String(live)}) [${where(info)}]`, { listed: ids, calls: info.log.split('\n') })
      if (ok(res)) t.notOk(live, `a 200 ended the session [${where(info)}]`)
      const retry = await endSession(app, c.caller.jwt, c.other.sid)
      if (live) {
        // nothing changed: an identical retry ends it
        if (!expect(t, retry, 200, null, 'nothing changed: an identical retry ends the session', info)) return
        ids = await listed(t, c.caller, info)
        if (ids === null) return
      } else {
        expect(t, retry, 404, 213, 'it ended: a retry finds no such live session', info)
      }
      await checkEnded(t, c.other, ids, info)
      expect(t, await validate(app, c.caller.jwt), 200, null, 'the caller\'s own session still validates', info)
      t.same(ids, [c.caller.sid], `only the caller's session is listed [${where(info)}]`)
    }
  }

  const endAllFlow = (keep: boolean): Flow<{ sessions: Owned[] }> => ({
    name: keep ? 'sessions-end-all-keep' : 'sessions-end-all',
    rig,
    setup: async () => ({ sessions: await fresh(3) }),
    act: async (c) => await endAllSessions(app, (c.sessions[0] as Owned).jwt, keep),
    check: async (t, c, res, info) => {
      const caller = c.sessions[0] as Owned
      const ending = keep ? c.sessions.slice(1) : c.sessions
      const live = await Promise.all(ending.map(async one => (await validate(app, one.jwt)).statusCode === 200))
      // all or nothing: one write of the user's cutoff ends them together
      t.ok(live.every(Boolean) || !live.some(Boolean), `every session ends, or none does (validate: ${live.join(', ')}) [${where(info)}]`, { calls: info.log.split('\n') })
      if (keep) expect(t, await validate(app, caller.jwt), 200, null, 'the kept session validates whatever failed', info)
      if (ok(res)) t.notOk(live.some(Boolean), `a 200 ended them [${where(info)}]`)
      if (live.some(Boolean)) {
        const ids = await listed(t, caller, info)
        if (ids !== null) t.same(ids, c.sessions.map(one => one.sid), `nothing changed: every session is still listed [${where(info)}]`)
        if (!expect(t, await endAllSessions(app, caller.jwt, keep), 200, null, 'nothing changed: an identical retry succeeds', info)) return
      }
      for (const one of ending) {
        expect(t, await validate(app, one.jwt), 401, 55, `an earlier session's access token is refused (${one.sid})`, info)
      }
      expect(t, await refresh(app, (c.sessions[1] as Owned).refresh_token), 401, 51, 'an earlier session\'s refresh token is refused', info)
      // without a kept session, a new sign-in (after the cutoff's ms) lists
      if (!keep) clock.advance(5)
      const by = keep ? caller : await owned()
      const ids = await listed(t, by, info)
      if (ids !== null) t.same(ids, [by.sid], `none but the ${keep ? 'kept' : 'new'} session is listed [${where(info)}]`)
    }
  })

  const boundFlow: Flow<{ earlier: Owned[] }> = {
    name: 'sessions-bound',
    rig,
    // as many live sessions as the bound allows: the sign-in under faults ends the oldest
    setup: async () => ({ earlier: await fresh(SESSIONS_MAX) }),
    // without argon2: the subject is the bound, not the password check
    act: async () => await hashLogin(rig, user.email),
    // the password check's calls before it are swept by `login`
    sweepFrom: (call) => call.key.startsWith('signins:'),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await hashLogin(rig, user.email)
        if (!expect(t, answer, 200, null, 'a retry with the same credentials succeeds', info)) return
      }
      const started = [...new Set([res, answer])].filter(ok).map(one => dataOf<Session>(one).jwt)
      const newest = started.at(-1) as string
      /** The sessions of `jwts` that validate, by id, in sign-in order. */
      const liveOf = async (jwts: readonly string[]): Promise<string[]> => {
        const live = await Promise.all(jwts.map(async jwt => (await validate(app, jwt)).statusCode === 200))
        return jwts.filter((_jwt, i) => live[i]).map(sidOf)
      }
      const before = c.earlier.map(one => one.jwt)
      const live = await liveOf([...before, ...started])
      t.ok(live.includes(sidOf(newest)), `the new session validates [${where(info)}]`)
      // the oldest end first: the earlier sessions still live are the newest of them
      const earlier = c.earlier.map(one => live.includes(one.sid))
      t.ok(earlier.every((on, i) => !on || earlier.slice(i).every(Boolean)), `the oldest sessions end first (live: ${earlier.join(', ')}) [${where(info)}]`)
      // every session the user holds was handed out here, so the list is exactly the live ones (no session of a lost answer)
      const first = await listSessions(app, newest)
      if (expect(t, first, 200, null, 'GET /sessions (clean) answers', info)) t.same(listedIds(first), live, `the list holds exactly the live sessions, oldest first [${where(info)}]`)
      // a trim that failed was logged and the sign-in answered: the next sign-in trims
      const next = await owned()
      const after = await liveOf([...before, ...started, next.jwt])
      t.ok(after.length <= SESSIONS_MAX, `after the next sign-in at most ${SESSIONS_MAX} sessions are live (${after.length}) [${where(info)}]`, { calls: info.log.split('\n') })
      t.ok(after.includes(next.sid), `the newest session is never ended by the bound [${where(info)}]`)
      const ids = await listed(t, next, info)
      if (ids !== null) t.same(ids, after, `after the next sign-in the list holds exactly the live sessions [${where(info)}]`)
    }
  }

  return [listFlow, endOneFlow, endAllFlow(false), endAllFlow(true), boundFlow]
}

// ---- flows: a trusted device standing in for the second factor ------------------------

function deviceFlows (rig: Rig, who: { email: string, secret: string }): Array<Flow<any>> {
  const { app, clock } = rig
  /** The device token the last case left working, or `null` (the next case trusts the device anew). */
  let device: string | null = null

  /** A whole TOTP sign-in (a fresh time step): its answer, with a device token when asked. */
  const twoFactorSignIn = async (remember: boolean): Promise<Response> => {
    clock.advance(90_000)
    const first = await setupLogin(rig, who.email)
    if (dataOf(first).two_factor_required !== true) throw new Error(`setup login gave no challenge: ${first.body}`)
    const res = await post(app, '/auth/2fa', { JWT: dataOf(first).jwt, code: await totpAt(who.secret, clock()), ...(remember ? { remember_device: true } : {}) })
    if (res.statusCode !== 200) throw new Error(`setup second step failed: ${res.body}`)
    return res
  }
  const deviceIdOf = (token: string): string => token.split('.')[0] as string
  const signIn = async (token: string): Promise<Response> => await post(app, '/auth', { email: who.email, password: PASSWORD, device_token: token })

  const flow: Flow<{ token: string }> = {
    name: 'trusted-device',
    rig,
    setup: async () => {
      device ??= dataOf(await twoFactorSignIn(true)).device_token as string
      return { token: device }
    },
    act: async (c) => await signIn(c.token),
    // the password check's calls before the device is read are swept by `login`
    sweepFrom: (call) => call.key.startsWith('devices:'),
    check: async (t, c, res, info) => {
      device = null
      const answers = [res]
      if (!ok(res)) {
        // the device's token rotates before the session is made: a fault after the rotation loses it
        // (the answer that carried its successor never arrived), and the retry is asked the second factor
        const retry = await signIn(c.token)
        if (!expect(t, retry, 200, null, 'a retry with the same password and device token answers', info)) return
        answers.push(retry)
        // before the rotation (every host call comes before it) the device is untouched: the retry skips the factor
        const rotation = info.sequence.findIndex(call => call.method === 'compareAndSet' && call.key.startsWith('devices:')) + 1
        const untouched = info.layer === 'adapter' || info.k < rotation || (info.mode === 'before' && info.k === rotation)
        if (untouched) t.not(dataOf(retry).two_factor_required, true, `a fault before the device token rotated spends nothing: the retry skips the second factor [${where(info)}]`, { body: retry.body.slice(0, 300) })
      }
      const finals = answers.filter(one => ok(one) && dataOf(one).two_factor_required !== true)
      for (const final of finals) {
        const data = dataOf(final)
        t.match(data.device_token, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/, `the device stood in: its rotated token is answered [${where(info)}]`)
        t.equal(deviceIdOf(data.device_token as string), deviceIdOf(c.token), `the same device [${where(info)}]`)
        t.not(data.device_token, c.token, `a new secret [${where(info)}]`)
        expect(t, await validate(app, data.jwt as string), 200, null, 'the final token validates', info)
      }
      if (ok(res) && dataOf(res).two_factor_required !== true) t.equal(finals.length, 1, `a final answer under a fault is not followed by another [${where(info)}]`)
      const last = finals.at(-1)
      if (last !== undefined && answers.at(-1) === last) device = dataOf(last).device_token as string
      else t.comment(`${where(info)}: the device token was spent by the faulty request; the next case trusts the device anew`)
      const lister = async (): Promise<string> => dataOf(await twoFactorSignIn(false)).jwt as string
      await checkListConsistent(t, rig, info, finals.map(one => dataOf(one).jwt as string), lister)
      // the device itself is never lost from the list, nor doubled
      const by = finals.length > 0 ? dataOf(finals.at(-1) as Response).jwt as string : await lister()
      const list = await listSessions(app, by)
      if (expect(t, list, 200, null, 'GET /sessions (clean) answers', info)) {
        const devices = dataOf(list).devices.map((one: { id: string }) => one.id) as string[]
        t.equal(devices.filter(id => id === deviceIdOf(c.token)).length, 1, `the device is listed once [${where(info)}]`, { devices })
      }
    }
  }

  return [flow]
}

// ---- flows: passkeys -------------------------------------------------------------

/** The passkey rig's relying party: its id and the one page origin whose ceremonies it accepts. */
const PASSKEYS = { enabled: true, rpId: 'example.com', origins: ['https://app.example.com'] }
/** Enrols a passkey of `email`'s user (no second factor yet) on `authenticator`, with faults off; answers its credential id. */
async function enrolPasskey (rig: Rig, email: string, authenticator: SoftAuthenticator): Promise<string> {
  const { jwt } = await session(rig, email)
  const options = await setupData<PublicKeyCredentialCreationOptionsJSON>('passkey options', post(rig.app, '/passkeys/register/options', { JWT: jwt }))
  const { passkey } = await setupData<{ passkey: { id: string } }>('passkey enrolment', post(rig.app, '/passkeys/register', { JWT: jwt, credential: authenticator.register(options) }))
  return passkey.id
}

/** What the invariants of a passkey ceremony need besides the faulty answer. */
interface Ceremony {
  /** The same answer of the authenticator (the same challenge) sent again. */
  again: () => Promise<Response>
  /** A whole new ceremony: new options, a new answer of the authenticator, sent. */
  anew: () => Promise<Response>
  /** How the same answer is refused once its challenge is spent. */
  spent: { status: number, code: number }
  /** How it is refused after a success, when that differs from `spent`. */
  used?: { status: number, code: number }
}

/**
 * Whether the faulty request left its passkey challenge unspent: known on the
 * store layer from where the fault fell against the challenge's `consume`;
 * on the adapter layer the store's calls are not counted, so not known.
 */
function challengeLeft (info: FaultInfo): boolean | null {
  if (info.layer !== 'store') return null
  const consume = info.sequence.findIndex(call => call.method === 'consume' && call.key.startsWith('passkey:challenge:')) + 1
  return info.k < consume || (info.k === consume && info.mode === 'before')
}

/**
 * Invariants 2 and 3 for a passkey ceremony, checked with faults off: the
 * challenge is single-use (of the faulty request and the same answer sent
 * again, at most one succeeds, and after a success it is refused); a fault
 * before the challenge's consume burns nothing (the same answer succeeds),
 * one after it burns nothing but the challenge (a new ceremony succeeds).
 * Answers the successful answers (at most one of the faulty request's
 * challenge, else the new ceremony's).
 */
async function checkCeremony (t: Test, res: Response, info: FaultInfo, ceremony: Ceremony): Promise<Response[]> {
  const { spent, used = spent } = ceremony
  const answers = [res]
  if (!ok(res)) {
    const retry = await ceremony.again()
    answers.push(retry)
    const left = challengeLeft(info)
    if (left === true) expect(t, retry, 200, null, 'a fault before the challenge was consumed burns nothing: the same answer succeeds', info)
    else if (left === false || !ok(retry)) expect(t, retry, spent.status, spent.code, 'the challenge was spent by the faulty request: the same answer is refused', info)
  }
  const won = answers.filter(ok)
  if (won.length > 0) {
    expect(t, await ceremony.again(), used.status, used.code, 'after a success the same answer is refused', info)
    return won
  }
  const fresh = await ceremony.anew()
  return expect(t, fresh, 200, null, 'a failure burns nothing but the challenge: a new ceremony succeeds', info) ? [fresh] : []
}

/** The passkey rig's users, and its one authenticator (its credentials are this process's objects). */
interface PasskeyParts {
  authenticator: SoftAuthenticator
  /** The inner passkey port, for setup and to look at what is stored. */
  passkeys: MemoryPasskeyStore
  /** No second factor, one passkey: passwordless sign-in and step-up. */
  keyholder: { email: string, credentialId: string }
  /** TOTP on, and one passkey that stands in for the code. */
  second: { email: string, credentialId: string }
  /** Enrols a new passkey in every case (those of earlier cases are taken away in setup). */
  enroller: { email: string, id: number }
}

function passkeyFlows (rig: Rig, parts: PasskeyParts): Array<Flow<any>> {
  const { app } = rig
  const { authenticator, passkeys, keyholder, second, enroller } = parts

  /** Request options from `path` (with `jwt` when given), answered by the authenticator with `credentialId`. */
  const assertion = async (path: string, credentialId: string, jwt?: string): Promise<AuthenticationResponseJSON> => {
    const options = await setupData<PublicKeyCredentialRequestOptionsJSON>(path, post(app, path, jwt === undefined ? {} : { JWT: jwt }))
    return authenticator.authenticate(options, { credentialId })
  }

  const signInFlow: Flow<{ credential: AuthenticationResponseJSON }> = {
    name: 'passkey-sign-in',
    rig,
    setup: async () => ({ credential: await assertion('/auth/passkey/options', keyholder.credentialId) }),
    act: async (c) => await post(app, '/auth/passkey', { credential: c.credential }),
    check: async (t, c, res, info) => {
      // an `after` fault on recordUse leaves the use recorded under a 503: only the last use's time and counter, nothing that signs in
      const won = await checkCeremony(t, res, info, {
        again: async () => await post(app, '/auth/passkey', { credential: c.credential }),
        anew: async () => await post(app, '/auth/passkey', { credential: await assertion('/auth/passkey/options', keyholder.credentialId) }),
        spent: { status: 401, code: 216 }
      })
      for (const answer of won) expect(t, await validate(app, dataOf<Session>(answer).jwt), 200, null, 'the final token validates', info)
      await checkListConsistent(t, rig, info, won.map(one => dataOf<Session>(one).jwt), async () => (await session(rig, keyholder.email)).jwt)
    }
  }

  const secondFactorFlow: Flow<{ interim: string, credential: AuthenticationResponseJSON }> = {
    name: '2fa-passkey',
    rig,
    setup: async () => {
      const first = await setupLogin(rig, second.email)
      if (dataOf(first).two_factor_required !== true) throw new Error(`setup login gave no challenge: ${first.body}`)
      const interim = dataOf(first).jwt as string
      return { interim, credential: await assertion('/auth/2fa/passkey/options', second.credentialId, interim) }
    },
    act: async (c) => await post(app, '/auth/2fa', { JWT: c.interim, passkey: c.credential }),
    check: async (t, c, res, info) => {
      // the same interim token and answer again: a wrong code (109) while the two-factor challenge is open, closed (107) once it was completed
      const won = await checkCeremony(t, res, info, {
        again: async () => await post(app, '/auth/2fa', { JWT: c.interim, passkey: c.credential }),
        // a failure gives the two-factor challenge back: new passkey options for the same interim token
        anew: async () => await post(app, '/auth/2fa', { JWT: c.interim, passkey: await assertion('/auth/2fa/passkey/options', second.credentialId, c.interim) }),
        spent: { status: 401, code: 109 },
        used: { status: 401, code: 107 }
      })
      for (const answer of won) expect(t, await validate(app, dataOf<Session>(answer).jwt), 200, null, 'the final token validates', info)
      await checkListConsistent(t, rig, info, won.map(one => dataOf<Session>(one).jwt))
    }
  }

  const registerFlow: Flow<{ jwt: string, credential: RegistrationResponseJSON }> = {
    name: 'passkey-register',
    rig,
    setup: async () => {
      // a clean slate: the passkeys of earlier cases go (the bound stays far), then options for a fresh sign-in
      for (const one of await passkeys.listByUser(enroller.id)) await passkeys.delete(enroller.id, one.id)
      const { jwt } = await session(rig, enroller.email)
      const options = await setupData<PublicKeyCredentialCreationOptionsJSON>('passkey options', post(app, '/passkeys/register/options', { JWT: jwt }))
      return { jwt, credential: authenticator.register(options) }
    },
    act: async (c) => await post(app, '/passkeys/register', { JWT: c.jwt, credential: c.credential }),
    check: async (t, c, res, info) => {
      // an `after` fault on the port's `create` is a host that stored the passkey, then threw: it is stored under
      // a 503 (the user finds it in GET /passkeys and may delete it); any other failure stores nothing
      const hostStoredIt = info.layer === 'adapter' && info.mode === 'after' && info.call?.method === 'create'
      const stored = await passkeys.findById(c.credential.id) !== null
      t.equal(stored, ok(res) || hostStoredIt, `the passkey is stored exactly when the answer was 200${hostStoredIt ? ' (or the host stored it, then threw)' : ''} [${where(info)}]`)
      if (ok(res)) t.equal(dataOf(res).passkey.id, c.credential.id, `the answer names the new passkey [${where(info)}]`)
      // the authenticator makes a new credential for new options, so a second enrolment always succeeds
      const won = await checkCeremony(t, res, info, {
        again: async () => await post(app, '/passkeys/register', { JWT: c.jwt, credential: c.credential }),
        anew: async () => {
          const options = await setupData<PublicKeyCredentialCreationOptionsJSON>('passkey options', post(app, '/passkeys/register/options', { JWT: c.jwt }))
          return await post(app, '/passkeys/register', { JWT: c.jwt, credential: authenticator.register(options) })
        },
        spent: { status: 400, code: 221 }
      })
      const expected = [...(hostStoredIt ? [c.credential.id] : []), ...won.map(one => dataOf(one).passkey.id as string)]
      const held = (await passkeys.listByUser(enroller.id)).map(one => one.id)
      t.same(held.sort(), expected.sort(), `the user holds exactly the passkeys whose enrolment answered 200 [${where(info)}]`)
    }
  }

  const stepUpFlow: Flow<{ jwt: string, credential: AuthenticationResponseJSON }> = {
    name: 'step-up-passkey',
    rig,
    setup: async () => {
      const { jwt } = await session(rig, keyholder.email)
      return { jwt, credential: await assertion('/auth/step-up/options', keyholder.credentialId, jwt) }
    },
    act: async (c) => await post(app, '/auth/step-up', { JWT: c.jwt, passkey: c.credential }),
    check: async (t, c, res, info) => {
      const won = await checkCeremony(t, res, info, {
        again: async () => await post(app, '/auth/step-up', { JWT: c.jwt, passkey: c.credential }),
        anew: async () => await post(app, '/auth/step-up', { JWT: c.jwt, passkey: await assertion('/auth/step-up/options', keyholder.credentialId, c.jwt) }),
        spent: { status: 401, code: 216 }
      })
      for (const answer of won) {
        const { jwt } = dataOf<{ jwt: string }>(answer)
        t.equal(sidOf(jwt), sidOf(c.jwt), `a step-up stays in its session [${where(info)}]`)
        expect(t, await validate(app, jwt), 200, null, 'the stepped-up token validates', info)
      }
    }
  }

  return [signInFlow, secondFactorFlow, registerFlow, stepUpFlow]
}

// ---- the runs ------------------------------------------------------------------

/** Runs every flow's fault sweep on each of `stores`, one subtest per store. */
export function faultSuite (stores: readonly StoreName[]): void {
  for (const store of stores) {
    t.test(store, async (t) => {
      await t.test(`${store} core`, async (t) => {
        const rig = await buildRig(t, store, 'core', {})
        const user = await rig.users.addUser({ login: 'core', email: 'core@example.com', password: PASSWORD })
        for (const flow of coreFlows(rig, { email: user.user_email })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} two-factor`, async (t) => {
        const rig = await buildRig(t, store, '2fa', {}, ({ port, mailer, faults }) => ({ twoFactor: { port: faultyAdapter(port, faults), mailer } }))
        const totp = await rig.users.addUser({ login: 'totp', email: 'totp@example.com', password: PASSWORD })
        const email = await rig.users.addUser({ login: 'mail', email: 'mail@example.com', password: PASSWORD })
        const backup = await rig.users.addUser({ login: 'backup', email: 'backup@example.com', password: PASSWORD })
        const { secret } = createTotpSecret('jwt-login faults', totp.user_email)
        await rig.port.setTotpSecret(totp.ID, secret)
        rig.port.enable(totp.ID, 'totp')
        rig.port.enable(email.ID, 'email')
        rig.port.enable(backup.ID, 'backup_codes')
        const who = {
          totp: { email: totp.user_email, id: totp.ID, secret },
          email: { email: email.user_email },
          backup: { email: backup.user_email, id: backup.ID }
        }
        for (const flow of twoFactorFlows(rig, who)) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} reset`, async (t) => {
        const rig = await buildRig(t, store, 'reset', {
          resetPassword: { enabled: true, code: { maxTries: 100 }, limits: { perEmail: MANY, perIp: MANY } }
        }, ({ mailer }) => ({ mailer }))
        const user = await rig.users.addUser({ login: 'reset', email: 'reset@example.com', password: PASSWORD })
        for (const flow of resetFlows(rig, { email: user.user_email })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} users`, async (t) => {
        const rig = await buildRig(t, store, 'users', { users: { register: { enabled: true, signIn: true, perIp: MANY }, delete: { enabled: true } } })
        for (const flow of userFlows(rig)) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} sessions`, async (t) => {
        const rig = await buildRig(t, store, 'sessions', { sessions: { enabled: true, maxPerUser: SESSIONS_MAX } })
        const user = await rig.users.addUser({ login: 'owner', email: 'owner@example.com', password: PASSWORD })
        for (const flow of sessionFlows(rig, { email: user.user_email })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} devices`, async (t) => {
        const rig = await buildRig(t, store, 'devices', { twoFactor: { ...BASE.twoFactor, rememberDevice: { enabled: true } } }, ({ port, faults }) => ({ twoFactor: { port: faultyAdapter(port, faults) } }))
        const user = await rig.users.addUser({ login: 'trusting', email: 'trusting@example.com', password: PASSWORD })
        const { secret } = createTotpSecret('jwt-login faults', user.user_email)
        await rig.port.setTotpSecret(user.ID, secret)
        rig.port.enable(user.ID, 'totp')
        for (const flow of deviceFlows(rig, { email: user.user_email, secret })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} passkeys`, async (t) => {
        const passkeys = new MemoryPasskeyStore()
        const rig = await buildRig(t, store, 'passkeys', { passkeys: PASSKEYS }, ({ port, faults }) => ({
          twoFactor: { port: faultyAdapter(port, faults) },
          passkeys: { port: faultyAdapter(passkeys, faults) }
        }))
        // one authenticator for the rig: it holds the private keys of every passkey enrolled here
        const authenticator = new SoftAuthenticator({ origin: PASSKEYS.origins[0] as string })
        const keyholder = await rig.users.addUser({ login: 'keyholder', email: 'keyholder@example.com', password: PASSWORD })
        const second = await rig.users.addUser({ login: 'second', email: 'second@example.com', password: PASSWORD })
        const enroller = await rig.users.addUser({ login: 'enroller', email: 'enroller@example.com', password: PASSWORD })
        const parts: PasskeyParts = {
          authenticator,
          passkeys,
          keyholder: { email: keyholder.user_email, credentialId: await enrolPasskey(rig, keyholder.user_email, authenticator) },
          // enrolled before the second factor is on, with a plain sign-in
          second: { email: second.user_email, credentialId: await enrolPasskey(rig, second.user_email, authenticator) },
          enroller: { email: enroller.user_email, id: enroller.ID }
        }
        const { secret } = createTotpSecret('jwt-login faults', second.user_email)
        await rig.port.setTotpSecret(second.ID, secret)
        rig.port.enable(second.ID, 'totp')
        for (const flow of passkeyFlows(rig, parts)) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} account`, async (t) => {
        const rig = await buildRig(t, store, 'account', ACCOUNT_SETTINGS, accountOptions)
        for (const flow of await accountFlows(rig)) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} email-sign-in`, async (t) => { await emailSignInSweep(t, store) })

      await t.test(`${store} lock`, async (t) => {
        const rig = await buildRig(t, store, 'lock', {})
        const user = await rig.users.addUser({ login: 'locked', email: 'locked@example.com', password: PASSWORD })
        for (const flow of lockFlows(rig, { id: user.ID, email: user.user_email })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })
      await t.test(`${store} impersonation`, async (t) => { await impersonationSweep(t, store) })

      await t.test(`${store} oauth`, async (t) => {
        // back-channel logout on: a sign-in also writes the keys that find its user from the provider's sub and sid
        const idp1 = { ...providers(idp).idp1, backchannelLogout: true }
        const rig = await buildRig(t, store, 'oauth', { oauth: { providers: { idp1, reg: { ...idp1, autoRegister: true } } } })
        const bob = await rig.users.addUser({ login: 'bob', email: ACCOUNTS.bob.email, password: PASSWORD })
        for (const flow of oauthFlows(rig, { id: bob.ID })) {
          await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
        }
      })

      await t.test(`${store} oauth2`, async (t) => { await oauth2Sweep(t, store) })
    })
  }
}
