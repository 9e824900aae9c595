// POST /users under races and look-alikes: a duplicate createUser reports is 409 / 38 (never 503), and an email that is not plain ASCII is 400 / 230.
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { UserExistsError, type NewUser, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { errorOf, PREFIX } from '../helpers/http.js'
import { buildDocumentedHost } from '../helpers/openapi.js'
import { assertNotLogged, collect, loggingHost, type LoggingHost } from '../helpers/users.js'

const PASSWORD = 'a long enough new password'
const on: Partial<SettingsInput> = { users: { register: { enabled: true, perIp: { max: 100 } } } }

interface Kit extends LoggingHost {
  users: MemoryUserAdapter
  register: (payload: Record<string, unknown>, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
}

async function buildKit (t: Test, users = new MemoryUserAdapter()): Promise<Kit> {
  const host = await loggingHost(t, users, on)
  const register = async (payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
    await host.app.inject({ method: 'POST', url: `${PREFIX}/users`, payload, headers })
  return { ...host, users, register }
}

const DEPENDENCY_FAILED = 'jwt-login: dependency failed'

t.test('four parallel registrations of one email: one 200, three 409 / 38; no dependency failure logged', async (t) => {
  const kit = await buildKit(t)
  const failed = collect(kit.app, 'user.register_failed')
  const answers = await Promise.all(Array.from({ length: 4 }, async () => await kit.register({ email: 'four@example.org', password: PASSWORD })))
  const outcomes = answers.map(res => errorOf(res)).sort()
  t.same(answers.filter(res => res.statusCode === 200).length, 1, JSON.stringify(outcomes))
  t.same(outcomes.filter(([status]) => status !== 200), [[409, 38], [409, 38], [409, 38]])
  t.strictSame(failed.map(event => event.reason), Array(3).fill('ERR_JWT_LOGIN_USER_EXISTS'))
  t.notOk(kit.lines.join('').includes(DEPENDENCY_FAILED), 'a duplicate is no failure of the adapter')
  t.equal((await kit.users.findByEmail('four@example.org'))?.ID, 1)
  t.equal(await kit.users.findById(2), null, 'one user')
  assertNotLogged(t, kit.lines, [PASSWORD, 'four@example.org'])
})

/** Reports every duplicate as an error of its own class with the documented code (a second copy of the package). */
class CodeOnlyDuplicates extends MemoryUserAdapter {
  override async createUser (input: NewUser): Promise<MemoryUser> {
    try {
      return await super.createUser(input)
    } catch (error) {
      if (!(error instanceof UserExistsError)) throw error
      throw Object.assign(new Error(`duplicate ${input.email}`), { code: 'ERR_JWT_LOGIN_USER_EXISTS' })
    }
  }
}

t.test('any error whose code is ERR_JWT_LOGIN_USER_EXISTS reports the duplicate: 409 / 38, nothing logged', async (t) => {
  const kit = await buildKit(t, new CodeOnlyDuplicates())
  const answers = await Promise.all(Array.from({ length: 4 }, async (_, i) => await kit.register({ email: 'code@example.org', password: PASSWORD, user_login: `code-${i}` })))
  t.same(answers.map(res => res.statusCode).sort(), [200, 409, 409, 409])
  t.notOk(kit.lines.join('').includes(DEPENDENCY_FAILED))
  assertNotLogged(t, kit.lines, ['code@example.org'])
})

/** A findByEmail that throws UserExistsError: outside createUser, the class means nothing to the plugin. */
class ConfusedFind extends MemoryUserAdapter {
  override async findByEmail (): Promise<MemoryUser | null> {
    throw new UserExistsError()
  }
}

t.test('UserExistsError from another method than createUser is the adapter failing: 503 / 201, logged', async (t) => {
  const kit = await buildKit(t, new ConfusedFind())
  t.same(errorOf(await kit.register({ email: 'confused@example.org', password: PASSWORD })), [503, 201])
  t.match(kit.lines.join(''), 'users.findByEmail failed: UserExistsError (ERR_JWT_LOGIN_USER_EXISTS)')
})

t.test('an email that is not plain ASCII, or whose domain is no valid ASCII host name, is 400 / 230 and blocks nobody', async (t) => {
  const kit = await buildKit(t)
  const failed = collect(kit.app, 'user.register_failed')
  const lookAlikes: Record<string, string> = {
    'a full-width v': '\uff56ictim@example.org',
    'the Kelvin sign for K': '\u212Aate@example.org',
    'a full-width letter in the domain': 'victim@\uff45xample.org',
    'a Unicode local part': 'jos\u00e9@example.org',
    'a Unicode domain (give its xn-- form)': 'victim@b\u00fccher.de',
    'a combining accent': 'victim\u0301@example.org',
    'a punycode label that does not decode': 'victim@xn--zz.org',
    'a percent-escape in the domain': 'victim@ex%61mple.org',
    'a hexadecimal IPv4 domain': 'victim@0x7f.1'
  }
  for (const [name, email] of Object.entries(lookAlikes)) {
    t.same(errorOf(await kit.register({ email, password: PASSWORD, user_login: 'mallory' })), [400, 230], name)
  }
  t.ok(failed.length === 9 && failed.every(event => event.reason === 'ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII' && event.errorCode === 230), 'user.register_failed each')
  t.equal(await kit.users.findByLogin('mallory'), null, 'nothing created')
  for (const email of ['victim@example.org', 'kate@example.org', 'victim@xn--bcher-kva.de', 'Victim@EXAMPLE.net']) {
    t.equal((await kit.register({ email, password: PASSWORD })).statusCode, 200, `${email} registers`)
  }
  const german = await kit.register({ email: '\uff56ictim@example.com', password: PASSWORD, user_login: 'mallory' }, { 'accept-language': 'de' })
  t.match(german.json().data, { errorCode: 230, message: /ASCII/, error_code: 230 }, 'in the request\'s language')
  t.not(german.json().data.message, 'The email must be written in ASCII, an internationalised domain in its xn-- form; letters that only look like ASCII ones are refused.')
})

t.test('the OpenAPI document lists 400 / 230 and 503 / 228 among POST /users answers', async (t) => {
  const app = await buildDocumentedHost({ openapi: { openapi: '3.0.3', info: { title: 'host', version: '1.0.0' } } })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> }
  const responses = doc.paths[`${PREFIX}/users`]?.post?.responses
  t.match(responses?.['400']?.description, '- `230` ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: ')
  t.match(responses?.['503']?.description, '- `228` ERR_JWT_LOGIN_BUSY: ')
})
