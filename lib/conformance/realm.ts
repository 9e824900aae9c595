// What a port answered, made anew in the suite's realm before a deep comparison: jest runs each test file in a vm context of its own.
import { types } from 'node:util'

/**
 * `value` with every array, plain object and Date in it rebuilt in this
 * realm. Under jest, `structuredClone`, `Buffer` and node's own modules
 * make objects of the host's realm, and node:assert's deep equality tells
 * them apart from the suite's by their prototypes ("same structure but not
 * reference-equal"). Anything else (an instance of a class, a Map, a
 * string where a Date belongs) is left as it is, so it still differs.
 */
export function inSuiteRealm<T> (value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return Array.prototype.map.call(value, inSuiteRealm) as T
  if (types.isDate(value)) return new Date(Date.prototype.getTime.call(value)) as T
  if (!isPlainObject(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inSuiteRealm(inner)])) as T
}

/** An object made by `{}` in any realm: its prototype is a realm's `Object.prototype`. */
function isPlainObject (value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === null || Object.getPrototypeOf(prototype) !== null) return false
  const constructor = (prototype as { constructor?: unknown }).constructor
  return typeof constructor === 'function' && constructor.name === 'Object'
}
