// Type tests of the ports a host implements (`UserAdapter`, `TwoFactorPort`,
// `Mailer`, `StateStore`) and of the implementations the package ships in its
// subpath entries: fastify-jwt-login/testing, fastify-jwt-login/redis, fastify-jwt-login/postgres and
// fastify-jwt-login/nodemailer. The classes that must not compile are exported only
// so that none lies unused.
import type { Pool } from 'pg'
import type { Transporter } from 'nodemailer'
import { MemoryStore, type AtomicBatch, type MailMessage, type Mailer, type NewProviderUser, type PublicUser, type StateStore, type StoreLogger, type TwoFactorMethod, type TwoFactorPort, type UserAdapter } from '../../lib/index.js'
import { NodemailerMailer, SMTP_TIMEOUTS, type NodemailerMailerOptions } from '../../lib/nodemailer.js'
import { PostgresStore, postgresSchemaSql, type PostgresStoreOptions } from '../../lib/postgres.js'
import { RedisStore, type RedisStoreOptions } from '../../lib/redis.js'
import { ConsoleMailer, MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser, type NewMemoryUser } from '../../lib/testing.js'
import { expectType, type Equal } from './expect.js'

/** A host's own user record: the adapter is generic over it. */
interface HostUser { id: number, login: string, email: string, hash: string }

declare const row: HostUser

/** A complete user adapter, the optional methods included. */
class HostUsers implements UserAdapter<HostUser> {
  async findByEmail (email: string): Promise<HostUser | null> { return email === row.email ? row : null }
  async findByLogin (login: string): Promise<HostUser | null> { return login === row.login ? row : null }
  async findById (id: number): Promise<HostUser | null> { return id === row.id ? row : null }
  async verifyPassword (user: HostUser, password: string): Promise<boolean> { return user.hash === password }
  async getPasswordHash (user: HostUser): Promise<string | null> { return user.hash }
  toPublicUser (user: HostUser): PublicUser { return { ID: user.id, user_login: user.login, user_email: user.email, display_name: user.login, roles: [] } }
  async setPassword (user: HostUser, newPassword: string): Promise<void> { user.hash = newPassword }
  async createUser (input: NewProviderUser): Promise<HostUser> { return { id: 2, login: input.login, email: input.email, hash: '' } }
}
expectType<UserAdapter<HostUser>>(new HostUsers())
expectType<Equal<NewProviderUser, { email: string, login: string, displayName: string, role: string, password?: string, emailVerified?: boolean }>>(true)

// @ts-expect-error: an adapter without toPublicUser
export class UsersWithoutPublicView implements UserAdapter<HostUser> {
  async findByEmail (): Promise<HostUser | null> { return null }
  async findByLogin (): Promise<HostUser | null> { return null }
  async findById (): Promise<HostUser | null> { return null }
  async verifyPassword (): Promise<boolean> { return false }
}

// @ts-expect-error: find* resolve the record (or null), not a public user
expectType<UserAdapter<HostUser>['findById']>(async (): Promise<PublicUser | null> => null)

/** A complete two-factor port. */
class HostTwoFactor implements TwoFactorPort<HostUser> {
  async methodOf (userId: number, user: HostUser): Promise<TwoFactorMethod | null> { return user.id === userId ? 'totp' : null }
  async getTotpSecret (): Promise<string | null> { return null }
  async setTotpSecret (): Promise<void> {}
  async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> { return `${userId}${codeHash}` === claim }
  async replaceBackupCodes (): Promise<void> {}
}
expectType<TwoFactorPort<HostUser>>(new HostTwoFactor())
expectType<Equal<TwoFactorMethod, 'totp' | 'email' | 'backup_codes' | 'passkey'>>(true)

// @ts-expect-error: a port without consumeBackupCode
export class TwoFactorWithoutBackupCodes implements TwoFactorPort {
  async methodOf (): Promise<TwoFactorMethod | null> { return null }
  async getTotpSecret (): Promise<string | null> { return null }
  async setTotpSecret (): Promise<void> {}
  async replaceBackupCodes (): Promise<void> {}
}

// @ts-expect-error: no such method
expectType<TwoFactorPort['methodOf']>(async (): Promise<'sms'> => 'sms')

/** A mailer. */
class HostMailer implements Mailer {
  readonly sent: MailMessage[] = []
  async send (message: MailMessage): Promise<void> { this.sent.push(message) }
}
expectType<Mailer>(new HostMailer())
expectType<Equal<MailMessage, { to: string, subject: string, text: string, html?: string }>>(true)

// @ts-expect-error: a mailer must send
export class SilentMailer implements Mailer {}

// @ts-expect-error: send takes a message, not an address
expectType<Mailer['send']>(async (to: number): Promise<void> => { expectType<number>(to) })

/** A state store with only its required methods. */
class HostStore implements StateStore {
  readonly #values = new Map<string, string>()
  async get (key: string): Promise<string | null> { return this.#values.get(key) ?? null }
  async set (key: string, value: string): Promise<void> { this.#values.set(key, value) }
  async consume (key: string): Promise<string | null> { const value = this.#values.get(key) ?? null; this.#values.delete(key); return value }
  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> { return { count: key.length, ttlMs } }
  async compareAndSet (key: string, expected: string | null, value: string): Promise<boolean> { return expected === null && key !== value }
  async delete (key: string): Promise<void> { this.#values.delete(key) }
}
expectType<StateStore>(new HostStore())
// the optional methods, typed when present
expectType<Equal<StateStore['getMany'], ((keys: readonly string[]) => Promise<Array<string | null>>) | undefined>>(true)
expectType<Equal<StateStore['close'], (() => Promise<void>) | undefined>>(true)
expectType<Equal<StateStore['attachLogger'], ((log: StoreLogger) => void) | undefined>>(true)
// the atomic batch, a capability beside the port: the plugin's stores have it
expectType<AtomicBatch>(new MemoryStore())
expectType<Equal<Awaited<ReturnType<AtomicBatch['readAndIncrement']>>, { values: Array<string | null>, counts: Array<{ count: number, ttlMs: number } | null> }>>(true)

// @ts-expect-error: a store without compareAndSet
export class StoreWithoutCompareAndSet implements StateStore {
  async get (): Promise<string | null> { return null }
  async set (): Promise<void> {}
  async consume (): Promise<string | null> { return null }
  async increment (): Promise<{ count: number, ttlMs: number }> { return { count: 1, ttlMs: 1 } }
  async delete (): Promise<void> {}
}

// @ts-expect-error: increment answers the count and the time left
expectType<StateStore['increment']>(async (): Promise<number> => 1)

// the package's stores are StateStores
expectType<StateStore>(new MemoryStore({ clock: () => 0 }))
expectType<StateStore>(new RedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'app:', waitForReplicas: { replicas: 1 } }))
expectType<StateStore>(new RedisStore())
expectType<StateStore>(new PostgresStore({ connectionString: 'postgres://127.0.0.1/app', table: 'auth.state' }))
declare const pool: Pool
expectType<PostgresStore>(new PostgresStore({ pool, preparedStatements: false }))
expectType<Promise<void>>(new PostgresStore({ pool }).migrate())
expectType<string>(postgresSchemaSql('auth.state'))
expectType<Equal<RedisStoreOptions['log'], StoreLogger | undefined>>(true)
expectType<Equal<PostgresStoreOptions['log'], StoreLogger | undefined>>(true)

// @ts-expect-error: the Redis key prefix is a string
expectType<RedisStore>(new RedisStore({ prefix: 1 }))

// @ts-expect-error: a pg Pool, not a connection string
expectType<PostgresStore>(new PostgresStore({ pool: 'postgres://127.0.0.1/app' }))

// the nodemailer mailer: SMTP options or a transport
declare const transport: Transporter
expectType<Mailer>(new NodemailerMailer({ from: 'no-reply@example.com', smtp: { host: 'smtp.example.com', port: 587 } }))
expectType<Mailer>(new NodemailerMailer({ from: 'no-reply@example.com', transport }))
expectType<number>(SMTP_TIMEOUTS.socketTimeout)
expectType<Equal<NodemailerMailerOptions['from'], string>>(true)

// @ts-expect-error: the sender is required
expectType<Mailer>(new NodemailerMailer({ transport }))

// the in-memory ports of fastify-jwt-login/testing
const memoryUsers = new MemoryUserAdapter()
expectType<UserAdapter<MemoryUser>>(memoryUsers)
expectType<Promise<MemoryUser>>(memoryUsers.addUser({ login: 'ada', email: 'ada@example.com', password: 'a long password' }))
expectType<NewMemoryUser>({ login: 'ada', email: 'ada@example.com', password: 'a long password', displayName: 'Ada', roles: ['admin'] })
const memoryTwoFactor = new MemoryTwoFactorStore()
expectType<TwoFactorPort>(memoryTwoFactor)
memoryTwoFactor.enable(1, 'totp')
expectType<Mailer>(new ConsoleMailer())
expectType<Mailer>(new ConsoleMailer(line => { expectType<string>(line) }))

// @ts-expect-error: a memory user needs a password
expectType<Promise<MemoryUser>>(memoryUsers.addUser({ login: 'ada', email: 'ada@example.com' }))

// @ts-expect-error: no such two-factor method
memoryTwoFactor.enable(1, 'sms')
