import type { JwtLoginErrorCode } from '../core/errors.js'
import { ERROR_NAMES } from './error-names.js'

/** What the client knows of a refused call: the status, the envelope's number and its name, and `Retry-After`. */
export class JwtLoginClientError extends Error {
  /** The HTTP status; 0 when no answer came (the request failed before it). */
  readonly status: number
  /** The envelope's `errorCode`; `undefined` when the answer was not jwt-login's envelope. */
  readonly errorCode: number | undefined
  /** The code's name, as the server's `JwtLoginError#code` spells it (`ERR_JWT_LOGIN_WRONG_CREDENTIALS`). */
  readonly code: JwtLoginErrorCode | undefined
  /** Seconds to wait, from `Retry-After` (429, and a 503 while password checks are queued). */
  readonly retryAfter: number | undefined

  constructor (status: number, message: string, errorCode?: number, retryAfter?: number) {
    super(message)
    this.name = 'JwtLoginClientError'
    this.status = status
    this.errorCode = errorCode
    this.code = codeOf(status, errorCode)
    this.retryAfter = retryAfter
  }
}

/** The name of an `errorCode` answered with `status`. */
export function codeOf (status: number, errorCode: number | undefined): JwtLoginErrorCode | undefined {
  const name = ERROR_NAMES[`${errorCode}/${status}`]
  return name === undefined ? undefined : `ERR_JWT_LOGIN_${name}` as JwtLoginErrorCode
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date. */
export function retryAfterOf (value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const seconds = /^\d+$/.test(value) ? Number(value) : Math.ceil((Date.parse(value) - now) / 1000)
  return Number.isNaN(seconds) ? undefined : Math.max(0, seconds)
}
