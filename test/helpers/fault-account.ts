/**
 * The account routes' flows of the fault sweep (test/helpers/fault-suite.ts
 * says what it checks; docs/account.md, "Failures", what these flows
 * promise): the password change, the email change's confirmation and its
 * revert, the verification by code and address, and the confirmation of a
 * TOTP enrolment. Each case's state is made with faults off; the one faulty
 * request is the flow's `act`; its invariants are checked with faults off.
 *
 * Only the password change checks passwords (argon2); every other sign-in
 * here sends the stored hash (`password_hash`), which also tells whether an
 * address is the user's.
 */
import { createTotpSecret, generateBackupCodes, hashBackupCode, type JwtLoginOptions, type MailMessage, type SettingsInput } from '../../lib/index.js'
import type { MemoryTwoFactorStore, MemoryUser } from '../../lib/testing.js'
import { mailCode } from './account.js'
import {
  bearer, CapturingMailer, dataOf, expect, login, MANY, ok, PASSWORD, post, PREFIX, refresh, registerUser, session, setupData, validate, where,
  type FaultInfo, type Flow, type Response, type Rig, type Session
} from './fault-rig.js'
import { faultyAdapter, type Faults } from './faults.js'
import { totpAt, wrongCode } from './fixtures.js'

/** The account rig's settings: the routes on, their counters out of the way, and `POST /users` for the verification flow. */
export const ACCOUNT_SETTINGS: Partial<SettingsInput> = {
  account: { enabled: true, limits: { perAccount: MANY, perIp: MANY } },
  users: { register: { enabled: true, perIp: MANY } }
}

/** The account rig's options: the mailer (codes and notices), and the two-factor port behind the adapter switch. */
export function accountOptions ({ port, mailer, faults }: { port: MemoryTwoFactorStore, mailer: CapturingMailer, faults: Faults }): Partial<JwtLoginOptions> {
  return { mailer, twoFactor: { port: faultyAdapter(port, faults) } }
}

/** Whether the fault was a host that did `method`'s write and then threw: the one failure that may leave its change made under a 503. */
function hostDidIt (info: FaultInfo, method: string): boolean {
  return info.layer === 'adapter' && info.mode === 'after' && info.call?.method === method
}

/** The message, or throws: a setup step (faults off) that mails must mail. */
function mailed (message: MailMessage | null, what: string): MailMessage {
  if (message === null) throw new Error(`setup ${what}: no mail came`)
  return message
}

/** The account routes' flows, on users of their own made here (one argon2 hash each, one of them by `POST /users`). */
export async function accountFlows (rig: Rig): Promise<Array<Flow<any>>> {
  const { app, users, port, mailer, clock } = rig

  const call = async (method: 'POST' | 'PUT', path: string, jwt: string | null, payload: Record<string, unknown> = {}): Promise<Response> =>
    await app.inject({ method, url: `${PREFIX}${path}`, headers: jwt === null ? {} : bearer(jwt), payload })
  const emailOf = async (user: MemoryUser): Promise<string> => (await users.findById(user.ID))?.user_email ?? '(deleted)'
  /** `POST /auth` at `email` with `user`'s stored hash: 200 exactly when `email` is that user's address. */
  const signInAt = async (email: string, user: MemoryUser): Promise<Response> => await post(app, '/auth', { email, password_hash: user.passwordHash })
  /** Asks for an email change of `jwt`'s user to `to` and answers the code mailed there. */
  const changeCode = async (jwt: string, to: string): Promise<string> => {
    const mark = mailer.sent.length
    await setupData('email change', call('POST', '/account/email', jwt, { new_email: to }))
    return mailCode(mailed(await mailer.mailTo(to, mark), 'email change'))
  }

  const changer = await users.addUser({ login: 'changer', email: 'changer@example.com', password: PASSWORD, emailVerified: true })
  const mover = await users.addUser({ login: 'mover', email: 'mover@example.com', password: PASSWORD, emailVerified: true })
  const reverter = await users.addUser({ login: 'reverter', email: 'reverter@example.com', password: PASSWORD, emailVerified: true })
  const enroller = await users.addUser({ login: 'enroller', email: 'enroller@example.com', password: PASSWORD, emailVerified: true })
  // registered as a client would: unverified
  await setupData('registration', registerUser(app, 'newcomer@example.com'))
  const newcomer = await users.findByEmail('newcomer@example.com') as MemoryUser
  let serial = 0

  // ---- PUT /account/password ----

  let password = PASSWORD
  interface PasswordCase { caller: Session, other: Session, old: string, next: string }
  const changePassword = async (c: PasswordCase): Promise<Response> =>
    await call('PUT', '/account/password', c.caller.jwt, { current_password: c.old, new_password: c.next })

  const passwordFlow: Flow<PasswordCase> = {
    name: 'account-password',
    rig,
    setup: async () => {
      // after the last case's cutoff, which ends the sessions of its own ms
      clock.advance(5)
      return { caller: await session(rig, changer.user_email), other: await session(rig, changer.user_email), old: password, next: `changed password number ${++serial}` }
    },
    act: changePassword,
    check: async (t, c, res, info) => {
      let changed = (await login(app, changer.user_email, c.next)).statusCode === 200
      if (ok(res)) t.ok(changed, `a 200 changed the password [${where(info)}]`)
      if (changed && !ok(res)) {
        t.ok(hostDidIt(info, 'setPassword'), `a failed change left the password as it was (only a host that set it, then threw, may not) [${where(info)}]`, { calls: info.log.split('\n') })
      }
      if (!changed) {
        expect(t, await login(app, changer.user_email, c.old), 200, null, 'the password did not change: the old one still signs in', info)
        if (!expect(t, await changePassword(c), 200, null, 'an identical retry succeeds', info)) return
        changed = expect(t, await login(app, changer.user_email, c.next), 200, null, 'after the retry the new password signs in', info)
        if (!changed) return
      }
      password = c.next
      expect(t, await login(app, changer.user_email, c.old), 401, 48, 'the old password no longer signs in', info)
      // never the new password beside a session from before the change
      expect(t, await validate(app, c.other.jwt), 401, 55, 'another session started before the change is refused', info)
      expect(t, await refresh(app, c.other.refresh_token), 401, 51, "that session's refresh token is refused", info)
      expect(t, await validate(app, c.caller.jwt), 200, null, "the caller's session still validates", info)
    }
  }

  // ---- POST /account/email/confirm ----

  interface ConfirmCase { jwt: string, old: string, next: string, code: string, mark: number }
  const confirm = async (c: ConfirmCase): Promise<Response> => await call('POST', '/account/email/confirm', c.jwt, { code: c.code })

  const confirmFlow: Flow<ConfirmCase> = {
    name: 'account-email-confirm',
    rig,
    setup: async () => {
      const old = await emailOf(mover)
      const { jwt } = await session(rig, old)
      const next = `moved${++serial}@example.com`
      const code = await changeCode(jwt, next)
      return { jwt, old, next, code, mark: mailer.sent.length }
    },
    act: confirm,
    check: async (t, c, res, info) => {
      let changed = await emailOf(mover) === c.next
      if (ok(res)) t.ok(changed, `a 200 changed the email [${where(info)}]`)
      if (changed && !ok(res)) {
        t.ok(hostDidIt(info, 'setEmail'), `a failed confirmation left the email as it was (only a host that set it, then threw, may not) [${where(info)}]`, { calls: info.log.split('\n') })
      }
      if (!changed) {
        expect(t, await signInAt(c.old, mover), 200, null, 'the email did not change: the old address still signs in', info)
        expect(t, await signInAt(c.next, mover), 401, 48, 'the email did not change: the new address does not sign in', info)
        if (!expect(t, await confirm(c), 200, null, 'the same code retried succeeds (it was given back)', info)) return
        changed = t.equal(await emailOf(mover), c.next, `after the retry the email is the new address [${where(info)}]`)
        if (!changed) return
      }
      expect(t, await signInAt(c.next, mover), 200, null, 'the new address signs in', info)
      expect(t, await signInAt(c.old, mover), 401, 48, 'the old address no longer signs in', info)
      expect(t, await confirm(c), 400, 234, 'the code is spent once the email changed: it never changes the email twice', info)
      // the owner of the old address learns of the change, with the code that puts it back
      const notice = await mailer.mailTo(c.old, c.mark)
      t.ok(notice !== null && /revert code/.test(notice.text), `the old address is mailed the notice with its revert code [${where(info)}]`, { to: mailer.sent.slice(c.mark).map(one => one.to) })
    }
  }

  // ---- POST /account/email/revert ----

  interface RevertCase { before: Session[], home: string, away: string, code: string }
  const revert = async (c: RevertCase): Promise<Response> => await call('POST', '/account/email/revert', null, { email: c.home, code: c.code })

  const revertFlow: Flow<RevertCase> = {
    name: 'account-email-revert',
    rig,
    setup: async () => {
      // after the last revert: its cutoff ends the sessions of its own ms, its floor the revert codes of its ms
      clock.advance(5)
      const home = await emailOf(reverter)
      const first = await session(rig, home)
      const away = `away${++serial}@example.com`
      const code = await changeCode(first.jwt, away)
      const mark = mailer.sent.length
      await setupData('email confirmation', call('POST', '/account/email/confirm', first.jwt, { code }))
      const notice = mailed(await mailer.mailTo(home, mark), 'email confirmation')
      // one session from before the change, one after it (the one whoever changed the address would hold)
      return { before: [first, await session(rig, away)], home, away, code: mailCode(notice) }
    },
    act: revert,
    check: async (t, c, res, info) => {
      let back = await emailOf(reverter) === c.home
      if (ok(res)) t.ok(back, `a 200 put the old address back [${where(info)}]`)
      if (back && !ok(res)) {
        t.ok(hostDidIt(info, 'setEmail'), `a failed revert left the email as it was (only a host that set it, then threw, may not) [${where(info)}]`, { calls: info.log.split('\n') })
      }
      if (!back) {
        // every session may have ended, but not the email: the address it was changed to still signs in (one more session from before the revert)
        const still = await signInAt(c.away, reverter)
        if (expect(t, still, 200, null, 'the revert failed: the email is unchanged, the new address still signs in', info)) c.before.push(dataOf<Session>(still))
        expect(t, await signInAt(c.home, reverter), 401, 48, 'the revert failed: the old address does not sign in yet', info)
        if (!expect(t, await revert(c), 200, null, 'the same revert code retried succeeds (it was given back)', info)) return
        back = t.equal(await emailOf(reverter), c.home, `after the retry the old address is back [${where(info)}]`)
        if (!back) return
      }
      expect(t, await signInAt(c.home, reverter), 200, null, 'the old address signs in', info)
      expect(t, await signInAt(c.away, reverter), 401, 48, 'the address it was changed to no longer does', info)
      for (const one of c.before) {
        expect(t, await validate(app, one.jwt), 401, 55, 'a session from before the revert is refused', info)
        expect(t, await refresh(app, one.refresh_token), 401, 51, "that session's refresh token is refused", info)
      }
      expect(t, await revert(c), 400, 234, 'the revert code is spent', info)
    }
  }

  // ---- POST /account/email/verify, no token ----

  interface VerifyCase { before: Session, code: string }
  const verify = async (c: VerifyCase): Promise<Response> => await call('POST', '/account/email/verify', null, { email: newcomer.user_email, code: c.code })
  const verified = async (): Promise<boolean> => (await users.findById(newcomer.ID))?.emailVerified === true

  const verifyFlow: Flow<VerifyCase> = {
    name: 'account-verify',
    rig,
    setup: async () => {
      clock.advance(5)
      // unverified again, with backup codes and a session, as whoever registered the address would leave it
      await users.setEmailVerified(newcomer, false)
      await port.replaceBackupCodes(newcomer.ID, generateBackupCodes().hashes)
      const before = await session(rig, newcomer.user_email)
      const mark = mailer.sent.length
      await setupData('verification request', call('POST', '/account/email/verification', null, { email: newcomer.user_email }))
      return { before, code: mailCode(mailed(await mailer.mailTo(newcomer.user_email, mark), 'verification request')) }
    },
    act: verify,
    check: async (t, c, res, info) => {
      let done = await verified()
      if (ok(res)) t.ok(done, `a 200 verified the address [${where(info)}]`)
      // checked before any retry: a session from before never validates once the user is verified
      if (done) expect(t, await validate(app, c.before.jwt), 401, 55, 'the user is verified: a session from before is refused', info)
      if (!ok(res)) {
        if (done) t.ok(hostDidIt(info, 'setEmailVerified'), `a failed verification left the address unverified (only a host that set it, then threw, may not) [${where(info)}]`, { calls: info.log.split('\n') })
        if (!expect(t, await verify(c), 200, null, 'the same code retried succeeds (it was given back)', info)) return
        done = t.ok(await verified(), `after the retry the address is verified [${where(info)}]`)
        if (!done) return
      }
      expect(t, await validate(app, c.before.jwt), 401, 55, 'a session from before the verification is refused', info)
      expect(t, await refresh(app, c.before.refresh_token), 401, 51, "that session's refresh token is refused", info)
      t.equal(port.backupCodesLeft(newcomer.ID), 0, `the backup codes the account held are gone [${where(info)}]`)
      expect(t, await verify(c), 400, 234, 'the code is spent', info)
    }
  }

  // ---- POST /account/2fa/totp/confirm ----

  const oldSecret = createTotpSecret('jwt-login faults', enroller.user_email).secret
  interface TotpCase { jwt: string, secret: string, code: string }
  const confirmTotp = async (jwt: string, code: string): Promise<Response> => await call('POST', '/account/2fa/totp/confirm', jwt, { code })
  const twoFactorOf = async (): Promise<{ secret: string | null, method: string | null }> =>
    ({ secret: await port.getTotpSecret(enroller.ID), method: await port.methodOf(enroller.ID) })

  const totpFlow: Flow<TotpCase> = {
    name: 'account-totp-confirm',
    rig,
    setup: async () => {
      // a fresh time step for every case (a step is spent once per user)
      clock.advance(90_000)
      // the second factor off, with a secret of an earlier enrolment and no backup codes: this enrolment turns it on
      await port.setMethod(enroller.ID, null)
      await port.setTotpSecret(enroller.ID, oldSecret)
      await port.replaceBackupCodes(enroller.ID, [])
      const { jwt } = await session(rig, enroller.user_email)
      const { secret } = await setupData<{ secret: string }>('TOTP enrolment', call('POST', '/account/2fa/totp', jwt))
      return { jwt, secret, code: await totpAt(secret, clock()) }
    },
    act: async (c) => await confirmTotp(c.jwt, c.code),
    check: async (t, c, res, info) => {
      const after = await twoFactorOf()
      t.ok(after.secret === oldSecret || after.secret === c.secret, `the secret is the old one or the new one [${where(info)}]`)
      t.ok(after.method === null || after.secret === c.secret, `never half: the method is set only with the new secret (${JSON.stringify(after.method)}) [${where(info)}]`, { calls: info.log.split('\n') })
      const answers = [res]
      if (!ok(res)) {
        // the store removed the pending secret, then failed (the last step): the enrolment is complete, nothing is pending
        const gone = info.layer === 'store' && info.mode === 'after' && info.call?.method === 'delete' && info.call.key.startsWith('account:totp-pending:')
        const wrong = await confirmTotp(c.jwt, await wrongCode(c.secret, clock()))
        expect(t, wrong, gone ? 409 : 400, gone ? 240 : 239, 'a wrong code is refused', info)
        t.same(await twoFactorOf(), after, `a wrong code stores nothing [${where(info)}]`)
        let retry = await confirmTotp(c.jwt, c.code)
        if (gone) {
          expect(t, retry, 409, 240, 'the enrolment completed before the failure: nothing is pending', info)
        } else if (!ok(retry)) {
          // the same code, unless the faulty request spent its time step: then the app's next code
          if (stepLeft(info) === true) expect(t, retry, 200, null, 'a fault before the time step was spent burns nothing: the same code succeeds', info)
          else expect(t, retry, 400, 239, 'the faulty request spent the time step: the same code is refused', info)
          clock.advance(30_000)
          retry = await confirmTotp(c.jwt, await totpAt(c.secret, clock()))
          expect(t, retry, 200, null, 'the next code confirms', info)
        }
        answers.push(retry)
      }
      t.same(await twoFactorOf(), { secret: c.secret, method: 'totp' }, `the enrolment completed: the new secret, TOTP on [${where(info)}]`)
      // the user had no backup codes: an answer showed the ten it holds, once
      const shown = answers.filter(ok).flatMap(answer => (dataOf(answer).backup_codes ?? []) as string[])
      t.equal(shown.length, 10, `ten backup codes were shown, once [${where(info)}]`)
      t.equal(port.backupCodesLeft(enroller.ID), 10, `the user holds ten backup codes [${where(info)}]`)
      const first = shown[0]
      if (first !== undefined) t.ok(await port.consumeBackupCode(enroller.ID, hashBackupCode(first) as string, 'check'), `a code shown is one the user holds [${where(info)}]`)
      // its code again: spent (400 / 239), or nothing pending any more (409 / 240); either way nothing changes
      const held = port.backupCodesLeft(enroller.ID)
      const replay = await confirmTotp(c.jwt, c.code)
      const got = `${replay.statusCode}/${String(dataOf(replay).errorCode)}`
      t.ok(['400/239', '409/240'].includes(got), `after the enrolment its code confirms nothing again (${got}) [${where(info)}]`, { body: replay.body.slice(0, 300) })
      t.same({ ...await twoFactorOf(), left: port.backupCodesLeft(enroller.ID) }, { secret: c.secret, method: 'totp', left: held }, `the replay changed nothing [${where(info)}]`)
    }
  }

  return [passwordFlow, confirmFlow, revertFlow, verifyFlow, totpFlow]
}

/**
 * Whether the faulty request left the code's TOTP time step unspent: known on
 * the store layer from where the fault fell against the step's claim; the
 * adapter layer's calls are counted apart, so there it is not known.
 */
function stepLeft (info: FaultInfo): boolean | null {
  if (info.layer !== 'store') return null
  const claim = info.sequence.findIndex(call => call.key.startsWith('2fa:totp-used:')) + 1
  return info.k < claim || (info.k === claim && info.mode === 'before')
}
