import { safeEqual } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import type { Settings } from '../config/settings.js'

/**
 * Checks an auth code, as `present` read it, against every configured code
 * in constant time: each comparison takes the same time whatever the
 * lengths, and none stops early.
 */
export function checkAuthCode (presented: string | undefined, codes: Settings['authCodes']['codes'], now: number): void {
  if (presented === undefined || presented === '') throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_MISSING')
  let match = false
  for (const code of codes) {
    const equal = safeEqual(presented, code.code)
    const live = code.expiresAt === null || code.expiresAt > now
    match = (equal && live) || match
  }
  if (!match) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_INVALID')
}
