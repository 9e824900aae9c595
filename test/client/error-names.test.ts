// lib/client/error-names.ts is what `npm run docs:tables` writes from lib/core/errors.ts: a new error code without a new table fails here.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { codeOf } from '../../lib/client/errors.js'
import { ERROR_NAMES } from '../../lib/client/error-names.js'
import { errorDefinitions, type JwtLoginErrorCode } from '../../lib/index.js'
import { clientErrorNames } from '../../scripts/client-error-names.js'

t.test('the file is the one the script makes now', async (t) => {
  const file = await readFile(new URL('../../lib/client/error-names.ts', import.meta.url), 'utf8')
  t.equal(file, clientErrorNames(), 'run `npm run docs:tables`')
})

t.test('every number and status of the server\'s table gets a name of a code that answers it', async (t) => {
  for (const [code, { errorCode, statusCode }] of Object.entries(errorDefinitions) as Array<[JwtLoginErrorCode, { errorCode: number, statusCode: number }]>) {
    const name = codeOf(statusCode, errorCode)
    t.ok(name !== undefined && errorDefinitions[name].errorCode === errorCode && errorDefinitions[name].statusCode === statusCode, `${code} (${errorCode}/${statusCode}) → ${String(name)}`)
  }
  t.equal(Object.keys(ERROR_NAMES).length, new Set(Object.values(errorDefinitions).map(({ errorCode, statusCode }) => `${errorCode}/${statusCode}`)).size)
  t.equal(codeOf(401, undefined), undefined)
})
