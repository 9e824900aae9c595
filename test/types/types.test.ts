import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// `npm run typecheck` (the first step of `npm test`) compiles the type tests
// (test/types/*.types.ts) with the whole project, so a wrong public type fails
// `npm test` there; this test proves that a wrong type assertion does fail tsc.

const TYPES = dirname(fileURLToPath(import.meta.url))
const ROOT = join(TYPES, '../..')
const TSC = join(ROOT, 'node_modules/.bin/tsc')
const CONFIG = join(TYPES, 'tsconfig.json')
/**
 * Where the canary is compiled: under node_modules, so git, eslint, tap and
 * the project's tsc (which others may run in this checkout meanwhile) never
 * see it, while `fastify` and `@types/node` resolve as for the type tests.
 */
const SCRATCH = join(ROOT, 'node_modules/.cache')

/** Runs tsc on a project: its exit code and its diagnostics, one per line. */
async function typeCheck (project: string): Promise<{ exitCode: number, output: string }> {
  return await new Promise((resolve) => {
    execFile(TSC, ['--noEmit', '--pretty', 'false', '-p', project], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ exitCode: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

/** `line TSxxxx` of each diagnostic tsc reports in `file`. */
function diagnosticsIn (output: string, file: string): string[] {
  return [...output.matchAll(/^(.+)\((\d+),\d+\): error (TS\d+):/gm)]
    .filter(match => match[1]?.endsWith(file) === true)
    .map(match => `${match[2]} ${match[3]}`)
}

/**
 * A type test with three wrong assertions (lines 7-8, 9 and 10) after right
 * ones, importing the package and the helper as the type tests do.
 */
function canarySource (dir: string): string {
  const from = (path: string): string => relative(dir, join(ROOT, path)).replaceAll('\\', '/')
  return [
    "import type { FastifyInstance } from 'fastify'",
    `import type { JwtLoginApi } from '${from('lib/index.js')}'`,
    `import { expectType, type Equal } from '${from('test/types/expect.js')}'`,
    'declare const fastify: FastifyInstance',
    'expectType<JwtLoginApi>(fastify.jwtLogin)',
    "expectType<Equal<typeof fastify.jwtLogin.verify, JwtLoginApi['verify']>>(true)",
    '// @ts-expect-error: nothing is wrong on the next line, so this directive is unused',
    "expectType<string>(fastify.jwtLogin.sign({ ID: 1, user_login: 'ada', user_email: 'ada@example.com', display_name: 'Ada', roles: [] }))",
    'expectType<string>(fastify.jwtLogin.verify)',
    "expectType<Equal<JwtLoginApi['revoke'], JwtLoginApi['verify']>>(true)",
    ''
  ].join('\n')
}

t.test('a wrong type assertion fails the check, on its line', async (t) => {
  await mkdir(SCRATCH, { recursive: true })
  const dir = await mkdtemp(join(SCRATCH, 'jwt-login-types-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  // a copy of the type tests' tsconfig, its base found from the new place, compiling the canary alone
  const config = JSON.parse(await readFile(CONFIG, 'utf8')) as { extends: string }
  const base = relative(dir, join(TYPES, config.extends)).replaceAll('\\', '/')
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ ...config, extends: base, include: ['canary.types.ts'] }))
  await writeFile(join(dir, 'canary.types.ts'), canarySource(dir))

  const { exitCode, output } = await typeCheck(join(dir, 'tsconfig.json'))
  t.not(exitCode, 0, 'tsc fails')
  t.same(diagnosticsIn(output, 'canary.types.ts'), ['7 TS2578', '9 TS2345', '10 TS2345'], 'the unused @ts-expect-error, the wrong type and the wrong equality, nothing else')
  t.match(output, /canary\.types\.ts\(9,\d+\): error TS2345: Argument of type '\(token: string\) => Promise<TokenClaims>' is not assignable to parameter of type 'string'/)
})
