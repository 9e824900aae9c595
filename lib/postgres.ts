/**
 * `fastify-jwt-login/postgres`: the state store on PostgreSQL (needs the optional
 * peer `pg`), and the SQL of its table for hosts that run their own
 * migrations.
 */
export { PostgresStore, type PostgresStoreOptions } from './store/postgres.js'
export { postgresSchemaSql } from './store/postgres-sql.js'
