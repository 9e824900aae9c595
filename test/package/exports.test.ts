/**
 * The README's "Exports" table is the public API: each entry point exports
 * exactly the values and types it lists, no more (nothing internal leaks)
 * and no less (nothing documented is missing).
 */
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const root = fileURLToPath(new URL('../..', import.meta.url))
const ENTRIES: Record<string, string> = {
  'fastify-jwt-login': 'lib/index.ts',
  'fastify-jwt-login/redis': 'lib/redis.ts',
  'fastify-jwt-login/postgres': 'lib/postgres.ts',
  'fastify-jwt-login/nodemailer': 'lib/nodemailer.ts',
  'fastify-jwt-login/testing': 'lib/testing.ts',
  'fastify-jwt-login/wordpress': 'lib/wordpress.ts',
  'fastify-jwt-login/client': 'lib/client.ts',
  'fastify-jwt-login/conformance': 'lib/conformance.ts'
}

/** The README's rows: entry → documented value and type names. */
async function documented (): Promise<Map<string, { values: string[], types: string[] }>> {
  const readme = await readFile(`${root}README.md`, 'utf8')
  const section = readme.split(/^## Exports$/m)[1]?.split(/^## /m)[0] ?? ''
  const names = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).sort()
  const rows = new Map<string, { values: string[], types: string[] }>()
  for (const [, entry, values, types] of section.matchAll(/^\|\s*`([^`]+)`\s*\|([^|]*)\|([^|]*)\|\s*$/gm)) {
    rows.set(entry as string, { values: names(values as string), types: names(types as string) })
  }
  return rows
}

/** Every name an entry exports, values and types, as the compiler sees it. */
function compiledExports (): Map<string, string[]> {
  const files = Object.values(ENTRIES).map((file) => `${root}${file}`)
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true })
  const checker = program.getTypeChecker()
  const result = new Map<string, string[]>()
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(`${root}${file}`) as ts.SourceFile
    const symbol = checker.getSymbolAtLocation(source) as ts.Symbol
    result.set(entry, checker.getExportsOfModule(symbol).map((s) => s.name).sort())
  }
  return result
}

const rows = await documented()
const compiled = compiledExports()

t.same([...rows.keys()].sort(), Object.keys(ENTRIES).sort(), 'the README documents each entry point once')

for (const [entry, file] of Object.entries(ENTRIES)) {
  t.test(entry, async (t) => {
    const row = rows.get(entry) ?? { values: [], types: [] }
    const values = Object.keys(await import(`../../${file.replace(/\.ts$/, '.js')}`)).sort()
    t.same(row.values, values, 'the runtime exports are the documented values')
    const types = (compiled.get(entry) as string[]).filter((name) => !values.includes(name))
    t.same(row.types, types, 'the type-only exports are the documented types')
  })
}
