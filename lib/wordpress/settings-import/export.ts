// The export as read: its layouts (v1 flat keys, v2 sections), each value by its v2 path.
import { isGroup } from '../../config/from-schema.js'
import { JwtLoginSettingsError } from '../../core/errors.js'

/**
 * The flat keys of the v1 layout, each with its place in the v2 layout
 * (`Migrations/V1ToV2Migration.php` of Simple JWT Login). A v1 key that
 * holds an object (`cors`, `google`, `request_keys`) maps its fields too:
 * `cors.allow_origin` stays `cors.allow_origin`, `google.client_id` becomes
 * `integrations.oauth.google.client_id`. `delete_user_by` and
 * `jwt_delete_by_parameter` exist in v1 only; `jwt_email_parameter` is the
 * old name of `jwt_login_by_parameter`.
 */
const V1_PATHS: ReadonlyMap<string, string> = new Map([
  ...['route_namespace', 'jwt_algorithm', 'decryption_source', 'decryption_key', 'decryption_key_base64',
    'decryption_key_public', 'decryption_key_private', 'request_jwt_url', 'request_jwt_cookie',
    'request_jwt_header', 'request_jwt_session', 'request_jwt_header_require_bearer', 'api_middleware', 'request_keys', 'security'
  ].map(key => [key, `general.${key}`] as const),
  ['allow_autologin', 'login.enabled'],
  ['require_login_auth', 'login.auth_code'],
  ['jwt_login_by', 'login.login_by'],
  ['jwt_login_by_parameter', 'login.login_by_parameter'],
  ['jwt_email_parameter', 'login.jwt_email_parameter'],
  ['redirect', 'login.redirect'],
  ['redirect_url', 'login.redirect_url'],
  ['login_fail_redirect', 'login.fail_redirect'],
  ['include_login_request_parameters', 'login.include_request_parameters'],
  ['allow_usage_redirect_parameter', 'login.allow_redirect_parameter'],
  ['login_remove_request_parameters', 'login.remove_request_parameters'],
  ['login_ip', 'login.ip_whitelist'],
  ['login_iss', 'login.iss_whitelist'],
  ['allow_register', 'register.enabled'],
  ['require_register_auth', 'register.auth_code'],
  ['new_user_profile', 'register.new_user_profile'],
  ['register_ip', 'register.ip_whitelist'],
  ['register_domain', 'register.domain_whitelist'],
  ['random_password', 'register.random_password'],
  ['random_password_length', 'register.random_password_length'],
  ['register_force_login', 'register.force_login'],
  ['register_jwt', 'register.return_jwt'],
  ['allowed_user_meta', 'register.allowed_user_meta'],
  ['register_send_welcome_email', 'register.send_welcome_email'],
  ['allow_authentication', 'authorization.enabled'],
  ['auth_requires_auth_code', 'authorization.auth_code'],
  ['jwt_payload', 'authorization.jwt_payload'],
  ['jwt_auth_ttl', 'authorization.ttl'],
  ['jwt_auth_refresh_ttl', 'authorization.refresh_ttl'],
  ['auth_ip', 'authorization.ip_whitelist'],
  ['auth_password_base64', 'authorization.password_base64'],
  ['auth_password_hash_enabled', 'authorization.password_hash_enabled'],
  ['jwt_auth_iss', 'authorization.iss'],
  ['allow_refresh_token', 'authorization.refresh_token_enabled'],
  ['refresh_token_key', 'authorization.refresh_token_key'],
  ['allow_validate_token', 'authorization.validate_token_enabled'],
  ['allow_revoke_token', 'authorization.revoke_token_enabled'],
  ['refresh_requires_auth_code', 'authorization.refresh_auth_code'],
  ['validate_requires_auth_code', 'authorization.validate_auth_code'],
  ['revoke_requires_auth_code', 'authorization.revoke_auth_code'],
  ['cors', 'cors'],
  ['allow_delete', 'delete_user.enabled'],
  ['require_delete_auth', 'delete_user.auth_code'],
  ['delete_ip', 'delete_user.ip_whitelist'],
  ['delete_user_by', 'delete_user.delete_user_by'],
  ['jwt_delete_by_parameter', 'delete_user.jwt_delete_by_parameter'],
  ['enabled_hooks', 'hooks.enabled_hooks'],
  ['allow_reset_password', 'reset_password.enabled'],
  ['reset_password_requires_auth_code', 'reset_password.auth_code'],
  ['jwt_reset_password_flow', 'reset_password.flow'],
  ['jwt_email_subject', 'reset_password.email_subject'],
  ['jwt_reset_password_email_body', 'reset_password.email_body'],
  ['jwt_email_type', 'reset_password.email_type'],
  ['reset_password_jwt', 'reset_password.return_jwt'],
  ['reset_password_send_changed_email', 'reset_password.send_password_changed_email'],
  ['protect_endpoints', 'protect_endpoint'],
  ['auth_codes', 'auth_codes.codes'],
  ['auth_code_key', 'auth_codes.key'],
  ['google', 'integrations.oauth.google'],
  ['auth0', 'integrations.oauth.auth0'],
  ['wp_graphql', 'integrations.3rdparty.wpgraphql'],
  ['audit_log', 'audit_log'],
  ['jwt_rules', 'jwt_rules.rules'],
  ['webhooks', 'webhooks.items'],
  ['webhook_logs_enabled', 'webhooks.logs.enabled'],
  ['webhook_logs_retention_days', 'webhooks.logs.retention'],
  ['api_keys', 'api_keys']
])

/**
 * The sections of the v2 layout (`_schema_version` 2). The OAuth providers
 * and third-party integrations sit in `integrations` (`oauth.google`,
 * `oauth.auth0`, `oauth.facebook`, `oauth.github`, `3rdparty.wpgraphql`,
 * `3rdparty.two_factor`), named `applications` by the first v2 releases.
 */
const V2_SECTIONS = new Set(['general', 'login', 'register', 'authorization', 'cors', 'delete_user', 'hooks',
  'reset_password', 'protect_endpoint', 'auth_codes', 'integrations', 'audit_log', 'jwt_rules', 'webhooks',
  'api_keys', 'theme'])

/**
 * The export as an object. `wp option get … --format=json` prints the
 * option, itself a JSON string, as a JSON string: one such wrapping is
 * undone. The reasons never quote the input, which holds secrets.
 */
export function readExport (json: string | Record<string, unknown>): Record<string, unknown> {
  let value: unknown = json
  for (let round = 0; round < 2 && typeof value === 'string'; round++) {
    try {
      value = JSON.parse(value)
    } catch {
      throw new JwtLoginSettingsError('', 'the Simple JWT Login settings are not valid JSON')
    }
  }
  if (!isGroup(value)) throw new JwtLoginSettingsError('', 'the Simple JWT Login settings must be a JSON object (the simple_jwt_login_settings option)')
  return value
}

interface Leaf {
  value: unknown
  name: string
  used: boolean
}

/**
 * The export's values by their v2 path ("section.key"), whatever the
 * layout, each with the name it has in the export (the v1 flat key, or the
 * v2 path). Objects are walked down to their values; a list is one value.
 * Each read marks the values it returns, and what no read took is unknown.
 */
export class SettingsExport {
  /**
   * Whether the export has the flat layout of Simple JWT Login 3.x (schema
   * v1): its absent keys mean what 3.x made of them, not what 4.x does.
   */
  readonly flat: boolean
  readonly #leaves = new Map<string, Leaf>()
  /** v2 path prefixes and the names they have in the export. */
  readonly #names: Array<readonly [string, string]> = []

  constructor (input: Record<string, unknown>) {
    const v2 = Number(input._schema_version) >= 2
    this.flat = !v2
    if (v2 && 'applications' in input) this.#names.push(['integrations', 'applications'])
    if (!v2) for (const [key, path] of V1_PATHS) this.#names.push([path, key])
    for (const [key, value] of Object.entries(input)) {
      if (key === '_schema_version') continue
      const path = v2 ? (key === 'applications' ? 'integrations' : key) : V1_PATHS.get(key)
      if (path !== undefined && (!v2 || V2_SECTIONS.has(path))) this.#walk(path, key, value)
      else this.#add(`?${key}`, value, key)
    }
  }

  /** The value at a path, or `undefined`; it counts as read. */
  value (path: string): unknown {
    const leaf = this.#leaves.get(path)
    if (leaf === undefined) return undefined
    leaf.used = true
    return leaf.value
  }

  /** The values under a path, all counted as read. */
  under (path: string): unknown[] {
    const values: unknown[] = []
    for (const [key, leaf] of this.#leaves) {
      if (!key.startsWith(`${path}.`)) continue
      leaf.used = true
      values.push(leaf.value)
    }
    return values
  }

  /** The names of the objects directly under a path (`integrations.oauth` → google, auth0). */
  children (path: string): string[] {
    const names = new Set<string>()
    for (const key of this.#leaves.keys()) {
      if (key.startsWith(`${path}.`)) names.add(key.slice(path.length + 1).split('.')[0] as string)
    }
    return [...names]
  }

  /** The name a path has in the export: the v1 flat key, or the v2 path with its section as written. */
  name (path: string): string {
    const leaf = this.#leaves.get(path)
    if (leaf !== undefined) return leaf.name
    const pair = this.#names.find(([prefix]) => path === prefix || path.startsWith(`${prefix}.`))
    return pair === undefined ? path : `${pair[1]}${path.slice(pair[0].length)}`
  }

  /** The names of the values no read took. */
  unread (): string[] {
    return [...this.#leaves.values()].filter(leaf => !leaf.used).map(leaf => leaf.name)
  }

  #walk (path: string, name: string, value: unknown): void {
    if (isGroup(value)) {
      for (const [key, inner] of Object.entries(value)) this.#walk(`${path}.${key}`, `${name}.${key}`, inner)
      return
    }
    // PHP writes an empty array as [] where it means an empty object
    if (Array.isArray(value) && value.length === 0) return
    this.#add(path, value, name)
  }

  #add (path: string, value: unknown, name: string): void {
    // a second value for one path (both `applications` and `integrations`) is kept apart, as unknown
    const key = this.#leaves.has(path) ? `?${name}` : path
    this.#leaves.set(key, { value, name, used: false })
  }
}
