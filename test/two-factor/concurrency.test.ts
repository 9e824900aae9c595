import t from 'tap'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { redisStore } from '../helpers/redis-store.js'
import { clusterStore, postgresStore } from '../helpers/shared-stores.js'
import { buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'
import { startSmtp } from '../helpers/smtp.js'
import { NodemailerMailer } from '../../lib/nodemailer.js'

const stores: Array<[string, (t: { teardown: (fn: () => Promise<void>) => void }) => Promise<StateStore>]> = [
  ['memory', async (t) => {
    const store = new MemoryStore()
    t.teardown(async () => { await store.close() })
    return store
  }],
  ['redis', async (t) => redisStore(t, '2fa-race').store],
  ['redis cluster', async (t) => (await clusterStore(t, '2fa-race')).store],
  ['postgres', async (t) => (await postgresStore(t, '2fa-race')).store]
]

for (const [name, makeStore] of stores) {
  t.test(`${name}: two requests with one interim token and the same right code: exactly one succeeds`, async (t) => {
    const store = await makeStore(t)
    const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ plugin: { store } })
    t.teardown(() => app.close())
    for (let round = 0; round < 5; round++) {
      clock.advance(30_000)
      const token = await interim()
      const code = await totpAt(secret, clock.now)
      const results = await Promise.all([submit({ JWT: token, code }), submit({ JWT: token, code })])
      t.same(results.map(r => r.statusCode).sort(), [200, 401], `round ${round}`)
    }
  })

  t.test(`${name}: one TOTP code raced over two challenges: exactly one succeeds`, async (t) => {
    const store = await makeStore(t)
    const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ plugin: { store } })
    t.teardown(() => app.close())
    const [a, b] = [await interim(), await interim()]
    const code = await totpAt(secret, clock.now)
    const results = await Promise.all([submit({ JWT: a, code }), submit({ JWT: b, code })])
    t.same(results.map(r => r.statusCode).sort(), [200, 401])
  })

  t.test(`${name}: two different right codes on one challenge: exactly one succeeds`, async (t) => {
    const store = await makeStore(t)
    const { app, interim, submit, secret, clock, bobId, port } = await buildTwoFactorApp({ plugin: { store } })
    t.teardown(() => app.close())
    const backup = await app.jwtLogin.twoFactor?.regenerateBackupCodes(bobId) as string[]
    const token = await interim()
    const results = await Promise.all([submit({ JWT: token, code: await totpAt(secret, clock.now) }), submit({ JWT: token, code: backup[0] })])
    t.same(results.map(r => r.statusCode).sort(), [200, 401])
    t.equal(results.find(r => r.statusCode === 401)?.json().data.errorCode, 107, 'the loser finds the challenge spent')
    t.ok(port.backupCodesLeft(bobId) >= 9)
  })

  t.test(`${name}: an emailed code raced twice: exactly one succeeds`, async (t) => {
    const store = await makeStore(t)
    const smtp = await startSmtp()
    const mailer = new NodemailerMailer({ from: 'no-reply@example.com', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } })
    const { app, interim, submit } = await buildTwoFactorApp({ method: 'email', mailer, plugin: { store } })
    t.teardown(async () => { await app.close(); mailer.close(); await smtp.close() })
    const token = await interim()
    const code = (/\b(\d{6})\b/.exec((await smtp.nextMessage()).text) as RegExpExecArray)[1]
    const results = await Promise.all([submit({ JWT: token, code }), submit({ JWT: token, code }), submit({ JWT: token, code })])
    t.equal(results.filter(r => r.statusCode === 200).length, 1)
    for (const res of results.filter(r => r.statusCode !== 200)) t.equal(res.statusCode, 401)
  })
}
