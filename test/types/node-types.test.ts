/**
 * The published declarations under the current @types/node: a strict host
 * with library checking on (`skipLibCheck: false`, no DOM library) imports
 * every public entry of the package and compiles. The project itself builds
 * against the oldest @types/node it supports (`@types/node`); the current
 * release is installed beside it as `@types/node-current` (an npm alias).
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')
const CURRENT = join(ROOT, 'node_modules/@types/node-current')
/** Under node_modules, as in types.test.ts: git, eslint, tap and the project's tsc never see the fixture. */
const SCRATCH = join(ROOT, 'node_modules/.cache')
/** Children get a plain environment: not tap's coverage collector or loaders. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(NODE_V8_COVERAGE|NODE_OPTIONS|TAP|_TAP)/.test(name)))

interface PackageJson { name: string, version: string, type: string, exports: Record<string, unknown> }

/** Runs tsc with `args`: its exit code and what it printed. */
async function tsc (args: string[]): Promise<{ exitCode: number, output: string }> {
  return await new Promise((resolve) => {
    execFile(process.execPath, [TSC, ...args], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ exitCode: error === null ? 0 : Number(error.code), output: stdout + stderr })
    })
  })
}

const majorOf = async (dir: string): Promise<number> =>
  Number((JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version.split('.')[0])

/** The host's one source file: every entry of the package's `exports`, each used as a value so its types are read. */
function hostSource (name: string, entries: string[]): string {
  const specifiers = entries.map(entry => entry === '.' ? name : `${name}/${entry.slice(2)}`)
  return [
    ...specifiers.map((specifier, index) => `import * as entry${index} from '${specifier}'`),
    `export const entries: object[] = [${specifiers.map((_, index) => `entry${index}`).join(', ')}]`,
    ''
  ].join('\n')
}

// two tsc runs (the declarations, then the host with every dependency's types checked): seconds alone, longer beside the suite
t.setTimeout(300_000)

t.test('a strict host with skipLibCheck off compiles every public entry against the current @types/node', async (t) => {
  const current = await majorOf(CURRENT)
  t.ok(current > await majorOf(join(ROOT, 'node_modules/@types/node')), `@types/node-current (${current}) is newer than the project's @types/node`)

  await mkdir(SCRATCH, { recursive: true })
  const dir = await mkdtemp(join(SCRATCH, 'jwt-login-node-types-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })

  // the package as a host installs it: its package.json (the exports map) and the declarations the build emits
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as PackageJson
  const installed = join(dir, 'node_modules', pkg.name)
  await mkdir(installed, { recursive: true })
  await writeFile(join(installed, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, type: pkg.type, exports: pkg.exports }))
  const emitted = await tsc(['-p', join(ROOT, 'tsconfig.build.json'), '--emitDeclarationOnly', '--noCheck', '--outDir', join(installed, 'dist')])
  t.equal(emitted.exitCode, 0, `the declarations are emitted ${emitted.output}`)

  // `types/node` is the host's only type root: every `/// <reference types="node" />`
  // of a dependency resolves there first, so no other @types/node joins the program
  await mkdir(join(dir, 'types'))
  await symlink(CURRENT, join(dir, 'types', 'node'), 'junction')
  const entries = Object.keys(pkg.exports).filter(entry => entry !== './package.json')
  // the host's own package.json: without it, the nearest would be the repository's, whose name resolves to its dist/
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }))
  await writeFile(join(dir, 'host.ts'), hostSource(pkg.name, entries))
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      typeRoots: ['./types'],
      types: ['node']
    },
    files: ['host.ts']
  }))

  const { exitCode, output } = await tsc(['-p', join(dir, 'tsconfig.json'), '--pretty', 'false', '--listFiles'])
  t.same(output.split('\n').filter(line => /error TS\d+/.test(line)), [], 'no diagnostic, in our declarations or in a dependency\'s')
  t.equal(exitCode, 0, 'tsc succeeds')
  const files = output.split('\n').map(line => line.replaceAll('\\', '/'))
  t.ok(files.some(file => file.endsWith('/@types/node-current/index.d.ts')), 'the current @types/node is compiled against')
  t.same(files.filter(file => file.includes('/@types/node/')), [], 'and the project\'s own is not')
  for (const entry of entries) {
    const types = ((pkg.exports[entry] as { types: string }).types).slice(2)
    t.ok(files.some(file => file.endsWith(`/${pkg.name}/${types}`)), `${entry} is compiled from its emitted declarations`)
  }
})
