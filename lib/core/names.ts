/** How near two names are: the suggestions of refusals (`prefx`: did you mean `prefix`?). */

/**
 * The optimal-string-alignment distance of two names (Levenshtein, with a
 * swap of two neighbouring letters counting as one edit), letter case
 * ignored: `prefx` is 1 from `prefix`, `userCahce` 1 from `userCache`.
 */
export function editDistance (a: string, b: string): number {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  const width = y.length + 1
  const d: number[] = []
  const at = (i: number, j: number): number => d[i * width + j] as number
  for (let i = 0; i <= x.length; i++) {
    for (let j = 0; j <= y.length; j++) {
      if (i === 0 || j === 0) {
        d[i * width + j] = i + j
        continue
      }
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (x[i - 1] === y[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1)
      d[i * width + j] = best
    }
  }
  return at(x.length, y.length)
}

/** The name of `candidates` nearest to `name` within 2 edits (or equal but for case), if any. */
export function nearestName (name: string, candidates: readonly string[]): string | undefined {
  let nearest: string | undefined
  let distance = 3
  for (const candidate of candidates) {
    const d = editDistance(name, candidate)
    if (candidate !== name && d < distance) {
      nearest = candidate
      distance = d
    }
  }
  return nearest
}
