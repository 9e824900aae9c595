// What a log line of the plugin carries of an error: its type, code and message, with every value of the call cut out.
import { JwtLoginError } from '../core/errors.js'

/** What stands in for a value of a call or a request in a log line. */
const REDACTED = '[redacted]'

/** What stands in for a message when the values to cut out of it are too many, or too deep, to look through. */
const WITHHELD = '[message withheld: too many values to cut out of it]'

/** How far into the values the strings are looked for: a user record, a mail message, a request body. */
const MAX_DEPTH = 8
const MAX_STRINGS = 2000

/** An error as a log line of the plugin carries it: never its stack, its `cause` or its other fields. */
export interface LoggedError {
  /** The error's class name (`typeof` for a thrown non-object). */
  type: string
  /** Its `code`, when a string or a number. */
  code?: string | number
  /** Its message, with every value it was told about cut out. */
  message: string
}

/**
 * Every string in `values` (and in their arrays and objects' own enumerable
 * properties, to `MAX_DEPTH`), or `null` when there are more than
 * `MAX_STRINGS` or they are deeper than that: then nothing may be logged.
 */
function stringsIn (values: readonly unknown[]): Set<string> | null {
  const found = new Set<string>()
  const seen = new WeakSet<object>()
  const visit = (value: unknown, depth: number): boolean => {
    if (typeof value === 'string') {
      if (value !== '') found.add(value)
      return found.size <= MAX_STRINGS
    }
    if (typeof value !== 'object' || value === null || seen.has(value)) return true
    if (depth >= MAX_DEPTH) return false
    seen.add(value)
    return Object.values(value).every(item => visit(item, depth + 1))
  }
  try {
    return values.every(value => visit(value, 0)) ? found : null
  } catch {
    // a getter that throws: the values cannot be read, so neither can the message be cleared
    return null
  }
}

/**
 * The ways an error may quote `value`: as it is, URL-encoded, escaped in
 * JSON, and each line of it (a mail's text quoted a line at a time).
 */
function formsOf (value: string, forms: Set<string>): void {
  forms.add(value).add(encodeURIComponent(value)).add(JSON.stringify(value).slice(1, -1))
  if (!value.includes('\n')) return
  for (const line of value.split('\n')) {
    const trimmed = line.trim()
    if (trimmed !== '') forms.add(trimmed)
  }
}

/**
 * `text` with every string found in `values` replaced by `[redacted]`, in
 * any letter case (an email address comes back lower-cased) and in the
 * forms of `formsOf`. Only called once something failed.
 */
function redactValues (text: string, values: readonly unknown[]): string {
  const strings = stringsIn(values)
  if (strings === null) return WITHHELD
  const forms = new Set<string>()
  for (const value of strings) formsOf(value, forms)
  if (forms.size === 0) return text
  // the longest first, so that a value containing another is cut out whole
  const pattern = [...forms].sort((a, b) => b.length - a.length).map(form => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')
  return text.replace(new RegExp(pattern, 'gi'), REDACTED)
}

function typeOf (thrown: unknown): string {
  if (thrown === null) return 'null'
  if (typeof thrown !== 'object') return typeof thrown
  const name: unknown = (thrown as { constructor?: { name?: unknown } }).constructor?.name
  return typeof name === 'string' && name !== '' ? name : 'Object'
}

function messageOf (thrown: unknown): string {
  if (typeof thrown === 'string') return thrown
  const message: unknown = (thrown as { message?: unknown } | null)?.message
  return typeof message === 'string' ? message : ''
}

function codeOf (thrown: unknown): string | number | undefined {
  const code: unknown = (thrown as { code?: unknown } | null)?.code
  return typeof code === 'string' || typeof code === 'number' ? code : undefined
}

/**
 * What a log line carries of an error: its class name, its code and its
 * message with every string of `values` cut out (the call's arguments, the
 * request's fields). Never the stack (its first line is the message as
 * thrown), the `cause` or any other field, which may hold the input. A
 * jwt-login error that wraps a dependency's failure (a store's, a port's)
 * is told by that failure. Without a prototype, so that pino's `err`
 * serializer keeps `type` as it is (it adds an empty `stack`).
 */
export function loggedError (thrown: unknown, values: readonly unknown[] = []): LoggedError {
  const error = thrown instanceof JwtLoginError && thrown.cause !== undefined ? thrown.cause : thrown
  const code = codeOf(error)
  const logged: LoggedError = Object.assign(Object.create(null) as LoggedError, { type: typeOf(error), message: redactValues(messageOf(error), values) })
  if (code !== undefined) logged.code = typeof code === 'string' ? redactValues(code, values) : code
  return logged
}

/**
 * What a host port (the user adapter, the two-factor port, a mailer, the
 * password policy, a second-factor gate) threw or rejected with, as the
 * plugin passes it on: which port and method failed, the original's class
 * name, its `code`, and its message with every value the call received cut
 * out. It keeps no reference to the original: no `cause`, no stack of it.
 */
export class HostPortError extends Error {
  /** The port: `users`, `twoFactor.port`, `passkeys.port`, `mailer`, `twoFactor.mailer`, `passwordPolicy` or `secondFactor`. */
  readonly port: string
  /** The method that failed (the port's name again for a function port). */
  readonly method: string
  /** The class name of what the port threw. */
  readonly originalType: string
  /** The `code` of what the port threw, when it was a string (redacted) or a number. */
  readonly code: string | number | undefined

  constructor (port: string, method: string, thrown: unknown, args: readonly unknown[]) {
    const logged = loggedError(thrown, args)
    const label = port === method ? port : `${port}.${method}`
    const code = logged.code === undefined ? '' : ` (${logged.code})`
    super(`${label} failed: ${logged.type}${code}${logged.message === '' ? '' : `: ${logged.message}`}`)
    this.name = 'HostPortError'
    this.port = port
    this.method = method
    this.originalType = logged.type
    this.code = logged.code
  }
}
