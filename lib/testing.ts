/**
 * `fastify-jwt-login/testing`: in-memory ports for demos, tests and as worked
 * examples for adapter authors. Not for production: nothing here survives
 * a restart or is shared between processes.
 */
export { MemoryUserAdapter, type MemoryUser, type NewMemoryUser } from './testing/memory-users.js'
export { MemoryTwoFactorStore } from './testing/memory-two-factor.js'
export { MemoryPasskeyStore } from './testing/memory-passkeys.js'
export { ConsoleMailer } from './testing/console-mailer.js'
