/** `npm run docs:tables`: rewrites the generated tables of the documentation from the code. */
import { readFileSync, writeFileSync } from 'node:fs'
import { GENERATED_PAGES, renderRegions, ROOT } from './docs-tables.js'

for (const page of GENERATED_PAGES) {
  const path = `${ROOT}${page}`
  const before = readFileSync(path, 'utf8')
  const after = renderRegions(before)
  if (after !== before) writeFileSync(path, after)
  console.log(`${after === before ? 'unchanged' : 'updated  '} ${page}`)
}
