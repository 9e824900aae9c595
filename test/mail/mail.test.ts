import { performance } from 'node:perf_hooks'
import { createRequire } from 'node:module'
import t from 'tap'
import { DEFAULT_RESET_TEMPLATES, escapeHtml, renderTemplate } from '../../lib/index.js'
import { ConsoleMailer } from '../../lib/testing.js'
import { NodemailerMailer, SMTP_TIMEOUTS } from '../../lib/nodemailer.js'
import { renderMail } from '../../lib/mail/templates.js'
import { startSilentSmtp, startSmtp } from '../helpers/smtp.js'

/** The build of nodemailer that fastify-jwt-login/nodemailer loads (nodemailer ships CommonJS and ESM builds). */
const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer')

const VALUES = { code: 'K7QX2MPA', display_name: 'Zoë <Admin> & "friends"', email: 'zoe@example.com', site_name: 'Site', expires_in_minutes: '15' }

t.test('renderTemplate fills placeholders in one pass', async (t) => {
  t.equal(renderTemplate('{{code}} {{ code }} {{site_name}}', { code: 'A1', site_name: 'S' }), 'A1 A1 S')
  t.equal(renderTemplate('{{unknown}} {{Code}} {code}', { code: 'A1' }), '{{unknown}} {{Code}} {code}', 'unknown names stay visible')
  t.equal(renderTemplate('{{display_name}}: {{code}}', { display_name: '{{code}}', code: 'A1' }), '{{code}}: A1', 'a value is never expanded again')
  t.equal(renderTemplate('{{constructor}}', {}), '{{constructor}}', 'only own values count')
  t.equal(renderTemplate('<b>{{x}}</b>', { x: '<i>' }, escapeHtml), '<b>&lt;i&gt;</b>')
})

t.test('escapeHtml escapes the five special characters', async (t) => {
  t.equal(escapeHtml('<a href="x" title=\'y\'>&</a>'), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
  t.equal(escapeHtml('plain'), 'plain')
})

t.test('renderMail escapes only the HTML part and keeps the subject on one line', async (t) => {
  const mail = renderMail(DEFAULT_RESET_TEMPLATES, VALUES)
  t.equal(mail.subject, 'Your Site password reset code')
  t.match(mail.text, 'Hello Zoë <Admin> & "friends",')
  t.match(mail.text, 'Your reset code is: K7QX2MPA')
  t.match(mail.text, 'expires in 15 minutes')
  t.match(mail.html, 'Hello Zoë &lt;Admin&gt; &amp; &quot;friends&quot;,')
  t.notMatch(mail.html, '<Admin>')
  t.match(mail.html, '>K7QX2MPA</strong>')
  const injected = renderMail({ subject: 'Hi {{display_name}}', text: '', html: '' }, { ...VALUES, display_name: 'x\r\nBcc: victim@example.com' })
  t.equal(injected.subject, 'Hi x Bcc: victim@example.com', 'no header injection through a value')
})

t.test('NodemailerMailer sends through a real SMTP server', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const mailer = new NodemailerMailer({ from: 'no-reply@example.test', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } })
  t.teardown(() => mailer.close())
  await mailer.send({ to: 'zoe@example.com', subject: 'Grüße, Zoë', text: 'line one\nline two é', html: '<p>é &amp; more</p>' })
  t.same(await smtp.nextMessage(), { to: 'zoe@example.com', subject: 'Grüße, Zoë', text: 'line one\r\nline two é', html: '<p>é &amp; more</p>' })
  await mailer.send({ to: 'zoe@example.com', subject: 'plain', text: 'text only' })
  const plain = await smtp.nextMessage()
  t.equal(plain.text, 'text only')
  t.equal(plain.html, '')
})

t.test('NodemailerMailer takes any nodemailer transport, and needs one or SMTP options', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true })
  const mailer = new NodemailerMailer({ from: 'no-reply@example.test', transport })
  await mailer.send({ to: 'zoe@example.com', subject: 'via a transport', text: 'hello' })
  t.match(await smtp.nextMessage(), { to: 'zoe@example.com', subject: 'via a transport', text: 'hello' })
  mailer.close()
  t.throws(() => new NodemailerMailer({ from: 'x@example.test' }), TypeError)
})

t.test('NodemailerMailer rejects when the server is unreachable', async (t) => {
  const smtp = await startSmtp()
  await smtp.close()
  const mailer = new NodemailerMailer({ from: 'no-reply@example.test', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } })
  await t.rejects(mailer.send({ to: 'zoe@example.com', subject: 's', text: 't' }), { code: 'ESOCKET' })
})

t.test('ConsoleMailer prints each mail', async (t) => {
  const lines: string[] = []
  await new ConsoleMailer((line) => { lines.push(line) }).send({ to: 'zoe@example.com', subject: 'Code', text: 'Your code: 42' })
  t.equal(lines.join(''), '\n--- mail to zoe@example.com ---\nSubject: Code\n\nYour code: 42\n--- end of mail ---\n')

  const written: string[] = []
  const write = process.stdout.write
  process.stdout.write = ((chunk: string) => { written.push(chunk); return true }) as typeof process.stdout.write
  try {
    await new ConsoleMailer().send({ to: 'a@b.co', subject: 'S', text: 'T' })
  } finally {
    process.stdout.write = write
  }
  t.match(written.join(''), '--- mail to a@b.co ---')
})

t.test('NodemailerMailer gives an SMTP transport timeouts in seconds, and the host\'s own values win', async (t) => {
  t.same(SMTP_TIMEOUTS, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 })
  // watch what the mailer hands nodemailer (the real createTransport still runs)
  const created: unknown[] = []
  const createTransport = nodemailer.createTransport
  nodemailer.createTransport = ((options: unknown) => {
    created.push(options)
    return createTransport(options as never)
  }) as typeof createTransport
  try {
    new NodemailerMailer({ from: 'a@example.test', smtp: { host: '127.0.0.1', port: 25 } }).close()
    new NodemailerMailer({ from: 'a@example.test', smtp: { host: '127.0.0.1', port: 25, greetingTimeout: 300, socketTimeout: 60_000 } }).close()
  } finally {
    nodemailer.createTransport = createTransport
  }
  t.same(created, [
    { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000, host: '127.0.0.1', port: 25 },
    { connectionTimeout: 10_000, greetingTimeout: 300, socketTimeout: 60_000, host: '127.0.0.1', port: 25 }
  ])
})

t.test('a stalled greeting fails a send in about the greeting timeout', async (t) => {
  const silent = await startSilentSmtp()
  t.teardown(() => silent.close())
  const mailer = new NodemailerMailer({ from: 'no-reply@example.test', smtp: { host: '127.0.0.1', port: silent.port, secure: false, ignoreTLS: true, greetingTimeout: 300 } })
  t.teardown(() => mailer.close())
  const started = performance.now()
  await t.rejects(mailer.send({ to: 'zoe@example.com', subject: 's', text: 't' }), { message: /Greeting never received/ })
  const ms = performance.now() - started
  t.ok(ms < 5_000, `failed after ${Math.round(ms)} ms, not the default 10 s`)
  t.equal(silent.connections(), 1)
})
