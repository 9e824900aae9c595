/** Durations, from the settings and the plugin options, in milliseconds. */
import { parse } from '@lukeed/ms'
import type { Duration } from '../../schemas/settings.js'
import { JwtLoginSettingsError } from '../core/errors.js'

/** What a duration may be, for refusals that name one. */
export const DURATION_HINT = "seconds as a number above 0, or a string such as '30s', '15m', '14d'"

/** Seconds (a number) or an `ms`-style string (`'15m'`, `'14d'`) to milliseconds. */
export function toMs (duration: Duration): number {
  if (typeof duration === 'number') return Math.round(duration * 1000)
  const ms = parse(duration.trim())
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) {
    throw new TypeError(`invalid duration: ${JSON.stringify(duration)}`)
  }
  return ms
}

/**
 * A duration in ms, or a refusal that names the field (a setting, or a
 * plugin option). A number of seconds under half a millisecond rounds to 0
 * and is refused: only the number 0 itself means none.
 */
export function durationAt (value: Duration, path: string, kind: 'setting' | 'option' = 'setting', zeroMeansNone = false): number {
  let ms: number
  try {
    ms = toMs(value)
  } catch (error) {
    if (typeof value === 'string' && Number.parseFloat(value) === 0) {
      throw new JwtLoginSettingsError(path, `${JSON.stringify(value)} is zero: a duration is ${DURATION_HINT}${zeroMeansNone ? ' (the number 0 turns it off)' : ''}`, kind)
    }
    // toMs throws TypeErrors only: its own for a zero or unreadable duration, the runtime's for a value of another type
    throw new JwtLoginSettingsError(path, (error as Error).message, kind)
  }
  if (ms === 0 && value !== 0) throw new JwtLoginSettingsError(path, `invalid duration: ${JSON.stringify(value)} rounds to 0 ms`, kind)
  return ms
}
