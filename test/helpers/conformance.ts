/**
 * Running a published conformance suite inside one tap test, to see which
 * rules it fails: a recording test function that runs each declared test
 * in turn and keeps its outcome, for the broken-port proofs.
 */
import type { TestBody, TestFunction } from '../../lib/conformance.js'

export interface SuiteRun {
  passed: string[]
  skipped: string[]
  /** Each failed test's name and its error. */
  failed: Map<string, Error>
}

/** A test function that records the declared tests; `run()` runs them one after another. */
export function recorder (): { test: TestFunction, run: () => Promise<SuiteRun> } {
  const declared: Array<{ name: string, body: TestBody | null }> = []
  const test: TestFunction = (name, body) => { declared.push({ name, body }) }
  test.skip = (name) => { declared.push({ name, body: null }) }
  const run = async (): Promise<SuiteRun> => {
    const result: SuiteRun = { passed: [], skipped: [], failed: new Map() }
    for (const { name, body } of declared) {
      if (body === null) {
        result.skipped.push(name)
        continue
      }
      try {
        await body()
        result.passed.push(name)
      } catch (error) {
        result.failed.set(name, error as Error)
      }
    }
    return result
  }
  return { test, run }
}

/** Declares a suite on a recorder and runs it: `suite` is one of the published suites, with `test` filled in. */
export async function runSuite (declare: (test: TestFunction) => Promise<void>): Promise<SuiteRun> {
  const { test, run } = recorder()
  await declare(test)
  return await run()
}
