// Simple JWT Login's API keys (`api_keys.*`, 3.6 and later): the switch, the header, whether users mint their own, and its four permissions as scopes.
import type { SettingsInput } from '../../../schemas/settings.js'
import { API_KEY_HEADER_PATTERN, isStandardRequestHeader } from '../../../schemas/settings/api-keys.js'
import { text, type Reader } from './reader.js'

/**
 * The permissions Simple JWT Login gives a key (it maps a request's HTTP
 * method to one: GET `read`, POST `create`, PUT and PATCH `update`, DELETE
 * `delete`), declared as jwt-login scopes, so the host's routes can ask for
 * the same with `authenticateWith({ apiKey: true, scopes: ['read'] })`.
 */
export const SIMPLE_JWT_LOGIN_PERMISSIONS = ['read', 'create', 'update', 'delete']

/** The header name Simple JWT Login reads a key from by default. */
const DEFAULT_HEADER = 'X-API-Key'

/** A header name jwt-login takes (`apiKeys.header`), as its settings' schema says. */
const HEADER_NAME = new RegExp(API_KEY_HEADER_PATTERN)

/**
 * `api_keys.*`: the switch carries over with Simple JWT Login's four
 * permissions as the declared scopes; `allow_user_api_keys` (users mint
 * their own in their WordPress profile) becomes `apiKeys.selfService`
 * (`/account/api-keys`), off as it was unless it was on; `header_name`
 * becomes `apiKeys.header` when it is a header name jwt-login takes (not
 * a standard request header: listed in what is left behind otherwise). The
 * prefix stays `sjl`, so that secret scanners that know Simple JWT Login's
 * keys (`sjl_…`) find the new ones too. The keys already issued are not
 * settings: they stay in WordPress's table (see docs/simple-jwt-login.md).
 */
export function readApiKeys (r: Reader): NonNullable<SettingsInput['apiKeys']> {
  const enabled = r.on('api_keys.enabled')
  const selfService = r.on('api_keys.allow_user_api_keys')
  const written = text(r.from.value('api_keys.header_name'))?.trim() ?? DEFAULT_HEADER
  const header = HEADER_NAME.test(written) && !isStandardRequestHeader(written) ? written : undefined
  if (enabled && header === undefined) {
    r.leave('api_keys.header_name', `is not a header name jwt-login takes (letters, digits and -, not a standard request header such as Authorization, Cookie or User-Agent): keys come in ${DEFAULT_HEADER} or Authorization: Bearer`)
  }
  if (!enabled) return { enabled }
  return { enabled, selfService, prefix: 'sjl', scopes: [...SIMPLE_JWT_LOGIN_PERMISSIONS], header: header ?? DEFAULT_HEADER }
}
