/**
 * The passkey sign-in against the password sign-in, both driven by the
 * closed-loop clients of `closed-loop.ts` on two `subject-passkeys` servers:
 * `POST /auth/passkey/options`, an assertion signed over its challenge, then
 * `POST /auth/passkey`; against `POST /auth` with the password. Measured
 * only: no goal, the figure goes into docs/benchmarks.md.
 */
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { SoftAuthenticator } from '../test/helpers/authenticator.js'
import { Client, cpuSince, measureLoop, probeLoop, warmUpLoop, type Loop, type LoopRun } from './closed-loop.js'
import { median } from './compare.js'
import { probe } from './load.js'
import { ServerProcess } from './servers.js'
import { PASSKEY_ORIGIN, PREFIX } from './shared.js'
import { JSON_HEADERS, LOGIN_BODY, signIn } from './targets.js'

export interface PasskeyRounds {
  rounds: number
  seconds: number
  warmUpSeconds: number
  /** concurrent clients on each side */
  clients: number
}

/** The runs of each side, round by round (the password run first in each round). */
export interface PasskeyComparison {
  clients: number
  password: LoopRun[]
  passkey: LoopRun[]
}

/** One authenticated `POST` of the enrolment; throws unless it answers 2xx. */
async function enrolmentStep<T> (server: ServerProcess, path: string, token: string, body: unknown): Promise<T> {
  const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` }
  const answer = await probe({ server, method: 'POST', path: `${PREFIX}${path}`, headers, body: JSON.stringify(body) })
  return (answer.json as { data: T }).data
}

/** Enrols a passkey for the bench user as a browser would: a password sign-in, the creation options, the registration. */
async function enrol (server: ServerProcess): Promise<SoftAuthenticator> {
  const token = await signIn(server)
  const authenticator = new SoftAuthenticator({ origin: PASSKEY_ORIGIN })
  const creation = await enrolmentStep<PublicKeyCredentialCreationOptionsJSON>(server, '/passkeys/register/options', token, {})
  await enrolmentStep(server, '/passkeys/register', token, { credential: authenticator.register(creation), name: 'bench' })
  return authenticator
}

function passwordLoop (server: ServerProcess, client: Client): Loop {
  return { side: 'password', server, signIn: async () => await client.post(`${PREFIX}/auth`, LOGIN_BODY) }
}

/** Options, the assertion (its CPU time counted as signing), the sign-in. */
function passkeyLoop (server: ServerProcess, client: Client, authenticator: SoftAuthenticator): Loop {
  return {
    side: 'passkey',
    server,
    signIn: async (tally) => {
      const options = await client.post(`${PREFIX}/auth/passkey/options`, '{}')
      if (options.status !== 200) return options
      const request = (JSON.parse(options.body) as { data: PublicKeyCredentialRequestOptionsJSON }).data
      const cpuAt = process.cpuUsage()
      const credential = authenticator.authenticate(request)
      tally.signingMicros += cpuSince(cpuAt)
      return await client.post(`${PREFIX}/auth/passkey`, JSON.stringify({ credential }))
    }
  }
}

function describeLoopRun (run: LoopRun): string {
  const signing = run.signingPerSignIn > 0 ? `, signing ${run.signingPerSignIn.toFixed(0)} µs` : ''
  return `${run.signInsPerSec.toFixed(0)} sign-ins/s, p99 ${run.p99Ms.toFixed(0)} ms, ${run.serverCpuPerSignIn.toFixed(0)} µs server CPU/sign-in, parent ${run.clientCpuPerSignIn.toFixed(0)} µs${signing}`
}

function warnLoop (round: number, side: string, run: LoopRun): void {
  if (run.failed + run.errors === 0) return
  console.log(`WARNING: passkeys round ${round} ${side}: ${run.failed} answers that were not a sign-in, ${run.errors} errors (last: ${run.lastFailure ?? '?'})`)
}

/** The interleaved rounds: password, passkey, password, …; each round prints both runs and their ratio. */
async function rounds (password: Loop, passkey: Loop, how: PasskeyRounds): Promise<PasskeyComparison> {
  const comparison: PasskeyComparison = { clients: how.clients, password: [], passkey: [] }
  for (const loop of [password, passkey]) await warmUpLoop(loop, how.clients, how.warmUpSeconds)
  for (let round = 1; round <= how.rounds; round++) {
    const base = await measureLoop(password, how.clients, how.seconds)
    warnLoop(round, 'password', base)
    const run = await measureLoop(passkey, how.clients, how.seconds)
    warnLoop(round, 'passkey', run)
    comparison.password.push(base)
    comparison.passkey.push(run)
    console.log(`passkeys round ${round}/${how.rounds}: password ${describeLoopRun(base)} | passkey ${describeLoopRun(run)} | ratio ${(run.signInsPerSec / base.signInsPerSec).toFixed(2)}`)
  }
  return comparison
}

/**
 * Starts the two servers (the caller stops them), enrols the passkey, checks
 * one sign-in of each kind, then runs the rounds.
 */
export async function passkeySignIns (how: PasskeyRounds): Promise<PasskeyComparison> {
  const [passwordServer, passkeyServer] = await Promise.all([ServerProcess.start('subject-passkeys'), ServerProcess.start('subject-passkeys')])
  const authenticator = await enrol(passkeyServer)
  const passwordClient = new Client(passwordServer, how.clients)
  const passkeyClient = new Client(passkeyServer, how.clients)
  try {
    const password = passwordLoop(passwordServer, passwordClient)
    const passkey = passkeyLoop(passkeyServer, passkeyClient, authenticator)
    for (const loop of [password, passkey]) await probeLoop(loop)
    return await rounds(password, passkey, how)
  } finally {
    passwordClient.close()
    passkeyClient.close()
  }
}

/** The median of one figure over a side's runs. */
function middle (runs: LoopRun[], figure: (run: LoopRun) => number): number {
  return median(runs.map(figure))
}

function tableRow (label: string, runs: LoopRun[]): string {
  const failed = runs.reduce((n, run) => n + run.failed + run.errors, 0)
  return [
    label,
    middle(runs, run => run.signInsPerSec).toFixed(0),
    middle(runs, run => run.p99Ms).toFixed(0),
    middle(runs, run => run.serverCpuPerSignIn).toFixed(0),
    `${middle(runs, run => run.clientCpuPerSignIn).toFixed(0)} (${middle(runs, run => run.signingPerSignIn).toFixed(0)})`,
    `${(middle(runs, run => run.clientBusy) * 100).toFixed(0)} %`,
    String(failed)
  ].join(' | ')
}

/** The passkey sign-in's own table and lines (medians over the rounds), no goal. */
export function printPasskeys (c: PasskeyComparison): void {
  const ratios = c.passkey.map((run, i) => run.signInsPerSec / (c.password[i] as LoopRun).signInsPerSec)
  const signIns = (runs: LoopRun[]): string => middle(runs, run => run.signInsPerSec).toFixed(0)
  const serverCpu = (runs: LoopRun[]): string => middle(runs, run => run.serverCpuPerSignIn).toFixed(0)
  console.log(`\nPasskey sign-in against the password sign-in (${c.clients} closed-loop clients in the parent, medians of ${c.passkey.length} interleaved rounds):`)
  console.log('\n| sign-in | sign-ins/s | p99 ms | server CPU µs/sign-in | parent CPU µs/sign-in (of which signing) | parent busy, of one core | not signed in + errors |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  console.log(`| ${tableRow('password: `POST /auth`', c.password)} |`)
  console.log(`| ${tableRow('passkey: `POST /auth/passkey/options`, then `POST /auth/passkey`', c.passkey)} |`)
  console.log(`\npasskey sign-in: ${signIns(c.passkey)} sign-ins/s vs password ${signIns(c.password)} sign-ins/s, ratio ${median(ratios).toFixed(2)} [${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}] (measured only, no goal); CPU µs per sign-in (server): passkey ${serverCpu(c.passkey)}, password ${serverCpu(c.password)}.`)
  const signing = middle(c.passkey, run => run.signingPerSignIn)
  const parent = middle(c.passkey, run => run.clientCpuPerSignIn)
  console.log(`Signing in the parent: ${signing.toFixed(0)} µs of CPU per passkey sign-in, ${(100 * signing / parent).toFixed(0)} % of the parent's ${parent.toFixed(0)} µs per sign-in (HTTP client, JSON, signing); the parent kept ${(middle(c.passkey, run => run.clientBusy) * 100).toFixed(0)} % of one core busy during the passkey runs.`)
  const failedRuns = [...c.password, ...c.passkey].filter(run => run.failed + run.errors > 0).length
  if (failedRuns > 0) console.log(`WARNING: ${failedRuns} passkey-comparison runs had answers that were not a sign-in, or errors; their figures are not comparable.`)
}
