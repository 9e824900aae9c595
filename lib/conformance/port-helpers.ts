// What the suites share: the user ids the two-factor and passkey suites pick, the check that a method answered a promise, concurrent calls, optional methods.
import assert, { AssertionError } from 'node:assert/strict'

/** Below 2^31 (a SQL `integer`), from a random start, so two runs on one database pick different users. */
let lastUserId = 2 ** 20 + Math.floor(Math.random() * 2 ** 29)

/** A user id no earlier call of this run answered. */
export function nextUserId (): number {
  return ++lastUserId
}

/** Calls one method of a port and checks that it answered a promise (not a value, not a throw) before awaiting it. */
export async function promised<T> (name: string, call: () => Promise<T>): Promise<T> {
  const answer: unknown = call()
  assert.ok(typeof (answer as { then?: unknown } | null | undefined)?.then === 'function', `${name} answered ${typeof answer}, not a promise`)
  return await (answer as Promise<T>)
}

/**
 * Waits for every call, then throws the first error: a rule that stopped
 * at one rejection would leave the others running while `destroy` drops
 * their tables.
 */
export async function settleAll<T> (calls: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(calls)
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  return results.map(result => (result as PromiseFulfilledResult<T>).value)
}

/**
 * An optional method, bound to what holds it. A rule runs only when
 * `supports` says the capability is there, so a missing method is a
 * `supports` that claimed too much: the failure says which.
 */
export function optionalMethod<Holder extends object, Name extends keyof Holder & string> (holder: Holder, name: Name, called: string): NonNullable<Holder[Name]> {
  const found: unknown = holder[name]
  if (typeof found !== 'function') throw new AssertionError({ message: `${called} has no ${name}, though \`supports\` says it provides it` })
  return found.bind(holder) as NonNullable<Holder[Name]>
}
