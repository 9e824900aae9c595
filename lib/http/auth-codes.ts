import { safeEqual } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import type { Settings } from '../config/settings.js'

/**
 * Checks an auth code against every configured code in constant time: each
 * comparison takes the same time whatever the lengths, and none stops early.
 */
export function checkAuthCode (presented: unknown, codes: Settings['authCodes']['codes'], now: number): void {
  if (presented === undefined || presented === null || presented === '') {
    throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_MISSING')
  }
  if (typeof presented !== 'string' || presented.includes('\u0000')) throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  let match = false
  for (const code of codes) {
    const equal = safeEqual(presented, code.code)
    const live = code.expiresAt === null || code.expiresAt > now
    match = (equal && live) || match
  }
  if (!match) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_CODE_INVALID')
}
