/**
 * Interleaved comparisons: one baseline and one or more contenders, warmed
 * up, then measured in turns (baseline, each contender, baseline, …) for
 * `rounds` rounds; each contender's ratio is its req/s over the baseline's
 * in the same round, or over another side's of the same round (`versus`).
 */
import { measure, warmUp, type Run, type Target } from './load.js'

export interface Comparison {
  name: string
  subjectLabel: string
  baselineLabel: string
  /** reported, not enforced; none for a row that is measured only */
  goal: number | undefined
  /** the most CPU per request jwt-login may spend, as a multiple of the baseline's (reported, not enforced) */
  cpuGoal?: number
  baseline: Run[]
  subject: Run[]
  /** why the row was not measured (its runs are empty) */
  skipped?: string
}

export interface Side {
  /** its name in the round lines */
  side: string
  target: Target
}

export interface Contender extends Side {
  name: string
  label: string
  goal?: number
  /** see `Comparison.cpuGoal` */
  cpuGoal?: number
  /**
   * The side its ratio is to, measured in the same rounds just before it:
   * the comparison's baseline when absent. Contenders with the same target
   * share its runs (one side, two ratios).
   */
  versus?: Side & { label: string }
}

export interface Rounds {
  rounds: number
  seconds: number
  warmUpSeconds: number
  connections: number
}

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

export function ratios (c: Comparison): number[] {
  return c.subject.map((run, i) => run.reqPerSec / (c.baseline[i] as Run).reqPerSec)
}

export function failures (run: Run): number {
  return run.non2xx + run.errors
}

export function describeRun (run: Run): string {
  return `${run.reqPerSec.toFixed(0)} req/s, p99 ${run.p99Ms} ms, ${run.cpuPerRequest.toFixed(0)} µs CPU/req`
}

/** A row that could not be measured: it stays in the table and the ratio lines, as skipped. */
export function skipped (contender: Omit<Contender, 'side' | 'target'>, baselineLabel: string, reason: string): Comparison {
  return { name: contender.name, subjectLabel: contender.label, baselineLabel, goal: contender.goal, baseline: [], subject: [], skipped: reason }
}

function warn (title: string, round: number, side: string, run: Run): void {
  if (failures(run) > 0) console.log(`WARNING: ${title} round ${round} ${side}: ${run.non2xx} non-2xx answers, ${run.errors} errors`)
}

/** The sides to measure in each round, in turn: the baseline, then each contender's `versus` and the contender, each target once. */
function sidesInTurn (baseline: Side, contenders: Contender[]): Side[] {
  const sides: Side[] = [baseline]
  for (const contender of contenders) {
    for (const side of [contender.versus, contender]) {
      if (side !== undefined && !sides.some(known => known.target === side.target)) sides.push(side)
    }
  }
  return sides
}

/** A measured side in a round line: its run, and with several contenders the ratios of those it is the subject of. */
function roundPart (side: Side, run: Run, runs: Map<Side['target'], Run>, contenders: Contender[], baseline: Side): string {
  if (contenders.length === 1) return `${side.side} ${describeRun(run)}`
  const ratios = contenders.filter(c => c.target === side.target).map((c) => {
    const against = c.versus ?? baseline
    const ratio = (run.reqPerSec / (runs.get(against.target) as Run).reqPerSec).toFixed(2)
    return c.versus === undefined ? `ratio ${ratio}` : `ratio to ${c.versus.side} ${ratio}`
  })
  return [`${side.side} ${describeRun(run)}`, ...ratios].join(', ')
}

/** Runs the rounds; answers one comparison per contender, each against its baseline's runs of the same rounds. */
export async function compare (title: string, baseline: Side & { label: string }, contenders: Contender[], how: Rounds): Promise<Comparison[]> {
  const sides = sidesInTurn(baseline, contenders)
  for (const side of sides) await warmUp(side.target, how.connections, how.warmUpSeconds)
  const comparisons: Comparison[] = contenders.map(c => ({
    name: c.name,
    subjectLabel: c.label,
    baselineLabel: (c.versus ?? baseline).label,
    goal: c.goal,
    ...(c.cpuGoal === undefined ? {} : { cpuGoal: c.cpuGoal }),
    baseline: [],
    subject: []
  }))
  for (let round = 1; round <= how.rounds; round++) {
    const runs = new Map<Side['target'], Run>()
    for (const side of sides) {
      const run = await measure(side.target, how.connections, how.seconds)
      warn(title, round, side.side, run)
      runs.set(side.target, run)
    }
    for (const [i, contender] of contenders.entries()) {
      const comparison = comparisons[i] as Comparison
      comparison.baseline.push(runs.get((contender.versus ?? baseline).target) as Run)
      comparison.subject.push(runs.get(contender.target) as Run)
    }
    const base = runs.get(baseline.target) as Run
    const parts = [`${baseline.side} ${describeRun(base)}`, ...sides.slice(1).map(side => roundPart(side, runs.get(side.target) as Run, runs, contenders, baseline))]
    // one contender: the ratio at the end of the line, as before there were several
    const only = contenders.length === 1 ? comparisons[0] as Comparison : null
    const single = only === null ? '' : ` | ratio ${((only.subject.at(-1) as Run).reqPerSec / (only.baseline.at(-1) as Run).reqPerSec).toFixed(2)}`
    console.log(`${title} round ${round}/${how.rounds}: ${parts.join(' | ')}${single}`)
  }
  return comparisons
}

/** jwt-login's CPU per request over the baseline's (medians over the rounds): 1.05 is 5 % more. */
export function cpuTimes (c: Comparison): number {
  return median(c.subject.map(run => run.cpuPerRequest)) / median(c.baseline.map(run => run.cpuPerRequest))
}

/** Whether a measured comparison's CPU per request is within its CPU goal (true without one). */
export function cpuGoalMet (c: Comparison): boolean {
  return c.cpuGoal === undefined || cpuTimes(c) <= c.cpuGoal
}

/** One line of the results table. */
export function row (c: Comparison): string {
  if (c.skipped !== undefined) return `${c.name}: ${c.subjectLabel} vs ${c.baselineLabel} | skipped: ${c.skipped} | | | | | | | `
  const r = ratios(c)
  const ratio = median(r)
  const cpuGoal = c.cpuGoal === undefined ? '' : `; CPU/req ≤ ${c.cpuGoal.toFixed(2)} × the baseline's: ${cpuGoalMet(c) ? 'met' : '**not met**'} (${cpuTimes(c).toFixed(2)} ×)`
  const goal = c.goal === undefined ? '— (measured only)' : `≥ ${c.goal.toFixed(2)}: ${ratio >= c.goal ? 'met' : '**not met**'}${cpuGoal}`
  const cpuBaseline = median(c.baseline.map(run => run.cpuPerRequest))
  const cpuSubject = median(c.subject.map(run => run.cpuPerRequest))
  const failed = `${c.baseline.reduce((n, run) => n + failures(run), 0)} / ${c.subject.reduce((n, run) => n + failures(run), 0)}`
  return [
    `${c.name}: ${c.subjectLabel} vs ${c.baselineLabel}`,
    median(c.baseline.map(run => run.reqPerSec)).toFixed(0),
    median(c.subject.map(run => run.reqPerSec)).toFixed(0),
    `**${ratio.toFixed(2)}** [${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}]`,
    goal,
    `${median(c.baseline.map(run => run.p99Ms))} / ${median(c.subject.map(run => run.p99Ms))}`,
    `${cpuBaseline.toFixed(0)} / ${cpuSubject.toFixed(0)}`,
    (cpuBaseline / cpuSubject).toFixed(2),
    failed
  ].join(' | ')
}

/** The median ratio with two decimals, or `n/a` for a skipped row. */
export function ratioFigure (c: Comparison): string {
  return c.skipped !== undefined ? 'n/a' : median(ratios(c)).toFixed(2)
}
