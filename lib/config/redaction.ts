/** The settings the host sees: a frozen copy of the settings in force, every secret redacted. */
import type { Settings } from './settings.js'

/** What stands in for a secret in the host's view of the settings. */
export const REDACTED = '[redacted]'

/** Settings the host may read but not change. */
export type DeepReadonly<T> = T extends Array<infer E> ? ReadonlyArray<DeepReadonly<E>> : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T

function deepFreeze<T> (value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value as DeepReadonly<T>
}

const views = new WeakMap<Settings, DeepReadonly<Settings>>()

/**
 * The settings that `jwtLogin.settings` shows: a frozen copy with every
 * secret (HMAC secrets, private keys, auth codes, OAuth client secrets)
 * replaced by `'[redacted]'`, so a host that logs or serves them leaks
 * nothing. Made once per settings object.
 */
export function redactSettings (settings: Settings): DeepReadonly<Settings> {
  let view = views.get(settings)
  if (view === undefined) {
    const copy = structuredClone(settings)
    copy.tokens.keys = copy.tokens.keys.map(key => ({
      ...key,
      ...(key.secret === undefined ? {} : { secret: REDACTED }),
      ...(key.privateKey === undefined ? {} : { privateKey: REDACTED })
    }))
    copy.authCodes.codes = copy.authCodes.codes.map(code => ({ ...code, code: REDACTED }))
    for (const provider of Object.values(copy.oauth.providers)) {
      if (provider.clientSecret !== null) provider.clientSecret = REDACTED
    }
    view = deepFreeze(copy)
    views.set(settings, view)
  }
  return view
}
