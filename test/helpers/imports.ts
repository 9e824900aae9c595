/**
 * Reading the import graph of the package's sources for the architecture
 * test: every import of a file as written, where relative ones lead, and the
 * cycles of the graph they make. Parsing only: no program, no type checking.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { posix } from 'node:path'
import ts from 'typescript'

/** One import or re-export of a file, of any kind. */
export interface ModuleImport {
  /** The module as written: `./clock.js`, `fastify`. */
  specifier: string
  /** Erased by the compiler: `import type`, `export type ... from`, `typeof import('...')`. */
  typeOnly: boolean
}

/** Every `.ts` file under the folders, by its path from the root (`lib/core/clock.ts`), with its text. */
export function readSources (root: string, folders: string[]): Map<string, string> {
  const paths = folders.flatMap(folder => readdirSync(posix.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.ts'))
    .map(name => posix.join(folder, name)))
  return new Map(paths.sort().map(path => [path, readFileSync(posix.join(root, path), 'utf8')]))
}

/**
 * The imports of a file: import and export declarations, `typeof import()`
 * types and dynamic `import()` of a string literal. Under
 * verbatimModuleSyntax only the statement-level `type` keyword erases an
 * import: `import { type A } from 'a'` still loads `a` at runtime.
 */
export function importsOf (path: string, text: string): ModuleImport[] {
  const found: ModuleImport[] = []
  const visit = (node: ts.Node): void => {
    const specifier = specifierOf(node)
    if (specifier !== undefined) found.push({ specifier, typeOnly: isTypeOnly(node) })
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS))
  return found
}

/** The module a node imports, if it is an import of a literal module. */
function specifierOf (node: ts.Node): string | undefined {
  const literal = ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
    ? node.moduleSpecifier
    : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
      ? node.argument.literal
      : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
        ? node.arguments[0]
        : undefined
  return literal !== undefined && ts.isStringLiteralLike(literal) ? literal.text : undefined
}

/** Whether an import node is erased by the compiler. */
function isTypeOnly (node: ts.Node): boolean {
  if (ts.isImportDeclaration(node)) return node.importClause?.isTypeOnly === true
  if (ts.isExportDeclaration(node)) return node.isTypeOnly
  return ts.isImportTypeNode(node)
}

/** The file a relative specifier names, from the root (`.js` naming the `.ts` source); undefined for a package. */
export function resolveImport (from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined
  return posix.join(posix.dirname(from), specifier).replace(/\.js$/, '.ts')
}

/**
 * The cycles of a graph of files, one for each strongly connected part: the
 * shortest through the part's first file by name, ending where it starts.
 * Sorted by that file, so the list does not depend on the order of reading.
 */
export function findCycles (graph: Map<string, Set<string>>): string[][] {
  return stronglyConnected(graph)
    .filter(part => part.length > 1 || part.some(node => graph.get(node)?.has(node)))
    .map(part => shortestCycle(graph, new Set(part), [...part].sort()[0] as string))
    .sort((a, b) => (a[0] as string).localeCompare(b[0] as string))
}

/** The strongly connected parts of a graph (Tarjan's algorithm). */
function stronglyConnected (graph: Map<string, Set<string>>): string[][] {
  const seen = new Map<string, { index: number, low: number }>()
  const stack: string[] = []
  const parts: string[][] = []
  const visit = (node: string): void => {
    const mark = { index: seen.size, low: seen.size }
    seen.set(node, mark)
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (!seen.has(next)) visit(next)
      if (stack.includes(next)) mark.low = Math.min(mark.low, (seen.get(next) as { low: number }).low)
    }
    if (mark.low === mark.index) parts.push(stack.splice(stack.indexOf(node)))
  }
  for (const node of graph.keys()) if (!seen.has(node)) visit(node)
  return parts
}

/** The shortest way from a file back to itself inside its strongly connected part (breadth first). */
function shortestCycle (graph: Map<string, Set<string>>, part: Set<string>, start: string): string[] {
  const cameFrom = new Map<string, string>()
  const queue = [start]
  for (const node of queue) {
    for (const next of graph.get(node) ?? []) {
      if (part.has(next) && next !== start && !cameFrom.has(next)) {
        cameFrom.set(next, node)
        queue.push(next)
      }
    }
  }
  // A strongly connected part always leads back to its start; the first in breadth order is the nearest.
  const last = queue.find(node => graph.get(node)?.has(start)) as string
  const path = [last]
  for (let node = cameFrom.get(last); node !== undefined; node = cameFrom.get(node)) path.unshift(node)
  return [...path, start]
}
