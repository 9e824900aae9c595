/** What the settings schema decides alone: whether a value fits it, and the resolved shape of one that does. */
import { FormatRegistry, KindGuard, type TObject, type TSchema, type TUnion } from '@sinclair/typebox'
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value'
import { DURATION_PATTERN, SettingsSchema, type Duration, type SettingsInput } from '../../schemas/settings.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { nearestName } from '../core/names.js'
import { DURATION_HINT, durationAt } from './duration.js'

if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)))
}

/** A settings value is a duration when its type admits both a number of seconds and a string. */
type IsDuration<V> = Duration extends NonNullable<V> ? true : false

/** The names of a group's durations. */
type DurationKeys<T> = { [K in keyof T]-?: IsDuration<T[K]> extends true ? K : never }[keyof T]

/** A group is an object of named settings; a record (the OAuth providers) is no group. */
type IsGroup<V> = V extends Record<string, unknown> ? (string extends keyof V ? false : true) : false

/** One object type from an intersection of them. */
type Flat<T> = { [K in keyof T]: T[K] }

/**
 * A settings group of the schema after defaults, the shape `resolveGroups`
 * makes: every field typed present (each optional one has a default, but
 * for `authCodes.requireFor.oauth`, which `resolveSettings` fills), groups
 * resolved in turn, and each duration renamed `<name>Ms`, a number of
 * milliseconds. Arrays and records keep their element types.
 */
export type Resolved<T> = Flat<{
  [K in Exclude<keyof T, DurationKeys<T>>]-?: IsGroup<NonNullable<T[K]>> extends true ? Resolved<NonNullable<T[K]>> : NonNullable<T[K]>
} & {
  [K in `${DurationKeys<T> & string}Ms`]: number
}>

/** Whether a value is a plain object: the settings and each of their groups must be. */
export function isGroup (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * Refuses a value that does not fit the settings schema (defaults applied),
 * naming the first bad field: `JwtLoginSettingsError`.
 */
export function checkSchema (value: unknown): asserts value is SettingsInput {
  const first = Value.Errors(SettingsSchema, value).First()
  if (first !== undefined) throw new JwtLoginSettingsError(first.path.slice(1), reasonFor(first))
}

/** The one signing key every setup needs, for the refusal of an empty `tokens.keys`. */
const KEYS_REASON = "needs at least one signing key, such as [{ kid: 'k1', secret: <32 or more random bytes> }] (docs/settings.md#tokens)"

/**
 * A sentence for the validator's errors a person meets most: an unknown
 * key with the setting it is near (`enabeld`: did you mean `enabled`?), no
 * signing key, an origin with a path or a trailing slash, a union.
 */
function reasonFor (error: ValueError): string {
  const path = error.path.slice(1)
  // a record (the OAuth providers) refuses a name that is not one: no setting to suggest
  if (error.type === ValueErrorType.ObjectAdditionalProperties && KindGuard.IsObject(error.schema)) {
    const name = path.slice(path.lastIndexOf('/') + 1)
    const near = nearestName(name, Object.keys(error.schema.properties))
    return `is not a setting${near === undefined ? '' : `; did you mean \`${near}\`?`} (the settings are listed in docs/settings.md)`
  }
  if (error.type === ValueErrorType.ArrayMinItems && path === 'tokens/keys') return KEYS_REASON
  if (error.type === ValueErrorType.StringPattern && /^(cors|passkeys)\/origins\/\d+$/.test(path)) return originReason(error.value as string)
  return unionReason(error.schema) ?? error.message
}

/**
 * Why an origin is not one as browsers send it in `Origin` (scheme, host
 * and a port other than the default; no path, no trailing slash, lower
 * case), with the origin it should be when it has one.
 */
export function originReason (origin: string): string {
  let parsed: string | null = null
  try { parsed = new URL(origin).origin } catch {}
  const fix = parsed === null || parsed === 'null' ? '' : ` (${parsed})`
  return `must be an origin as browsers send it${fix}: scheme, host and port, no path and no trailing slash`
}

/**
 * TypeBox says "Expected union value" for a union: for a list of constants
 * (`tokens/algorithm`, an OAuth `preset`) the reason lists them, for a
 * duration it says what a duration looks like.
 */
function unionReason (schema: TSchema): string | null {
  if (!KindGuard.IsUnion(schema)) return null
  const members = schema.anyOf
  if (members.some(isDurationString)) {
    return `must be a duration: ${DURATION_HINT}${members.some(member => member.const === 0) ? ', or 0 for none' : ''}`
  }
  // the schema's other unions are lists of constants
  return `must be one of ${members.map(member => String(member.const)).join(', ')}`
}

/** Whether a member of a union is the duration string. */
function isDurationString (schema: TSchema): boolean {
  return schema.pattern === DURATION_PATTERN
}

/**
 * The settings walked along their schema: each group resolved in turn, each
 * duration turned into `<name>Ms`. Throws `JwtLoginSettingsError` naming a
 * duration the schema admits but that is none (`'0s'`).
 */
export function resolveGroups (settings: SettingsInput): Resolved<SettingsInput> {
  // the walk builds, field by field, the shape that Resolved computes from the same schema
  return resolveGroup(SettingsSchema, settings, '') as Resolved<SettingsInput>
}

/** One group: `path` names it for refusals ('' at the root, else ending in '/'). */
function resolveGroup (schema: TObject, group: Record<string, unknown>, path: string): Record<string, unknown> {
  const resolved: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(schema.properties)) {
    const value = group[key]
    // the schema's pattern admits zero ('0s'); toMs refuses it, and the refusal must name the field
    if (isDuration(member, value)) resolved[`${key}Ms`] = durationAt(value, path + key, 'setting', (member as TUnion).anyOf.some((m: TSchema) => m.const === 0))
    else if (KindGuard.IsObject(member) && isGroup(value)) resolved[key] = resolveGroup(member, value, `${path}${key}/`)
    else if (value !== undefined) resolved[key] = value
  }
  return resolved
}

/** Whether a checked value is a duration: its schema a union with the duration string among its members. */
function isDuration (schema: TSchema, value: unknown): value is Duration {
  return KindGuard.IsUnion(schema) && schema.anyOf.some(isDurationString) && (typeof value === 'number' || typeof value === 'string')
}
