// A login for a user the plugin creates (a provider's or sign-in by email's new user): from the address, made unique.
import type { UserAdapter } from '../adapters/users.js'
import { randomCode } from '../core/crypto.js'

/** How many numbered logins are tried before a random suffix. */
const MAX_LOGIN_ATTEMPTS = 20

/** A login from the email's local part (without a `+tag`), made unique with a number. */
export async function uniqueLogin (users: UserAdapter<any>, email: string): Promise<string> {
  const local = (email.split('@')[0] as string).split('+')[0] as string
  const base = local.toLowerCase().replace(/[^a-z0-9._-]+/g, '').slice(0, 50) || 'user'
  for (let n = 1; n <= MAX_LOGIN_ATTEMPTS; n++) {
    const candidate = n === 1 ? base : `${base}${n}`
    if (await users.findByLogin(candidate) === null) return candidate
  }
  return `${base}-${randomCode(12, '0123456789abcdef')}`
}
