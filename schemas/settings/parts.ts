// The pieces every settings group is made of: durations, flags, groups, limits, URLs.
import { Type, type Static } from '@sinclair/typebox'

/** The pattern of a duration string; resolution tells a duration from other settings by it. */
export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d|w|y|msecs?|milliseconds?|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|weeks?|years?)?\\s*$'

/** A duration: seconds as a number, or an `ms`-style string such as `'15m'`, `'14d'`. */
export const DurationSchema = Type.Union([
  Type.Number({ exclusiveMinimum: 0 }),
  Type.String({ pattern: DURATION_PATTERN })
])
export type Duration = Static<typeof DurationSchema>
export const DurationOr = (fallback: string) => Type.Optional(Type.Union(DurationSchema.anyOf, { default: fallback }))
/** A language tag as catalogues are named: `de`, `pt-BR`. */
export const LANGUAGE_TAG_PATTERN = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$'
export const Flag = (fallback: boolean) => Type.Optional(Type.Boolean({ default: fallback }))
export const Group = <T extends Parameters<typeof Type.Object>[0]>(properties: T) =>
  Type.Optional(Type.Object(properties, { additionalProperties: false, default: {} }))

export const Limit = (max: number, window: string) => Group({
  max: Type.Optional(Type.Integer({ minimum: 1, default: max })),
  window: DurationOr(window)
})

export const HttpUrl = Type.String({ pattern: '^https?://', maxLength: 2048 })
