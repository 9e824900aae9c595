/**
 * Simple JWT Login keeps its whole configuration in one WordPress option,
 * `simple_jwt_login_settings`, a JSON string. This module reads an export of
 * that option (`wp option get simple_jwt_login_settings --format=json`) and
 * answers jwt-login settings, with each setting it could not carry over and
 * why. It never carries anything less safe than jwt-login's own behaviour:
 * what it cannot map exactly it leaves behind and lists.
 */
import type { SettingsInput } from '../../schemas/settings.js'
import { readAuthCodes, readBearer, readCors, readDelete, readGeneral, readRefresh, readRegister, readResetPassword, readTokenRoutes } from './settings-import/access.js'
import { readApiKeys } from './settings-import/api-keys.js'
import { readExport, SettingsExport } from './settings-import/export.js'
import { readProviders, readThirdParty } from './settings-import/providers.js'
import { filled, Reader, type ImportedSettings } from './settings-import/reader.js'
import { readTokens } from './settings-import/tokens.js'

export type { ImportedSettings, LeftBehind } from './settings-import/reader.js'

/** Where jwt-login takes a JWT besides the `Authorization` header. */
const JWT_FIELD = 'a JWT field (body or query string) on its own routes that take a JWT'

const IP_ALLOW_LIST = 'is an IP allow-list, which jwt-login does not have: restrict these routes at the proxy or firewall instead'

/** Flags that turn on a behaviour jwt-login does not have (Simple JWT Login reads `!empty()`). */
const LEFT_WHEN_ON: ReadonlyArray<readonly [string, string]> = [
  ['general.request_jwt_cookie', `reads the JWT from a cookie; jwt-login reads it from the Authorization header or ${JWT_FIELD} (browser apps: see refresh.cookie)`],
  ['general.request_jwt_session', `reads the JWT from the PHP session; jwt-login reads it from the Authorization header or ${JWT_FIELD}`],
  ['general.api_middleware.enabled', 'signs WordPress users in on every REST request that carries a JWT; jwt-login authenticates only the routes the host guards with its authenticate hook'],
  ['login.enabled', 'is auto-login (a JWT in a URL opens a WordPress cookie session), which jwt-login does not offer'],
  ['authorization.password_base64', 'makes clients send the password base64-encoded; jwt-login reads the password as sent, so such clients must stop encoding it'],
  ['authorization.password_hash_enabled', 'is pass-the-hash login, off by default in jwt-login: login.allowPasswordHash stays off, turn it on knowingly if a legacy client needs it'],
  ['register.random_password', 'gives new users a random password; jwt-login registers users with the password the client sends'],
  ['register.force_login', 'opens a WordPress cookie session after registration, which jwt-login does not offer (users.register.signIn answers a JWT instead)'],
  ['register.send_welcome_email', 'sends a welcome mail, which jwt-login does not: the host can send it on the user.registered event'],
  ['reset_password.return_jwt', 'sets a new password on the strength of a JWT alone; jwt-login resets a password only with an emailed one-time code, and a signed-in user changes it at PUT /account/password (account.password) with the current password (or a recent sign-in that was not by password alone)'],
  ['reset_password.send_password_changed_email', 'mails the user after a password reset, which jwt-login does not (it mails a notice only after PUT /account/password): the host can send it on the reset.completed event'],
  ['protect_endpoint.enabled', 'guards WordPress endpoints with the JWT; jwt-login guards only the routes the host wires to its authenticate hook'],
  ['audit_log.enabled', 'keeps an audit log in WordPress; jwt-login emits events (fastify.jwtLogin.events) for the host to store']
]

/** Values that take effect when not empty. */
const LEFT_WHEN_FILLED: ReadonlyArray<readonly [string, string]> = [
  ['authorization.ip_whitelist', IP_ALLOW_LIST],
  ['register.ip_whitelist', IP_ALLOW_LIST],
  ['delete_user.ip_whitelist', IP_ALLOW_LIST],
  ['login.ip_whitelist', IP_ALLOW_LIST],
  ['register.allowed_user_meta', 'lets clients set user meta at registration; jwt-login registers the email, login, display name and password only'],
  ['hooks.enabled_hooks', 'turns on WordPress hooks (PHP actions and filters), which do not run in jwt-login: the host uses its events and options instead'],
  ['jwt_rules.rules', 'accepts JWTs signed by other issuers with other keys; jwt-login accepts only the tokens it issues'],
  ['webhooks.items', 'calls webhooks, which jwt-login does not: the host can call them on its events (fastify.jwtLogin.events)']
]

/** Settings that carry nothing jwt-login needs (or whose whole feature is listed elsewhere). */
const IGNORED = ['authorization.refresh_token_key', 'register.random_password_length', 'reset_password.email_type',
  'delete_user.jwt_delete_by_parameter', 'integrations.login_button_layout']

/** Groups read only for the switch listed above; their other fields go with it. */
const IGNORED_GROUPS = ['login', 'protect_endpoint', 'audit_log', 'webhooks', 'jwt_rules', 'theme',
  'general.security', 'general.request_keys']

/** One import: reads the export group by group and collects what stays behind. */
function importFrom (r: Reader): ImportedSettings {
  const settings = {
    authentication: { enabled: r.on('authorization.enabled') },
    authCodes: readAuthCodes(r),
    login: { allowPasswordHash: false },
    bearer: readBearer(r),
    refresh: readRefresh(r),
    ...readTokenRoutes(r),
    tokens: readTokens(r),
    resetPassword: readResetPassword(r),
    users: { register: readRegister(r), delete: readDelete(r) },
    oauth: { providers: readProviders(r) },
    cors: readCors(r),
    apiKeys: readApiKeys(r)
  }
  readGeneral(r)
  readThirdParty(r)
  for (const [path, reason] of LEFT_WHEN_ON) if (r.on(path)) r.leave(path, reason)
  for (const [path, reason] of LEFT_WHEN_FILLED) if (filled(r.from.value(path))) r.leave(path, reason)
  for (const path of IGNORED) r.from.value(path)
  for (const path of IGNORED_GROUPS) r.from.under(path)
  for (const name of r.from.unread()) {
    r.left.push({ setting: name, reason: 'is not a setting this import reads (unknown, or given twice): check by hand whether it matters' })
  }
  // without keys the settings are not complete yet (see ImportedSettings)
  return { settings: settings as SettingsInput, leftBehind: r.left }
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
  return importFrom(new Reader(new SettingsExport(readExport(json))))
}
