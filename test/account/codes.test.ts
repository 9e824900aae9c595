// The account's parts without Fastify: a code matched twice is spent once; the credential reset without passkeys or a port that can turn the second factor off; a mail whose code cannot be withdrawn.
import t from 'tap'
import { makeCode, matchCode, spendCode, writeCode } from '../../lib/account/codes.js'
import { resetCredentials } from '../../lib/account/credentials.js'
import { mailLater } from '../../lib/account/mail.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { collect, flowKit } from '../helpers/flows.js'
import { portWithout } from '../helpers/account.js'

t.test('of two requests that both matched a code, one spends it; the other answers 234', async (t) => {
  const kit = await flowKit()
  const call = kit.call()
  const issued = makeCode(kit.ctx, call, 'change', kit.aliceId, { userId: kit.aliceId, email: 'new@example.org' }, 60_000)
  await writeCode(kit.ctx, 'change', kit.aliceId, issued, 60_000)
  const [first, second] = await Promise.all([matchCode(kit.ctx, call, 'change', kit.aliceId, issued.code), matchCode(kit.ctx, call, 'change', kit.aliceId, issued.code)])
  t.equal((await spendCode(kit.ctx, first)).won, true)
  await t.rejects(spendCode(kit.ctx, second), { code: 'ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID' })
})

t.test('the credential reset without a passkey port, and with a two-factor port that cannot turn itself off', async (t) => {
  const port = new MemoryTwoFactorStore()
  const bare = portWithout(port, 'setMethod')
  const kit = await flowKit({}, { twoFactor: { port: bare } })
  port.enable(kit.aliceId, 'totp')
  await port.replaceBackupCodes(kit.aliceId, ['h1', 'h2'])
  const reset = collect(kit, 'account.credentials_reset')
  await resetCredentials(kit.ctx, kit.call(), kit.aliceId, await kit.users.findById(kit.aliceId), 'password_reset', false)
  t.strictSame(reset, [{ userId: kit.aliceId, passkeys: 0, secondFactor: true, reason: 'password_reset' }])
  t.equal(port.backupCodesLeft(kit.aliceId), 0, 'the backup codes went')
  t.equal(await port.methodOf(kit.aliceId), 'totp', 'without setMethod the method stays (the host\'s port cannot turn it off)')
  const none = await flowKit()
  const noneReset = collect(none, 'account.credentials_reset')
  await resetCredentials(none.ctx, none.call(), none.aliceId, await none.users.findById(none.aliceId), 'email_verified', false)
  t.strictSame(noneReset, [{ userId: none.aliceId, passkeys: 0, secondFactor: false, reason: 'email_verified' }], 'no two-factor and no passkey port: nothing ended, and the event says so')
})

t.test('the credential reset unlinks every provider account, and reports only the links it removed', async (t) => {
  const kit = await flowKit()
  const alice = await kit.users.findById(kit.aliceId)
  if (alice === null) throw new Error('no alice')
  await kit.users.linkIdentity(alice, 'gh', 'https://api.github.com/ 1', { display: 'alice-gh', linkedAt: 1 })
  await kit.users.linkIdentity(alice, 'dc', 'https://discord.com/ 2', { display: null, linkedAt: 2 })
  // another request removes the Discord link while the reset lists them: its removal answers false here
  const unlink = kit.users.unlinkIdentity.bind(kit.users)
  kit.users.unlinkIdentity = async (user, provider, subject) => provider === 'dc' ? false : await unlink(user, provider, subject)
  const unlinked = collect(kit, 'identity.unlinked')
  await resetCredentials(kit.ctx, kit.call(), kit.aliceId, alice, 'email_verified', false)
  t.same(await kit.users.listIdentities(alice), [{ provider: 'dc', subject: 'https://discord.com/ 2', display: null, linkedAt: 2 }], 'the GitHub link went (the stub kept Discord\'s)')
  t.strictSame(unlinked, [{ userId: kit.aliceId, ip: null, provider: 'gh', reason: 'credentials_reset' }], 'one event, for the link this reset removed')
})

t.test('the credential reset on an adapter that keeps no links touches no link', async (t) => {
  const kit = await flowKit()
  const alice = await kit.users.findById(kit.aliceId)
  if (alice === null) throw new Error('no alice')
  await kit.users.linkIdentity(alice, 'gh', 'https://api.github.com/ 1', { display: null, linkedAt: 1 })
  // the host's adapter without the link methods: the plugin reads none of them
  Object.defineProperty(kit.users, 'listIdentities', { value: undefined, configurable: true })
  const unlinked = collect(kit, 'identity.unlinked')
  await resetCredentials(kit.ctx, kit.call(), kit.aliceId, alice, 'password_reset', false)
  t.strictSame(unlinked, [])
  Object.defineProperty(kit.users, 'listIdentities', { value: undefined, configurable: true, writable: true })
  delete (kit.users as unknown as Record<string, unknown>).listIdentities
  t.equal((await kit.users.listIdentities(alice)).length, 1, 'the link is where it was')
})

t.test('a mail that is never sent, whose code cannot be withdrawn: both logged, without the code', async (t) => {
  const kit = await flowKit({ resetPassword: { mail: { retries: 0 } } }, { mailer: { send: async () => { throw new Error('smtp down') } } })
  const call = kit.call()
  const issued = makeCode(kit.ctx, call, 'verify', kit.aliceId, { userId: kit.aliceId, email: 'alice@example.com' }, 60_000)
  await writeCode(kit.ctx, 'verify', kit.aliceId, issued, 60_000)
  kit.store.compareAndSet = async () => { throw new Error('store down') }
  const failed = collect(kit, 'account.mail_failed')
  mailLater(kit.ctx, call, { name: 'verifyEmail', to: 'alice@example.com', userId: kit.aliceId, code: issued, values: { display_name: 'Alice', email: 'alice@example.com', expires_in_minutes: '1' } })
  for (let i = 0; i < 50 && failed.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(failed.length, 1)
  t.match(kit.log.map(line => line.message), ['jwt-login: an undelivered account code could not be withdrawn; it expires with its lifetime', 'jwt-login: an account mail could not be sent'])
  t.notOk(JSON.stringify(kit.log).includes(issued.code), 'no code in the log')
})

t.test('a spent code that cannot be given back is logged; a mail still retrying when the plugin closes gives up', async (t) => {
  const kit = await flowKit()
  const call = kit.call()
  const issued = makeCode(kit.ctx, call, 'change', kit.aliceId, { userId: kit.aliceId, email: 'new@example.org' }, 60_000)
  await writeCode(kit.ctx, 'change', kit.aliceId, issued, 60_000)
  const claim = await spendCode(kit.ctx, await matchCode(kit.ctx, call, 'change', kit.aliceId, issued.code))
  const compareAndSet = kit.store.compareAndSet.bind(kit.store)
  kit.store.compareAndSet = async () => { throw new Error('store down') }
  await claim.giveBack()
  kit.store.compareAndSet = compareAndSet
  t.match(kit.log.map(line => line.message), ['jwt-login: an account code could not be given back after a failure; the user needs a new one'])

  const closing = await flowKit({ resetPassword: { mail: { retries: 5, retryDelay: 60 } } }, { mailer: { send: async () => { throw new Error('smtp down') } } })
  const failed = collect(closing, 'account.mail_failed')
  mailLater(closing.ctx, closing.call(), { name: 'passwordChanged', to: 'alice@example.com', userId: closing.aliceId, values: { display_name: 'Alice', email: 'alice@example.com' } })
  await new Promise(resolve => setTimeout(resolve, 20))
  closing.ctx.reset.stop.abort()
  for (let i = 0; i < 50 && failed.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 10))
  t.strictSame(failed, [{ userId: closing.aliceId, mail: 'passwordChanged', attempts: 2 }], 'the close ends the wait: one more try, then it gives up')
})
