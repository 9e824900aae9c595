import { resolveSettings } from '../../lib/config/settings.js'
import { JwtLoginSettingsError } from '../../lib/core/errors.js'

/** The refusal of settings that must be refused; fails when they are accepted. */
export function settingsError (input: unknown): JwtLoginSettingsError {
  try {
    resolveSettings(input)
  } catch (error) {
    if (error instanceof JwtLoginSettingsError) return error
    throw error
  }
  throw new Error('the settings were accepted')
}
