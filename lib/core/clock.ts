/** Milliseconds since the epoch. One clock decides every time question; tests inject their own. */
export type Clock = () => number

export const systemClock: Clock = Date.now
