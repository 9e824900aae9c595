// What the two-factor and passkey suites share: the user ids they pick, and the check that a method answered a promise.
import assert from 'node:assert/strict'

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
