// Provider auto-registration under races: a duplicate createUser reports makes the sign-in look the email up again and sign that user in; look-alike emails are not registered.
import t from 'tap'
import { UserExistsError, type NewUser } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { buildOAuthApp, collect, errorOf, postToken, providers, TOKEN_URL } from '../helpers/oauth.js'
import { buildDocumentedHost } from '../helpers/openapi.js'
import { ACCOUNTS, CLIENTS, startIdp } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

const autoRegister = providers(idp, { idp1: { autoRegister: true } })

/** The memory adapter, counting what createUser was asked and how it ended. */
class CountingUsers extends MemoryUserAdapter {
  created = 0
  duplicates = 0
  override async createUser (input: NewUser): Promise<MemoryUser> {
    try {
      const user = await super.createUser(input)
      this.created++
      return user
    } catch (error) {
      if (error instanceof UserExistsError) this.duplicates++
      throw error
    }
  }
}

/** A distinct ID token for `email` (each its own `jti`, so none is a replay of another). */
async function idTokenFor (email: string, n: number, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: `acct-${email}`, email, email_verified: true, iat: now, exp: now + 600, jti: `race-${n}`, ...extra })
}

t.test('ten parallel first sign-ins of one new email through the provider\'s code flow: all 200, one user', async (t) => {
  const users = new CountingUsers()
  const { app } = await buildOAuthApp(autoRegister, {}, { users })
  t.teardown(() => app.close())
  const registered = collect(app, 'oauth.user_registered')
  const codes = await Promise.all(Array.from({ length: 10 }, async () => await idp.code({ account: ACCOUNTS.bob })))
  const answers = await Promise.all(codes.map(async ({ code }) => await postToken(app, { provider: 'idp1', code })))
  t.same(answers.map(res => res.statusCode), Array(10).fill(200), JSON.stringify(answers.map(res => errorOf(res))))
  const bob = await users.findByEmail(ACCOUNTS.bob.email) as MemoryUser
  t.ok(answers.every(res => res.json().data.user.ID === bob.ID), 'every answer is the one user')
  t.equal(users.created, 1, 'one user created')
  t.equal(registered.length, 1, 'one oauth.user_registered')
})

t.test('ten parallel first sign-ins with ID tokens: the losers of createUser look the email up again and sign in', async (t) => {
  const users = new CountingUsers()
  const { app } = await buildOAuthApp(autoRegister, {}, { users })
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const tokens = await Promise.all(Array.from({ length: 10 }, async (_, n) => await idTokenFor('newcomer@example.com', n)))
  const answers = await Promise.all(tokens.map(async (token) => await postToken(app, { provider: 'idp1', id_token: token })))
  t.same(answers.map(res => res.statusCode), Array(10).fill(200), JSON.stringify(answers.map(res => errorOf(res))))
  t.equal(new Set(answers.map(res => res.json().data.user.ID)).size, 1, 'one user in every answer')
  t.equal(users.created, 1)
  t.ok(users.duplicates >= 1, `the race was run: ${users.duplicates} createUser calls were told the email is taken`)
  t.strictSame(failed, [])
})

/** Reports a duplicate on the first `taken` creates (a login another email took meanwhile), then creates. */
class LoginTakenOnce extends MemoryUserAdapter {
  calls: string[] = []
  taken = 1
  override async createUser (input: NewUser): Promise<MemoryUser> {
    this.calls.push(input.login)
    if (this.calls.length <= this.taken) throw new UserExistsError()
    return await super.createUser(input)
  }
}

t.test('a duplicate createUser reports while the email is still not found (the login was taken): created again, at most three times, then 409 / 38', async (t) => {
  const users = new LoginTakenOnce()
  const { app } = await buildOAuthApp(autoRegister, {}, { users })
  t.teardown(() => app.close())
  const res = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('second@example.com', 1) })
  t.equal(res.statusCode, 200, JSON.stringify(errorOf(res)))
  t.same(users.calls, ['second', 'second'], 'the second attempt succeeded')

  users.calls = []
  users.taken = 3
  const failed = collect(app, 'oauth.failed')
  const refused = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('third@example.com', 2) })
  t.same(errorOf(refused), [409, 38], 'an adapter that keeps saying taken')
  t.equal(users.calls.length, 3, 'three attempts')
  t.equal(await users.findByEmail('third@example.com'), null)
  t.strictSame(failed, [{ ip: '127.0.0.1', provider: 'idp1', reason: 'ERR_JWT_LOGIN_USER_EXISTS', errorCode: 38 }])
  const retry = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('third@example.com', 2) })
  t.equal(retry.statusCode, 200, 'the ID token was given back: its retry signs in once the adapter creates')
})

t.test('a provider email that is not plain ASCII is not auto-registered (400 / 230); a look-alike of an account is refused as before (403 / 211)', async (t) => {
  const users = new CountingUsers()
  await users.addUser({ login: 'kate', email: 'kate@example.com', password: 'kate\'s own password' })
  const { app } = await buildOAuthApp(autoRegister, {}, { users })
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  const fullWidth = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('\uff56ictim@example.com', 1) })
  t.same(errorOf(fullWidth), [400, 230], 'a full-width v')
  t.equal(failed[0]?.reason, 'ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await idTokenFor('jos\u00e9@example.com', 2) })), [400, 230], 'a Unicode local part')
  t.equal(users.created, 0, 'nothing created')
  const real = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('victim@example.com', 3) })
  t.equal(real.statusCode, 200, 'the real address registers')
  // the memory adapter folds the Kelvin sign to k (toLowerCase), so kate's account is found, and its email is another
  const kelvin = await postToken(app, { provider: 'idp1', id_token: await idTokenFor('\u212Aate@example.com', 4) })
  t.same(errorOf(kelvin), [403, 211])
})

t.test('the OpenAPI document lists 400 / 230 and 409 / 38 among the provider sign-in\'s answers', async (t) => {
  const app = await buildDocumentedHost({ openapi: { openapi: '3.0.3', info: { title: 'host', version: '1.0.0' } } })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> }
  for (const method of ['get', 'post']) {
    const responses = doc.paths[TOKEN_URL]?.[method]?.responses
    t.match(responses?.['400']?.description, '- `230` ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: ', method)
    t.match(responses?.['409']?.description, '- `38` ERR_JWT_LOGIN_USER_EXISTS: ', method)
  }
})
