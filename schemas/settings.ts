// The settings schema: every group, assembled from schemas/settings/ in the order the docs list them.
import { Type, type Static } from '@sinclair/typebox'
import { ACCESS_SETTINGS, SESSION_SETTINGS } from './settings/access.js'
import { ACCOUNT_SETTINGS } from './settings/account.js'
import { API_KEY_SETTINGS } from './settings/api-keys.js'
import { EMAIL_SIGN_IN_SETTINGS } from './settings/email-sign-in.js'
import { SELF_SERVICE_SETTINGS } from './settings/self-service.js'
import { TELEMETRY_SETTINGS } from './settings/telemetry.js'
import { TokensSchema } from './settings/tokens.js'
import { WEB_SETTINGS } from './settings/web.js'

export { DURATION_PATTERN, DurationSchema, type Duration } from './settings/parts.js'
export { AlgorithmSchema, KeySchema, type Algorithm } from './settings/tokens.js'
export { OAuthPresetSchema, OAuthProviderSchema, type OAuthPreset, type OAuthProviderInput } from './settings/web.js'

/**
 * Every jwt-login setting, grouped by concern, with its default. The host's
 * admin screen can supply these through an async source (see `settingsSource`).
 */
export const SettingsSchema = Type.Object({
  ...ACCESS_SETTINGS,
  tokens: TokensSchema,
  ...SESSION_SETTINGS,
  ...ACCOUNT_SETTINGS,
  ...SELF_SERVICE_SETTINGS,
  ...EMAIL_SIGN_IN_SETTINGS,
  ...API_KEY_SETTINGS,
  ...WEB_SETTINGS,
  ...TELEMETRY_SETTINGS,

  /** Largest accepted request body in bytes. */
  bodyLimit: Type.Optional(Type.Integer({ minimum: 1024, maximum: 1048576, default: 16384 }))
}, { additionalProperties: false })

export type SettingsInput = Static<typeof SettingsSchema>
