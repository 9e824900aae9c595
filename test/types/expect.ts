/**
 * The assertions of the type tests (`*.types.ts`). Those files are only
 * compiled, never run: `tsc --noEmit` is what fails on a wrong public type.
 */

/** Compiles only when `value` is assignable to `T`. */
export function expectType<T> (value: T): T {
  return value
}

/**
 * `true` when `A` and `B` are the same type, else `false`, so that
 * `expectType<Equal<A, B>>(true)` compiles only for the same type.
 * Assignability is not enough: `any`, a wider union or an extra optional
 * field make it `false`.
 */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
