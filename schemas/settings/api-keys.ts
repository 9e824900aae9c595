// The settings group of API keys: personal keys for scripts and integrations, the scopes the host declares, their lifetimes and limits.
import { Type } from '@sinclair/typebox'
import { DurationOr, Flag, Group, Limit } from './parts.js'

/** A scope the host declares: short, lower case, no space (`orders:read`, `reports.export`). */
export const API_KEY_SCOPE_PATTERN = '^[a-z][a-z0-9_.:-]{0,63}$'

/** A header name a key may come in: not `Authorization`, which takes it as a Bearer token anyway. */
export const API_KEY_HEADER_PATTERN = '^(?![Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]$)[A-Za-z][A-Za-z0-9-]{0,63}$'

/**
 * Request headers that mean something of their own (sent by clients,
 * browsers and proxies for other reasons), in lower case: `apiKeys.header`
 * may name none of them, nor any `sec-` or `proxy-` header, or a request
 * carrying both a token and that header would be refused.
 */
export const STANDARD_REQUEST_HEADERS: readonly string[] = [
  'a-im', 'accept', 'accept-charset', 'accept-datetime', 'accept-encoding', 'accept-language', 'access-control-request-headers',
  'access-control-request-method', 'authorization', 'cache-control', 'connection', 'content-encoding', 'content-length', 'content-md5',
  'content-type', 'cookie', 'date', 'dnt', 'early-data', 'expect', 'forwarded', 'from', 'host', 'http2-settings', 'if-match',
  'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'keep-alive', 'max-forwards', 'origin', 'pragma', 'prefer',
  'priority', 'range', 'referer', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'upgrade-insecure-requests', 'user-agent', 'via',
  'warning', 'x-csrf-token', 'x-correlation-id', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-http-method-override',
  'x-real-ip', 'x-request-id', 'x-requested-with'
]

/** Whether `name` is a standard request header (`STANDARD_REQUEST_HEADERS`, or `sec-…`, `proxy-…`), in any case. */
export function isStandardRequestHeader (name: string): boolean {
  const lower = name.toLowerCase()
  return STANDARD_REQUEST_HEADERS.includes(lower) || lower.startsWith('sec-') || lower.startsWith('proxy-')
}

/** The key's recognisable prefix, for secret scanners: lower-case letters and digits, no `_` (the key's separator). */
export const API_KEY_PREFIX_PATTERN = '^[a-z][a-z0-9]{1,15}$'

/** Personal API keys (`/account/api-keys`, `authenticateWith({ apiKey: true })`). */
export const API_KEY_SETTINGS = {
  apiKeys: Group({
    /** The three routes and keys on host routes; off, the routes answer 403 / 253 and no key is taken. */
    enabled: Flag(false),
    /**
     * Users manage their own keys at `/account/api-keys`; off, those routes
     * answer 403 / 253 and only the host mints keys (`createApiKey`), which
     * still work on host routes.
     */
    selfService: Flag(true),
    /** The header a key may come in, besides `Authorization: Bearer` (a header name: letters, digits and `-`). */
    header: Type.Optional(Type.String({ pattern: API_KEY_HEADER_PATTERN, default: 'X-API-Key' })),
    /** What every key starts with, then `_`: register `<prefix>_` with secret scanners. */
    prefix: Type.Optional(Type.String({ pattern: API_KEY_PREFIX_PATTERN, default: 'jwtl' })),
    /** The scopes a key may carry, declared by the host; a key asks for some of them. */
    scopes: Type.Optional(Type.Array(Type.String({ pattern: API_KEY_SCOPE_PATTERN }), { maxItems: 100, uniqueItems: true, default: [] })),
    /** A key's lifetime: `default` when `expires_in` is not given, between `min` and `max` when it is (at most 5 years). */
    lifetime: Group({
      default: DurationOr('90d'),
      min: DurationOr('1h'),
      max: DurationOr('365d')
    }),
    /** Live keys one user may hold; one more answers 409 / 257. */
    maxPerUser: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    limits: Group({
      /** Requests per key in a window; over it 429 / 256 with `Retry-After`. */
      perKey: Limit(600, '1m'),
      /** Wrong keys (unknown, revoked, expired, malformed) per client IP in a window; past it every key from that IP answers 429 / 200 with `Retry-After`. */
      wrongKeysPerIp: Limit(20, '15m')
    })
  })
}
