/**
 * Validate while sign-ins flood the same server: one jwt-login server
 * (memory store, `subject-flood`) answers `POST /auth/validate` alone, then
 * again while a second autocannon floods `POST /auth` with another user's
 * right password, at four
 * times the hashing capacity (connections = 4 × the default hashing
 * concurrency, max(1, cores − 1)); interleaved rounds, alone first. The
 * ratio is validate's req/s under the flood over its req/s alone in the same
 * round; both p99s are printed.
 *
 * Only validate's own answers count as the run's failures: a plugin that
 * bounds its hashing answers part of the flood with 503 (the queue is full),
 * which is the point, so the flood's answers are counted apart and printed.
 */
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { hashingLimits } from '../lib/services/password-work.js'
import { describeRun, type Comparison, type Rounds } from './compare.js'
import { measure, probe, warmUp, type Run, type Target } from './load.js'
import { ServerProcess } from './servers.js'
import { signInUser, USER } from './shared.js'
import { loginTarget, validateTarget } from './targets.js'

/**
 * jwt-login's default hashing concurrency, one thread fewer than the cores
 * (at least one), as the plugin itself resolves `passwordHashing` left at
 * its defaults on this machine.
 */
export const HASHING_CONCURRENCY = hashingLimits({ concurrency: 0, maxQueue: 0, maxRegistrationQueue: 0 }, os.availableParallelism()).concurrency
/** The flood: four sign-ins in flight per hashing slot. */
export const FLOOD_CONNECTIONS = 4 * HASHING_CONCURRENCY
/** The flood runs this long before validate is measured, so validate meets a full queue. */
const FLOOD_LEAD_MS = 500
/** An upper bound for a flood's autocannon; it is stopped once validate's run ends. */
const FLOOD_MAX_SECONDS = 3600

/** What the flood got over one round: sign-ins, 503 answers (too busy), other failures. */
export interface FloodRun {
  signInsPerSec: number
  busy: number
  otherNon2xx: number
  errors: number
}

export interface FloodComparison {
  comparison: Comparison
  floods: FloodRun[]
}

function floodRun (result: autocannon.Result): FloodRun {
  const busy = result.statusCodeStats?.['503']?.count ?? 0
  return { signInsPerSec: result['2xx'] / result.duration, busy, otherNon2xx: result.non2xx - busy, errors: result.errors }
}

/** Starts the flood on `target`; `stop` ends it and answers what it got. */
function startFlood (target: Target): { stop: () => Promise<FloodRun> } {
  let finish: (result: FloodRun) => void = () => {}
  let fail: (error: unknown) => void = () => {}
  const done = new Promise<FloodRun>((resolve, reject) => { finish = resolve; fail = reject })
  const instance = autocannon({
    url: `${target.server.url}${target.path}`,
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
    connections: FLOOD_CONNECTIONS,
    duration: FLOOD_MAX_SECONDS
  }, (error, result) => {
    if (error !== null && error !== undefined) fail(error)
    else finish(floodRun(result))
  })
  return {
    stop: async () => {
      instance.stop()
      return await done
    }
  }
}

/** Validate measured while the flood runs; the flood is stopped whatever happens. */
async function underFlood (validate: Target, login: Target, how: Rounds): Promise<{ run: Run, flood: FloodRun }> {
  const flood = startFlood(login)
  let run: Run
  try {
    await sleep(FLOOD_LEAD_MS)
    run = await measure(validate, how.connections, how.seconds)
  } catch (error) {
    await flood.stop().catch(() => {})
    throw error
  }
  return { run, flood: await flood.stop() }
}

function describeFlood (flood: FloodRun): string {
  return `flood ${flood.signInsPerSec.toFixed(0)} sign-ins/s, ${flood.busy} answered 503, ${flood.otherNon2xx} other non-2xx, ${flood.errors} errors`
}

function warn (round: number, side: string, run: Run): void {
  if (run.non2xx + run.errors > 0) console.log(`WARNING: login flood round ${round} ${side}: validate had ${run.non2xx} non-2xx answers, ${run.errors} errors`)
}

/** Starts the server (the caller stops it), checks both requests, warms both up, runs the rounds. */
export async function validateUnderLoginFlood (how: Rounds): Promise<FloodComparison> {
  const server = await ServerProcess.start('subject-flood')
  // the token of a user the flood does not sign in: the flood's sessions push out only its own user's older ones
  const { email } = signInUser(0)
  const answer = await probe({ ...loginTarget(server), body: JSON.stringify({ email, password: USER.password }) })
  const validate = validateTarget(server, (answer.json as { data: { jwt: string } }).data.jwt)
  const login = loginTarget(server)
  for (const target of [validate, login]) await probe(target)
  await warmUp(validate, how.connections, how.warmUpSeconds)
  await warmUp(login, FLOOD_CONNECTIONS, how.warmUpSeconds)
  const comparison: Comparison = {
    name: 'validate-under-login-flood',
    subjectLabel: `\`POST /auth/validate\` while ${FLOOD_CONNECTIONS} connections flood \`POST /auth\` on the same server`,
    baselineLabel: 'the same validate alone, same server',
    goal: 0.8,
    baseline: [],
    subject: []
  }
  const floods: FloodRun[] = []
  for (let round = 1; round <= how.rounds; round++) {
    const alone = await measure(validate, how.connections, how.seconds)
    warn(round, 'alone', alone)
    const { run, flood } = await underFlood(validate, login, how)
    warn(round, 'under the flood', run)
    comparison.baseline.push(alone)
    comparison.subject.push(run)
    floods.push(flood)
    console.log(`login flood round ${round}/${how.rounds}: alone ${describeRun(alone)} | under the flood ${describeRun(run)}, ${describeFlood(flood)} | ratio ${(run.reqPerSec / alone.reqPerSec).toFixed(2)}`)
  }
  return { comparison, floods }
}
