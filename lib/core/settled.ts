// Calls sent together (one store round trip) and settled together: what failed is known only once all are done.

/** The first reason of the outcomes that failed, thrown; nothing when all succeeded. */
export function throwFirstFailure (outcomes: Array<PromiseSettledResult<unknown>>): void {
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}
