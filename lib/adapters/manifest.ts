// What each host port must and may provide: one list, read by the conformance suites to skip what a port lacks and by registration to name what a setting needs.
import { JwtLoginSettingsError } from '../core/errors.js'
import { IDENTITY_METHODS } from './users.js'

/** An optional capability of a port: the methods (and flags) that make it, and the settings that need it. */
export interface Capability {
  /** Its name, as `supports` and the messages say it. */
  name: string
  /** The methods it takes, all of them. */
  methods: readonly string[]
  /** A property that must be `true` (the store's `ordered`). */
  flag?: string
  /**
   * The settings (slash paths, as errors name them) that refuse to start
   * without it; some only beside another (registration beside provider or
   * email sign-in needs `setEmailVerified`; sign-in by email needs
   * `setPassword` only of an adapter that records verification).
   */
  neededBy: readonly string[]
  /** The settings whose routes stay off without it (403 with the feature's code), on by default so that a port without it still starts. */
  gates?: readonly string[]
}

/** One port: its name, its required methods and its optional capabilities. */
export interface PortManifest {
  /** The port's interface, as the messages name it. */
  port: string
  /** The port as a sentence names it: `the user adapter`. */
  called: string
  required: readonly string[]
  optional: readonly Capability[]
}

const one = (name: string, neededBy: readonly string[] = []): Capability => ({ name, methods: [name], neededBy })

/** `UserAdapter`. */
export const USER_ADAPTER_MANIFEST: PortManifest = {
  port: 'UserAdapter',
  called: 'the user adapter',
  required: ['findByEmail', 'findByLogin', 'findById', 'verifyPassword', 'toPublicUser'],
  optional: [
    one('getPasswordHash', ['login/allowPasswordHash']),
    one('setPassword', ['resetPassword/enabled', 'account/password/enabled', 'emailSignIn/enabled']),
    one('createUser', ['users/register/enabled', 'emailSignIn/register', 'oauth/providers/<name>/autoRegister']),
    one('deleteUser', ['users/delete/enabled']),
    one('setEmailVerified', ['account/enabled', 'users/register/verifyEmail', 'authentication/requireVerifiedEmail', 'users/register/enabled']),
    one('setEmail', ['account/email/enabled']),
    one('rehashPassword'),
    one('passwordFingerprint'),
    one('hasPassword'),
    { name: 'identities', methods: IDENTITY_METHODS, neededBy: [], gates: ['account/identities/enabled'] }
  ]
}

/** `StateStore`. */
export const STATE_STORE_MANIFEST: PortManifest = {
  port: 'StateStore',
  called: 'the state store',
  required: ['get', 'set', 'consume', 'increment', 'compareAndSet', 'delete'],
  optional: [
    one('getMany'),
    one('readAndIncrement'),
    one('close'),
    one('attachLogger'),
    { name: 'ordered', methods: [], flag: 'ordered', neededBy: [] }
  ]
}

/** `TwoFactorPort`. */
export const TWO_FACTOR_PORT_MANIFEST: PortManifest = {
  port: 'TwoFactorPort',
  called: 'the two-factor port',
  required: ['methodOf', 'getTotpSecret', 'setTotpSecret', 'consumeBackupCode', 'replaceBackupCodes'],
  optional: [one('setMethod', ['account/twoFactor/enabled']), one('countBackupCodes')]
}

/** `PasskeyPort`: every method is required. */
export const PASSKEY_PORT_MANIFEST: PortManifest = {
  port: 'PasskeyPort',
  called: 'the passkey port',
  required: ['listByUser', 'findById', 'create', 'recordUse', 'rename', 'delete'],
  optional: []
}

/** `Mailer`. */
export const MAILER_MANIFEST: PortManifest = { port: 'Mailer', called: 'the mailer', required: ['send'], optional: [] }

/** The capability of the manifest with this name; throws for a name it does not have (a typo in the plugin). */
export function capabilityOf (manifest: PortManifest, name: string): Capability {
  const found = manifest.optional.find(capability => capability.name === name)
  if (found === undefined) throw new Error(`${manifest.port} has no capability ${name}`)
  return found
}

/** Whether the port provides the capability: every method a function, the flag `true`. */
export function provides (manifest: PortManifest, port: unknown, name: string): boolean {
  const capability = capabilityOf(manifest, name)
  const holder = (port ?? {}) as Record<string, unknown>
  return capability.methods.every(method => typeof holder[method] === 'function') && (capability.flag === undefined || holder[capability.flag] === true)
}

/** What the port provides of its manifest's capabilities, by name: the `supports` of the conformance suites. */
export function supportsOf (manifest: PortManifest, port: unknown): Record<string, boolean> {
  return Object.fromEntries(manifest.optional.map(capability => [capability.name, provides(manifest, port, capability.name)]))
}

/** The capability as a message names it: `deleteUser`, or `identities (findByIdentity, linkIdentity, …)`. */
export function describeCapability (manifest: PortManifest, name: string): string {
  const { methods, flag } = capabilityOf(manifest, name)
  if (flag !== undefined) return `\`${flag}: true\``
  return methods.length === 1 && methods[0] === name ? `\`${name}\`` : `${name} (${methods.map(method => `\`${method}\``).join(', ')})`
}

/** The methods of the port's optional capabilities, in the manifest's order. */
export function optionalMethods (manifest: PortManifest): string[] {
  return manifest.optional.flatMap(capability => capability.methods)
}

/** A setting's path as the manifest lists it: a provider's name becomes `<name>`. */
function listedAs (path: string): string {
  return path.replace(/^oauth\/providers\/[^/]+\//, 'oauth/providers/<name>/')
}

/**
 * Refuses the setting at `path` (on) when the port lacks the capability:
 * `what` (the feature, such as `deleting users`) needs it. The manifest must
 * list the setting under the capability, so the suites' skips and the
 * plugin's refusals name the same needs. `why` follows the reason.
 */
export function requireCapability (manifest: PortManifest, port: unknown, name: string, path: string, what: string, why?: string): void {
  const capability = capabilityOf(manifest, name)
  if (!capability.neededBy.includes(listedAs(path))) throw new Error(`the manifest of ${manifest.port} does not list ${path} under ${name}`)
  if (provides(manifest, port, name)) return
  const methods = capability.methods.join(', ')
  throw new JwtLoginSettingsError(path, `${what} needs ${manifest.called} to implement ${methods} (capability \`${name}\` of ${manifest.port}; docs/adapters.md)${why === undefined ? '' : `: ${why}`}`)
}
