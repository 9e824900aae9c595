import t from 'tap'
import { type UserAdapter } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { uniqueLogin } from '../../lib/services/unique-login.js'
import { ALICE } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, startIdp } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

function claims (overrides: Record<string, unknown>): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return { iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: 'acct-x', email_verified: true, iat: now, exp: now + 600, ...overrides }
}

t.test('no matching user and auto-registration off: 404 / 74, nothing created', async (t) => {
  const { app, users } = await buildOAuthApp(providers(idp))
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.bob })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [404, 74])
  t.equal(await users.findByEmail(ACCOUNTS.bob.email), null)
})

t.test('auto-registration creates the user with the default role, once', async (t) => {
  const { app, users } = await buildOAuthApp(providers(idp, { idp1: { autoRegister: true, defaultRole: 'author' } }))
  t.teardown(() => app.close())
  const registered = collect(app, 'oauth.user_registered')
  const { code } = await idp.code({ account: ACCOUNTS.bob })
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200)
  const bob = await users.findByEmail(ACCOUNTS.bob.email) as MemoryUser
  t.same(bob.roles, ['author'])
  t.same(res.json().data.user, { ID: bob.ID, user_login: 'bob', user_email: ACCOUNTS.bob.email, display_name: ACCOUNTS.bob.name })
  t.same(registered, [{ userId: bob.ID, ip: '127.0.0.1', provider: 'idp1' }])
  t.equal(await users.verifyPassword(bob, ''), false, 'no usable password')

  const again = await idp.code({ account: ACCOUNTS.bob })
  t.equal((await postToken(app, { provider: 'idp1', code: again.code })).json().data.user.ID, bob.ID, 'the second sign-in matches the same user')
  t.equal(registered.length, 1)
})

t.test('the login comes from the email, made unique', async (t) => {
  const { app, users } = await buildOAuthApp(providers(idp, { idp1: { autoRegister: true } }))
  t.teardown(() => app.close())
  await users.addUser({ login: 'carol.smith', email: 'someone@example.com', password: 'irrelevant-password' })
  const { code } = await idp.code({ account: ACCOUNTS.carol })
  const res = await postToken(app, { provider: 'idp1', code })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.user.user_login, 'carol.smith2', 'local part without the +tag, a number when taken')

  const nameless = await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({ email: '+tag@example.com' })) })
  t.equal(nameless.json().data.user.user_login, 'user', 'an empty local part becomes "user"')
  t.equal(nameless.json().data.user.display_name, 'user', 'no name claim: the login is the display name')
})

t.test('a login taken twenty times gets a random suffix', async (t) => {
  const everyLoginTaken = { findByLogin: async (login: string) => /^dave\d*$/.test(login) ? {} : null } as unknown as UserAdapter
  t.match(await uniqueLogin(everyLoginTaken, 'dave@example.com'), /^dave-[0-9a-f]{12}$/)
})

t.test('an unverified email is refused unless allowed', async (t) => {
  const { app, users } = await buildOAuthApp(providers(idp, { idp1: { autoRegister: true }, idp2: { autoRegister: true, allowUnverifiedEmail: true } }))
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const { code } = await idp.code({ account: ACCOUNTS.eve })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [403, 111])
  t.equal(await users.findByEmail(ACCOUNTS.eve.email), null, 'nothing created')
  t.equal(failed[0]?.reason, 'ERR_JWT_LOGIN_EMAIL_UNVERIFIED')

  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({ email: 'x@example.com', email_verified: undefined })) })), [403, 111], 'no email_verified claim')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({ email: undefined })) })), [403, 111], 'no email at all')
  t.equal((await postToken(app, { provider: 'idp1', id_token: await idp.sign(claims({ email: 'apple@example.com', email_verified: 'true' })) })).statusCode, 200, 'the string "true" (Apple) counts')

  const eve = await idp.code({ client: CLIENTS.idp2, account: ACCOUNTS.eve })
  t.equal((await postToken(app, { provider: 'idp2', code: eve.code })).statusCode, 200, 'allowUnverifiedEmail lets it match')
})

t.test('no way to create users: refused at registration, 500 / 52 if it goes later; an adapter whose createUser throws: 503 / 201', async (t) => {
  class NoCreate extends MemoryUserAdapter {}
  Object.defineProperty(NoCreate.prototype, 'createUser', { value: undefined })
  await t.rejects(buildOAuthApp(providers(idp, { idp1: { autoRegister: true } }), {}, { users: new NoCreate() }), {
    path: 'oauth/providers/idp1/autoRegister', message: /needs the user adapter to implement createUser/
  }, 'auto-registration without createUser is refused at registration')
  // an adapter that loses the method after registration still fails closed
  const users = new MemoryUserAdapter()
  const without = await buildOAuthApp(providers(idp, { idp1: { autoRegister: true } }), {}, { users })
  t.teardown(() => without.app.close())
  Object.defineProperty(users, 'createUser', { value: undefined })
  const a = await idp.code({ account: ACCOUNTS.bob })
  t.same(errorOf(await postToken(without.app, { provider: 'idp1', code: a.code })), [500, 52], 'an adapter without createUser')

  const failing = new MemoryUserAdapter()
  failing.createUser = async () => { throw new Error('host database refused') }
  const throwing = await buildOAuthApp(providers(idp, { idp1: { autoRegister: true } }), {}, { users: failing })
  t.teardown(() => throwing.app.close())
  const failed = collect(throwing.app, 'oauth.failed')
  const b = await idp.code({ account: ACCOUNTS.bob })
  const res = await postToken(throwing.app, { provider: 'idp1', code: b.code })
  t.same(errorOf(res), [503, 201], 'an unavailable dependency, not a 500')
  t.equal(failed[0]?.errorCode, 201)
})

t.test('a user store that fails answers 503 and reports the failure', async (t) => {
  const broken = new MemoryUserAdapter()
  await broken.addUser(ALICE)
  broken.findByEmail = async () => { throw new Error('user database down') }
  const { app } = await buildOAuthApp(providers(idp), {}, { users: broken })
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [503, 201])
  t.same(failed, [{ ip: '127.0.0.1', provider: 'idp1', reason: 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', errorCode: 201 }])
})
