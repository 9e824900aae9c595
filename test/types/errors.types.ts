// Type tests of the errors a host catches: `JwtLoginError`, its `code` union,
// `isJwtLoginError` and `errorDefinitions`.
import { errorDefinitions, HostPortError, isJwtLoginError, JwtLoginError, JwtLoginSettingsError, type JwtLoginErrorCode } from '../../lib/index.js'
import { expectType, type Equal } from './expect.js'

declare const error: JwtLoginError
declare const thrown: unknown

expectType<Error>(error)
expectType<Equal<typeof error.code, JwtLoginErrorCode>>(true)
expectType<number>(error.errorCode)
expectType<number>(error.statusCode)
expectType<Equal<typeof error.retryAfter, number | undefined>>(true)
expectType<Equal<typeof error.wwwAuthenticate, string | undefined>>(true)

// the code is a union of literals, so a host narrows on it
if (error.code === 'ERR_JWT_LOGIN_TOKEN_EXPIRED') {
  expectType<Equal<typeof error.code, 'ERR_JWT_LOGIN_TOKEN_EXPIRED'>>(true)
}
expectType<JwtLoginErrorCode>('ERR_JWT_LOGIN_RATE_LIMITED')

// @ts-expect-error: a misspelt code has no overlap with the union
if (error.code === 'ERR_JWT_LOGIN_TOKEN_EXPIRD') throw error

// @ts-expect-error: not a code
expectType<JwtLoginErrorCode>('ERR_JWT_LOGIN_NOPE')

// @ts-expect-error: the code is read-only
error.code = 'ERR_JWT_LOGIN_BAD_REQUEST'

// a host may throw one, with a cause and a Retry-After
expectType<JwtLoginError>(new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { cause: new Error('busy'), retryAfter: 30 }))

// @ts-expect-error: only a code of the table
expectType<JwtLoginError>(new JwtLoginError('ERR_SOMETHING'))

// @ts-expect-error: retryAfter is in seconds, a number
expectType<JwtLoginError>(new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: '30' }))

// isJwtLoginError narrows what a catch holds
if (isJwtLoginError(thrown)) {
  expectType<Equal<typeof thrown, JwtLoginError>>(true)
  expectType<JwtLoginErrorCode>(thrown.code)
}

// @ts-expect-error: unknown until narrowed
expectType<JwtLoginErrorCode>(thrown.code)

// errorDefinitions: keyed by exactly the codes
expectType<Equal<keyof typeof errorDefinitions, JwtLoginErrorCode>>(true)
const expired = errorDefinitions.ERR_JWT_LOGIN_TOKEN_EXPIRED
expectType<{ readonly errorCode: number, readonly statusCode: number, readonly message: string, readonly wwwAuthenticate?: string }>(expired)
expectType<number>(errorDefinitions[error.code].statusCode)

// @ts-expect-error: no entry for an unknown code
expectType<unknown>(errorDefinitions.ERR_JWT_LOGIN_NOPE)

// the other errors a host may catch: a refused setting or option, a failing port
const settingsError = expectType<Error>(new JwtLoginSettingsError('tokens/keys', 'must not be empty'))
if (settingsError instanceof JwtLoginSettingsError) {
  expectType<Equal<typeof settingsError.code, 'ERR_JWT_LOGIN_INVALID_SETTINGS'>>(true)
  expectType<string>(settingsError.path)
}
declare const portError: HostPortError
expectType<Error>(portError)
expectType<[port: string, method: string, originalType: string]>([portError.port, portError.method, portError.originalType])
expectType<Equal<typeof portError.code, string | number | undefined>>(true)
