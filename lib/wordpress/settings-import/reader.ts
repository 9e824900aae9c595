// What every part of the Simple JWT Login import shares: the result's types, the reader of one export, the readings of its values.
import type { SettingsInput } from '../../../schemas/settings.js'
import { isGroup } from '../../config/from-schema.js'
import type { SettingsExport } from './export.js'

/** A Simple JWT Login setting that was not carried over. */
export interface LeftBehind {
  /**
   * The Simple JWT Login key (dotted path in the v2 layout, the flat key in
   * v1); `tokens.keys` when no signing key came over.
   */
  setting: string
  /** Why it was not carried over, in one sentence. */
  reason: string
}

/** jwt-login settings read from a Simple JWT Login export, and what stayed behind. */
export interface ImportedSettings {
  /**
   * The settings. When no usable signing key came over, `tokens.keys` is
   * absent (and `leftBehind` has an entry for `tokens.keys`): add the keys
   * before passing these settings to the plugin.
   */
  settings: SettingsInput
  leftBehind: LeftBehind[]
}

export type Tokens = SettingsInput['tokens']
export type Key = Tokens['keys'][number]
export type AuthCodes = NonNullable<SettingsInput['authCodes']>
export type AuthCode = NonNullable<AuthCodes['codes']>[number]
export type Users = NonNullable<SettingsInput['users']>
export type Register = NonNullable<Users['register']>

/** One import's reading of the export: the values it reads, and what stays behind. */
export class Reader {
  readonly from: SettingsExport
  readonly left: LeftBehind[] = []

  constructor (from: SettingsExport) {
    this.from = from
  }

  leave (path: string, reason: string): void {
    this.left.push({ setting: this.from.name(path), reason })
  }

  on (path: string): boolean {
    return isOn(this.from.value(path))
  }

  /** A flag Simple JWT Login reads as on when the export does not have it. */
  onUnlessOff (path: string): boolean {
    return this.flag(path, true)
  }

  /** A flag, or what Simple JWT Login made of it when the export does not have it. */
  flag (path: string, absent: boolean): boolean {
    const value = this.from.value(path)
    return value === undefined ? absent : isOn(value)
  }

  /** A lifetime in minutes (Simple JWT Login's unit) as a duration. */
  minutes (path: string): string | undefined {
    const value = this.from.value(path)
    if (value === undefined) return undefined
    const minutes = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
    if (typeof minutes === 'number' && Number.isInteger(minutes) && minutes > 0) return `${minutes}m`
    this.leave(path, 'is not a whole number of minutes above 0, so jwt-login keeps its default lifetime')
    return undefined
  }
}

/** PHP's `!empty()`: what Simple JWT Login reads as on. */
export function isOn (value: unknown): boolean {
  if (isGroup(value)) return Object.keys(value).length > 0
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '' && value !== '0'
}

/** Whether a value holds something: text other than blanks, or a list with such text. */
export function filled (value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== ''
  if (Array.isArray(value)) return value.some(filled)
  return isOn(value)
}

/** A string with more than blanks, else `undefined`. */
export function text (value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}
