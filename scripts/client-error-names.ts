/**
 * The client's table of error names (lib/client/error-names.ts), made from
 * the server's one table of errors: for each number and status, the first
 * code that answers it. `npm run docs:tables` writes it; a test checks it.
 */
import { errorDefinitions } from '../lib/core/errors.js'

export function clientErrorNames (): string {
  const names = new Map<string, string>()
  for (const [code, { errorCode, statusCode }] of Object.entries(errorDefinitions)) {
    const key = `${errorCode}/${statusCode}`
    if (!names.has(key)) names.set(key, code.slice('ERR_JWT_LOGIN_'.length))
  }
  const lines = [...names].map(([key, name]) => `  '${key}': '${name}'`)
  return [
    '// Written by `npm run docs:tables` from lib/core/errors.ts: do not edit.',
    '/** `<errorCode>/<status>` → the code\'s name without `ERR_JWT_LOGIN_` (the first code of the table that answers it). */',
    'export const ERROR_NAMES: Readonly<Record<string, string>> = {',
    lines.join(',\n'),
    '}',
    ''
  ].join('\n')
}
