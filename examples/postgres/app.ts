/**
 * The wiring: a Fastify host with jwt-login on the PostgreSQL adapters.
 * A host writes `import jwtLogin from 'jwt-login'`; this example imports the
 * plugin's source.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import jwtLogin, { type JwtLoginOptions } from '../../lib/index.js'
import { PostgresTwoFactorStore } from './two-factor.js'
import { PostgresUserAdapter } from './users.js'

export interface PostgresApp {
  app: FastifyInstance
  users: PostgresUserAdapter
  twoFactor: PostgresTwoFactorStore
}

/**
 * `pool` is the host's own pool (the plugin never closes it); `schema` is
 * where migrate() put the tables. Every other plugin option (settings,
 * mailer, store, ...) passes through; the mailer also sends email codes.
 */
export async function buildPostgresApp (pool: pg.Pool, schema: string, options: Omit<JwtLoginOptions, 'users' | 'twoFactor'>): Promise<PostgresApp> {
  const users = new PostgresUserAdapter(pool, schema)
  const twoFactor = new PostgresTwoFactorStore(pool, schema)
  const app = Fastify()
  await app.register(jwtLogin, { ...options, users, twoFactor: { port: twoFactor, mailer: options.mailer } })
  return { app, users, twoFactor }
}
