import { safeEqual } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'

/** An auth code as the checks need it: its expiry in ms (`null`: none), and the role it registers users with. */
export interface AuthCodeEntry {
  code: string
  expiresAt: number | null
  role?: string | null
}

/**
 * The live code `presented` is, compared in constant time with every
 * configured code: each comparison takes the same time whatever the
 * lengths, and none stops early. `undefined` when none matches.
 */
export function matchAuthCode<C extends AuthCodeEntry> (presented: string, codes: readonly C[], now: number): C | undefined {
  let match: C | undefined
  for (const code of codes) {
    const equal = safeEqual(presented, code.code)
    const live = code.expiresAt === null || code.expiresAt > now
    if (equal && live && match === undefined) match = code
  }
  return match
}

/** Checks an auth code, as `present` read it, against every configured code (`matchAuthCode`). */
export function checkAuthCode (presented: string | undefined, codes: readonly AuthCodeEntry[], now: number): void {
  if (presented === undefined || presented === '') throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_MISSING')
  if (matchAuthCode(presented, codes, now) === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_INVALID')
}
