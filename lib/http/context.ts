// Builds the one context of the flows at registration: every service over the store, the clock and the host's ports.
import type { FastifyBaseLogger } from 'fastify'
import { guardPorts, type HostPorts } from '../adapters/guard.js'
import { hashPassword, verifyPasswordHash } from '../adapters/users.js'
import type { Settings } from '../config/settings.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Clock } from '../core/clock.js'
import { OAuthRegistry } from '../oauth/providers/registry.js'
import { countedGate } from '../sessions/sign-in.js'
import { CodeHasher } from '../services/code-hash.js'
import { JwtLoginEvents } from '../services/events.js'
import { AttemptLimiter } from '../services/limits.js'
import { boundUsers, processPasswordWork } from '../services/password-work.js'
import { cacheUsers, type UserCacheLimits } from '../services/user-cache.js'
import type { StateStore } from '../store/types.js'
import { buildKeyMaterial } from '../tokens/keys.js'
import { TokenService } from '../tokens/service.js'
import { secondFactorGate } from '../two-factor/gate.js'
import { createTwoFactor } from '../two-factor/methods/service.js'
import { Passkeys } from '../webauthn/ceremonies.js'
import type { Messages } from '../i18n/messages.js'
import { withoutTelemetry, type Telemetry } from '../telemetry/telemetry.js'

/** What the context is built on besides the host's ports. */
export interface ContextParts {
  log: FastifyBaseLogger
  /** The `userCache` option resolved, or `null` when it is off. */
  cacheLimits: UserCacheLimits | null
  /** The settings at registration: the signing keys and the algorithm come from them. */
  initial: Settings
  /** The settings in force, read by the password hashing's bound at each hash (default: `initial`). */
  current?: () => Settings
  store: StateStore
  clock: Clock
  /** The texts of every language, the host's `messages` laid over the shipped ones. */
  messages: Messages
  /** Default: none (direct flow tests). */
  telemetry?: Telemetry
}

/**
 * The one context of the flows, frozen: every service, the two-factor module
 * when the host gave its port. The host's ports are guarded first (the user
 * cache in front of the guard), so what a port throws reaches the log redacted.
 * Password hashing is bounded in front of both (`passwordHashing` settings):
 * a known user's check and an unknown user's decoy queue and are refused
 * alike, so a busy answer says nothing about accounts.
 */
export async function buildContext (hostPorts: HostPorts, { log, cacheLimits, initial, current = () => initial, store, clock, messages, telemetry = withoutTelemetry() }: ContextParts): Promise<JwtLoginContext> {
  const dummyHash = await hashPassword(`jwt-login-dummy-${Math.random()}`)
  const ports = guardPorts(hostPorts, telemetry)
  const cache = cacheLimits === null ? null : cacheUsers(ports.users, cacheLimits, clock)
  const hashing = processPasswordWork.under(() => current().passwordHashing)
  const tokens = new TokenService(buildKeyMaterial(initial.tokens), initial.tokens.algorithm, store, clock)
  const events = new JwtLoginEvents()
  if (telemetry.available) events.observe((event, payload) => { telemetry.observe(event, payload) })
  const base = {
    users: boundUsers(cache ?? ports.users, hashing),
    hostUsers: ports.users,
    forgetUser: cache === null ? () => {} : cache.forget,
    store,
    tokens,
    limiter: new AttemptLimiter(store, clock, (key) => { telemetry.lockout(key) }),
    sessions: tokens.sessions,
    events,
    clock,
    log,
    spendPasswordTime: async (password: string) => { await hashing(async () => await verifyPasswordHash(dummyHash, password), 'sign-in') },
    // a new TOTP secret: no device trusted under the old one skips the new one
    twoFactor: ports.twoFactor === undefined
      ? null
      : createTwoFactor(store, clock, ports.twoFactor, async (userId) => {
        await tokens.devices.forgetAll(userId)
        events.emit('device.forgotten', { userId, deviceId: null, reason: 'second_factor_changed' })
      }),
    // keyed hashes: a copy of the store alone does not let anyone search the code space offline
    reset: { mailer: ports.mailer ?? null, policy: ports.passwordPolicy ?? null, hasher: new CodeHasher('reset code'), stop: new AbortController() },
    oauth: new OAuthRegistry(clock),
    passkeys: ports.passkeys === undefined ? null : new Passkeys(ports.passkeys.port, store, clock, events, log),
    messages,
    telemetry
  }
  const hostGate = ports.secondFactor === undefined ? null : countedGate(base, ports.secondFactor)
  const secondFactor = base.twoFactor === null ? hostGate : secondFactorGate(base, base.twoFactor)
  return Object.freeze({ ...base, secondFactor })
}
