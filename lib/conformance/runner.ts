// How a suite declares its rules on any test runner: one named test per rule, skipped with a reason where the port lacks what it needs.
import { AssertionError } from 'node:assert'
import { types } from 'node:util'

/** A body the suite hands the runner: it takes nothing of the runner's own context. */
export type TestBody = () => Promise<void>

/**
 * A test runner's test function: `test` of `node:test`, of `tap`, of
 * `vitest` or jest's global `test`. The suite calls it once per rule with a
 * name and a body that throws on a broken rule; a skipped rule goes through
 * `test.skip` when the function has one, else as `test(name, { skip }, body)`
 * (`node:test` and tap take that form).
 */
export interface TestFunction {
  (name: string, body: TestBody): unknown
  skip?: (name: string, body: TestBody) => unknown
}

/** What every suite takes besides its port's own settings. */
export interface SuiteOptions<Made> {
  /** The runner's test function (see `TestFunction`). */
  test: TestFunction
  /** A fresh port for one test, with nothing in it the suite did not put there. */
  create: () => Promise<Made>
  /** Called after each test with what `create` made (close connections, drop tables); errors fail the test. */
  destroy?: (made: Made) => unknown
  /**
   * What the port provides, by capability name (see the port's manifest):
   * given, the suite declares its tests at once; without it, it first calls
   * `create` once to read the port (and `destroy` after), so await the suite
   * before the runner starts (top-level `await` in ES modules; jest runs
   * those with `--experimental-vm-modules`). A CommonJS test file, which
   * has no top-level `await`, passes it.
   */
  supports?: Readonly<Record<string, boolean>>
  /** How many concurrent calls the concurrency rules make (default 50; at least 2). */
  parallelism?: number
  /** Prefixes every test name (default: the port's name). */
  title?: string
}

/** One rule of a port's contract, checked by one test. */
export interface Rule<Made, Settings = unknown> {
  /** What holds, as the test is named. */
  name: string
  /** The port's doc comment this rule comes from, quoted word for word. */
  contract: string
  /** The capabilities the rule needs (all of them); the test is skipped, saying which, without one. */
  needs?: readonly string[]
  run: (made: Made, settings: Settings) => Promise<void>
}

/** What the suite says when a rule does not hold: the rule, its contract, what was seen. */
export class ConformanceError extends AssertionError {
  readonly rule: string

  constructor (title: string, rule: Rule<never, never>, cause: unknown) {
    // an error of another realm (node's own, under jest) is no instance of this realm's Error
    const seen = cause instanceof Error || types.isNativeError(cause) ? (cause as Error).message : String(cause)
    super({ message: `${title}: ${rule.name}\nthe contract: "${rule.contract}"\nseen: ${seen}` })
    this.name = 'ConformanceError'
    this.rule = rule.name
    // the port's own error, with its stack, for a rule that failed by a throw of the port
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false, writable: true, configurable: true })
    if (cause instanceof AssertionError) Object.assign(this, { actual: cause.actual, expected: cause.expected, operator: cause.operator })
  }
}

/** The parallelism of the concurrency rules, refused when it could not show a race. */
export function parallelismOf (options: { parallelism?: number }): number {
  const parallelism = options.parallelism ?? 50
  if (!Number.isSafeInteger(parallelism) || parallelism < 2) throw new TypeError('parallelism must be an integer of at least 2')
  return parallelism
}

/** Runs one rule on a fresh port; the port is destroyed whatever happened. */
async function runRule<Made, Settings> (title: string, rule: Rule<Made, Settings>, options: SuiteOptions<Made>, settings: Settings): Promise<void> {
  const made = await options.create()
  let failure: unknown
  try {
    await rule.run(made, settings)
  } catch (error) {
    failure = new ConformanceError(title, rule as unknown as Rule<never, never>, error)
  }
  // a destroy that fails after a broken rule must not hide the rule
  try {
    await options.destroy?.(made)
  } catch (error) {
    failure ??= error
  }
  if (failure !== undefined) throw failure
}

/** Declares a skipped test, through the form the runner takes. */
function declareSkipped (test: TestFunction, name: string, reason: string): void {
  const body: TestBody = async () => {}
  if (typeof test.skip === 'function') {
    test.skip(`${name} (skipped: ${reason})`, body)
    return
  }
  const withOptions = test as unknown as (name: string, options: { skip: string }, body: TestBody) => unknown
  withOptions(name, { skip: reason }, body)
}

/**
 * Declares one test per rule. Without `options.supports` it reads what the
 * port provides from one port made for the purpose.
 */
export async function declareSuite<Made, Settings> (
  options: SuiteOptions<Made>,
  title: string,
  rules: ReadonlyArray<Rule<Made, Settings>>,
  supportsOf: (made: Made) => Readonly<Record<string, boolean>>,
  settings: Settings
): Promise<void> {
  if (typeof options?.test !== 'function') throw new TypeError('the suite needs the runner\'s test function as `test`')
  if (typeof options.create !== 'function') throw new TypeError('the suite needs `create`, which resolves a fresh port')
  let supports = options.supports
  if (supports === undefined) {
    const made = await options.create()
    try {
      supports = supportsOf(made)
    } finally {
      await options.destroy?.(made)
    }
  }
  const prefix = options.title ?? title
  // called on its own, not as a method of `options`: tap's `test` is bound to its root, not to whatever holds it
  const test = options.test
  for (const rule of rules) {
    const name = `${prefix}: ${rule.name}`
    const missing = (rule.needs ?? []).filter(capability => supports[capability] !== true)
    if (missing.length > 0) {
      declareSkipped(test, name, `the port does not provide ${missing.join(', ')}`)
      continue
    }
    test(name, async () => { await runRule(prefix, rule, options, settings) })
  }
}
