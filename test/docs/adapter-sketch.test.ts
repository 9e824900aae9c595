// Issue 24: the documentation's code imports nothing a host does not install; the user-adapter sketch only jwt-login.
import ts from 'typescript'
import t from 'tap'
import { codeBlocks, docPages, readPage, type CodeBlock } from '../helpers/markdown.js'

/** The modules a block imports: import and export declarations, `import()` and `require()`. */
function importsOf (code: string): string[] {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.ES2022, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text)
    }
    if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      const [first] = node.arguments
      if (first !== undefined && ts.isStringLiteral(first)) found.push(first.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** `page:line: imports argon2` for each block that imports it: the host has no argon2 of its own (jwt-login's is hoisted only by npm). */
function argon2Imports (blocks: CodeBlock[]): string[] {
  return blocks.filter(block => importsOf(block.code).includes('argon2')).map(block => `${block.page}:${block.line}: imports argon2`)
}

const scripts = docPages().flatMap(page => codeBlocks(page, readPage(page))).filter(block => ['ts', 'typescript', 'js', 'javascript'].includes(block.lang))

t.test('no code block of README.md and docs/*.md imports argon2: hashPassword and verifyPasswordHash come from jwt-login', async (t) => {
  t.ok(scripts.length >= 20, `${scripts.length} blocks found`)
  t.same(argon2Imports(scripts), [])
})

t.test('the user-adapter sketch imports only jwt-login, and uses its password functions', async (t) => {
  const sketches = codeBlocks('docs/adapters.md', readPage('docs/adapters.md')).filter(block => block.lang === 'ts' && block.code.includes('UserAdapter<'))
  t.equal(sketches.length, 1, 'one sketch')
  const [sketch] = sketches as [CodeBlock]
  t.same(importsOf(sketch.code), ['fastify-jwt-login'])
  t.match(sketch.code, /verifyPassword: .*verifyPasswordHash\(/, 'verifyPassword checks with verifyPasswordHash')
  t.match(sketch.code, /setPassword: .*hashPassword\(/, 'setPassword stores a hash of hashPassword')
})

t.test('the check finds argon2 however it is imported', async (t) => {
  const forms = [
    "import argon2 from 'argon2'",
    'import * as argon2 from "argon2"',
    "import { hash } from 'argon2'",
    "export { verify } from 'argon2'",
    "const argon2 = await import('argon2')",
    "const argon2 = require('argon2')"
  ]
  const blocks = forms.map((code, index): CodeBlock => ({ page: 'canary.md', line: index + 1, lang: 'ts', code: `${code}\nconsole.log(1)` }))
  t.same(argon2Imports(blocks), forms.map((_, index) => `canary.md:${index + 1}: imports argon2`))
  t.same(argon2Imports([{ page: 'canary.md', line: 9, lang: 'ts', code: "import { hashPassword } from 'fastify-jwt-login'\n// argon2 is jwt-login's" }]), [], 'a mention is no import')
  t.same(importsOf("import type { X } from 'a'\nexport * from 'b'\nexport const c = 1\nconst d = require(e)"), ['a', 'b'], 'only string specifiers')
})
