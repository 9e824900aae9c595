// The account flows' edges: their switches and set-up checks, limits, failing mailers and ports (each answer 503 with nothing half done, the code given back), and the ports without their optional methods.
import t from 'tap'
import { MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { errorOf } from '../helpers/http.js'
import { registrationRefusal } from '../helpers/app.js'
import { ALICE, buildAccountApp, mailCode, portWithout } from '../helpers/account.js'
import { totpAt } from '../helpers/fixtures.js'
import { MemoryStore, type MailMessage } from '../../lib/index.js'

const KEYS = { tokens: { keys: [{ kid: 'k1', secret: 'test-secret-that-is-at-least-32-bytes-long!' }] } }
const NEWBIE = { email: 'newbie@example.org', password: 'a long enough new password' }

/** A mailer that fails its first `failures` sends, then keeps what it is given. */
class FlakyMailer {
  failures: number
  readonly sent: MailMessage[] = []
  constructor (failures: number) { this.failures = failures }
  async send (message: MailMessage): Promise<void> {
    if (this.failures-- > 0) throw new Error(`smtp refused mail to ${message.to}: ${message.text}`)
    this.sent.push(message)
  }
}

const settle = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 50)) }

t.test('set-up: each need named at registration', async (t) => {
  const without = (method: string): unknown => {
    const users = new MemoryUserAdapter()
    return { findByEmail: users.findByEmail.bind(users), findByLogin: users.findByLogin.bind(users), findById: users.findById.bind(users), verifyPassword: users.verifyPassword.bind(users), toPublicUser: users.toPublicUser.bind(users), setPassword: users.setPassword.bind(users), setEmail: users.setEmail.bind(users), setEmailVerified: users.setEmailVerified.bind(users), createUser: users.createUser.bind(users), [method]: undefined }
  }
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ users: without('setEmailVerified'), mailer: new FlakyMailer(0), settings: { ...KEYS, account: { enabled: true } } }, 'account/enabled', /setEmailVerified/],
    [{ settings: { ...KEYS, account: { enabled: true } } }, 'account/enabled', /mailer/],
    [{ users: without('setPassword'), mailer: new FlakyMailer(0), settings: { ...KEYS, account: { enabled: true } } }, 'account/password/enabled', /setPassword/],
    [{ users: without('setEmail'), mailer: new FlakyMailer(0), settings: { ...KEYS, account: { enabled: true } } }, 'account/email/enabled', /setEmail/],
    [{ settings: { ...KEYS, users: { register: { enabled: true, verifyEmail: true } } } }, 'users/register/verifyEmail', /mailer/],
    [{ users: without('setEmailVerified'), settings: { ...KEYS, authentication: { requireVerifiedEmail: true } } }, 'authentication/requireVerifiedEmail', /setEmailVerified/]
  ]
  for (const [options, path, reason] of cases) {
    const refusal = await registrationRefusal(options)
    t.equal(refusal.path, path)
    t.match(refusal.message, reason)
  }
  const port = Object.create(new MemoryTwoFactorStore(), { setMethod: { value: undefined } })
  const twoFactor = await registrationRefusal({ mailer: new FlakyMailer(0), twoFactor: { port }, settings: { ...KEYS, account: { enabled: true } } })
  t.equal(twoFactor.path, 'account/twoFactor/enabled')
  t.match(await registrationRefusal({ settings: { ...KEYS, account: { recentAuth: '2d' } } }), { path: 'account/recentAuth' })
  t.match(await registrationRefusal({ settings: { ...KEYS, account: { email: { revertLifetime: '31d' } } } }), { path: 'account/email/revertLifetime' })
})

t.test('each part\'s switch: 403 / 233; the second factor\'s routes without the twoFactor option too', async (t) => {
  const kit = await buildAccountApp(t, { account: { enabled: true, password: { enabled: false }, email: { enabled: false }, twoFactor: { enabled: false } } })
  const jwt = await kit.token()
  t.same(errorOf(await kit.call('PUT', '/account/password', jwt, {})), [403, 233])
  t.same(errorOf(await kit.call('POST', '/account/email', jwt, {})), [403, 233])
  t.same(errorOf(await kit.call('POST', '/account/email/revert', undefined, {})), [403, 233])
  t.same(errorOf(await kit.call('DELETE', '/account/2fa', jwt)), [403, 233])
  t.equal((await kit.call('GET', '/account', jwt)).statusCode, 200, 'the overview stays')
  const onlyVerification = await buildAccountApp(t, { account: { enabled: false }, users: { register: { enabled: true, verifyEmail: true } } })
  t.equal((await onlyVerification.call('POST', '/account/email/verification', undefined, { email: 'x@example.org' })).statusCode, 200, 'verification stays on for registration')
  t.same(errorOf(await onlyVerification.call('GET', '/account', await onlyVerification.token())), [403, 233])
  const noPort = await buildAccountApp(t, {}, { twoFactor: undefined })
  const jwt2 = await noPort.token()
  t.same(errorOf(await noPort.call('POST', '/account/2fa/totp', jwt2)), [403, 233])
  t.strictSame((await noPort.call('GET', '/account', jwt2)).json().data.two_factor, { enabled: false, methods: [] })
})

t.test('codes per client and per account: 429; unauthenticated past the account\'s limit, the same answer and no code', async (t) => {
  const kit = await buildAccountApp(t, { account: { enabled: true, limits: { perAccount: { max: 1 }, perIp: { max: 3 } } } })
  await kit.call('POST', '/users', undefined, NEWBIE)
  const jwt = await kit.token(NEWBIE.email, NEWBIE.password)
  t.equal((await kit.call('POST', '/account/email/verification', jwt, {})).statusCode, 200)
  t.same(errorOf(await kit.call('POST', '/account/email/verification', jwt, {})), [429, 200], 'the account\'s limit, with a session')
  const hidden = await kit.call('POST', '/account/email/verification', undefined, { email: NEWBIE.email })
  t.equal(hidden.statusCode, 200, 'past the account\'s limit without a session: the same answer')
  kit.mail.send = async () => { t.fail('no code is mailed past the account\'s limit') }
  t.same(errorOf(await kit.call('POST', '/account/email/verification', undefined, { email: NEWBIE.email })), [429, 200], 'the address\'s own limit')
  t.same(errorOf(await kit.call('POST', '/account/email/verification', undefined, { email: 'other@example.org' })), [429, 200], 'the client\'s limit')
})

t.test('a mail that cannot be sent: retried, then its code withdrawn and the failure logged without the code or the address', async (t) => {
  const mailer = new FlakyMailer(2)
  const kit = await buildAccountApp(t, { resetPassword: { enabled: true, mail: { retries: 1, retryDelay: 0.01 } } }, { mailer })
  const failed: unknown[] = []
  kit.app.jwtLogin.events.on('account.mail_failed', (event) => failed.push(event))
  const jwt = await kit.token()
  await kit.call('POST', '/account/email', jwt, { new_email: 'alice@new.example.org' })
  for (let i = 0; i < 40 && failed.length === 0; i++) await settle()
  t.equal(failed.length, 1)
  const line = kit.lines.find(l => l.includes('an account mail could not be sent')) as string
  t.ok(line)
  t.notMatch(line, 'alice@new.example.org')
  t.notMatch(line.toLowerCase(), 'code is')
  // a mail that goes on its retry
  mailer.failures = 1
  await kit.call('POST', '/account/email', jwt, { new_email: 'alice@new.example.org' })
  for (let i = 0; i < 40 && mailer.sent.length === 0; i++) await settle()
  t.equal(mailer.sent.length, 1)
})

t.test('ports that fail: 503, the code given back, nothing half done', async (t) => {
  const kit = await buildAccountApp(t)
  await kit.call('POST', '/users', undefined, NEWBIE)
  await kit.call('POST', '/account/email/verification', undefined, { email: NEWBIE.email })
  const code = mailCode(await kit.mail.next())
  const setEmailVerified = kit.users.setEmailVerified.bind(kit.users)
  kit.users.setEmailVerified = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.call('POST', '/account/email/verify', undefined, { email: NEWBIE.email, code })), [503, 242])
  kit.users.setEmailVerified = setEmailVerified
  t.equal((await kit.call('POST', '/account/email/verify', undefined, { email: NEWBIE.email, code })).statusCode, 200, 'the code was given back')

  const jwt = await kit.token()
  await kit.call('POST', '/account/email', jwt, { new_email: 'alice@new.example.org' })
  const change = mailCode(await kit.mail.next())
  const setEmail = kit.users.setEmail.bind(kit.users)
  kit.users.setEmail = async () => { throw new Error('database down') }
  const findById = kit.users.findById.bind(kit.users)
  let lookups = 0
  // the token's own lookup goes through; the look after the failed change fails too
  kit.users.findById = async (id: number) => { if (lookups++ > 0) throw new Error('database down'); return await findById(id) }
  t.same(errorOf(await kit.call('POST', '/account/email/confirm', jwt, { code: change })), [503, 201], 'not known to have landed: given back')
  kit.users.findById = findById
  t.same(errorOf(await kit.call('POST', '/account/email/confirm', jwt, { code: change })), [503, 201])
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200, 'the email is unchanged')
  kit.users.setEmail = setEmail
  t.equal((await kit.call('POST', '/account/email/confirm', jwt, { code: change })).statusCode, 200, 'the same code works again')
  const revert = mailCode(await kit.mail.next())
  kit.users.setEmail = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: revert })), [503, 242])
  kit.users.setEmail = setEmail
  t.equal((await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: revert })).statusCode, 200, 'the revert code works again')

  kit.clock.advance(1000)
  const fresh = await kit.token()
  const setPassword = kit.users.setPassword.bind(kit.users)
  kit.users.setPassword = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.call('PUT', '/account/password', fresh, { current_password: ALICE.password, new_password: 'a much newer passphrase' })), [503, 201])
  kit.users.setPassword = setPassword
  t.equal((await kit.signIn(ALICE.email, ALICE.password)).statusCode, 200, 'the password is unchanged')
  const verifyPassword = kit.users.verifyPassword.bind(kit.users)
  kit.users.verifyPassword = async () => { throw new Error('database down') }
  t.same(errorOf(await kit.call('PUT', '/account/password', fresh, { current_password: ALICE.password, new_password: 'a much newer passphrase' })), [503, 201], 'the check not made is given back')
  kit.users.verifyPassword = verifyPassword
})

t.test('revert: an address another account took meanwhile 409 / 235; an older revert code dies with a revert; a user gone', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  await kit.call('POST', '/account/email', jwt, { new_email: 'first@example.org' })
  await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(await kit.mail.next()) })
  const revertFirst = mailCode(await kit.mail.next())
  await kit.call('POST', '/account/email', jwt, { new_email: 'second@example.org' })
  await kit.call('POST', '/account/email/confirm', jwt, { code: mailCode(await kit.mail.next()) })
  const revertSecond = mailCode(await kit.mail.next())
  kit.clock.advance(1000)
  t.equal((await kit.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: revertFirst })).statusCode, 200)
  t.same(errorOf(await kit.call('POST', '/account/email/revert', undefined, { email: 'first@example.org', code: revertSecond })), [400, 234], 'issued before the revert: dead')

  const other = await buildAccountApp(t)
  const token = await other.token()
  await other.call('POST', '/account/email', token, { new_email: 'moved@example.org' })
  await other.call('POST', '/account/email/confirm', token, { code: mailCode(await other.mail.next()) })
  const code = mailCode(await other.mail.next())
  await other.users.addUser({ login: 'taker', email: ALICE.email, password: 'the taker has a password' })
  t.same(errorOf(await other.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code })), [409, 235])

  const gone = await buildAccountApp(t)
  const goneToken = await gone.token()
  await gone.call('POST', '/account/email', goneToken, { new_email: 'moved@example.org' })
  await gone.call('POST', '/account/email/confirm', goneToken, { code: mailCode(await gone.mail.next()) })
  const goneCode = mailCode(await gone.mail.next())
  await gone.users.removeUser(1)
  t.same(errorOf(await gone.call('POST', '/account/email/revert', undefined, { email: ALICE.email, code: goneCode })), [400, 234])
  t.same(errorOf(await gone.call('POST', '/account/email/revert', undefined, { email: 'bad address', code: goneCode })), [400, 236])
})

t.test('a two-factor port without countBackupCodes; the email method with a mailer; a passkey as the method; the overview with passkeys on', async (t) => {
  const port = new MemoryTwoFactorStore()
  const bare = portWithout(port, 'countBackupCodes')
  const kit = await buildAccountApp(t, { passkeys: { enabled: true, rpId: 'example.com', origins: ['https://app.example.com'] } }, { twoFactor: { port: bare, mailer: new FlakyMailer(0) } })
  const jwt = await kit.token()
  const overview = (await kit.call('GET', '/account', jwt)).json().data
  t.strictSame(overview.two_factor, { enabled: false, methods: ['email'] }, 'no backup_codes_left without the method')
  t.equal(overview.passkeys, 0)
  const { secret } = (await kit.call('POST', '/account/2fa/totp', jwt)).json().data
  const confirmed = await kit.call('POST', '/account/2fa/totp/confirm', jwt, { code: await totpAt(secret, kit.clock.now) })
  t.equal(confirmed.json().data.backup_codes.length, 10, 'a first enrolment gives codes')
  t.equal(await port.methodOf(1), 'totp')
  await kit.passkeys.create({ id: 'pk-1', userId: 1, publicKey: 'x', counter: 0, transports: [], deviceType: 'multiDevice', backedUp: true, aaguid: '00000000-0000-0000-0000-000000000000', name: 'Key', createdAt: new Date(kit.clock.now), lastUsedAt: null } as never)
  kit.clock.advance(30_000)
  const interim = (await kit.signIn(ALICE.email, ALICE.password)).json().data.jwt as string
  const strong = (await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/auth/2fa', payload: { JWT: interim, code: await totpAt(secret, kit.clock.now) } })).json().data.jwt as string
  kit.clock.advance(30_000)
  const again = (await kit.call('POST', '/account/2fa/totp', strong)).json().data
  const reconfirmed = await kit.call('POST', '/account/2fa/totp/confirm', strong, { code: await totpAt(again.secret, kit.clock.now) })
  t.notOk('backup_codes' in reconfirmed.json().data, 'a new secret of a user with the second factor on keeps the codes')
  t.equal((await kit.call('PUT', '/account/2fa', strong, { method: 'passkey' })).statusCode, 200)
  t.equal((await kit.call('PUT', '/account/2fa', strong, { method: 'email' })).statusCode, 200)
  t.same(errorOf(await kit.call('PUT', '/account/2fa', strong, {})), [400, 203])
})

t.test('turning the second factor on by choosing a method; a reset that cannot mark the address verified logs and goes on; a registration whose code cannot be written', async (t) => {
  const kit = await buildAccountApp(t, {}, { twoFactor: { port: new MemoryTwoFactorStore(), mailer: new FlakyMailer(0) } })
  const jwt = await kit.token()
  const turnedOn: unknown[] = []
  kit.app.jwtLogin.events.on('two_factor.enabled', (event) => turnedOn.push(event))
  t.equal((await kit.call('PUT', '/account/2fa', jwt, { method: 'email' })).statusCode, 200)
  t.same(turnedOn, [{ userId: 1, method: 'email', ip: '127.0.0.1' }])

  await kit.call('POST', '/users', undefined, NEWBIE)
  const user = await kit.users.findByEmail(NEWBIE.email) as MemoryUser
  kit.users.setEmailVerified = async () => { throw new Error('database down') }
  await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/user/reset_password', payload: { email: NEWBIE.email } })
  const message = await kit.mail.next()
  const code = /reset code is: (\S+)/.exec(message.text)?.[1] as string
  const reset = await kit.app.inject({ method: 'PUT', url: '/jwt-login/v1/user/reset_password', payload: { email: NEWBIE.email, code, new_password: 'a brand new passphrase' } })
  t.equal(reset.statusCode, 200, 'the reset stands')
  t.equal(user.emailVerified, false, 'not marked')
  t.ok(kit.lines.some(line => line.includes('could not be marked verified')))

  // a registration whose verification code cannot be written: the user exists, the failure is logged, another code can be asked for
  class FailingCodes extends MemoryStore {
    override async set (key: string, value: string, ttlMs: number): Promise<void> {
      if (key.startsWith('account:verify:')) throw new Error('store down')
      await super.set(key, value, ttlMs)
    }
  }
  const registering = await buildAccountApp(t, { users: { register: { enabled: true, verifyEmail: true } } }, { store: new FailingCodes() })
  t.equal((await registering.call('POST', '/users', undefined, NEWBIE)).statusCode, 200)
  t.ok(registering.lines.some(line => line.includes('verification code could not be written')))
})
