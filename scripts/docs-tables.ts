/**
 * The documentation tables that are generated from the code, so they cannot
 * drift: the settings tables of docs/settings.md (from the TypeBox schema),
 * the error table of docs/errors.md (from `errorDefinitions`) and the exports
 * table of README.md (from the entry points, through the TypeScript compiler).
 *
 * A page marks each generated table with `<!-- generated:KIND ARGS -->` and
 * `<!-- /generated -->`; `npm run docs:tables` rewrites what lies between,
 * and test/docs/docs-tables.test.ts checks that the committed pages are current.
 */
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { SettingsSchema } from '../schemas/settings.js'
import { errorDefinitions } from '../lib/core/errors.js'
import { SETTING_MEANINGS } from './setting-meanings.js'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface SettingRow { path: string, default: string }

interface SchemaNode {
  type?: string
  default?: unknown
  properties?: Record<string, SchemaNode>
  required?: string[]
  patternProperties?: Record<string, SchemaNode>
}

/** A default as the docs write it: strings quoted. */
export function formatDefault (value: unknown): string {
  if (typeof value === 'string') return `\`'${value}'\``
  return `\`${JSON.stringify(value)}\``
}

/**
 * Every setting under `node`. A group (an object with a default, or a required
 * one) is walked; anything else is one row, and a record's entries follow it.
 */
export function settingRows (node: SchemaNode = SettingsSchema as SchemaNode, prefix = ''): SettingRow[] {
  const rows: SettingRow[] = []
  for (const [name, child] of Object.entries(node.properties as Record<string, SchemaNode>)) {
    const path = prefix + name
    const required = node.required?.includes(name) === true
    if (child.type === 'object' && child.properties !== undefined && (child.default !== undefined || required)) {
      rows.push(...settingRows(child, `${path}.`))
      continue
    }
    const fallback = child.default === undefined ? (required ? 'required' : '–') : formatDefault(child.default)
    rows.push({ path, default: fallback })
    const entry = Object.values(child.patternProperties ?? {})[0]
    if (entry !== undefined) rows.push(...settingRows(entry, `${path}.<name>.`))
  }
  return rows
}

function escapeCell (text: string): string {
  return text.replaceAll('|', '\\|')
}

/** The table of the settings under the given top-level groups. */
export function settingsTable (groups: string[], meanings: Record<string, string> = SETTING_MEANINGS): string {
  const rows = settingRows().filter(row => groups.some(group => row.path === group || row.path.startsWith(`${group}.`)))
  const lines = ['| setting | default | meaning |', '| --- | --- | --- |']
  for (const row of rows) {
    const meaning = meanings[row.path]
    if (meaning === undefined) throw new Error(`setting ${row.path} has no meaning in scripts/setting-meanings.ts`)
    lines.push(`| \`${row.path}\` | ${row.default} | ${meaning} |`)
  }
  return lines.join('\n')
}

/** The error table: every entry of `errorDefinitions`, in its order. */
export function errorTable (): string {
  const lines = ['| code | errorCode | status | message |', '| --- | --- | --- | --- |']
  for (const [code, definition] of Object.entries(errorDefinitions)) {
    lines.push(`| ${code} | ${definition.errorCode} | ${definition.statusCode} | ${escapeCell(definition.message)} |`)
  }
  return lines.join('\n')
}

export const ENTRIES: Array<[string, string]> = [
  ['fastify-jwt-login', 'lib/index.ts'],
  ['fastify-jwt-login/redis', 'lib/redis.ts'],
  ['fastify-jwt-login/postgres', 'lib/postgres.ts'],
  ['fastify-jwt-login/nodemailer', 'lib/nodemailer.ts'],
  ['fastify-jwt-login/testing', 'lib/testing.ts'],
  ['fastify-jwt-login/wordpress', 'lib/wordpress.ts'],
  ['fastify-jwt-login/client', 'lib/client.ts'],
  ['fastify-jwt-login/conformance', 'lib/conformance.ts']
]

export interface EntryExports { values: string[], types: string[] }

/** Whether an export is type-only: `export type { … }`, `export { type … }`, or a name that is only a type. */
function isTypeOnly (checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  const declaration = symbol.declarations?.[0]
  if (declaration !== undefined && ts.isExportSpecifier(declaration)) {
    if (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly) return true
  }
  const target = (symbol.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(symbol) : symbol
  return (target.flags & ts.SymbolFlags.Value) === 0
}

/** What each entry point exports, split into runtime values and type-only names. */
export function entryExports (root = ROOT): Map<string, EntryExports> {
  const files = ENTRIES.map(([, file]) => `${root}${file}`)
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true })
  const checker = program.getTypeChecker()
  const result = new Map<string, EntryExports>()
  for (const [entry, file] of ENTRIES) {
    const source = program.getSourceFile(`${root}${file}`) as ts.SourceFile
    const exports: EntryExports = { values: [], types: [] }
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source) as ts.Symbol)) {
      (isTypeOnly(checker, symbol) ? exports.types : exports.values).push(symbol.name)
    }
    result.set(entry, exports)
  }
  return result
}

/** The README's `## Exports` table. */
export function exportsTable (exports: Map<string, EntryExports> = entryExports()): string {
  const names = (list: string[]): string => list.map(name => `\`${name}\``).join(', ')
  const lines = ['| entry | values | types |', '| --- | --- | --- |']
  for (const [entry, { values, types }] of exports) lines.push(`| \`${entry}\` | ${names(values)} | ${names(types)} |`)
  return lines.join('\n')
}

// a region's content never holds a comment, so an empty or broken region cannot swallow the next one
const REGION = /(<!-- generated:([a-z]+)((?: [A-Za-z]+)*) -->)\n(?:(?!<!--)[\s\S])*?(<!-- \/generated -->)/g

/** The page with every generated region rewritten from the code. */
export function renderRegions (page: string, tables: { exports?: () => string } = {}): string {
  return page.replace(REGION, (_match, open: string, kind: string, args: string, close: string) => {
    const wrap = (table: string): string => `${open}\n${table}\n${close}`
    if (kind === 'settings') return wrap(settingsTable(args.trim().split(' ')))
    if (kind === 'errors') return wrap(errorTable())
    if (kind === 'exports') return wrap((tables.exports ?? exportsTable)())
    throw new Error(`unknown generated region "${kind}"`)
  })
}

/** The setting paths the page's settings regions cover, in order. */
export function coveredSettings (page: string): string[] {
  const paths: string[] = []
  for (const match of page.matchAll(REGION)) {
    if (match[2] !== 'settings') continue
    const groups = (match[3] as string).trim().split(' ')
    paths.push(...settingRows().filter(row => groups.some(group => row.path === group || row.path.startsWith(`${group}.`))).map(row => row.path))
  }
  return paths
}

/** The pages with generated regions. */
export const GENERATED_PAGES = ['README.md', 'docs/settings.md', 'docs/errors.md']
