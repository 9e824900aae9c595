import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { randomCode } from '../../lib/core/crypto.js'
import { isEmail } from '../../lib/core/email.js'
import { ALICE, testClock } from '../helpers/app.js'
import { buildResetApp, codeIn, errorOf, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import type { FastifyInstance } from 'fastify'

const BOB = { login: 'bob', email: 'bob@example.com', password: 'bob-old-password', displayName: 'Bob' }
const INVALID = { status: 400, errorCode: 62 }

let smtp: SmtpPeer
t.before(async () => { smtp = await startSmtp() })
t.teardown(() => smtp.close())

async function requestCode (app: FastifyInstance, email: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: RESET_URL, payload: { email } })
  if (res.statusCode !== 200) throw new Error(`POST answered ${res.statusCode}`)
  return codeIn((await smtp.nextMessage()).text)
}

async function put (app: FastifyInstance, email: string, code: string, newPassword = NEW_PASSWORD) {
  return await app.inject({ method: 'PUT', url: RESET_URL, payload: { email, code, new_password: newPassword } })
}

/** A wrong code of the same shape as `code`. */
function wrong (code: string, n = 0): string {
  const other = randomCode(code.length, 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789')
  return other === code ? `${n}${code.slice(1)}` : other
}

t.test('a wrong code is refused and leaves the right one usable', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const failures: unknown[] = []
  app.jwtLogin.events.on('reset.failed', (payload) => { failures.push(payload) })
  const code = await requestCode(app, ALICE.email)
  t.same(errorOf(await put(app, ALICE.email, wrong(code))), INVALID)
  t.same(failures, [{ step: 'complete', userId: 1, ip: '127.0.0.1', reason: 'code_invalid', errorCode: 62 }])
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('an expired code is refused', async (t) => {
  const clock = testClock()
  const { app } = await buildResetApp(smtp.port, { code: { lifetime: '10m' } }, {}, { clock })
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  clock.advance(10 * 60_000)
  t.same(errorOf(await put(app, ALICE.email, code)), INVALID, 'at its expiry')
})

t.test('a code works until just before its expiry', async (t) => {
  const clock = testClock()
  const { app } = await buildResetApp(smtp.port, {}, {}, { clock })
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  clock.advance(15 * 60_000 - 1)
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('a used code is refused', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
  t.same(errorOf(await put(app, ALICE.email, code, 'yet another passphrase')), INVALID)
})

t.test('after five wrong tries the code is dead', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  for (let i = 0; i < 5; i++) t.same(errorOf(await put(app, ALICE.email, wrong(code, i))), INVALID)
  t.same(errorOf(await put(app, ALICE.email, code)), INVALID, 'even the right code')
})

t.test('four wrong tries still allow the right code', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  for (let i = 0; i < 4; i++) await put(app, ALICE.email, wrong(code, i))
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('maxTries is a setting', async (t) => {
  const { app } = await buildResetApp(smtp.port, { code: { maxTries: 1 } })
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  await put(app, ALICE.email, wrong(code))
  t.same(errorOf(await put(app, ALICE.email, code)), INVALID)
})

t.test('a code works only for the user it was sent to', async (t) => {
  const { app, users } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  await users.addUser(BOB)
  const bobCode = await requestCode(app, BOB.email)
  t.same(errorOf(await put(app, ALICE.email, bobCode)), INVALID, 'bob\'s code for alice, who has no code')
  await requestCode(app, ALICE.email)
  t.same(errorOf(await put(app, ALICE.email, bobCode)), INVALID, 'bob\'s code for alice, who has her own')
  t.equal((await put(app, BOB.email, bobCode)).statusCode, 200, 'bob\'s code still works for bob')
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200, 'alice\'s password is untouched')
})

t.test('a new code makes the older one invalid', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const first = await requestCode(app, ALICE.email)
  const second = await requestCode(app, ALICE.email)
  t.same(errorOf(await put(app, ALICE.email, first)), INVALID)
  t.equal((await put(app, ALICE.email, second)).statusCode, 200)
})

t.test('a new code gets fresh tries', async (t) => {
  const { app } = await buildResetApp(smtp.port, { code: { maxTries: 2 } })
  t.teardown(() => app.close())
  const first = await requestCode(app, ALICE.email)
  await put(app, ALICE.email, wrong(first, 1))
  await put(app, ALICE.email, wrong(first, 2))
  const second = await requestCode(app, ALICE.email)
  t.equal((await put(app, ALICE.email, second)).statusCode, 200)
})

t.test('code length and alphabet are settings', async (t) => {
  const { app } = await buildResetApp(smtp.port, { code: { length: 12, alphabet: '0123456789' } })
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  t.match(code, /^\d{12}$/)
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('a mixed-case alphabet makes codes case-sensitive', async (t) => {
  const { app } = await buildResetApp(smtp.port, { code: { alphabet: 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ' }, limits: { perEmail: { max: 50 } } })
  t.teardown(() => app.close())
  let code = await requestCode(app, ALICE.email)
  while (code === code.toUpperCase()) code = await requestCode(app, ALICE.email)
  t.same(errorOf(await put(app, ALICE.email, code.toUpperCase())), INVALID)
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('reset works with an asymmetric signing key', async (t) => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const { app } = await buildResetApp(smtp.port, {}, {
    tokens: { algorithm: 'ES256', keys: [{ kid: 'ec1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] }
  })
  t.teardown(() => app.close())
  const code = await requestCode(app, ALICE.email)
  t.same(errorOf(await put(app, ALICE.email, wrong(code))), INVALID)
  t.equal((await put(app, ALICE.email, code)).statusCode, 200)
})

t.test('randomCode draws every character of the alphabet and nothing else', async (t) => {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
  const seen = new Set(randomCode(4000, alphabet))
  t.same([...seen].sort().join(''), [...alphabet].sort().join(''))
  t.equal(randomCode(8, alphabet).length, 8)
})

t.test('isEmail', async (t) => {
  for (const good of ['a@b.co', 'first.last+tag@sub.example.org']) t.ok(isEmail(good), good)
  for (const bad of ['a', 'a@b', 'a b@c.de', '@b.co', 'a@.co', 'a@b..co', `${'a'.repeat(250)}@b.co`]) t.notOk(isEmail(bad), bad.slice(0, 24))
})
