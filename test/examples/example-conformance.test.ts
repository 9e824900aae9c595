/**
 * examples/conformance (docs/adapters.md's "Testing your adapter"): the
 * sketch's user adapter on PostgreSQL through `userAdapterSuite`, once under
 * node:test and once under tap, each run as its own program as a host runs
 * it; both pass, naming every rule, the ones the sketch lacks skipped.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { userAdapterRules } from '../../lib/conformance.js'
import { DATABASE_URL } from '../helpers/shared-stores.js'

const execFileAsync = promisify(execFile)
/** The examples load TypeScript as this process does (tap's loader), so their coverage merges with the tests'. */
const LOADERS = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')
const example = (name: string): string => fileURLToPath(new URL(`../../examples/conformance/${name}`, import.meta.url))

/** Runs an example program; answers its exit code and output. */
async function run (name: string): Promise<{ code: number, output: string }> {
  const ran = await execFileAsync(process.execPath, [...LOADERS, example(name)], { env: { ...process.env, DATABASE_URL }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (error: { code: number, stdout: string, stderr: string }) => error)
  return { code: ran.code, output: `${ran.stdout}\n${ran.stderr}` }
}

/** The rules the sketch provides for (required methods and setPassword), and the rest, which it skips. */
const ran = userAdapterRules.filter(rule => (rule.needs ?? []).every(capability => capability === 'setPassword'))
const skipped = userAdapterRules.length - ran.length

for (const name of ['node-test.ts', 'tap-test.ts']) {
  t.test(`${name}: every rule the sketch provides for passes, the others are skipped`, async (t) => {
    const { code, output } = await run(name)
    t.equal(code, 0, output)
    const oks = [...output.matchAll(/^ok \d+ - (.+?)(?: # .*)?$/gm)].map(match => match[1] as string)
    t.notMatch(output, /^not ok/m, 'nothing fails')
    for (const rule of ran) t.ok(oks.includes(`UserAdapter: ${rule.name}`), rule.name)
    t.equal([...output.matchAll(/^ok \d+ - .+ # SKIP/gm)].length, skipped, `${skipped} skipped, each saying so`)
  })
}
