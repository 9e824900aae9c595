// Issue 24: no silent mistakes in the options. Unknown top-level options are refused with a suggestion,
// misspelt optional methods of the ports are refused, a second registration in one scope gets our own error.
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import t, { type Test } from 'tap'
import jwtLogin, { JwtLoginSettingsError, MemoryStore, type JwtLoginOptions } from '../../lib/index.js'
import { OPTION_NAMES } from '../../lib/http/options.js'
import { editDistance, nearestName } from '../../lib/core/names.js'
import { ConsoleMailer, MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET, registrationRefusal } from '../helpers/app.js'
import { readPage } from '../helpers/markdown.js'
import { adapterWithout } from '../helpers/users.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

/** The error registration (and ready) rejects with; fails the test when it resolves. */
const refusal = registrationRefusal

/** Registers and readies an app with `options` over the least ones; closed at teardown. */
async function accepted (t: Test, options: Record<string, unknown>): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS }, ...options } as JwtLoginOptions)
  await app.ready()
  return app
}

t.test('editDistance: insertions, deletions, substitutions and a swap of neighbours are one edit each; case is ignored', async (t) => {
  t.equal(editDistance('prefx', 'prefix'), 1)
  t.equal(editDistance('userCahce', 'userCache'), 1, 'a swap')
  t.equal(editDistance('PREFIX', 'prefix'), 0, 'case')
  t.equal(editDistance('stroe', 'store'), 1)
  t.equal(editDistance('usr', 'users'), 2)
  t.equal(editDistance('', 'abc'), 3)
  t.equal(editDistance('settings', 'settings'), 0)
  t.equal(editDistance('ca', 'abc'), 3, 'optimal string alignment: no edit of a swapped pair')
  t.equal(nearestName('prefx', OPTION_NAMES), 'prefix')
  t.equal(nearestName('Users', OPTION_NAMES), 'users', 'a case-insensitive match')
  t.equal(nearestName('database', OPTION_NAMES), undefined, 'nothing within 2 edits')
  t.equal(nearestName('users', OPTION_NAMES), undefined, 'the name itself is not a suggestion')
})

t.test('an unknown top-level option is refused, naming it and the option it is near', async (t) => {
  const prefix = await refusal({ prefx: '/auth' })
  t.equal(prefix.path, 'prefx')
  t.equal(prefix.message, 'jwt-login: invalid option prefx: not an option of jwt-login: `prefx` (did you mean `prefix`?). The options are listed in docs/settings.md#options')
  t.match(await refusal({ userCahce: { ttl: 10 } }), { path: 'userCahce', message: /did you mean `userCache`\?/ })
  t.match(await refusal({ Store: new MemoryStore() }), { path: 'Store', message: /did you mean `store`\?/ }, 'a case-insensitive match')
  t.match(await refusal({ restRoutes: false }), { path: 'restRoutes', message: /did you mean `restRoute`\?/ })
  t.match(await refusal({ database: 'x' }), { path: 'database', message: /not an option of jwt-login: `database`\. The options/ }, 'nothing near: no suggestion')
  const two = await refusal({ prefx: '/a', clok: () => 0 })
  t.equal(two.path, 'prefx', 'the first unknown one in the path')
  t.match(two.message, '`prefx` (did you mean `prefix`?), `clok` (did you mean `clock`?)', 'each one in the reason')
  // refused before the ports are looked at: a typo of `users` is named as such
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(jwtLogin, { user: new MemoryUserAdapter(), settings: { tokens: TOKENS } } as never) }, { name: 'JwtLoginSettingsError', path: 'user', message: /did you mean `users`\?/ })
})

t.test('names brought from elsewhere get advice: secret and keys from @fastify/jwt, a setting beside settings', async (t) => {
  const secret = await refusal({ secret: HS_SECRET })
  t.equal(secret.path, 'secret')
  t.match(secret.message, '`secret` (jwt-login takes its keys from settings.tokens.keys (docs/settings.md#tokens))')
  t.match(await refusal({ algorithm: 'RS256' }), { message: /settings\.tokens\.algorithm/ })
  t.match(await refusal({ expiresIn: '1h' }), { message: /settings\.tokens\.lifetime/ })
  t.match(await refusal({ sign: { expiresIn: '1h' } }), { message: /signing is set by settings\.tokens/ })
  const setting = await refusal({ refresh: { enabled: true } })
  t.equal(setting.path, 'refresh')
  t.match(setting.message, '`refresh` is a setting: put it inside `settings` (docs/settings.md#settings)')
  t.match(await refusal({ tokens: TOKENS }), { path: 'tokens', message: /is a setting: put it inside `settings`/ })
})

t.test('Fastify hands its register options to the plugin; those it defines are accepted', async (t) => {
  // what a plugin wrapped in fastify-plugin receives: everything the host passed, Fastify's own options included
  const seen: Array<Record<string, unknown>> = []
  const probe = Fastify()
  t.teardown(() => probe.close())
  await probe.register(fp(async (_instance, options: Record<string, unknown>) => { seen.push({ ...options }) }, { name: 'probe' }), { own: 1, prefix: '/p', logLevel: 'warn', logSerializers: {} } as never)
  await probe.register(fp(async (_instance, options: Record<string, unknown>) => { seen.push({ ...options }) }, { name: 'bare' }))
  t.same(seen, [{ own: 1, prefix: '/p', logLevel: 'warn', logSerializers: {} }, {}], 'nothing stripped, nothing added')

  const app = await accepted(t, { prefix: '/auth/v1', logLevel: 'warn', logSerializers: {} })
  t.equal((await app.inject({ method: 'POST', url: '/auth/v1/auth', payload: {} })).statusCode, 400, 'the plugin runs under the prefix')
})

t.test('the option names: one list with every option of the type, and docs/settings.md lists each', async (t) => {
  t.ok(Object.isFrozen(OPTION_NAMES))
  for (const name of ['users', 'settings', 'store', 'userCache', 'prefix', 'startDegraded', 'messages', 'passkeys', 'clock']) t.ok(OPTION_NAMES.includes(name), name)
  const page = readPage('docs/settings.md')
  const section = page.slice(page.indexOf('## Options'), page.indexOf('## Settings'))
  const documented = [...section.matchAll(/^\| `(\w+)` \|/gm)].map(match => match[1])
  // `messages` is documented with the message catalogues, by their own change
  t.same(documented.filter(name => !OPTION_NAMES.includes(name as string)), [], 'no documented option that is not one')
  t.same(OPTION_NAMES.filter(name => name !== 'messages' && !documented.includes(name)), [], 'every option documented')
  const readme = readPage('README.md')
  t.ok(readme.includes('`startDegraded`'), 'the README lists startDegraded')
})

t.test('startDegraded must be a boolean', async (t) => {
  t.match(await refusal({ startDegraded: 'yes' }), { path: 'startDegraded', message: 'jwt-login: invalid option startDegraded: must be true or false' })
  await accepted(t, { startDegraded: false })
})

t.test('a user adapter method that looks like a misspelt optional method is refused with the method it is near', async (t) => {
  const cases: Array<[string, string]> = [['setPasword', 'setPassword'], ['createUsr', 'createUser'], ['getPaswordHash', 'getPasswordHash'], ['deleteUsr', 'deleteUser'], ['SetPassword', 'setPassword'], ['rehashPasword', 'rehashPassword'], ['passwordFingerprnt', 'passwordFingerprint']]
  for (const [typo, method] of cases) {
    class Adapter extends MemoryUserAdapter {}
    Object.defineProperty(Adapter.prototype, method, { value: undefined })
    Object.defineProperty(Adapter.prototype, typo, { value: async () => {} })
    const error = await refusal({ users: new Adapter() })
    t.equal(error.path, `users/${typo}`, typo)
    t.equal(error.message, `jwt-login: invalid option users/${typo}: is not a method of the user adapter (UserAdapter); did you mean \`${method}\`? (optional: getPasswordHash, setPassword, createUser, deleteUser, setEmailVerified, setEmail, rehashPassword, passwordFingerprint, hasPassword, findByIdentity, linkIdentity, listIdentities, unlinkIdentity)`, typo)
  }
  // on a plain object too
  const users = new MemoryUserAdapter()
  const plain = { ...adapterWithout(users, 'createUser'), createUsers: async () => {} }
  t.match(await refusal({ users: plain }), { path: 'users/createUsers', message: /did you mean `createUser`\?/ })
})

t.test('a host\'s own helpers on its adapter are left alone', async (t) => {
  class Adapter extends MemoryUserAdapter {
    async setPasswords (): Promise<void> {}
    async countUsers (): Promise<number> { return 0 }
    async resetPassword (): Promise<void> {}
  }
  // setPasswords is near setPassword, but the adapter has setPassword: nothing is missing
  await accepted(t, { users: new Adapter() })
  class WithoutCreate extends MemoryUserAdapter {
    async updateUser (): Promise<void> {}
  }
  Object.defineProperty(WithoutCreate.prototype, 'createUser', { value: undefined })
  await accepted(t, { users: new WithoutCreate() })
})

t.test('a store method that looks like a misspelt optional one is refused; a different verb is not', async (t) => {
  const memory = new MemoryStore()
  t.teardown(() => memory.close())
  const base = {
    get: memory.get.bind(memory),
    set: memory.set.bind(memory),
    consume: memory.consume.bind(memory),
    increment: memory.increment.bind(memory),
    compareAndSet: memory.compareAndSet.bind(memory),
    delete: memory.delete.bind(memory)
  }
  t.match(await refusal({ store: { ...base, getmany: async () => [] } }), { path: 'store/getmany', message: 'invalid option store/getmany: is not a method of the state store (StateStore); did you mean `getMany`? (optional: getMany, readAndIncrement, close, attachLogger)' })
  t.match(await refusal({ store: { ...base, readAndIncremnt: async () => ({ values: [], counts: [] }) } }), { path: 'store/readAndIncremnt', message: /did you mean `readAndIncrement`\?/ })
  t.match(await refusal({ store: { ...base, attachLoger: () => {} } }), { path: 'store/attachLoger', message: /did you mean `attachLogger`\?/ })
  t.match(await refusal({ store: { ...base, clsoe: async () => {} } }), { path: 'store/clsoe', message: /did you mean `close`\?/ })
  t.match(await refusal({ store: { ...base, ordered: 'yes' } }), { path: 'store/ordered', message: /must be true or false/ })
  await accepted(t, { store: { ...base, setMany: async () => {}, flush: async () => {} } })
})

t.test('a port missing a required method names a present method that looks like its misspelling', async (t) => {
  const port = new MemoryTwoFactorStore()
  const { methodOf, ...rest } = { methodOf: port.methodOf.bind(port), getTotpSecret: port.getTotpSecret.bind(port), setTotpSecret: port.setTotpSecret.bind(port), consumeBackupCode: port.consumeBackupCode.bind(port), replaceBackupCodes: port.replaceBackupCodes.bind(port) }
  const twoFactor = await refusal({ twoFactor: { port: { ...rest, methodof: methodOf } } })
  t.equal(twoFactor.path, 'twoFactor/port/methodOf')
  t.match(twoFactor.message, 'missing: methodOf; `methodof` looks like a misspelling of `methodOf`')

  const passkeys = new MemoryPasskeyStore()
  const passkeyPort = { listByUser: passkeys.listByUser.bind(passkeys), findById: passkeys.findById.bind(passkeys), create: passkeys.create.bind(passkeys), recordUse: passkeys.recordUse.bind(passkeys), rename: passkeys.rename.bind(passkeys), remove: passkeys.delete.bind(passkeys) }
  t.match(await refusal({ passkeys: { port: passkeyPort } }), { path: 'passkeys/port/delete', message: /missing: delete$/ }, 'no hint when nothing is near')

  t.match(await refusal({ mailer: { sendMail: async () => ({}) } }), { path: 'mailer/send', message: /missing: send; this looks like a nodemailer transport: pass new NodemailerMailer\(\{ transport \}\) from fastify-jwt-login\/nodemailer/ })
  t.match(await refusal({ mailer: { snd: async () => {} } }), { path: 'mailer/send', message: /`snd` looks like a misspelling of `send`/ })
  await accepted(t, { mailer: new ConsoleMailer(() => {}) })
})

t.test('a second registration in one scope is refused with our own error, saying how to run two', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  const error = await app.register(jwtLogin, { users: new MemoryUserAdapter(), prefix: '/other/v1', restRoute: false, settings: { tokens: TOKENS } }).then(() => null, (error: unknown) => error)
  t.ok(error instanceof JwtLoginSettingsError, 'not FST_ERR_DEC_ALREADY_PRESENT')
  t.equal((error as JwtLoginSettingsError).path, '')
  t.match((error as JwtLoginSettingsError).message, /^jwt-login: invalid option \(root\): jwt-login is already registered in this scope \(fastify\.jwtLogin exists\)/)
  t.match((error as JwtLoginSettingsError).message, 'register each in its own encapsulated plugin')
  t.match((error as JwtLoginSettingsError).message, 'restRoute: false on all but one')
  t.match((error as JwtLoginSettingsError).message, /see docs\/deployment\.md#two-instances-in-one-host$/)
  t.match(readPage('docs/deployment.md'), /^## Two instances in one host$/m, 'the section the message points to')

  // in a child scope of an instance's scope too (the parent's decorator is seen there)
  const nested = Fastify()
  t.teardown(() => nested.close())
  await nested.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: TOKENS } })
  nested.register(async (scope) => { await scope.register(jwtLogin, { users: new MemoryUserAdapter(), prefix: '/b', restRoute: false, settings: { tokens: TOKENS } }) })
  await t.rejects(async () => { await nested.ready() }, { name: 'JwtLoginSettingsError', path: '' })
})
