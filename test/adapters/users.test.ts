import nodemailer from 'nodemailer'
import t from 'tap'
import { checkAuthCode } from '../../lib/http/auth-codes.js'
import { toMs } from '../../lib/config/duration.js'
import { JwtLoginError } from '../../lib/core/errors.js'
import { JwtLoginEvents, type JwtLoginEventMap } from '../../lib/services/events.js'
import { NodemailerMailer } from '../../lib/nodemailer.js'
import { ARGON2_OPTIONS, hashPassword, isUserExists, USER_EXISTS_CODE, UserExistsError, verifyPasswordHash } from '../../lib/adapters/users.js'
import { ConsoleMailer, MemoryUserAdapter } from '../../lib/testing.js'

const ARGON2_HASH = /^\$argon2id\$v=19\$([a-z]=\d+(?:,[a-z]=\d+)*)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/

/** The cost parameters of a PHC argon2id string, whatever their order (node-argon2 writes m,p,t). */
function argon2Parameters (hash: string | null): Record<string, number> | null {
  const match = ARGON2_HASH.exec(hash ?? '')
  if (match === null) return null
  return Object.fromEntries((match[1] as string).split(',').map(pair => {
    const [name, value] = pair.split('=') as [string, string]
    return [name, Number(value)]
  }))
}
const OWASP = { m: 19456, t: 2, p: 1 }

t.test('MemoryUserAdapter: add and find users', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ login: 'alice', email: 'Alice@Example.com', password: 'pw-alice-1234', displayName: 'Alice A', roles: ['editor'] })
  const bob = await users.addUser({ login: 'bob', email: 'bob@example.com', password: 'pw-bob-1234' })
  t.equal(alice.ID, 1)
  t.equal(bob.ID, 2)
  t.equal(alice.user_email, 'alice@example.com', 'emails are kept in lower case')
  t.equal(bob.display_name, 'bob', 'the display name defaults to the login')
  t.same(bob.roles, ['subscriber'], 'the role defaults to subscriber')

  t.equal(await users.findByEmail('ALICE@example.COM'), alice, 'email lookup ignores case')
  t.equal(await users.findByEmail('carol@example.com'), null)
  t.equal(await users.findByLogin('bob'), bob)
  t.equal(await users.findByLogin('carol'), null)
  t.equal(await users.findById(1), alice)
  t.equal(await users.findById(99), null)
})

t.test('MemoryUserAdapter: a taken email (any case) or login (exactly) is UserExistsError, code ERR_JWT_LOGIN_USER_EXISTS', async (t) => {
  const users = new MemoryUserAdapter()
  await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'pw-alice-1234' })
  const duplicate = { name: 'UserExistsError', code: USER_EXISTS_CODE, message: 'a user with this email or login exists' }
  await t.rejects(users.addUser({ login: 'alice2', email: 'ALICE@EXAMPLE.COM', password: 'x' }), duplicate, 'same email in another case')
  await t.rejects(users.addUser({ login: 'alice', email: 'other@example.com', password: 'x' }), duplicate, 'same login')
  await t.rejects(users.createUser({ login: 'alice3', email: 'Alice@Example.com', displayName: 'A', role: 'subscriber' }), UserExistsError, 'createUser too')
  t.equal(await users.findById(2), null, 'nothing was added')
  const other = await users.addUser({ login: 'Alice', email: 'other@example.com', password: 'pw-other-1234' })
  t.equal(other.ID, 2, 'a login in another case is another login; a refused user takes no id')

  // concurrent creates of one email with different logins: the check and the insert are one step
  const settled = await Promise.allSettled(Array.from({ length: 5 }, async (_, i) =>
    await users.createUser({ login: `racer-${i}`, email: 'race@example.com', displayName: 'R', role: 'subscriber' })))
  t.equal(settled.filter(result => result.status === 'fulfilled').length, 1, 'one created')
  t.ok(settled.every(result => result.status === 'fulfilled' || result.reason instanceof UserExistsError), 'the others told UserExistsError')
})

t.test('UserExistsError: its code, a message of its own, a cause; isUserExists knows it and any error with its code', async (t) => {
  const cause = new Error('duplicate key value violates unique constraint')
  const error = new UserExistsError('that login is taken', { cause })
  t.equal(error.code, 'ERR_JWT_LOGIN_USER_EXISTS')
  t.equal(error.message, 'that login is taken')
  t.equal(error.cause, cause)
  t.ok(error instanceof Error)
  t.ok(isUserExists(error))
  t.ok(isUserExists(Object.assign(new Error('dup'), { code: USER_EXISTS_CODE })), 'another class with the code (a second copy of the package)')
  t.ok(isUserExists(new JwtLoginError('ERR_JWT_LOGIN_USER_EXISTS')))
  for (const other of [new Error('dup'), { code: '23505' }, null, undefined, 'ERR_JWT_LOGIN_USER_EXISTS']) t.notOk(isUserExists(other), String(other))
})

t.test('MemoryUserAdapter: passwords', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'first password' })
  t.equal(await users.verifyPassword(alice, 'first password'), true)
  t.equal(await users.verifyPassword(alice, 'First password'), false)
  t.equal(await users.verifyPassword(alice, ''), false)

  const hash = await users.getPasswordHash(alice)
  t.same(argon2Parameters(hash), OWASP, 'an argon2id hash with the OWASP parameters')
  t.equal(hash, alice.passwordHash)

  await users.setPassword(alice, 'second password')
  t.equal(await users.verifyPassword(alice, 'second password'), true)
  t.equal(await users.verifyPassword(alice, 'first password'), false, 'the old password is gone')
  t.not(await users.getPasswordHash(alice), hash)

  alice.passwordHash = 'not-a-hash'
  t.equal(await users.verifyPassword(alice, 'second password'), false, 'a garbage hash answers false, never throws')
  alice.passwordHash = '$argon2id$v=19$m=19456,t=2,p=1$AAAA$BBBB'
  t.equal(await users.verifyPassword(alice, 'second password'), false, 'a truncated hash answers false')
})

t.test('MemoryUserAdapter: removeUser', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'pw-alice-1234' })
  await users.removeUser(alice.ID)
  t.equal(await users.findById(alice.ID), null)
  t.equal(await users.findByEmail('alice@example.com'), null)
  t.equal(await users.findByLogin('alice'), null)
  await t.resolves(users.removeUser(42), 'removing an absent user is fine')
  const again = await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'pw' })
  t.not(again.ID, alice.ID, 'ids are not reused')
})

t.test('toPublicUser: exactly the public fields, never the hash', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'pw-alice-1234', displayName: 'Alice A', roles: ['editor', 'author'] })
  const pub = users.toPublicUser(alice)
  t.same(Object.keys(pub).sort(), ['ID', 'display_name', 'roles', 'user_email', 'user_login'])
  t.same(pub, { ID: 1, user_login: 'alice', user_email: 'alice@example.com', display_name: 'Alice A', roles: ['editor', 'author'] })
  t.notMatch(JSON.stringify(pub), /argon2|passwordHash/)
  pub.roles.push('administrator')
  t.same(alice.roles, ['editor', 'author'], 'the roles are a copy')
})

t.test('argon2id with the OWASP parameters', async (t) => {
  t.same(ARGON2_OPTIONS, { type: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 })
  const hash = await hashPassword('correct horse battery staple')
  t.same(argon2Parameters(hash), OWASP)
  t.equal(argon2Parameters('$argon2i$v=19$m=19456,t=2,p=1$AAAA$BBBB'), null, 'argon2i is not argon2id')
  t.not(await hashPassword('correct horse battery staple'), hash, 'salted')
  t.equal(await verifyPasswordHash(hash, 'correct horse battery staple'), true)
  t.equal(await verifyPasswordHash(hash, 'wrong'), false)
  t.equal(await verifyPasswordHash('', 'x'), false)
  t.equal(await verifyPasswordHash('$2y$10$abcdefghijklmnopqrstuu', 'x'), false, 'a foreign hash format')
})

t.test('toMs: seconds or ms-style strings to milliseconds', async (t) => {
  t.equal(toMs(60), 60_000)
  t.equal(toMs(1.5), 1_500)
  t.equal(toMs(0.0004), 0, 'a number is rounded to whole ms')
  t.equal(toMs('15m'), 900_000)
  t.equal(toMs(' 2h '), 7_200_000)
  t.equal(toMs('14d'), 14 * 86_400_000)
  t.equal(toMs('500ms'), 500)
  t.equal(toMs('30'), 30, 'a bare number string is ms, as in the ms package')
  t.equal(toMs('1 week'), 604_800_000)
  for (const bad of ['soon', '', '   ', '0s', '0', '-5m', 'm15', '1.2.3h']) {
    t.throws(() => toMs(bad), { name: 'TypeError', message: `invalid duration: ${JSON.stringify(bad)}` }, JSON.stringify(bad))
  }
})

t.test('checkAuthCode', async (t) => {
  const now = Date.UTC(2026, 10, 22, 12)
  const codes = [
    { code: 'expired-code', expiresAt: now - 1 },
    { code: 'ends-now', expiresAt: now },
    { code: 'live-code', expiresAt: now + 60_000 },
    { code: 'forever', expiresAt: null }
  ]
  const failure = (presented: string | undefined, list = codes): string | undefined => {
    try {
      checkAuthCode(presented, list, now)
      return undefined
    } catch (error) {
      t.ok(error instanceof JwtLoginError)
      return (error as JwtLoginError).code
    }
  }
  t.equal(failure('live-code'), undefined)
  t.equal(failure('forever'), undefined)
  // null and values that are no string are refused by `present` before: see test/oauth/auth-code.test.ts
  for (const missing of [undefined, '']) {
    t.equal(failure(missing), 'ERR_JWT_LOGIN_AUTH_CODE_MISSING', String(missing))
  }
  t.equal(failure('wrong-code'), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID')
  t.equal(failure('live-cod'), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', 'a prefix is not a match')
  t.equal(failure('LIVE-CODE'), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', 'case matters')
  t.equal(failure('expired-code'), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', 'expired')
  t.equal(failure('ends-now'), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', 'a code is refused from its expiry on')
  t.equal(failure('live-code', []), 'ERR_JWT_LOGIN_AUTH_CODE_INVALID', 'no codes configured')
  const [status, number] = [new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_INVALID').statusCode, new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_MISSING').errorCode]
  t.same([status, number], [401, 94])
})

t.test('events: typed on, once, off; a throwing listener does not break emit', async (t) => {
  const events = new JwtLoginEvents()
  const seen: string[] = []
  const payload: JwtLoginEventMap['login.failed'] = { ip: '127.0.0.1', reason: 'wrong_credentials', errorCode: 48 }
  const always = (p: JwtLoginEventMap['login.failed']): void => { seen.push(`on:${p.errorCode}`) }
  t.equal(events.on('login.failed', () => { throw new Error('listener bug') }), events, 'on chains')
  events.on('login.failed', always)
  t.equal(events.once('login.failed', (p) => { seen.push(`once:${p.reason}`) }), events, 'once chains')
  events.on('token.revoked', (p) => { seen.push(`revoked:${p.jti}`) })

  t.doesNotThrow(() => { events.emit('login.failed', payload) })
  t.same(seen, ['on:48', 'once:wrong_credentials'], 'listeners after the throwing one still ran')
  events.emit('login.failed', payload)
  t.same(seen, ['on:48', 'once:wrong_credentials', 'on:48'], 'once ran once')

  t.equal(events.off('login.failed', always), events, 'off chains')
  events.emit('login.failed', payload)
  t.equal(seen.length, 3, 'off removed the listener')
  events.emit('token.revoked', { userId: 1, sessionId: 's', jti: 'j', ip: '::1' })
  t.same(seen.at(-1), 'revoked:j')
  t.doesNotThrow(() => { events.emit('validation.failed', { ip: '::1', errorCode: 11 }) }, 'an event without listeners')
})

t.test('ConsoleMailer writes the message, its HTML part after the text', async (t) => {
  const lines: string[] = []
  const mailer = new ConsoleMailer((line) => { lines.push(line) })
  await mailer.send({ to: 'alice@example.com', subject: 'Your code', text: 'Code: 123456', html: '<b>123456</b>' })
  t.equal(lines.length, 1)
  t.equal(lines[0], '\n--- mail to alice@example.com ---\nSubject: Your code\n\nCode: 123456\n--- html ---\n<b>123456</b>\n--- end of mail ---\n')
})

t.test('ConsoleMailer writes to stdout by default', async (t) => {
  const mailer = new ConsoleMailer()
  const written: string[] = []
  const original = process.stdout.write
  process.stdout.write = ((chunk: string) => { written.push(chunk); return true }) as typeof process.stdout.write
  let sent: Promise<void>
  try {
    sent = mailer.send({ to: 'bob@example.com', subject: 'Hi', text: 'Hello' })
  } finally {
    process.stdout.write = original
  }
  await sent
  t.equal(written.length, 1)
  t.match(written[0], 'mail to bob@example.com')
})

t.test('NodemailerMailer needs smtp options or a transport', async (t) => {
  t.throws(() => new NodemailerMailer({ from: 'x@example.com' }), { name: 'TypeError', message: 'NodemailerMailer needs `smtp` options or a `transport`' })
  const smtp = new NodemailerMailer({ from: 'x@example.com', smtp: { host: '127.0.0.1', port: 1 } })
  t.doesNotThrow(() => { smtp.close() }, 'SMTP options build a transport without connecting')
})

t.test('NodemailerMailer sends through a given transport with its sender', async (t) => {
  const transport = nodemailer.createTransport({ jsonTransport: true })
  const sent: Array<{ envelope: { from: string, to: string[] } }> = []
  const original = transport.sendMail.bind(transport)
  transport.sendMail = (async (message: Parameters<typeof original>[0]) => {
    const info = await original(message)
    sent.push(info as never)
    return info
  }) as typeof transport.sendMail
  const mailer = new NodemailerMailer({ from: 'no-reply@example.com', transport })
  await mailer.send({ to: 'alice@example.com', subject: 'S', text: 'T' })
  t.same(sent.map(info => info.envelope), [{ from: 'no-reply@example.com', to: ['alice@example.com'] }])
  mailer.close()
})
