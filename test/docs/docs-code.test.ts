import ts from 'typescript'
import t from 'tap'
import { codeBlocks, docPages, readPage, ROOT, type CodeBlock } from '../helpers/markdown.js'

/** Where the blocks live while they are checked: in memory only, under the repository so its package.json and node_modules apply. */
const DIR = `${ROOT}.docs-check/`

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  isolatedModules: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
  noEmit: true,
  baseUrl: ROOT,
  // the package's entries, as a host that installed jwt-login imports them
  paths: {
    'fastify-jwt-login': ['lib/index.ts'],
    'fastify-jwt-login/redis': ['lib/redis.ts'],
    'fastify-jwt-login/postgres': ['lib/postgres.ts'],
    'fastify-jwt-login/nodemailer': ['lib/nodemailer.ts'],
    'fastify-jwt-login/testing': ['lib/testing.ts'],
    'fastify-jwt-login/wordpress': ['lib/wordpress.ts'],
    'fastify-jwt-login/client': ['lib/client.ts'],
    'fastify-jwt-login/conformance': ['lib/conformance.ts']
  }
}

/** A block as a module of its own: a block without import or export gets `export {}`, so blocks never share a scope. */
function moduleSource (code: string): string {
  return /^(import|export)\s/m.test(code) ? code : `${code}\nexport {}\n`
}

function fileName (block: Pick<CodeBlock, 'page' | 'line'>): string {
  return `${DIR}${block.page.replaceAll('/', '_')}_${block.line}.ts`
}

/** Type-checks the blocks in one program; answers `page:line: message` per diagnostic, by the line in the page. */
function check (blocks: CodeBlock[]): string[] {
  const files = new Map(blocks.map(block => [fileName(block), { block, text: moduleSource(block.code) }]))
  const host = ts.createCompilerHost(OPTIONS)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name)
  host.readFile = (name) => files.get(name)?.text ?? readFile.call(host, name)
  host.getSourceFile = (name, language, ...rest) => {
    const file = files.get(name)
    return file === undefined ? getSourceFile.call(host, name, language, ...rest) : ts.createSourceFile(name, file.text, language)
  }
  const program = ts.createProgram([...files.keys()], OPTIONS, host)
  const problems = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  for (const [name, { block }] of files) {
    const source = program.getSourceFile(name) as ts.SourceFile
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      problems.push(`${block.page}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`)
    }
  }
  return problems
}

const blocks = docPages().flatMap(page => codeBlocks(page, readPage(page))).filter(block => block.lang === 'ts' || block.lang === 'typescript')

// Two blocks that must fail keep the check honest: a class imported from the entry it left, and a wrong type.
const canaries: CodeBlock[] = [
  { page: 'canary.md', line: 1, lang: 'ts', code: "import { MemoryUserAdapter } from 'fastify-jwt-login'\nconsole.log(MemoryUserAdapter)" },
  { page: 'canary.md', line: 10, lang: 'ts', code: "import { RedisStore } from 'fastify-jwt-login/redis'\nconst store: number = new RedisStore({})\nconsole.log(store)" }
]

t.test('every ts code block of README.md and docs/*.md compiles on its own against the package', async (t) => {
  t.ok(blocks.length >= 20, `${blocks.length} blocks found`)
  const problems = check([...blocks, ...canaries])
  t.same(problems.filter(problem => !problem.startsWith('canary.md')), [], 'no diagnostics in the documentation')
  t.match(problems.filter(problem => problem.startsWith('canary.md:2:')), [/has no exported member 'MemoryUserAdapter'/], 'an import from the wrong entry fails')
  t.match(problems.filter(problem => problem.startsWith('canary.md:12:')), [/'RedisStore' is not assignable to type 'number'/], 'a type error fails, on its line in the page')
})

t.test('a block without imports becomes a module of its own', async (t) => {
  t.equal(moduleSource('const a = 1'), 'const a = 1\nexport {}\n')
  t.equal(moduleSource("import x from 'y'"), "import x from 'y'")
})
