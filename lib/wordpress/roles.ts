import { serialize, unserialize } from 'php-serialize'

/** The longest capabilities meta value read, in bytes: a real one names a few roles. */
export const MAX_CAPABILITIES_BYTES = 4096

/** The user level WordPress's own roles carry (their highest `level_N` capability); any other role is level 0. */
const ROLE_LEVELS: Readonly<Record<string, number>> = Object.freeze({
  administrator: 10,
  editor: 7,
  author: 2,
  contributor: 1
})

/** A key PHP stores as an integer: a numeric key is never a role name. */
const INTEGER_KEY = /^(?:0|-?[1-9][0-9]*)$/

/**
 * The roles in a user's capabilities meta (`<prefix>capabilities`), a PHP
 * serialised array of role name → flag. A role counts when its flag is true
 * as PHP reads it; `null` (no meta row) is no role. Anything but such an
 * array (a malformed or oversized value, an object, a scalar, a list, a
 * nested array) throws an Error that names the user and the meta key, never
 * the value.
 */
export function parseCapabilities (value: string | null, userId: number, metaKey: string): string[] {
  if (value === null) return []
  const refuse = (reason: string, cause?: unknown): Error =>
    new Error(`WordPress user ${userId}: the meta ${metaKey} ${reason}`, cause === undefined ? undefined : { cause })
  if (Buffer.byteLength(value) > MAX_CAPABILITIES_BYTES) throw refuse(`is longer than ${MAX_CAPABILITIES_BYTES} bytes`)
  let parsed: unknown
  try {
    // strict: an object of any class (O: or C:) throws instead of becoming an incomplete class
    parsed = unserialize(value, {}, { strict: true })
  } catch (error) {
    throw refuse('is not a valid PHP serialised value', error)
  }
  // an empty PHP array reads as an empty list: a user with no role here
  if (Array.isArray(parsed) && parsed.length === 0) return []
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.getPrototypeOf(parsed) !== Object.prototype) {
    throw refuse('is not a serialised array of role names')
  }
  const roles: string[] = []
  for (const [role, flag] of Object.entries(parsed)) {
    if (INTEGER_KEY.test(role)) throw refuse('has a key that is not a role name')
    if (typeof flag === 'object' && flag !== null) throw refuse('holds a nested value where a role\'s flag belongs')
    if (truthy(flag)) roles.push(role)
  }
  return roles
}

/** Whether PHP reads a scalar as true: not false, 0, 0.0, '', '0' or null. */
function truthy (flag: unknown): boolean {
  return flag !== false && flag !== 0 && flag !== 0n && flag !== '' && flag !== '0' && flag !== null
}

/** The capabilities meta value WordPress writes for `roles`: a serialised array of each role → true. */
export function serializeCapabilities (roles: readonly string[]): string {
  return serialize(Object.fromEntries(roles.map((role) => [role, true])))
}

/** The `<prefix>user_level` WordPress stores for a user with `roles`: the highest level among them, 0 for none. */
export function userLevel (roles: readonly string[]): number {
  return Math.max(0, ...roles.map((role) => ROLE_LEVELS[role] ?? 0))
}
