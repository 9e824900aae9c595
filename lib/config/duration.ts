import { parse } from '@lukeed/ms'
import type { Duration } from '../../schemas/settings.js'

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
