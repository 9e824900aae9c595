// No account pre-hijack: an address registered by someone who never proved it is refused to its owner's provider sign-in, and the owner's reset by mailed code leaves the registrant nothing.
import t from 'tap'
import { codeIn, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { MailBox } from '../helpers/mail-box.js'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp } from '../helpers/passkeys.js'
import { postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { registrationRefusal } from '../helpers/app.js'
import { MemoryUserAdapter } from '../../lib/testing.js'

const idp = await startIdp()
t.teardown(() => idp.close())

const ATTACKER_PASSWORD = 'the registrant chose this one'

t.test('registrant enrols a passkey; the owner\'s provider sign-in is refused (403 / 232); the owner\'s reset ends the registrant\'s password and passkey', async (t) => {
  const mail = new MailBox()
  const kit = await buildPasskeyApp({
    settings: { users: { register: { enabled: true } }, resetPassword: { enabled: true }, oauth: { providers: providers(idp, { idp1: { autoRegister: true } }) } },
    plugin: { mailer: mail }
  })
  t.teardown(() => kit.app.close())
  const victim = ACCOUNTS.carol.email
  const registered = await kit.post('/users', { email: victim, password: ATTACKER_PASSWORD, user_login: 'squatter' })
  t.equal(registered.statusCode, 200, registered.body)
  const attackerToken = await kit.token({ email: victim, password: ATTACKER_PASSWORD })
  const device = authenticator()
  t.equal((await kit.enrol(attackerToken, device)).statusCode, 200, 'the registrant enrols a passkey')

  const { code } = await idp.code({ account: ACCOUNTS.carol })
  t.same(errorOf(await postToken(kit.app, { provider: 'idp1', code })), [403, 232], 'the owner\'s provider sign-in does not land in that account')

  kit.clock.advance(1000)
  await kit.post('/user/reset_password', { email: victim })
  const resetCode = codeIn((await mail.next()).text)
  const reset = await kit.app.inject({ method: 'PUT', url: RESET_URL, payload: { email: victim, code: resetCode, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200, reset.body)

  t.same(errorOf(await kit.login({ email: victim, password: ATTACKER_PASSWORD })), [401, 48], 'the registrant\'s password no longer signs in')
  t.same(errorOf(await kit.signIn(device)), [401, 216], 'nor the registrant\'s passkey')
  t.equal((await kit.passkeys.listByUser(3)).length, 0, 'the passkey is gone')
  t.same(errorOf(await kit.app.inject({ method: 'GET', url: '/jwt-login/v1/passkeys', headers: { authorization: `Bearer ${attackerToken}` } })), [401, 55], 'nor the registrant\'s session')
  const again = await idp.code({ account: ACCOUNTS.carol })
  t.equal((await postToken(kit.app, { provider: 'idp1', code: again.code })).statusCode, 200, 'the reset proved the address: the provider signs the owner in')
})

t.test('registration beside a provider on an adapter that cannot record verification is refused at registration, naming the fix', async (t) => {
  const users = new MemoryUserAdapter() as unknown as Record<string, unknown>
  const adapter = Object.create(users, { setEmailVerified: { value: undefined } })
  const refusal = await registrationRefusal({
    users: adapter,
    settings: { tokens: { keys: [{ kid: 'k1', secret: 'test-secret-that-is-at-least-32-bytes-long!' }] }, users: { register: { enabled: true } }, oauth: { providers: providers(idp) } }
  })
  t.equal(refusal.path, 'users/register/enabled')
  t.match(refusal.message, 'setEmailVerified')
})
