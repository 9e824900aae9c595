// How a published suite declares its rules on a runner: names, skips in both forms, a fresh port per rule, the contract quoted on failure, destroy's errors.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { ConformanceError, type TestBody, type TestFunction } from '../../lib/conformance.js'
import { declareSuite, parallelismOf, type Rule } from '../../lib/conformance/runner.js'
import { recorder } from '../helpers/conformance.js'

interface Made { id: number, log: string[] }

const RULES: Array<Rule<Made, { expected: number }>> = [
  { name: 'the id is expected', contract: 'The id is what was asked.', run: async (made, settings) => { assert.equal(made.id, settings.expected) } },
  { name: 'needs flying', contract: 'It flies.', needs: ['fly'], run: async () => { throw new Error('never run') } },
  { name: 'throws a string', contract: 'It never throws a string.', run: async () => { throw 'a string' } } // eslint-disable-line no-throw-literal
]

t.test('one test per rule, named after the port; a rule that needs what the port lacks is skipped, saying so', async (t) => {
  const made: Made[] = []
  const { test, run } = recorder()
  let next = 0
  await declareSuite({ test, create: async () => { const one = { id: ++next, log: [] }; made.push(one); return one } }, 'Port', RULES, () => ({ fly: false }), { expected: 2 })
  t.equal(made.length, 1, 'one port made to read what it supports')
  const result = await run()
  t.same(result.passed, ['Port: the id is expected'], 'each rule on a fresh port (the second one made)')
  t.same(result.skipped, ['Port: needs flying (skipped: the port does not provide fly)'])
  const failure = result.failed.get('Port: throws a string') as ConformanceError
  t.type(failure, ConformanceError)
  t.equal(failure.rule, 'throws a string')
  t.equal(failure.message, 'Port: throws a string\nthe contract: "It never throws a string."\nseen: a string')
  t.equal(failure.cause, 'a string', 'what was thrown is the cause')
})

t.test('given supports, nothing is made before the tests; a title replaces the port\'s name; a failed assertion keeps its values', async (t) => {
  const { test, run } = recorder()
  let made = 0
  await declareSuite({ test, create: async () => ({ id: ++made, log: [] }), supports: { fly: true }, title: 'Mine' }, 'Port', RULES.slice(0, 2), () => { throw new Error('not asked') }, { expected: 7 })
  t.equal(made, 0)
  const result = await run()
  t.same([...result.failed.keys()], ['Mine: the id is expected', 'Mine: needs flying'])
  t.match(result.failed.get('Mine: the id is expected'), { actual: 1, expected: 7, operator: 'strictEqual', message: /^Mine: the id is expected\nthe contract: "The id is what was asked."\nseen: Expected values to be strictly equal/ })
  t.match(result.failed.get('Mine: needs flying')?.message, 'seen: never run')
  t.match(result.failed.get('Mine: needs flying')?.cause, { message: 'never run', stack: /runner\.test\.ts/ }, 'a port\'s own error keeps its stack')
})

t.test('destroy runs after every rule; its error fails a passing rule, never hides a broken one', async (t) => {
  const destroyed: number[] = []
  const { test, run } = recorder()
  let made = 0
  await declareSuite({
    test,
    supports: {},
    create: async () => ({ id: ++made, log: [] }),
    destroy: async ({ id }) => { destroyed.push(id); throw new Error(`cannot drop ${id}`) }
  }, 'Port', [RULES[0] as Rule<Made, { expected: number }>, RULES[2] as Rule<Made, { expected: number }>], () => ({}), { expected: 1 })
  const result = await run()
  t.same(destroyed, [1, 2])
  t.equal(result.failed.get('Port: the id is expected')?.message, 'cannot drop 1')
  t.type(result.failed.get('Port: throws a string'), ConformanceError)
})

t.test('the probe port is destroyed even when reading it fails', async (t) => {
  const { test } = recorder()
  let destroyed = 0
  await t.rejects(declareSuite({ test, create: async () => ({ id: 1, log: [] }), destroy: () => { destroyed++ } }, 'Port', RULES, () => { throw new Error('unreadable') }, { expected: 1 }), { message: 'unreadable' })
  t.equal(destroyed, 1)
})

t.test('a runner without test.skip is given the skip as an option (node:test and tap take that form)', async (t) => {
  const calls: Array<[string, unknown]> = []
  const bodies: TestBody[] = []
  const test = ((name: string, second: unknown, third: TestBody) => { calls.push([name, second]); bodies.push(third) }) as unknown as TestFunction
  await declareSuite({ test, create: async () => ({ id: 1, log: [] }), supports: {} }, 'Port', [RULES[1] as Rule<Made, { expected: number }>], () => ({}), { expected: 1 })
  t.same(calls, [['Port: needs flying', { skip: 'the port does not provide fly' }]])
  await t.resolves((bodies[0] as TestBody)(), 'a runner that runs a skipped body anyway finds it empty')
})

t.test('the suite refuses to start without a test function or create; parallelism is at least 2', async (t) => {
  const body: TestBody = async () => {}
  await t.rejects(declareSuite(undefined as never, 'Port', [], () => ({}), {}), { message: 'the suite needs the runner\'s test function as `test`' })
  await t.rejects(declareSuite({ test: () => body } as never, 'Port', [], () => ({}), {}), { message: 'the suite needs `create`, which resolves a fresh port' })
  t.equal(parallelismOf({}), 50)
  t.equal(parallelismOf({ parallelism: 2 }), 2)
  for (const parallelism of [1, 0, 2.5, Number.NaN]) t.throws(() => parallelismOf({ parallelism }), { message: 'parallelism must be an integer of at least 2' }, String(parallelism))
})

t.test('on node:test, as an adapter author runs it: each rule a test, the skips reported as skipped, a broken rule failed with its contract', async (t) => {
  const file = fileURLToPath(new URL('../fixtures/node-test-mailer-suite.ts', import.meta.url))
  // TypeScript loaded as this process loads it (tap's loader), so the program's coverage merges with the tests'
  const loaders = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')
  // the program exits 1 for the broken mailer's failures: its report is what is read
  const report = await promisify(execFile)(process.execPath, [...loaders, '--test-reporter=tap', file]).then(({ stdout }) => stdout, (error: { stdout: string }) => error.stdout)
  const count = (what: string): number => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(report)?.[1])
  t.same({ pass: count('pass'), skipped: count('skipped'), fail: count('fail') }, { pass: 6, skipped: 4, fail: 6 })
  t.match(report, /^ok 7 - ConsoleMailer: send rejects when the message is refused \(skipped: the port does not provide refuse\) # SKIP$/m)
  t.match(report, /^not ok 11 - Shouting: a unicode subject and text arrive intact\n[\s\S]*?the contract: "unicode in the subject and the bodies"/m)
})
