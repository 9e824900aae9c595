import t from 'tap'
import { NodemailerMailer } from '../../lib/nodemailer.js'
import { emailCodeMessage, newEmailCode } from '../../lib/two-factor/methods/email-code.js'
import { BOB, buildTwoFactorApp, type TwoFactorApp } from '../helpers/two-factor.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import type { SettingsInput } from '../../lib/index.js'
import { en } from '../../lib/i18n/catalogues/en.js'

function codeIn (text: string): string {
  const match = /\b(\d{6})\b/.exec(text)
  if (match === null) throw new Error(`no code in ${text}`)
  return match[1] as string
}

async function emailApp (t: { teardown: (fn: () => Promise<void>) => void }, settings: Partial<SettingsInput> = {}): Promise<TwoFactorApp & { smtp: SmtpPeer }> {
  const smtp = await startSmtp()
  const mailer = new NodemailerMailer({ from: '"jwt-login" <no-reply@example.com>', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } })
  const built = await buildTwoFactorApp({ method: 'email', mailer, settings })
  t.teardown(async () => {
    await built.app.close()
    mailer.close()
    await smtp.close()
  })
  return { ...built, smtp }
}

t.test('the code is mailed at login, read from the message, and signs in once', async (t) => {
  const { login, submit, smtp, bobId, app } = await emailApp(t)
  const issued: unknown[] = []
  app.jwtLogin.events.on('two_factor.challenge_issued', (e) => issued.push(e))
  const first = await login()
  t.equal(first.statusCode, 200)
  t.equal(first.json().data.two_factor_required, true)
  const interim = first.json().data.jwt as string
  t.same(issued, [{ userId: bobId, method: 'email', ip: '127.0.0.1' }])

  const message = await smtp.nextMessage()
  t.equal(message.to, BOB.email)
  t.equal(message.subject, 'Your sign-in code')
  const code = codeIn(message.text)
  t.ok(message.html.includes(`<strong>${code}</strong>`))
  t.match(message.text, /valid for 10 minutes/)

  const wrong = await submit({ JWT: interim, code: code === '000000' ? '000001' : '000000' })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.json().data.errorCode, 109)

  const ok = await submit({ JWT: interim, code })
  t.equal(ok.statusCode, 200)
  t.type(ok.json().data.jwt, 'string')

  const again = await submit({ JWT: interim, code })
  t.equal(again.statusCode, 401, 'the challenge is spent')
  t.equal(again.json().data.errorCode, 107)
})

t.test('a code belongs to its challenge: a new login mails a new one', async (t) => {
  const { login, submit, smtp } = await emailApp(t)
  const firstInterim = (await login()).json().data.jwt as string
  const firstCode = codeIn((await smtp.nextMessage()).text)
  const secondInterim = (await login()).json().data.jwt as string
  const secondCode = codeIn((await smtp.nextMessage()).text)
  if (firstCode !== secondCode) {
    t.equal((await submit({ JWT: secondInterim, code: firstCode })).json().data.errorCode, 109, 'the other challenge\'s code')
  }
  t.equal((await submit({ JWT: firstInterim, code: firstCode })).statusCode, 200)
  t.equal((await submit({ JWT: secondInterim, code: secondCode })).statusCode, 200)
})

t.test('an emailed code expires', async (t) => {
  const { login, submit, smtp, clock } = await emailApp(t, { twoFactor: { emailCodeLifetime: '1m' } })
  const interim = (await login()).json().data.jwt as string
  const message = await smtp.nextMessage()
  t.match(message.text, /valid for 1 minutes/)
  clock.advance(61_000)
  const res = await submit({ JWT: interim, code: codeIn(message.text) })
  t.equal(res.statusCode, 401)
  t.equal(res.json().data.errorCode, 109)
})

t.test('the email method without a mailer fails closed', async (t) => {
  const { app, login } = await buildTwoFactorApp({ method: 'email' })
  t.teardown(() => app.close())
  const res = await login()
  t.equal(res.statusCode, 503)
  t.equal(res.json().data.errorCode, 201)
})

t.test('codes are six CSPRNG digits; the message names its lifetime', async (t) => {
  const codes = new Set(Array.from({ length: 200 }, () => newEmailCode()))
  for (const code of codes) t.match(code, /^\d{6}$/)
  t.ok(codes.size > 190, 'no visible repetition')
  const message = emailCodeMessage('a@example.com', '012345', 30_000, en.mails.emailCode, 'jwt-login')
  t.match(message.text, /012345/)
  t.match(message.text, /1 minutes/)
})
