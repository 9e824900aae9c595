/**
 * Sign-in by email in the fault sweep (test/helpers/fault-suite.ts says what
 * it checks; lib/email-sign-in/request.ts and verify.ts what these flows
 * promise): `POST /auth/email`, and `POST /auth/email/verify` for an account,
 * for an account whose address was never verified, and for a new address
 * (`emailSignIn.register`). Each case's state is made with faults off; the
 * one faulty request is the flow's `act`; its invariants are checked with
 * faults off. Beyond the sweep's own, every case checks that no log line
 * holds a code (so no link either: the link carries the code) or a password.
 *
 * What a failed request leaves, as the flows' doc comments say:
 * - `POST /auth/email` that fails mails nothing, so its code reaches nobody:
 *   failed before its write, it leaves the older code working; after it, a
 *   code nobody knows has replaced the older one. The retry mails the one
 *   code that works.
 * - `POST /auth/email/verify` that fails gives its code back: the retry with
 *   the same code signs in, and the code is spent once it has. For an
 *   unverified account, what the proof ends (sessions, password, second
 *   factor) may have ended under a 503, never the other way round: the
 *   address is never marked verified while those remain.
 *
 * The mailer is not swept by position (its sends come after the answer): in
 * cases of its own it refuses once, refuses every try, and stalls.
 */
import { randomUUID } from 'node:crypto'
import { generateBackupCodes, type MailMessage, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { mailCode } from './account.js'
import { accountOptions } from './fault-account.js'
import {
  buildRig, checkListConsistent, dataOf, errorCodeOf, expect, MANY, ok, PASSWORD, post, refresh, runFlow, session, setupData, validate, where,
  type FaultInfo, type Flow, type Response, type Rig, type Session, type StoreName, type Test
} from './fault-rig.js'

/** The page the mails link to: every mail carries the link, so the log check covers it. */
const LINK_URL = 'https://app.example.com/sign-in'

/** The email rig's settings: the feature on with registration and the link, its counters out of the way, the mail retried once and soon. */
const EMAIL_SIGN_IN_SETTINGS: Partial<SettingsInput> = {
  emailSignIn: { enabled: true, register: true, linkUrl: LINK_URL, limits: { perAddress: MANY, perAccount: MANY, perIp: MANY } },
  resetPassword: { mail: { retries: 1, retryDelay: '10ms' } }
}

/** Whether the fault was a host that did `method`'s write and then threw. */
function hostDidIt (info: FaultInfo, method: string): boolean {
  return info.layer === 'adapter' && info.mode === 'after' && info.call?.method === method
}

/**
 * Whether a failed `POST /auth/email` wrote its code: on the store layer, a
 * fault after the code's `set` (the `delete` of its tries runs beside it) or
 * an `after` fault on the `set` itself; a fault before it, or any on the
 * adapter layer (the lookup comes first), left the older code.
 */
function codeWritten (info: FaultInfo): boolean {
  const write = info.sequence.findIndex(call => call.method === 'set' && call.key.startsWith('email-signin:')) + 1
  return info.layer === 'store' && write > 0 && (info.k > write || (info.k === write && info.mode === 'after'))
}

/** Fields of a log line that are numbers of their own (a time, a process id, a duration), where a code's digits could show by chance. */
const NUMERIC_FIELDS = ['time', 'pid', 'responseTime']

/** The log lines from `from` on, without their numeric fields. */
function logText (rig: Rig, from: number): string[] {
  return rig.logs.slice(from).map((line) => {
    const parsed = JSON.parse(line) as Record<string, unknown>
    for (const field of NUMERIC_FIELDS) delete parsed[field]
    return JSON.stringify(parsed)
  })
}

/** Asserts that no log line from `from` on holds one of `codes` (as a number of its own) or `passwords`. */
function checkLogClean (t: Test, rig: Rig, from: number, codes: readonly string[], passwords: readonly string[], what: string): void {
  const lines = logText(rig, from)
  const patterns = codes.map(code => new RegExp(`(?<![0-9])${code}(?![0-9])`))
  const leaks = lines.filter(line => patterns.some(pattern => pattern.test(line)) || passwords.some(password => line.includes(password)))
  t.same(leaks, [], `no log line holds a code, a link or a password [${what}]`)
}

/**
 * Memory users that keep every password set: verify.ts retires an unproven
 * account's password by setting a random one, which no log line may hold.
 * It is stored as a stand-in hash: nobody signs in with it, and argon2
 * would cost every case of the sweep a tenth of a second.
 */
class PasswordKeepingUsers extends MemoryUserAdapter {
  readonly passwords = [PASSWORD]

  override async setPassword (user: MemoryUser, password: string): Promise<void> {
    this.passwords.push(password)
    user.passwordHash = `stand-in:${randomUUID()}`
    user.passwordChanges = (user.passwordChanges ?? 0) + 1
  }
}

/** Sweeps sign-in by email on `store`: its rig (logged), its flows, the mailer's cases, and the whole log at the end. */
export async function emailSignInSweep (t: Test, store: StoreName): Promise<void> {
  const users = new PasswordKeepingUsers()
  const rig = await buildRig(t, store, 'email', EMAIL_SIGN_IN_SETTINGS, accountOptions, { logged: true, users })
  const { flows, mailerCases, checkWholeLog } = await emailSignInFlows(rig, users.passwords)
  for (const flow of flows) {
    await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
  }
  await mailerCases(t)
  checkWholeLog(t)
}

/** The email sign-in rig's flows, on users of their own made here; `passwords`: every password a user was given. */
async function emailSignInFlows (rig: Rig, passwords: readonly string[]): Promise<{ flows: Array<Flow<any>>, mailerCases: (t: Test) => Promise<void>, checkWholeLog: (t: Test) => void }> {
  const { app, users, port, mailer, clock } = rig
  /** Every code mailed (or refused by the mailer) in this rig. */
  const codes = new Set<string>()

  const ask = async (email: string): Promise<Response> => await post(app, '/auth/email', { email })
  const verify = async (email: string, code: string): Promise<Response> => await post(app, '/auth/email/verify', { email, code })
  /** The code of a mail, noted for the log checks. */
  const codeOf = (message: MailMessage): string => {
    const code = mailCode(message)
    codes.add(code)
    return code
  }
  /** Asks for a code for `email` (faults off) and answers the code mailed. */
  const codeFor = async (email: string): Promise<string> => {
    const mark = mailer.sent.length
    await setupData('email sign-in request', ask(email))
    const message = await mailer.mailTo(email, mark)
    if (message === null) throw new Error(`setup email sign-in request: no mail came to ${email}`)
    return codeOf(message)
  }
  /** The user id a final token names, or `null` (asserted) when it does not validate. */
  const userOf = async (t: Test, jwt: string, info: FaultInfo): Promise<number | null> => {
    const res = await validate(app, jwt)
    return expect(t, res, 200, null, 'the token of the sign-in validates', info) ? dataOf(res).user.ID as number : null
  }

  const known = await users.addUser({ login: 'known', email: 'known@example.com', password: PASSWORD, emailVerified: true })
  const unproven = await users.addUser({ login: 'unproven', email: 'unproven@example.com', password: PASSWORD, emailVerified: false })
  const unprovenHash = unproven.passwordHash
  let serial = 0

  // ---- POST /auth/email ----

  interface RequestCase { older: string, mark: number, from: number }
  const requestFlow: Flow<RequestCase> = {
    name: 'email-request',
    rig,
    setup: async () => {
      const from = rig.logs.length
      return { older: await codeFor(known.user_email), mark: mailer.sent.length, from }
    },
    act: async () => await ask(known.user_email),
    check: async (t, c, res, info) => {
      if (!ok(res)) {
        // what a failed request leaves: the older code, unless its own code was written (one nobody knows) over it
        if (codeWritten(info)) expect(t, await verify(known.user_email, c.older), 401, 246, 'the failed request wrote its code: the older one was replaced', info)
        else expect(t, await verify(known.user_email, c.older), 200, null, 'the failed request wrote no code: the older one still signs in', info)
        if (!expect(t, await ask(known.user_email), 200, null, 'a retry succeeds', info)) return
      }
      // a failed request hands no mail on: the one mail since is the answered request's
      const message = await mailer.mailTo(known.user_email, c.mark)
      if (!t.ok(message, `a code was mailed [${where(info)}]`) || message === null) return
      t.equal(mailer.sent.slice(c.mark).filter(one => one.to === known.user_email).length, 1, `one mail, of the request that answered 200 [${where(info)}]`)
      const code = codeOf(message)
      t.match(message.text, `${LINK_URL}#code=${code}&email=`, `the mail links to the page with its code [${where(info)}]`)
      expect(t, await verify(known.user_email, c.older), 401, 246, 'the older code no longer signs in', info)
      const signedIn = await verify(known.user_email, code)
      if (expect(t, signedIn, 200, null, 'the code mailed signs in', info)) t.equal(await userOf(t, dataOf<Session>(signedIn).jwt, info), known.ID)
      checkLogClean(t, rig, c.from, [c.older, code], passwords, where(info))
    }
  }

  // ---- POST /auth/email/verify, an account ----

  interface VerifyCase { code: string, from: number }
  const verifyFlow: Flow<VerifyCase> = {
    name: 'email-verify',
    rig,
    setup: async () => {
      const from = rig.logs.length
      return { code: await codeFor(known.user_email), from }
    },
    act: async (c) => await verify(known.user_email, c.code),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        answer = await verify(known.user_email, c.code)
        if (!expect(t, answer, 200, null, 'the same code retried signs in (a failed verify gives it back)', info)) return
      }
      t.equal(await userOf(t, dataOf<Session>(answer).jwt, info), known.ID, `the account signed in [${where(info)}]`)
      expect(t, await verify(known.user_email, c.code), 401, 246, 'the code is spent once it signed in', info)
      await checkListConsistent(t, rig, info, [res, answer].filter(ok).map(one => dataOf<Session>(one).jwt))
      checkLogClean(t, rig, c.from, [c.code], passwords, where(info))
    }
  }

  // ---- POST /auth/email/verify, an account whose address was never verified ----

  interface UnprovenCase { before: Session, code: string, from: number }
  const proven = async (): Promise<boolean> => (await users.findById(unproven.ID))?.emailVerified === true
  /** What proving the address ends, whatever failed after: the sessions from before, the password, the backup codes. */
  const checkEnded = async (t: Test, c: UnprovenCase, info: FaultInfo): Promise<void> => {
    expect(t, await validate(app, c.before.jwt), 401, 55, 'a session from before the address was proven is refused', info)
    expect(t, await refresh(app, c.before.refresh_token), 401, 51, "that session's refresh token is refused", info)
    t.not(unproven.passwordHash, unprovenHash, `the password was retired [${where(info)}]`)
    t.equal(port.backupCodesLeft(unproven.ID), 0, `the backup codes the account held are gone [${where(info)}]`)
  }

  const unprovenFlow: Flow<UnprovenCase> = {
    name: 'email-verify-unproven',
    rig,
    setup: async () => {
      // after the last case's cutoff, which ends the sessions of its own ms
      clock.advance(5)
      const from = rig.logs.length
      // unverified again, with its password, backup codes and a session, as whoever registered the address would leave it
      await users.setEmailVerified(unproven, false)
      unproven.passwordHash = unprovenHash
      await port.replaceBackupCodes(unproven.ID, generateBackupCodes().hashes)
      const before = await session(rig, unproven.user_email)
      return { before, code: await codeFor(unproven.user_email), from }
    },
    act: async (c) => await verify(unproven.user_email, c.code),
    // the store calls before the proof (the try counted, the code claimed, the limiter settled) are `email-verify`'s, in its order
    sweepFrom: (call) => call.key.startsWith('revoked:user:'),
    check: async (t, c, res, info) => {
      const done = await proven()
      if (ok(res)) t.ok(done, `a 200 proved the address [${where(info)}]`)
      // never proven beside what came before it: the steps before the address is marked verified are done
      if (done) await checkEnded(t, c, info)
      let answer = res
      if (!ok(res)) {
        // a client retries later than the cutoff's own ms, which the failed request may have written (with
        // `sessions.clockSkew` the retry's session can still start before it: failure-ordering.test.ts pins that defect)
        clock.advance(5)
        answer = await verify(unproven.user_email, c.code)
        if (!expect(t, answer, 200, null, 'the same code retried signs in (a failed verify gives it back)', info)) return
        t.ok(await proven(), `after the retry the address is proven [${where(info)}]`)
        await checkEnded(t, c, info)
      }
      t.equal(await userOf(t, dataOf<Session>(answer).jwt, info), unproven.ID, `the account signed in [${where(info)}]`)
      expect(t, await verify(unproven.user_email, c.code), 401, 246, 'the code is spent once it signed in', info)
      await checkListConsistent(t, rig, info, [res, answer].filter(ok).map(one => dataOf<Session>(one).jwt))
      checkLogClean(t, rig, c.from, [c.code], passwords, where(info))
    }
  }

  // ---- POST /auth/email/verify, a new address (emailSignIn.register) ----

  interface NewCase { email: string, code: string, from: number }
  const registerFlow: Flow<NewCase> = {
    name: 'email-verify-new',
    rig,
    setup: async () => {
      const from = rig.logs.length
      // a login of its own: the second user `createUser` would make for it is `<login>2`
      const email = `newcomer${++serial}x@example.com`
      return { email, code: await codeFor(email), from }
    },
    act: async (c) => await verify(c.email, c.code),
    // the store calls before the new user's session are `email-verify`'s, in its order; its host calls are swept from the lookup
    sweepFrom: (call) => call.key.startsWith('signins:'),
    check: async (t, c, res, info) => {
      let answer = res
      if (!ok(res)) {
        // a user the failed request created (a host that created it, then threw, too) signs in under the same code
        if (hostDidIt(info, 'createUser')) t.ok(await users.findByEmail(c.email), `the host created the user before it threw [${where(info)}]`)
        answer = await verify(c.email, c.code)
        if (!expect(t, answer, 200, null, 'the same code retried signs in (a failed verify gives it back)', info)) return
      }
      const user = await users.findByEmail(c.email)
      if (!t.ok(user, `the user was created [${where(info)}]`) || user === null) return
      t.equal(user.emailVerified, true, `with its address verified [${where(info)}]`)
      t.equal(await users.findByLogin(`${user.user_login}2`), null, `once [${where(info)}]`)
      t.equal(await userOf(t, dataOf<Session>(answer).jwt, info), user.ID, `the new user signed in [${where(info)}]`)
      expect(t, await verify(c.email, c.code), 401, 246, 'the code is spent once it signed in', info)
      await checkListConsistent(t, rig, info, [res, answer].filter(ok).map(one => dataOf<Session>(one).jwt))
      checkLogClean(t, rig, c.from, [c.code], passwords, where(info))
    }
  }

  // ---- the mailer: refuses once, refuses every try, stalls ----

  const failed: unknown[] = []
  app.jwtLogin.events.on('account.mail_failed', (event) => { failed.push(event) })
  const mailerCases = async (t: Test): Promise<void> => {
    const email = known.user_email
    /** Asserts a status, with the body when it is not the one expected. */
    const answers = (t: Test, res: Response, status: number, what: string): boolean =>
      t.equal(`${res.statusCode}/${String(errorCodeOf(res))}`, status === 200 ? '200/undefined' : `${status}/246`, what, { body: res.body.slice(0, 300) })

    await t.test(`${rig.store} email-request mailer: refuses once, then delivers`, async (t) => {
      const from = rig.logs.length
      const mark = { sent: mailer.sent.length, refused: mailer.refused.length }
      mailer.failing = 1
      answers(t, await ask(email), 200, 'the answer does not wait for the mail')
      const message = await mailer.mailTo(email, mark.sent)
      if (!t.ok(message, 'the retry delivered the mail') || message === null) return
      const code = codeOf(message)
      t.equal(codeOf(mailer.refused[mark.refused] as MailMessage), code, 'the refused mail carried the same code')
      answers(t, await verify(email, code), 200, 'the code of the mail delivered on its retry signs in')
      checkLogClean(t, rig, from, [code], passwords, 'mailer refuses once')
    })

    await t.test(`${rig.store} email-request mailer: refuses every try; the code is withdrawn`, async (t) => {
      const from = rig.logs.length
      const mark = { refused: mailer.refused.length, failed: failed.length }
      mailer.failing = 2
      answers(t, await ask(email), 200, 'the answer does not wait for the mail')
      await mailer.waitForRefused(mark.refused + 2)
      const deadline = Date.now() + 5000
      while (failed.length === mark.failed && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
      t.same(failed.slice(mark.failed), [{ userId: known.ID, mail: 'emailSignInLink', attempts: 2 }], 'account.mail_failed once its retry failed too')
      const code = codeOf(mailer.refused[mark.refused] as MailMessage)
      answers(t, await verify(email, code), 401, 'the code no mail delivered was withdrawn')
      t.ok(rig.logs.slice(from).some(line => line.includes('an account mail could not be sent')), 'the failure is logged')
      const next = await verify(email, await codeFor(email))
      answers(t, next, 200, 'a new request mails a code that signs in')
      checkLogClean(t, rig, from, [code], passwords, 'mailer refuses every try')
    })

    await t.test(`${rig.store} email-request mailer: stalls; the answer does not wait`, async (t) => {
      const from = rig.logs.length
      const mark = mailer.sent.length
      mailer.stall()
      try {
        answers(t, await ask(email), 200, 'the answer comes while the mailer stalls')
        t.equal(mailer.sent.length, mark, 'nothing was sent yet')
      } finally {
        mailer.resume()
      }
      const message = await mailer.mailTo(email, mark)
      if (!t.ok(message, 'the held mail goes once the mailer answers') || message === null) return
      const code = codeOf(message)
      answers(t, await verify(email, code), 200, 'its code signs in')
      checkLogClean(t, rig, from, [code], passwords, 'mailer stalls')
    })
  }

  /** Once at the end: no line of the whole log holds any code of the rig or any password (and the log did catch the sweep's failures). */
  const checkWholeLog = (t: Test): void => {
    t.ok(rig.logs.some(line => line.includes('injected fault')), 'the log holds the failures of the sweep')
    t.ok(passwords.length > 1, 'the passwords verify.ts set were seen')
    checkLogClean(t, rig, 0, [...codes], passwords, `${rig.store} email sign-in, the whole log`)
  }

  return { flows: [requestFlow, verifyFlow, unprovenFlow, registerFlow], mailerCases, checkWholeLog }
}
