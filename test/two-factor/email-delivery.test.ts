import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { MemoryStore, type JwtLoginEventMap, type Mailer, type MailMessage } from '../../lib/index.js'
import { NodemailerMailer } from '../../lib/nodemailer.js'
import { buildTwoFactorApp, type TwoFactorApp } from '../helpers/two-factor.js'
import { startSilentSmtp, startSmtp, startStallingSmtp } from '../helpers/smtp.js'

/** The stall of the slow peers: far longer than any answer may take. */
const STALL_MS = 30_000
/** The generous bound for "the login did not wait for the mail". */
const ANSWER_BOUND_MS = 3_000

function codeIn (text: string): string {
  const match = /\b(\d{6})\b/.exec(text)
  if (match === null) throw new Error(`no code in ${text}`)
  return match[1] as string
}

function smtpMailer (port: number, timeoutMs: number): NodemailerMailer {
  return new NodemailerMailer({
    from: 'no-reply@example.com',
    smtp: { host: '127.0.0.1', port, secure: false, ignoreTLS: true, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs }
  })
}

/** Delegates to another mailer and keeps each message, so a test knows a code that never arrived. */
class RecordingMailer implements Mailer {
  readonly sent: MailMessage[] = []
  readonly #send: (message: MailMessage) => Promise<void>

  constructor (send: (message: MailMessage) => Promise<void>) {
    this.#send = send
  }

  async send (message: MailMessage): Promise<void> {
    this.sent.push(message)
    await this.#send(message)
  }
}

interface Logged { app: TwoFactorApp, logs: Array<Record<string, any>> }

async function emailApp (t: { teardown: (fn: () => Promise<void>) => void }, mailer: Mailer, store?: MemoryStore): Promise<Logged> {
  const logs: Array<Record<string, any>> = []
  const app = await buildTwoFactorApp({
    method: 'email',
    mailer,
    fastify: { logger: { level: 'error', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } },
    plugin: store === undefined ? {} : { store }
  })
  t.teardown(async () => { await app.app.close() })
  return { app, logs }
}

async function nextEvent<E extends keyof JwtLoginEventMap> (app: FastifyInstance, name: E): Promise<JwtLoginEventMap[E]> {
  return await new Promise((resolve) => { app.jwtLogin.events.once(name, resolve) })
}

/** Logs bob in and answers the interim token and how long the answer took. */
async function timedLogin (app: TwoFactorApp): Promise<{ interim: string, ms: number }> {
  const started = performance.now()
  const res = await app.login()
  const ms = performance.now() - started
  if (res.statusCode !== 200 || res.json().data.two_factor_required !== true) throw new Error(`login failed: ${res.body}`)
  return { interim: res.json().data.jwt, ms }
}

t.test('a server that never greets does not hold the login; its failure withdraws the code', async (t) => {
  const peer = await startSilentSmtp()
  const real = smtpMailer(peer.port, STALL_MS)
  const mailer = new RecordingMailer(async (message) => { await real.send(message) })
  const { app, logs } = await emailApp(t, mailer)
  t.teardown(async () => { real.close(); await peer.close() })
  const failed = nextEvent(app.app, 'two_factor.code_failed')

  const { interim, ms } = await timedLogin(app)
  t.ok(ms < ANSWER_BOUND_MS, `answered in ${Math.round(ms)} ms while the server stalls for ${STALL_MS} ms`)
  // the send starts after the answer; wait until the mailer is at the silent server
  while (peer.connections() === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(mailer.sent.length, 1)

  await peer.close()
  t.same(await failed, { userId: app.bobId })
  const code = codeIn((mailer.sent[0] as MailMessage).text)
  const res = await app.submit({ JWT: interim, code })
  t.equal(res.statusCode, 401, 'the undelivered code was withdrawn')
  t.equal(res.json().data.errorCode, 109)
  const line = logs.find(l => l.msg === 'jwt-login: the two-factor code mail could not be sent; its code was withdrawn')
  t.match(line, { level: 50, userId: app.bobId, err: { message: String } })
  t.notMatch(JSON.stringify(logs), code, 'no code in the logs')
})

t.test('a server that stalls after DATA does not hold the login either', async (t) => {
  const peer = await startStallingSmtp()
  const mailer = smtpMailer(peer.port, STALL_MS)
  const { app } = await emailApp(t, mailer)
  t.teardown(async () => { mailer.close(); await peer.close() })
  const failed = nextEvent(app.app, 'two_factor.code_failed')

  const { ms } = await timedLogin(app)
  t.ok(ms < ANSWER_BOUND_MS, `answered in ${Math.round(ms)} ms while the server stalls for ${STALL_MS} ms`)
  while (peer.connections() === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  await peer.close()
  t.same(await failed, { userId: app.bobId }, 'the dropped session ends the send')
})

t.test('the mailer\'s own timeout ends a stalled send: the code is withdrawn and a backup code still completes the challenge', async (t) => {
  const peer = await startSilentSmtp()
  const real = smtpMailer(peer.port, 200)
  const mailer = new RecordingMailer(async (message) => { await real.send(message) })
  const { app, logs } = await emailApp(t, mailer)
  t.teardown(async () => { real.close(); await peer.close() })
  const failed = nextEvent(app.app, 'two_factor.code_failed')
  const [backupCode] = await app.app.jwtLogin.twoFactor?.regenerateBackupCodes(app.bobId) as string[]

  const { interim } = await timedLogin(app)
  t.same(await failed, { userId: app.bobId })
  t.match(logs, [{ userId: app.bobId, err: { message: /Greeting never received|timeout/i } }])
  t.equal((await app.submit({ JWT: interim, code: codeIn((mailer.sent[0] as MailMessage).text) })).statusCode, 401)
  const res = await app.submit({ JWT: interim, code: backupCode })
  t.equal(res.statusCode, 200, 'the challenge itself stays open')
  t.type(res.json().data.jwt, 'string')
})

t.test('with a working server the code arrives after the answer and signs in', async (t) => {
  const smtp = await startSmtp()
  const mailer = smtpMailer(smtp.port, 2000)
  const { app, logs } = await emailApp(t, mailer)
  t.teardown(async () => { mailer.close(); await smtp.close() })
  const sent = nextEvent(app.app, 'two_factor.code_sent')

  const { interim } = await timedLogin(app)
  t.same(await sent, { userId: app.bobId })
  const res = await app.submit({ JWT: interim, code: codeIn((await smtp.nextMessage()).text) })
  t.equal(res.statusCode, 200)
  t.same(logs, [], 'nothing logged')
})

t.test('a mailer error that echoes the code is redacted in the log', async (t) => {
  const mailer = new RecordingMailer(async (message) => {
    // a mailer may reject with anything, not only an Error
    // eslint-disable-next-line prefer-promise-reject-errors
    await Promise.reject(`550 rejected: ${message.text}`)
  })
  const { app, logs } = await emailApp(t, mailer)
  const failed = nextEvent(app.app, 'two_factor.code_failed')
  await timedLogin(app)
  await failed
  const code = codeIn((mailer.sent[0] as MailMessage).text)
  // the whole message the mailer was given is cut out, the code and the address with it
  t.match(logs[0]?.err, { type: 'HostPortError', message: /^twoFactor\.mailer\.send failed: string: 550 rejected: \[redacted\]$/ })
  t.notMatch(JSON.stringify(logs), code)
})

t.test('when the store fails during the withdrawal, that is logged and the event still comes', async (t) => {
  class FlakyStore extends MemoryStore {
    override async delete (key: string): Promise<void> {
      if (key.startsWith('2fa:email:')) throw new Error('store connection lost')
      await super.delete(key)
    }
  }
  const mailer = new RecordingMailer(async () => { throw new Error('421 try again later') })
  const { app, logs } = await emailApp(t, mailer, new FlakyStore())
  const failed = nextEvent(app.app, 'two_factor.code_failed')
  await timedLogin(app)
  t.same(await failed, { userId: app.bobId })
  t.match(logs, [
    { msg: 'jwt-login: an undelivered two-factor code could not be withdrawn; it expires with its lifetime', err: { message: 'store connection lost' } },
    { msg: 'jwt-login: the two-factor code mail could not be sent; its code was withdrawn', err: { message: '421 try again later' } }
  ])
})
