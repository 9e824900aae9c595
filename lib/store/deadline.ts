/** How long a store call waits for its answer when the connection's settings give no timeout. */
export const DEFAULT_DEADLINE_MS = 2000

/** A connection's timeout when it sets one (a positive number of ms; 0 means none in ioredis and pg), else the default. */
export function deadlineOf (timeoutMs: number | undefined): number {
  return timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : DEFAULT_DEADLINE_MS
}

/**
 * `call`, or, when it has not settled within `deadlineMs`, a rejection
 * naming only `server` and the deadline: never a key or a value, which may
 * be a secret. The call itself is not cancelled; a write that failed this
 * way may still run later, which the flows treat like any write whose
 * answer was lost.
 */
export async function withinDeadline<T> (call: Promise<T>, deadlineMs: number, server: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`${server} did not answer within ${deadlineMs} ms`)) }, deadlineMs)
    timer.unref()
  })
  try {
    return await Promise.race([call, late])
  } finally {
    clearTimeout(timer)
  }
}
