/**
 * The wiring: a Fastify host with jwt-login on the PostgreSQL adapters, and
 * the plugin's state (sessions, revocations, codes, counters) in the same
 * database through PostgresStore: no Redis needed, and every instance on the
 * database shares it. A host writes `import jwtLogin from 'fastify-jwt-login'` and
 * `import { PostgresStore } from 'fastify-jwt-login/postgres'`; this example imports
 * the plugin's source.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import jwtLogin, { type JwtLoginOptions, type StateStore } from '../../lib/index.js'
import { PostgresStore } from '../../lib/postgres.js'
import { stateTable } from './migrate.js'
import { PostgresPasskeyStore } from './passkeys.js'
import { PostgresTwoFactorStore } from './two-factor.js'
import { PostgresUserAdapter } from './users.js'

export interface PostgresApp {
  app: FastifyInstance
  users: PostgresUserAdapter
  twoFactor: PostgresTwoFactorStore
  passkeys: PostgresPasskeyStore
  store: StateStore
}

/**
 * `pool` is the host's own pool (the plugin never closes it); `schema` is
 * where migrate() put the tables. Without a `store` option the state goes to
 * a PostgresStore on the same pool (closed with the app; the pool stays
 * yours). Every other plugin option (settings, mailer, ...) passes through;
 * the mailer also sends email codes.
 */
export async function buildPostgresApp (pool: pg.Pool, schema: string, options: Omit<JwtLoginOptions, 'users' | 'twoFactor' | 'passkeys'>): Promise<PostgresApp> {
  const users = new PostgresUserAdapter(pool, schema)
  const twoFactor = new PostgresTwoFactorStore(pool, schema)
  const passkeys = new PostgresPasskeyStore(pool, schema)
  const store = options.store ?? new PostgresStore({ pool, table: stateTable(schema) })
  const app = Fastify()
  // a store the host passed is the host's to close; the one made here goes with the app
  if (options.store === undefined) app.addHook('onClose', async () => { await store.close?.() })
  await app.register(jwtLogin, { ...options, store, users, twoFactor: { port: twoFactor, mailer: options.mailer }, passkeys: { port: passkeys } })
  return { app, users, twoFactor, passkeys, store }
}
