// A sign-in mail that cannot be sent: the answer is the same, the code is withdrawn (a newer one stays), the failure is reported and logged without the code, the link or the address.
import t from 'tap'
import type { Mailer, MailMessage } from '../../lib/index.js'
import { errorOf } from '../helpers/http.js'
import { afterAnswers, ALICE, buildEmailSignInApp, codeOf, type EmailSignInKit } from '../helpers/email-sign-in.js'

const LINK_URL = 'https://app.example.com/sign-in/email'

/** A mailer that records what it is given, and fails its first `failures` sends (echoing the whole message, as a careless transport may). */
class FailingMailer implements Mailer {
  readonly sent: MailMessage[] = []

  constructor (readonly failures = Infinity) {}

  async send (message: MailMessage): Promise<void> {
    this.sent.push(message)
    // eslint-disable-next-line prefer-promise-reject-errors
    if (this.sent.length <= this.failures) await Promise.reject(`550 rejected: ${message.text} ${message.html}`)
  }
}

async function settledMail (kit: EmailSignInKit, event: 'account.mail_sent' | 'account.mail_failed'): Promise<unknown> {
  return await new Promise((resolve) => { kit.app.jwtLogin.events.once(event, resolve) })
}

t.test('the mailer rejects: the same answer, account.mail_failed, the code withdrawn, nothing of it in the log', async (t) => {
  const mailer = new FailingMailer()
  const kit = await buildEmailSignInApp(t, { emailSignIn: { linkUrl: LINK_URL }, plugin: { mailer } })
  const failed = settledMail(kit, 'account.mail_failed')
  const res = await kit.request(ALICE.email)
  t.equal(res.statusCode, 200)
  t.equal(res.body, (await kit.request('nobody@example.com')).body, 'the answer does not wait for the mail')
  t.same(await failed, { userId: 1, mail: 'emailSignInLink', attempts: 1 })
  const code = codeOf(mailer.sent[0] as MailMessage)
  t.same(errorOf(await kit.verify(ALICE.email, code)), [401, 246], 'the undelivered code was withdrawn')

  const line = kit.logs.find(entry => entry.msg === 'jwt-login: an account mail could not be sent')
  t.match(line, { userId: 1, mail: 'emailSignInLink', attempts: 1, err: { type: 'HostPortError' } })
  const written = JSON.stringify(kit.logs)
  t.notMatch(written, code, 'no code in the log')
  t.notMatch(written, 'app.example.com/sign-in', 'no link')
  t.notMatch(written, 'alice@example.com', 'no address')
})

t.test('with retries: a retry that goes through carries a working code', async (t) => {
  const mailer = new FailingMailer(1)
  const kit = await buildEmailSignInApp(t, { plugin: { mailer }, settings: { resetPassword: { mail: { retries: 1, retryDelay: '10ms' } } } })
  const sent = settledMail(kit, 'account.mail_sent')
  await kit.request(ALICE.email)
  t.same(await sent, { userId: 1, mail: 'emailSignIn', attempts: 2 })
  t.equal(mailer.sent.length, 2)
  t.equal(codeOf(mailer.sent[0] as MailMessage), codeOf(mailer.sent[1] as MailMessage), 'the same code, tried again')
  t.equal((await kit.verify(ALICE.email, codeOf(mailer.sent[1] as MailMessage))).statusCode, 200)
})

t.test('a new address (register on) whose mail fails: reported with no user, its code withdrawn', async (t) => {
  const mailer = new FailingMailer()
  const kit = await buildEmailSignInApp(t, { emailSignIn: { register: true }, plugin: { mailer } })
  const failed = settledMail(kit, 'account.mail_failed')
  await kit.request('newcomer@example.org')
  t.same(await failed, { userId: null, mail: 'emailSignIn', attempts: 1 })
  t.same(errorOf(await kit.verify('newcomer@example.org', codeOf(mailer.sent[0] as MailMessage))), [401, 246])
  t.equal(await kit.users.findByEmail('newcomer@example.org'), null)
})

t.test('a late failure withdraws only its own code: a newer one keeps working', async (t) => {
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const sent: MailMessage[] = []
  const mailer: Mailer = {
    send: async (message) => {
      sent.push(message)
      if (sent.length === 1) {
        await held
        throw new Error('timeout')
      }
    }
  }
  const kit = await buildEmailSignInApp(t, { plugin: { mailer } })
  await kit.request(ALICE.email)
  await afterAnswers()
  const newerSent = settledMail(kit, 'account.mail_sent')
  await kit.request(ALICE.email)
  await newerSent
  const failed = settledMail(kit, 'account.mail_failed')
  release()
  await failed
  t.same(errorOf(await kit.verify(ALICE.email, codeOf(sent[0] as MailMessage))), [401, 246], 'the older code was replaced anyway')
  t.equal((await kit.verify(ALICE.email, codeOf(sent[1] as MailMessage))).statusCode, 200, 'the newer one survived the older one\'s failure')
})
