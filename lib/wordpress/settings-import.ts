/**
 * Simple JWT Login keeps its whole configuration in one WordPress option,
 * `simple_jwt_login_settings`, a JSON string. This module reads an export of
 * that option (`wp option get simple_jwt_login_settings --format=json`) and
 * answers jwt-login settings, with each setting it could not carry over and
 * why. It never carries anything less safe than jwt-login's own behaviour:
 * what it cannot map exactly it leaves behind and lists.
 */
import { createPrivateKey, createPublicKey, type AsymmetricKeyDetails, type KeyObject } from 'node:crypto'
import { AlgorithmSchema, type Algorithm, type OAuthProviderInput, type SettingsInput } from '../../schemas/settings.js'
import { isGroup } from '../config/from-schema.js'
import { JwtLoginSettingsError } from '../core/errors.js'

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

type Tokens = SettingsInput['tokens']
type Key = Tokens['keys'][number]
type AuthCodes = NonNullable<SettingsInput['authCodes']>
type AuthCode = NonNullable<AuthCodes['codes']>[number]
type Users = NonNullable<SettingsInput['users']>
type Register = NonNullable<Users['register']>

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
    'request_jwt_header', 'request_jwt_session', 'api_middleware', 'request_keys', 'security'
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

/** The algorithms jwt-login signs with. */
const ALGORITHMS: readonly string[] = AlgorithmSchema.anyOf.map(member => member.const)

/** The shortest HMAC secret jwt-login takes for each HS algorithm, in bytes. */
const HMAC_MIN_BYTES: Readonly<Record<string, number>> = { HS256: 32, HS384: 48, HS512: 64 }

/** The kinds of key (`type`, or `ec:<curve>`) each key-pair algorithm signs with. */
const KEY_KINDS: Readonly<Record<string, readonly string[]>> = {
  RS256: ['rsa'],
  RS384: ['rsa'],
  RS512: ['rsa'],
  PS256: ['rsa'],
  ES256: ['ec:prime256v1'],
  ES384: ['ec:secp384r1'],
  EdDSA: ['ed25519', 'ed448']
}

const IP_ALLOW_LIST = 'is an IP allow-list, which jwt-login does not have: restrict these routes at the proxy or firewall instead'

/** Flags that turn on a behaviour jwt-login does not have (Simple JWT Login reads `!empty()`). */
const LEFT_WHEN_ON: ReadonlyArray<readonly [string, string]> = [
  ['general.request_jwt_cookie', 'reads the JWT from a cookie; jwt-login reads it from the Authorization header only (browser apps: see refresh.cookie)'],
  ['general.request_jwt_session', 'reads the JWT from the PHP session; jwt-login reads it from the Authorization header only'],
  ['general.api_middleware.enabled', 'signs WordPress users in on every REST request that carries a JWT; jwt-login authenticates only the routes the host guards with its authenticate hook'],
  ['login.enabled', 'is auto-login (a JWT in a URL opens a WordPress cookie session), which jwt-login does not offer'],
  ['authorization.password_base64', 'makes clients send the password base64-encoded; jwt-login reads the password as sent, so such clients must stop encoding it'],
  ['authorization.password_hash_enabled', 'is pass-the-hash login, off by default in jwt-login: login.allowPasswordHash stays off, turn it on knowingly if a legacy client needs it'],
  ['register.random_password', 'gives new users a random password; jwt-login registers users with the password the client sends'],
  ['register.force_login', 'opens a WordPress cookie session after registration, which jwt-login does not offer (users.register.signIn answers a JWT instead)'],
  ['register.send_welcome_email', 'sends a welcome mail, which jwt-login does not: the host sends it'],
  ['reset_password.return_jwt', 'sets a new password on the strength of a JWT alone; jwt-login changes a password only with an emailed one-time code'],
  ['reset_password.send_password_changed_email', 'mails the user after a password change, which jwt-login does not: the host can send it on the reset.completed event'],
  ['protect_endpoint.enabled', 'guards WordPress endpoints with the JWT; jwt-login guards only the routes the host wires to its authenticate hook'],
  ['audit_log.enabled', 'keeps an audit log in WordPress; jwt-login emits events (fastify.jwtLogin.events) for the host to store'],
  ['api_keys.enabled', 'accepts API keys, which jwt-login does not have']
]

/** Values that take effect when not empty. */
const LEFT_WHEN_FILLED: ReadonlyArray<readonly [string, string]> = [
  ['authorization.ip_whitelist', IP_ALLOW_LIST],
  ['register.ip_whitelist', IP_ALLOW_LIST],
  ['delete_user.ip_whitelist', IP_ALLOW_LIST],
  ['login.ip_whitelist', IP_ALLOW_LIST],
  ['register.allowed_user_meta', 'lets clients set user meta at registration; jwt-login registers the email, login and password only'],
  ['hooks.enabled_hooks', 'turns on WordPress hooks (PHP actions and filters), which do not run in jwt-login: the host uses its events and options instead'],
  ['jwt_rules.rules', 'accepts JWTs signed by other issuers with other keys; jwt-login accepts only the tokens it issues'],
  ['webhooks.items', 'calls webhooks, which jwt-login does not: the host can call them on its events (fastify.jwtLogin.events)']
]

/** Settings that carry nothing jwt-login needs (or whose whole feature is listed elsewhere). */
const IGNORED = ['authorization.refresh_token_key', 'register.random_password_length', 'reset_password.email_type',
  'delete_user.jwt_delete_by_parameter', 'integrations.login_button_layout']

/** Groups read only for the switch listed above; their other fields go with it. */
const IGNORED_GROUPS = ['login', 'protect_endpoint', 'audit_log', 'api_keys', 'webhooks', 'jwt_rules', 'theme',
  'general.security', 'general.request_keys']

/** Why a reset-password flow other than the custom mail (2) does not carry over. */
const RESET_FLOWS: Readonly<Record<string, string>> = {
  0: 'saves the reset code without mailing it; jwt-login mails a one-time code to the user, so give it a mailer',
  1: "sends WordPress's own reset link; jwt-login mails a one-time code instead, so give it a mailer"
}

const TEMPLATE = 'is a mail template written for Simple JWT Login ({{CODE}}, {{NAME}}, …); jwt-login templates use {{code}}, {{display_name}}, {{email}}, {{site_name}} and {{expires_in_minutes}}: rewrite it as resetPassword.mail'

/** OpenID Connect providers with a jwt-login preset; the others are listed when on. */
const OPENID_PRESETS = new Set(['google', 'auth0'])

/** Provider flags without a counterpart. */
const PROVIDER_LEFT_WHEN_ON: ReadonlyArray<readonly [string, string]> = [
  ['enable_oauth', 'adds a sign-in button to wp-login.php; jwt-login has no WordPress login page: the app starts the code flow itself'],
  ['allow_on_all_endpoints', "accepts the provider's own tokens on every endpoint; jwt-login accepts only the tokens it issues after /oauth/token"],
  ['enable_exchange_token', 'exchanges a provider access token; jwt-login signs in with an ID token (acceptIdToken) or a code']
]

/** Third-party integrations with a reason of their own; any other is a WordPress plugin integration. */
const THIRD_PARTY: Readonly<Record<string, string>> = {
  two_factor: "hands the second factor to a WordPress plugin; jwt-login's two-factor sign-in is its twoFactor option, a port the host implements"
}

/** PHP's `!empty()`: what Simple JWT Login reads as on. */
function isOn (value: unknown): boolean {
  if (isGroup(value)) return Object.keys(value).length > 0
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '' && value !== '0'
}

/** Whether a value holds something: text other than blanks, or a list with such text. */
function filled (value: unknown): boolean {
  if (typeof value === 'string') return value.trim() !== ''
  if (Array.isArray(value)) return value.some(filled)
  return isOn(value)
}

/** A string with more than blanks, else `undefined`. */
function text (value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

/** Whether a URL is https (http only on loopback), as jwt-login takes redirect URIs. */
function isHttpsUrl (value: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  return value.length <= 2048 && /^https?:\/\//.test(value) && (url.protocol === 'https:' || loopback)
}

/** Whether a value is an origin exactly as browsers send it. */
function isExactOrigin (value: string): boolean {
  try {
    return /^https?:\/\//.test(value) && new URL(value).origin === value
  } catch {
    return false
  }
}

/**
 * An auth code's expiration date as ISO date-time. Simple JWT Login asks for
 * `YYYY-MM-DD HH:MM:SS` and reads it with PHP's `strtotime` under
 * WordPress's UTC default time zone; a date without a time is midnight.
 * Anything else (or a date that does not exist) is `undefined`.
 */
function isoDate (value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim())
  if (match === null) return undefined
  const [, year, month, day, hour = '00', minute = '00', second = '00'] = match
  const written = `${year}-${month}-${day}T${hour}:${minute}:${second}`
  const date = new Date(`${written}Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === written ? `${written}Z` : undefined
}

/**
 * A PEM key from the export: Simple JWT Login stores its key pair
 * base64-encoded (`base64_encode` on save); a plain PEM is taken as it is.
 */
function pemOf (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const pem = value.includes('-----BEGIN') ? value : Buffer.from(value, 'base64').toString('utf8')
  return pem.includes('-----BEGIN') ? pem : undefined
}

/** Why a private key cannot sign with the algorithm, if it cannot. */
function keyProblem (algorithm: string, key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails as AsymmetricKeyDetails
  const kind = key.asymmetricKeyType === 'ec' ? `ec:${String(details.namedCurve)}` : String(key.asymmetricKeyType)
  if (!(KEY_KINDS[algorithm] as readonly string[]).includes(kind)) return `is a ${kind} key, which does not sign ${algorithm}`
  const bits = details.modulusLength ?? 2048
  if (bits < 2048) return `is an RSA key of ${bits} bits; jwt-login needs at least 2048, so generate a new key pair`
  return undefined
}

/** Whether a PEM public key is the public half of the private key. */
function isPublicHalf (pem: string, privateKey: KeyObject): boolean {
  const spki = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString()
  try {
    return spki(createPublicKey(pem)) === spki(createPublicKey(privateKey))
  } catch {
    return false
  }
}

/**
 * The export as an object. `wp option get … --format=json` prints the
 * option, itself a JSON string, as a JSON string: one such wrapping is
 * undone. The reasons never quote the input, which holds secrets.
 */
function readExport (json: string | Record<string, unknown>): Record<string, unknown> {
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
class SettingsExport {
  readonly #leaves = new Map<string, Leaf>()
  /** v2 path prefixes and the names they have in the export. */
  readonly #names: Array<readonly [string, string]> = []

  constructor (input: Record<string, unknown>) {
    const v2 = Number(input._schema_version) >= 2
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

/** One import: reads the export group by group and collects what stays behind. */
class Importer {
  readonly #from: SettingsExport
  readonly #left: LeftBehind[] = []

  constructor (from: SettingsExport) {
    this.#from = from
  }

  run (): ImportedSettings {
    const settings = {
      authentication: { enabled: this.#on('authorization.enabled') },
      authCodes: this.#authCodes(),
      login: { allowPasswordHash: false },
      bearer: { enabled: this.#onUnlessOff('general.request_jwt_header') },
      refresh: this.#refresh(),
      validate: { enabled: this.#onUnlessOff('authorization.validate_token_enabled') },
      revoke: { enabled: this.#onUnlessOff('authorization.revoke_token_enabled') },
      tokens: this.#tokens(),
      resetPassword: this.#resetPassword(),
      users: { register: this.#register(), delete: this.#delete() },
      oauth: { providers: this.#providers() },
      cors: this.#cors()
    }
    this.#general()
    this.#thirdParty()
    for (const [path, reason] of LEFT_WHEN_ON) if (this.#on(path)) this.#leave(path, reason)
    for (const [path, reason] of LEFT_WHEN_FILLED) if (filled(this.#from.value(path))) this.#leave(path, reason)
    for (const path of IGNORED) this.#from.value(path)
    for (const path of IGNORED_GROUPS) this.#from.under(path)
    for (const name of this.#from.unread()) {
      this.#left.push({ setting: name, reason: 'is not a setting this import reads (unknown, or given twice): check by hand whether it matters' })
    }
    // without keys the settings are not complete yet (see ImportedSettings)
    return { settings: settings as SettingsInput, leftBehind: this.#left }
  }

  #leave (path: string, reason: string): void {
    this.#left.push({ setting: this.#from.name(path), reason })
  }

  #on (path: string): boolean {
    return isOn(this.#from.value(path))
  }

  /** A flag Simple JWT Login reads as on when the export does not have it. */
  #onUnlessOff (path: string): boolean {
    const value = this.#from.value(path)
    return value === undefined || isOn(value)
  }

  /** A lifetime in minutes (Simple JWT Login's unit) as a duration. */
  #minutes (path: string): string | undefined {
    const value = this.#from.value(path)
    if (value === undefined) return undefined
    const minutes = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
    if (typeof minutes === 'number' && Number.isInteger(minutes) && minutes > 0) return `${minutes}m`
    this.#leave(path, 'is not a whole number of minutes above 0, so jwt-login keeps its default lifetime')
    return undefined
  }

  /** `general.*` settings that carry nothing but may matter to clients. */
  #general (): void {
    const namespace = text(this.#from.value('general.route_namespace'))
    if (namespace !== undefined) {
      const prefix = `/${namespace.trim().replace(/^\/+|\/+$/g, '')}`
      const alias = `/wp-json${prefix === '/' ? '' : prefix}`
      this.#leave('general.route_namespace', `served the routes under ${alias} and /?rest_route=${prefix}; jwt-login serves them under its prefix option (default /jwt-login/v1): pass the option aliases: ['${alias}'] to keep both URLs clients call`)
    }
    if (this.#onUnlessOff('general.request_jwt_url')) {
      this.#leave('general.request_jwt_url', 'reads the JWT from the URL query; jwt-login reads it from the Authorization header (and the JWT parameter of /auth/validate only), as a token in a URL ends up in logs')
    }
    const header = text(this.#from.value('general.request_keys.header'))
    if (header !== undefined && header.trim().toLowerCase() !== 'authorization') {
      this.#leave('general.request_keys.header', `reads the JWT from the ${header.trim()} header; jwt-login reads it from Authorization: Bearer only`)
    }
  }

  /**
   * The signing key: Simple JWT Login's `decryption_key` (HS*, base64 when
   * `decryption_key_base64` is on) or its key pair `decryption_key_private`
   * / `decryption_key_public` (RS*), both under `general`; with
   * `decryption_source` 1 the keys live in wp-config.php, not in the export.
   */
  #tokens (): Partial<Tokens> {
    const tokens: Partial<Tokens> = { claims: this.#claims() }
    const algorithm = this.#algorithm()
    if (algorithm !== undefined) tokens.algorithm = algorithm
    const lifetime = this.#minutes('authorization.ttl')
    if (lifetime !== undefined) tokens.lifetime = lifetime
    const issuer = text(this.#from.value('authorization.iss'))
    if (issuer !== undefined) tokens.issuer = issuer
    const key = this.#key(algorithm)
    if (key !== undefined) {
      tokens.keys = [key]
    } else {
      this.#left.push({ setting: 'tokens.keys', reason: 'no usable signing key came over: supply tokens.keys ({ kid, secret } or PEM keys) before using these settings' })
    }
    return tokens
  }

  #algorithm (): Algorithm | undefined {
    const value = this.#from.value('general.jwt_algorithm')
    const name = value === undefined || value === '' ? 'HS256' : value
    if (typeof name === 'string' && ALGORITHMS.includes(name)) return name as Algorithm
    this.#leave('general.jwt_algorithm', `is not an algorithm jwt-login signs with (${ALGORITHMS.join(', ')}): choose one in tokens.algorithm`)
    return undefined
  }

  #key (algorithm: Algorithm | undefined): Key | undefined {
    const source = this.#from.value('general.decryption_source')
    const secret = this.#from.value('general.decryption_key')
    const base64 = this.#on('general.decryption_key_base64')
    const privateKey = this.#from.value('general.decryption_key_private')
    const publicKey = this.#from.value('general.decryption_key_public')
    if (String(source) === '1') {
      this.#leave('general.decryption_source', 'keeps the keys in wp-config.php (SIMPLE_JWT_PRIVATE_KEY, SIMPLE_JWT_PUBLIC_KEY), not in the export')
      return undefined
    }
    if (algorithm === undefined) return undefined
    return algorithm.startsWith('HS') ? this.#secret(algorithm, secret, base64) : this.#keyPair(algorithm, privateKey, publicKey)
  }

  /**
   * An HMAC secret, carried only when it is long enough for jwt-login.
   * jwt-login's secret is a string, used as its UTF-8 bytes: a base64 key
   * carries over only when its bytes are UTF-8 text, so that the key stays
   * the same bytes. (Tokens Simple JWT Login issued carry no `kid`, `typ`
   * or `aud`, so jwt-login refuses them whatever the key.)
   */
  #secret (algorithm: string, value: unknown, base64: boolean): Key | undefined {
    const written = text(value)
    if (written === undefined) return undefined
    const path = 'general.decryption_key'
    let bytes = Buffer.from(written, 'utf8')
    if (base64) {
      const compact = written.replace(/\s+/g, '')
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
        this.#leave(path, 'is marked base64 (decryption_key_base64) but is not base64 text: generate a new secret')
        return undefined
      }
      bytes = Buffer.from(compact, 'base64')
    }
    const secret = bytes.toString('utf8')
    if (!Buffer.from(secret, 'utf8').equals(bytes)) {
      this.#leave(path, "decodes to bytes that are not UTF-8 text, and jwt-login's secret is a string: generate a new secret (tokens signed with this one stop validating)")
      return undefined
    }
    const minimum = HMAC_MIN_BYTES[algorithm] as number
    if (bytes.length < minimum) {
      this.#leave(path, `is shorter than the ${minimum} bytes jwt-login needs for ${algorithm}: generate a new secret of at least ${minimum} bytes (tokens signed with this one stop validating)`)
      return undefined
    }
    return { kid: 'imported', secret }
  }

  /** A key pair; the public key only when it is the half of the private one (jwt-login derives it otherwise). */
  #keyPair (algorithm: string, privateValue: unknown, publicValue: unknown): Key | undefined {
    const path = 'general.decryption_key_private'
    const privatePem = pemOf(privateValue)
    if (privatePem === undefined) {
      this.#leave(path, `is missing or not a PEM key, and ${algorithm} needs a private key`)
      return undefined
    }
    let privateKey: KeyObject
    try {
      privateKey = createPrivateKey(privatePem)
    } catch {
      this.#leave(path, 'is not a readable PEM private key')
      return undefined
    }
    const problem = keyProblem(algorithm, privateKey)
    if (problem !== undefined) {
      this.#leave(path, problem)
      return undefined
    }
    const key: Key = { kid: 'imported', privateKey: privatePem }
    const publicPem = pemOf(publicValue)
    if (publicPem !== undefined && isPublicHalf(publicPem, privateKey)) {
      key.publicKey = publicPem
    } else if (text(publicValue) !== undefined) {
      this.#leave('general.decryption_key_public', 'is not the public half of the private key; jwt-login derives the public key from the private key instead')
    }
    return key
  }

  /**
   * `jwt_payload` lists the payload fields: `email` and `username` map to
   * `tokens.claims`; `iat`, `exp` and `iss` are always there; `id` and
   * `site` are not written by jwt-login. `custom_claims` (v2) is left behind.
   */
  #claims (): NonNullable<Tokens['claims']> {
    const value = this.#from.value('authorization.jwt_payload')
    const fields: unknown[] = Array.isArray(value) ? value : []
    const dropped = ['id', 'site'].filter(field => fields.includes(field))
    if (dropped.length > 0) {
      this.#leave('authorization.jwt_payload', `puts ${dropped.join(' and ')} in the payload; jwt-login puts the user ID in sub and writes no site field, so clients that read them must change`)
    }
    if (this.#from.under('authorization.custom_claims').some(filled)) {
      this.#leave('authorization.custom_claims', 'adds custom claims; jwt-login writes only the user claims tokens.claims names')
    }
    return { email: fields.includes('email'), login: fields.includes('username') }
  }

  /**
   * `auth_codes.codes` (v1 `auth_codes`): each a string (old exports) or
   * `{ code, role, expiration_date }`; `auth_codes.key` (v1
   * `auth_code_key`) names the parameter. Where each is required comes
   * from the `authorization` section.
   */
  #authCodes (): AuthCodes {
    const group: AuthCodes = {
      codes: this.#codes(),
      requireFor: {
        auth: this.#on('authorization.auth_code'),
        validate: this.#on('authorization.validate_auth_code'),
        refresh: this.#on('authorization.refresh_auth_code'),
        revoke: this.#on('authorization.revoke_auth_code')
      }
    }
    const parameter = text(this.#from.value('auth_codes.key'))
    if (parameter !== undefined) group.parameter = parameter
    return group
  }

  #codes (): AuthCode[] {
    const value = this.#from.value('auth_codes.codes')
    const name = this.#from.name('auth_codes.codes')
    if (value !== undefined && !Array.isArray(value)) {
      this.#left.push({ setting: name, reason: 'is not a list of auth codes' })
      return []
    }
    const codes: AuthCode[] = []
    const entries: unknown[] = Array.isArray(value) ? value : []
    for (const [index, entry] of entries.entries()) {
      const read = readCode(entry)
      if (read === null) continue
      const reason = typeof read === 'string' ? read : codes.length >= 100 ? 'is beyond the 100 auth codes jwt-login takes' : undefined
      if (reason !== undefined) this.#left.push({ setting: `${name}[${index}]`, reason })
      else codes.push(read as AuthCode)
    }
    return codes
  }

  #refresh (): NonNullable<SettingsInput['refresh']> {
    const refresh: NonNullable<SettingsInput['refresh']> = { enabled: this.#on('authorization.refresh_token_enabled') }
    const lifetime = this.#minutes('authorization.refresh_ttl')
    if (lifetime !== undefined) refresh.lifetime = lifetime
    return refresh
  }

  /**
   * `reset_password.flow` (v1 `jwt_reset_password_flow`): 0 saves the code
   * only, 1 sends WordPress's reset link, 2 mails a code with the
   * `email_subject` / `email_body` templates. jwt-login always mails a code
   * with its own templates.
   */
  #resetPassword (): NonNullable<SettingsInput['resetPassword']> {
    const enabled = this.#on('reset_password.enabled')
    const flow = String(this.#from.value('reset_password.flow') ?? 0)
    const subject = this.#from.value('reset_password.email_subject')
    const body = this.#from.value('reset_password.email_body')
    if (enabled && flow !== '2') {
      this.#leave('reset_password.flow', RESET_FLOWS[flow] ?? 'is a reset flow this import does not know; jwt-login mails a one-time code, so give it a mailer')
    }
    if (enabled && flow === '2') {
      if (filled(subject)) this.#leave('reset_password.email_subject', TEMPLATE)
      if (filled(body)) this.#leave('reset_password.email_body', TEMPLATE)
    }
    return { enabled, requireAuthCode: this.#on('reset_password.auth_code') }
  }

  /**
   * `register.*`: the auth code is required unless the export turns it off
   * (Simple JWT Login's default); `new_user_profile` may name several roles,
   * jwt-login gives one. An allow-list of domains that came over empty
   * turns registration off: an empty list would let every domain in.
   */
  #register (): Register {
    const register: Register = {
      enabled: this.#on('register.enabled'),
      requireAuthCode: this.#onUnlessOff('register.auth_code'),
      signIn: this.#on('register.return_jwt')
    }
    const roles = (text(this.#from.value('register.new_user_profile')) ?? '').split(',').map(role => role.trim()).filter(role => role !== '')
    const role = roles[0]
    if (role !== undefined && role.length <= 64) register.defaultRole = role
    if (roles.length > 1 || (role !== undefined && role.length > 64)) {
      this.#leave('register.new_user_profile', register.defaultRole === undefined
        ? 'names a role longer than the 64 characters jwt-login takes, so new users get the default role'
        : `gives new users several roles; jwt-login gives one, so they get ${role as string} only`)
    }
    const written = text(this.#from.value('register.domain_whitelist'))
    if (written === undefined) return register
    const domains: string[] = []
    const unusable: string[] = []
    for (const entry of written.split(/[\s,;]+/).filter(part => part !== '')) {
      const domain = entry.replace(/^@/, '').toLowerCase()
      const usable = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(domain) && domains.length < 100
      if (usable && !domains.includes(domain)) domains.push(domain)
      if (!usable) unusable.push(entry)
    }
    if (unusable.length > 0) {
      this.#leave('register.domain_whitelist', `lists domains jwt-login cannot take (${unusable.join(', ')}): each must be a domain name, and at most 100 are taken`)
    }
    register.allowedDomains = domains
    if (domains.length === 0 && register.enabled === true) {
      register.enabled = false
      this.#leave('register.enabled', 'is turned off: no allowed email domain came over, and an empty list would let every domain register')
    }
    return register
  }

  /**
   * `delete_user.*`. jwt-login deletes the user the token's `sub` (user ID)
   * names. v1's `delete_user_by` found the user by the JWT's email (0), ID
   * (1) or login (2) claim instead: ID is the same rule; the others are
   * listed, though for tokens jwt-login issues they name the same user.
   */
  #delete (): NonNullable<Users['delete']> {
    const enabled = this.#on('delete_user.enabled')
    const by = this.#from.value('delete_user.delete_user_by')
    if (enabled && by !== undefined && String(by) !== '1') {
      this.#leave('delete_user.delete_user_by', "finds the user to delete by the JWT's email or login claim; jwt-login deletes the user its sub (the user ID) names, which is the token's own user")
    }
    return { enabled, requireAuthCode: this.#onUnlessOff('delete_user.auth_code') }
  }

  /**
   * `cors.*`: Simple JWT Login sends `allow_origin` (default `*`) when
   * `allow_origin_enabled` is on. jwt-login takes exact origins only, so
   * CORS is on only when one came over; `*` and anything else is listed.
   */
  #cors (): NonNullable<SettingsInput['cors']> {
    const enabled = this.#on('cors.enabled')
    const originOn = this.#on('cors.allow_origin_enabled')
    const written = text(this.#from.value('cors.allow_origin')) ?? '*'
    for (const [field, header] of [['methods', 'Methods'], ['headers', 'Headers']] as const) {
      const path = `cors.allow_${field}`
      const on = this.#on(`${path}_enabled`)
      this.#from.value(path)
      if (enabled && on) this.#leave(path, `sets Access-Control-Allow-${header}; jwt-login sends the ones its routes need`)
    }
    const origins: string[] = []
    if (!enabled || !originOn) return { enabled: false, origins }
    const unusable: string[] = []
    for (const entry of written.split(/[\s,]+/).filter(part => part !== '')) {
      if (entry === '*') {
        this.#leave('cors.allow_origin', 'allows every origin (*); jwt-login takes exact origins only: list the pages that call it in cors.origins')
      } else if (isExactOrigin(entry) && origins.length < 50) {
        if (!origins.includes(entry)) origins.push(entry)
      } else {
        unusable.push(entry)
      }
    }
    if (unusable.length > 0) {
      this.#leave('cors.allow_origin', `lists origins jwt-login cannot take (${unusable.join(', ')}): each must be exact (scheme, host and port, no path), and at most 50 are taken`)
    }
    return { enabled: origins.length > 0, origins }
  }

  /**
   * `integrations.oauth.*` (v1 `google`, `auth0`): Google and Auth0 carry
   * over to their presets; the code flow (`enable_exchange_code` with
   * `redirect_uri_exchange_code`) to `redirectUris`, Google's
   * `enable_exchange_id_token` to `acceptIdToken`,
   * `create_user_if_not_exists` to `autoRegister`. Other providers are not
   * OpenID Connect and are listed when on.
   */
  #providers (): Record<string, OAuthProviderInput> {
    const providers: Record<string, OAuthProviderInput> = {}
    for (const slug of this.#from.children('integrations.oauth')) {
      const path = `integrations.oauth.${slug}`
      if (OPENID_PRESETS.has(slug)) {
        const provider = this.#openIdProvider(slug, path)
        if (provider !== undefined) providers[slug] = provider
        continue
      }
      if (this.#on(`${path}.enabled`)) this.#leave(`${path}.enabled`, 'signs in through a provider that is not OpenID Connect, which jwt-login does not take')
      this.#from.under(path)
    }
    return providers
  }

  #openIdProvider (slug: string, path: string): OAuthProviderInput | undefined {
    const field = (name: string): unknown => this.#from.value(`${path}.${name}`)
    const enabled = isOn(field('enabled'))
    const clientId = text(field('client_id'))
    const clientSecret = text(field('client_secret'))
    const codeFlow = isOn(field('enable_exchange_code'))
    const redirectUri = text(field('redirect_uri_exchange_code'))
    const acceptIdToken = isOn(field('enable_exchange_id_token'))
    const autoRegister = isOn(field('create_user_if_not_exists'))
    const domain = text(field('domain'))?.trim().replace(/^https?:\/\//, '').replace(/\/+$/, '')
    const flags = PROVIDER_LEFT_WHEN_ON.filter(([name]) => isOn(field(name)))
    if (!enabled) return undefined
    for (const [name, reason] of flags) this.#leave(`${path}.${name}`, reason)
    if (clientId === undefined || clientId.length > 512) {
      this.#leave(`${path}.client_id`, 'is missing or longer than 512 characters, so the provider is left out')
      return undefined
    }
    const provider: OAuthProviderInput = { enabled: true, preset: slug as 'google' | 'auth0', clientId, acceptIdToken, autoRegister }
    if (slug === 'auth0') {
      if (domain === undefined || !/^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/.test(domain)) {
        this.#leave(`${path}.domain`, 'is not an Auth0 tenant domain (such as example.eu.auth0.com), so the provider is left out')
        return undefined
      }
      provider.domain = domain
    }
    if (clientSecret !== undefined) provider.clientSecret = clientSecret
    if (codeFlow && (redirectUri === undefined || !isHttpsUrl(redirectUri))) {
      this.#leave(`${path}.redirect_uri_exchange_code`, 'is not an https URL (http only on loopback), so the code flow is left out')
    } else if (codeFlow && clientSecret === undefined) {
      this.#leave(`${path}.client_secret`, 'is missing and the code flow needs it, so the code flow is left out')
    } else if (codeFlow) {
      provider.redirectUris = [redirectUri as string]
    }
    if (provider.redirectUris === undefined && !acceptIdToken) {
      this.#leave(`${path}.enabled`, 'turns on a provider none of whose ways to sign in came over, so the provider is left out')
      return undefined
    }
    return provider
  }

  /** `integrations.3rdparty.*` (v1 `wp_graphql`): WordPress plugin integrations, listed when on. */
  #thirdParty (): void {
    for (const slug of this.#from.children('integrations.3rdparty')) {
      const path = `integrations.3rdparty.${slug}`
      if (this.#on(`${path}.enabled`)) {
        this.#leave(`${path}.enabled`, THIRD_PARTY[slug] ?? `turns on the ${slug} integration, a WordPress plugin that jwt-login has no counterpart for`)
      }
      this.#from.under(path)
    }
  }
}

/**
 * One auth code: `null` for an empty one (Simple JWT Login skips those),
 * the reason when it cannot come over. A code whose expiration date cannot
 * be read stays behind whole: carried without it, it would never expire.
 */
function readCode (entry: unknown): AuthCode | string | null {
  if (typeof entry === 'string') return entry.trim() === '' ? null : { code: entry }
  if (!isGroup(entry) || typeof entry.code !== 'string') return 'is neither a code nor a { code, role, expiration_date } entry'
  if (entry.code.trim() === '') return null
  const code: AuthCode = { code: entry.code }
  const role = text(entry.role)?.trim()
  if (role !== undefined && role.length > 64) return 'names a role longer than the 64 characters jwt-login takes'
  if (role !== undefined) code.role = role
  const expiration = text(entry.expiration_date)
  if (expiration === undefined) return code
  const expiresAt = isoDate(expiration)
  if (expiresAt === undefined) return 'has an expiration date that is not YYYY-MM-DD HH:MM:SS, so the code is left out rather than carried without expiry'
  code.expiresAt = expiresAt
  return code
}

/**
 * Reads a Simple JWT Login settings export (the option's JSON string or its
 * parsed object; schema v1 or v2) and answers jwt-login settings and what was
 * left behind.
 *
 * Every key of the export is either carried, read as part of a feature that
 * is listed, or listed itself (unknown keys as unknown). The input is never
 * quoted in a reason: it holds secrets. The result passes `resolveSettings`
 * once `tokens.keys` is there: when the export had no usable key (too short,
 * not UTF-8, kept in wp-config.php), `tokens.keys` is absent and listed.
 * Throws `JwtLoginSettingsError` (path `''`) when the input is not JSON or
 * not an object.
 */
export function fromSimpleJwtLoginSettings (json: string | Record<string, unknown>): ImportedSettings {
  return new Importer(new SettingsExport(readExport(json))).run()
}
