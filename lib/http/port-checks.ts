// The host's ports as registration checks them: every required method present, no optional one misspelt.
import type { HostPorts } from '../adapters/guard.js'
import type { TwoFactorOptions } from '../adapters/two-factor.js'
import { IDENTITY_METHODS } from '../adapters/users.js'
import { optionalMethods, PASSKEY_PORT_MANIFEST, STATE_STORE_MANIFEST, TWO_FACTOR_PORT_MANIFEST, USER_ADAPTER_MANIFEST } from '../adapters/manifest.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { nearestName } from '../core/names.js'
import type { StateStore } from '../store/types.js'

// The port manifests' lists (test/adapters/manifest.test.ts holds each to its interface).
const ADAPTER_METHODS = [...USER_ADAPTER_MANIFEST.required]
const OPTIONAL_ADAPTER_METHODS = optionalMethods(USER_ADAPTER_MANIFEST)
const STORE_METHODS = [...STATE_STORE_MANIFEST.required]
const OPTIONAL_STORE_METHODS = optionalMethods(STATE_STORE_MANIFEST)
/** The methods of `TwoFactorPort` the providers call. */
const PORT_METHODS = [...TWO_FACTOR_PORT_MANIFEST.required]
/** The optional methods of `TwoFactorPort`: the account's two-factor routes need them. */
const OPTIONAL_PORT_METHODS = optionalMethods(TWO_FACTOR_PORT_MANIFEST)
/** Every method of `PasskeyPort` (none is optional). */
const PASSKEY_PORT_METHODS = [...PASSKEY_PORT_MANIFEST.required]

/** A refusal of a plugin option (not a setting), naming its path. */
export function optionError (path: string, reason: string): JwtLoginSettingsError {
  return new JwtLoginSettingsError(path, reason, 'option')
}

/** Every method name of a port: its own and its classes' (not Object's), without calling a getter. */
function methodNames (value: unknown): string[] {
  const names = new Set<string>()
  let current: unknown = value
  while (current !== null && typeof current === 'object' && current !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(current)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(current, name)?.value === 'function') names.add(name)
    }
    current = Object.getPrototypeOf(current)
  }
  return [...names]
}

/**
 * A method of the port that looks like a misspelling of `method`, which it
 * lacks: within 2 edits and with the same first letter (`setPasword`,
 * `getmany`; not `setMany` for `getMany`, a different verb).
 */
function misspelling (present: readonly string[], method: string): string | undefined {
  return nearestName(method, present.filter(name => name[0]?.toLowerCase() === method[0]?.toLowerCase()))
}

/**
 * Refuses a port that lacks one of `methods`: the path names the first
 * missing method, the reason every one of them, and a method of the port
 * that looks like a misspelling of one.
 */
function requireMethods (value: unknown, path: string, what: string, methods: string[]): void {
  const holder = value !== null && typeof value === 'object' ? value as Record<string, unknown> : {}
  const missing = methods.filter(method => typeof holder[method] !== 'function')
  if (missing.length === 0) return
  const present = methodNames(value)
  const hints = missing.flatMap(method => {
    const near = misspelling(present, method)
    return near === undefined ? [] : [`\`${near}\` looks like a misspelling of \`${method}\``]
  })
  const nodemailer = missing.includes('send') && present.includes('sendMail') ? ['this looks like a nodemailer transport: pass new NodemailerMailer({ transport }) from fastify-jwt-login/nodemailer'] : []
  const advice = [...hints, ...nodemailer].map(hint => `; ${hint}`).join('')
  throw optionError(`${path}/${missing[0] as string}`, `${what} must implement ${methods.join(', ')}; missing: ${missing.join(', ')}${advice}`)
}

/**
 * Refuses a method of a port that looks like a misspelling of one of its
 * optional `methods` which it lacks (`createUsr` without `createUser`): the
 * plugin would run as if the feature were not there. Other extra methods
 * (a host's helpers) are the host's business.
 */
function refuseMisspelledOptional (value: object, path: string, what: string, methods: readonly string[]): void {
  const holder = value as Record<string, unknown>
  const present = methodNames(value).filter(name => !methods.includes(name))
  for (const method of methods) {
    if (typeof holder[method] === 'function') continue
    const near = misspelling(present, method)
    if (near !== undefined) {
      throw optionError(`${path}/${near}`, `is not a method of ${what}; did you mean \`${method}\`? (optional: ${methods.join(', ')})`)
    }
  }
}

/** The store's required methods; its optional ones, when present, must be methods, and not misspelt. */
function checkStore (store: StateStore): void {
  requireMethods(store, 'store', 'the state store (StateStore)', STORE_METHODS)
  for (const method of OPTIONAL_STORE_METHODS) {
    const value = (store as unknown as Record<string, unknown>)[method]
    if (value !== undefined && typeof value !== 'function') throw optionError(`store/${method}`, 'is optional, but when present must be a method')
  }
  refuseMisspelledOptional(store, 'store', 'the state store (StateStore)', OPTIONAL_STORE_METHODS)
  if (store.ordered !== undefined && typeof store.ordered !== 'boolean') throw optionError('store/ordered', 'is optional, but when present must be true or false')
}

/** The two-factor option: its port complete, its mailer (when given) able to send. */
function checkTwoFactor (twoFactor: TwoFactorOptions): void {
  if (twoFactor === null || typeof twoFactor !== 'object') throw optionError('twoFactor', 'must be an object with a port')
  requireMethods(twoFactor.port, 'twoFactor/port', 'the two-factor port (TwoFactorPort)', PORT_METHODS)
  refuseMisspelledOptional(twoFactor.port, 'twoFactor/port', 'the two-factor port (TwoFactorPort)', OPTIONAL_PORT_METHODS)
  if (twoFactor.mailer !== undefined) requireMethods(twoFactor.mailer, 'twoFactor/mailer', 'the mailer', ['send'])
}

/** The ports among the options: the user adapter, the store, the mailers, the two-factor and passkey ports. */
export function checkPorts (options: HostPorts & { store?: StateStore }): void {
  requireMethods(options.users, 'users', 'the user adapter (UserAdapter)', ADAPTER_METHODS)
  refuseMisspelledOptional(options.users, 'users', 'the user adapter (UserAdapter)', OPTIONAL_ADAPTER_METHODS)
  // identity links come as one: a sign-in that could look links up but not make them would match by email forever
  if (IDENTITY_METHODS.some(method => typeof (options.users as unknown as Record<string, unknown>)[method] === 'function')) {
    requireMethods(options.users, 'users', 'a user adapter that keeps identity links', [...IDENTITY_METHODS])
  }
  if (options.store !== undefined) checkStore(options.store)
  if (options.mailer !== undefined) requireMethods(options.mailer, 'mailer', 'the mailer', ['send'])
  if (options.twoFactor !== undefined) checkTwoFactor(options.twoFactor)
  if (options.passkeys !== undefined) {
    if (options.passkeys === null || typeof options.passkeys !== 'object') throw optionError('passkeys', 'must be an object with a port')
    requireMethods(options.passkeys.port, 'passkeys/port', 'the passkey port (PasskeyPort)', PASSKEY_PORT_METHODS)
  }
}
