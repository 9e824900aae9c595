/** `npm run docs:tables`: rewrites the generated tables of the documentation from the code. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { clientErrorNames } from './client-error-names.js'
import { GENERATED_PAGES, renderRegions, ROOT } from './docs-tables.js'

for (const page of GENERATED_PAGES) {
  const path = `${ROOT}${page}`
  const before = readFileSync(path, 'utf8')
  const after = renderRegions(before)
  if (after !== before) writeFileSync(path, after)
  console.log(`${after === before ? 'unchanged' : 'updated  '} ${page}`)
}

const names = `${ROOT}lib/client/error-names.ts`
const table = clientErrorNames()
const was = existsSync(names) ? readFileSync(names, 'utf8') : ''
if (was !== table) writeFileSync(names, table)
console.log(`${was === table ? 'unchanged' : 'updated  '} lib/client/error-names.ts`)
