import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import jwtLogin, { MemoryStore, type JwtLoginEventMap, type JwtLoginOptions, type Mailer, type MailMessage, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { codeIn, NEW_PASSWORD, RESET_URL, smtpMailer } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import { closedPort } from '../helpers/net.js'

let smtp: SmtpPeer
t.before(async () => { smtp = await startSmtp() })
t.teardown(() => smtp.close())

/** Delegates to another mailer and keeps what it was asked to send, so a test can know the code. */
class RecordingMailer implements Mailer {
  readonly sent: MailMessage[] = []
  readonly #send: (message: MailMessage, call: number) => Promise<void>

  constructor (send: (message: MailMessage, call: number) => Promise<void>) {
    this.#send = send
  }

  async send (message: MailMessage): Promise<void> {
    this.sent.push(message)
    await this.#send(message, this.sent.length)
  }
}

interface Built { app: FastifyInstance, logs: Array<Record<string, any>> }

async function build (mailer: Mailer, reset: NonNullable<SettingsInput['resetPassword']> = {}, options: Partial<JwtLoginOptions> = {}): Promise<Built> {
  const logs: Array<Record<string, any>> = []
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  await app.register(jwtLogin, {
    users,
    mailer,
    settings: {
      tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
      resetPassword: { enabled: true, ...reset, mail: { retries: 0, retryDelay: '10ms', ...reset.mail } }
    },
    ...options
  })
  await app.ready()
  return { app, logs }
}

async function nextEvent<E extends keyof JwtLoginEventMap> (app: FastifyInstance, name: E): Promise<JwtLoginEventMap[E]> {
  return await new Promise((resolve) => { app.jwtLogin.events.once(name, resolve) })
}

async function post (app: FastifyInstance) {
  return await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
}

async function put (app: FastifyInstance, code: string) {
  return await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })
}

t.test('SMTP down: POST answers as usual, retries, reports, and the code is not usable', async (t) => {
  const down = smtpMailer(await closedPort())
  const mailer = new RecordingMailer(async (message) => { await down.send(message) })
  const { app, logs } = await build(mailer, { mail: { retries: 2 } })
  t.teardown(() => app.close())
  const failed = nextEvent(app, 'reset.code_failed')

  const res = await post(app)
  t.equal(res.statusCode, 200)
  t.same(res.json(), { success: true, data: { message: 'If the email belongs to an account, a reset code has been sent to it.' } })
  t.same(await failed, { userId: 1, attempts: 3 }, 'the event, after the first try and two retries')
  t.equal(mailer.sent.length, 3)

  const code = codeIn((mailer.sent[0] as MailMessage).text)
  t.equal((await put(app, code)).json().data.errorCode, 62, 'the undelivered code was withdrawn')
  const line = logs.find(l => l.msg === 'jwt-login: the reset mail could not be sent; its code was withdrawn')
  t.ok(line, 'the failure is logged')
  t.match(line, { userId: 1, attempts: 3, err: { code: 'ESOCKET', message: /ECONNREFUSED/ } })
  t.notMatch(JSON.stringify(logs), code, 'no code in the logs')
})

t.test('a failed send is retried and the retried mail carries a working code', async (t) => {
  const real = smtpMailer(smtp.port)
  const mailer = new RecordingMailer(async (message, call) => {
    if (call === 1) throw new Error('421 try again later')
    await real.send(message)
  })
  const { app } = await build(mailer, { mail: { retries: 1 } })
  t.teardown(() => app.close())
  const sent = nextEvent(app, 'reset.code_sent')
  await post(app)
  t.same(await sent, { userId: 1, attempts: 2 })
  t.equal((await put(app, codeIn((await smtp.nextMessage()).text))).statusCode, 200)
})

t.test('a mailer error that echoes the code is redacted in the log', async (t) => {
  const mailer = new RecordingMailer(async (message) => {
    // a mailer may reject with anything, not only an Error
    // eslint-disable-next-line prefer-promise-reject-errors
    await Promise.reject(`550 rejected: ${message.text}`)
  })
  const { app, logs } = await build(mailer)
  t.teardown(() => app.close())
  const failed = nextEvent(app, 'reset.code_failed')
  await post(app)
  t.same(await failed, { userId: 1, attempts: 1 })
  const code = codeIn((mailer.sent[0] as MailMessage).text)
  const line = logs.find(l => l.userId === 1 && l.err !== undefined)
  // the whole message the mailer was given is cut out, the code and the address with it
  t.match(line?.err, { type: 'HostPortError', message: /^mailer\.send failed: string: 550 rejected: \[redacted\]$/ })
  t.notMatch(JSON.stringify(logs), code)
})

t.test('a late failure withdraws only its own code, not a newer one', async (t) => {
  const real = smtpMailer(smtp.port)
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const mailer = new RecordingMailer(async (message, call) => {
    if (call === 1) {
      await held
      throw new Error('timeout')
    }
    await real.send(message)
  })
  const { app } = await build(mailer)
  t.teardown(() => app.close())
  await post(app)
  const sent = nextEvent(app, 'reset.code_sent')
  await post(app)
  await sent
  const newer = codeIn((await smtp.nextMessage()).text)
  const failed = nextEvent(app, 'reset.code_failed')
  release()
  await failed
  t.equal((await put(app, codeIn((mailer.sent[0] as MailMessage).text))).json().data.errorCode, 62, 'the older code was replaced anyway')
  t.equal((await put(app, newer)).statusCode, 200, 'the newer code survived the older one\'s failure')
})

t.test('when the store fails during the withdrawal, that is logged and the event still comes', async (t) => {
  let storeDown = false
  class FlakyStore extends MemoryStore {
    override async get (key: string): Promise<string | null> {
      if (storeDown) throw new Error('store connection lost')
      return await super.get(key)
    }

    override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
      if (storeDown) throw new Error('store connection lost')
      return await super.compareAndSet(key, expected, value, ttlMs)
    }
  }
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const mailer = new RecordingMailer(async () => {
    await held
    throw new Error('timeout')
  })
  const { app, logs } = await build(mailer, {}, { store: new FlakyStore() })
  t.teardown(() => app.close())
  await post(app)
  const failed = nextEvent(app, 'reset.code_failed')
  storeDown = true
  release()
  t.same(await failed, { userId: 1, attempts: 1 })
  t.ok(logs.some(l => l.msg === 'jwt-login: an undelivered reset code could not be withdrawn; it expires with its lifetime'))
})

t.test('closing the app stops the waits between retries', async (t) => {
  const mailer = new RecordingMailer(async () => { throw new Error('connection refused') })
  const { app } = await build(mailer, { mail: { retries: 5, retryDelay: '1h' } })
  const failed = nextEvent(app, 'reset.code_failed')
  await post(app)
  // let the first try fail and the wait begin
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(mailer.sent.length, 1)
  await app.close()
  t.same(await failed, { userId: 1, attempts: 2 }, 'one last try, then the code is withdrawn instead of waiting an hour')
})
