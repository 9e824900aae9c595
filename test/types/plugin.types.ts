// Type tests of `fastify.register(jwtLogin, options)` and of the options, as a
// host's TypeScript sees them through `import jwtLogin from 'fastify-jwt-login'`.
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { MemoryStore, type JwtLoginOptions, type Mailer, type PasswordPolicy, type PublicUser, type SettingsInput, type SettingsSource, type UserAdapter, type UserCacheOptions } from '../../lib/index.js'
import { ConsoleMailer, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { expectType, type Equal } from './expect.js'

declare const fastify: FastifyInstance
declare const users: UserAdapter<{ id: number }>

const settings: SettingsInput = { tokens: { keys: [{ kid: 'k1', secret: 'a-secret-of-at-least-thirty-two-bytes' }] } }

// the least a host passes: settings and users
await fastify.register(jwtLogin, { settings, users })

// every option, with the in-memory ports of fastify-jwt-login/testing
const options: JwtLoginOptions = {
  settings: async () => settings,
  settingsTtl: '30s',
  users: new MemoryUserAdapter(),
  userCache: { ttl: '10s', max: 1000 },
  store: new MemoryStore(),
  prefix: '/auth/v1',
  restRoute: false,
  multipart: true,
  clock: () => Date.now(),
  startDegraded: true,
  mailer: new ConsoleMailer(),
  passwordPolicy: (password, user) => password !== user.user_login,
  twoFactor: { port: new MemoryTwoFactorStore(), mailer: new ConsoleMailer(), issuer: 'Example' },
  secondFactor: async () => null
}
await Fastify().register(jwtLogin, options)

// the register options of Fastify mix with the plugin's
await fastify.register(jwtLogin, { settings, users, logLevel: 'warn' })

// @ts-expect-error: users is required
await fastify.register(jwtLogin, { settings })

// @ts-expect-error: settings is required
await fastify.register(jwtLogin, { users })

// @ts-expect-error: the prefix is a string
await fastify.register(jwtLogin, { settings, users, prefix: 1 })

// @ts-expect-error: the store is a StateStore, not a name
await fastify.register(jwtLogin, { settings, users, store: 'redis' })

// @ts-expect-error: the store lacks every method but get
await fastify.register(jwtLogin, { settings, users, store: { get: async () => null } })

// @ts-expect-error: userCache.ttl is seconds or a duration string
await fastify.register(jwtLogin, { settings, users, userCache: { ttl: true } })

// @ts-expect-error: userCache needs a ttl
await fastify.register(jwtLogin, { settings, users, userCache: { max: 10 } })

// @ts-expect-error: the mailer must send
await fastify.register(jwtLogin, { settings, users, mailer: {} })

// @ts-expect-error: the user adapter lacks toPublicUser and more
await fastify.register(jwtLogin, { settings, users: { findById: async () => null } })

// @ts-expect-error: startDegraded is a boolean
await fastify.register(jwtLogin, { settings, users, startDegraded: 'yes' })

// @ts-expect-error: an unknown option
await fastify.register(jwtLogin, { settings, users, prefx: '/auth' })

// the option types themselves
expectType<Equal<SettingsSource, () => Promise<SettingsInput>>>(true)
expectType<Equal<JwtLoginOptions['settings'], SettingsInput | SettingsSource>>(true)
expectType<Equal<Parameters<PasswordPolicy>, [password: string, user: PublicUser]>>(true)
expectType<Equal<UserCacheOptions, { ttl: number | string, max?: number }>>(true)
expectType<Mailer | undefined>(options.mailer)
