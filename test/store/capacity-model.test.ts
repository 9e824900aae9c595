import t from 'tap'
import { costOf, docTable, ORDERED_STORE, ROUND_TRIP_TARGETS, durationOf, entryBytes, plain, renderCalls, routeCell, runScenario, SCENARIOS, TABLES, UNORDERED_STORE, writtenEntry, type StoreCall } from '../helpers/capacity.js'
import { readPage } from '../helpers/markdown.js'
import { startIdp } from '../helpers/oidc-provider.js'

// docs/deployment.md, "Capacity model": every route's usual path is run through
// the plugin on a recording store, and the page's tables must say what it did.
const page = readPage('docs/deployment.md')

const MODEL = ['route (usual path)', 'requests per day', 'calls per request', 'calls per day', 'writes per day', 'Redis Cluster commands per day', 'MB written per day']
const MEMORY = ['entry', 'live entries', 'how many', 'Redis bytes per entry', 'Redis MB', 'PostgreSQL bytes per row', 'PostgreSQL MB']

/**
 * Bytes written may differ this much from the page (2 %, at least 4 bytes):
 * values hold random ids and hashes of fixed length, so only a count or an
 * id of another length moves them.
 */
function closeTo (measured: number, documented: number): boolean {
  return Math.abs(measured - documented) <= Math.max(4, measured * 0.02)
}

/** A number as the page writes it: `1 576`, `2 448.0`. */
function num (cell: string): number {
  const value = Number(plain(cell).replace(/\s/g, ''))
  if (plain(cell).trim() === '' || Number.isNaN(value)) throw new Error(`not a number: "${cell}"`)
  return value
}

const idp = await startIdp()
t.teardown(() => idp.close())
const runs: Array<{ route: string, calls: StoreCall[] }> = []
for (const scenario of SCENARIOS) runs.push({ route: scenario.route, calls: await runScenario(scenario, idp) })
// PostgreSQL and a Redis Cluster: calls may overtake one another, and the limiter reads and counts with readAndIncrement
const unordered: Array<{ route: string, calls: StoreCall[] }> = []
for (const scenario of SCENARIOS) unordered.push({ route: scenario.route, calls: await runScenario(scenario, idp, UNORDERED_STORE) })

const callsOf = (route: string): StoreCall[] => (runs.find(run => run.route === route) as { calls: StoreCall[] }).calls

/** The rows of a table by their first cell (code spans dropped). */
function rowsByName (header: readonly string[]): Map<string, string[]> {
  return new Map(docTable(page, header).map(row => [plain(row[0] as string), row]))
}

t.test('the page lists the section in its contents', async (t) => {
  t.match(page, /^- \[Capacity model\]\(#capacity-model\)$/m)
})

t.test('every route\'s store calls are the page\'s, in order and grouped by round trip', async (t) => {
  const rows = rowsByName(TABLES.calls)
  t.same([...rows.keys()].sort(), [...new Set(runs.map(run => run.route))].sort(), 'one row per route run, and a run for every row')
  for (const { route, calls } of runs) {
    const written = renderCalls(calls)
    t.equal(rows.get(route)?.[1], written, `${route}; the row as it is now:\n| ${routeCell(route)} | ${written} |`)
  }
})

t.test('every route\'s usual path meets its round-trip target', async (t) => {
  const measuredRoutes = new Set(runs.map(run => run.route))
  for (const route of Object.keys(ROUND_TRIP_TARGETS)) t.ok(measuredRoutes.has(route), `${route} is measured`)
  for (const { route, calls } of runs) {
    const target = ROUND_TRIP_TARGETS[route]
    if (target === undefined) continue
    const { roundTrips } = costOf(calls)
    t.ok(roundTrips <= target, `${route}: ${roundTrips} sequential round trips, the target is at most ${target}: ${renderCalls(calls)}`)
  }
})

t.test(`every route's usual path meets its round-trip target on ${UNORDERED_STORE.name} too`, async (t) => {
  for (const route of Object.keys(ROUND_TRIP_TARGETS)) t.ok(unordered.some(run => run.route === route), `${route} is measured`)
  for (const { route, calls } of unordered) {
    const target = ROUND_TRIP_TARGETS[route]
    if (target === undefined) continue
    const { roundTrips } = costOf(calls)
    t.ok(roundTrips <= target, `${route}: ${roundTrips} sequential round trips, the target is at most ${target}: ${renderCalls(calls)}`)
  }
  const trips = (route: string): number => costOf((unordered.find(run => run.route === route) as { calls: StoreCall[] }).calls).roundTrips
  t.ok(trips('POST /auth — success') <= 3 && trips('POST /auth/2fa — TOTP code') <= 4 && trips('POST /auth/refresh') <= 2, 'sign-in 3, second factor 4, refresh 2 at most')
})

t.test('an attempt on a locked account: at most 2 calls, and nothing written but the request count, on every store model', async (t) => {
  for (const [model, run] of [[ORDERED_STORE, runs], [UNORDERED_STORE, unordered]] as const) {
    const calls = (run.find(r => r.route === 'POST /auth — while the account is locked') as { calls: StoreCall[] }).calls
    t.ok(calls.length <= 2, `${model.name}: ${calls.length} calls: ${renderCalls(calls)}`)
    const written = calls.filter(call => !call.keys[0]?.startsWith('rate:') && costOf([call]).writes > 0)
    t.same(written.map(call => renderCalls([call])), [], `${model.name}: no increment, set or compare-and-set beyond the per-IP request count`)
    t.equal(costOf(calls.filter(call => !call.keys[0]?.startsWith('rate:'))).bytesWritten, 0, `${model.name}: no byte written by the limiter`)
  }
})

t.test('every route\'s costs are the page\'s', async (t) => {
  const rows = rowsByName(TABLES.costs)
  t.same([...rows.keys()].sort(), [...new Set(runs.map(run => run.route))].sort())
  for (const { route, calls } of runs) {
    const cost = costOf(calls)
    const [, callCount, writes, redis, roundTrips, cluster, postgres, bytes] = (rows.get(route) as string[]).map((cell, i) => i === 0 ? 0 : num(cell))
    const counted = [cost.calls, cost.writes, cost.calls, cost.roundTrips, cost.clusterCommands, cost.calls]
    t.same([callCount, writes, redis, roundTrips, cluster, postgres], counted, `${route}: calls, writes, Redis commands, round trips, Cluster commands, PostgreSQL statements`)
    t.ok(closeTo(cost.bytesWritten, bytes as number), `${route}: ${cost.bytesWritten} bytes written, the page says ${bytes}`)
  }
})

t.test('every entry of the page is written as the page says: its size and its time to live', async (t) => {
  const rows = docTable(page, TABLES.entries)
  t.ok(rows.length >= 20)
  for (const [name, key, writtenBy, ttl, bytes, redis, postgres] of rows as string[][]) {
    const entry = writtenEntry(callsOf(plain(writtenBy as string)), plain(key as string))
    if (entry === null) {
      t.fail(`${name}: ${writtenBy} writes no ${key}`)
      continue
    }
    const size = entryBytes(entry.key, entry.value)
    t.ok(closeTo(size, num(bytes as string)), `${name}: ${size} bytes, the page says ${bytes}`)
    t.ok(Math.abs(entry.ttlMs - durationOf(ttl as string)) <= entry.ttlMs * 0.01, `${name}: a time to live of ${entry.ttlMs} ms, the page says ${ttl}`)
    // measured by scripts/capacity-measure.ts: an entry takes more than its key and value
    t.ok(num(redis as string) > size && num(postgres as string) > size, `${name}: the measured sizes are over the key and value bytes`)
  }
})

t.test('the model\'s store calls add up, from the costs table', async (t) => {
  const costs = rowsByName(TABLES.costs)
  const assumptions = rowsByName(['assumption', 'value'])
  const peak = num(assumptions.get('peak factor (the busiest second ÷ the average second)')?.[1] as string)
  const rows = docTable(page, MODEL)
  const totals = [0, 0, 0, 0, 0]
  for (const row of rows.filter(row => !(row[0] as string).startsWith('**'))) {
    const route = plain(row[0] as string)
    const cost = costs.get(route)
    if (cost === undefined) {
      t.fail(`${route} is not in the costs table`)
      continue
    }
    const requests = num(row[1] as string)
    const [calls, writes, cluster, bytes] = [num(cost[1] as string), num(cost[2] as string), num(cost[5] as string), num(cost[7] as string)]
    t.equal(num(row[2] as string), calls, `${route}: calls per request`)
    t.same([num(row[3] as string), num(row[4] as string), num(row[5] as string)], [requests * calls, requests * writes, requests * cluster], `${route}: per day`)
    t.ok(Math.abs(num(row[6] as string) - requests * bytes / 1e6) <= 0.05, `${route}: MB written per day`)
    ;[requests, requests * calls, requests * writes, requests * cluster, requests * bytes / 1e6].forEach((value, i) => { totals[i] = (totals[i] as number) + value })
  }
  const byName = new Map(rows.map(row => [plain(row[0] as string).replace(/\*/g, '').split(' (')[0], row]))
  const total = byName.get('total') as string[]
  t.same([1, 3, 4, 5].map(i => num(total[i] as string)), [totals[0], totals[1], totals[2], totals[3]], 'the totals')
  t.ok(Math.abs(num(total[6] as string) - (totals[4] as number)) <= 0.05, 'the MB total')
  for (const [name, factor] of [['per second, average', 1], ['per second, at peak', peak]] as const) {
    const row = byName.get(name) as string[]
    for (const i of [3, 4, 5]) {
      const exact = num(total[i] as string) / 86_400 * factor
      t.ok(Math.abs(num(row[i] as string) - exact) <= 0.5, `${name}, column ${MODEL[i]}: ${exact.toFixed(1)}`)
    }
  }
})

t.test('the model\'s memory adds up, from the entries table', async (t) => {
  const entries = rowsByName(TABLES.entries)
  const rows = docTable(page, MEMORY)
  const sums = { live: 0, redis: 0, postgres: 0 }
  for (const row of rows.filter(row => !(row[0] as string).startsWith('**'))) {
    const name = plain(row[0] as string)
    const entry = entries.get(name)
    if (entry === undefined) {
      t.fail(`${name} is not in the entries table`)
      continue
    }
    const live = num(row[1] as string)
    const [redis, postgres] = [num(entry[5] as string), num(entry[6] as string)]
    t.same([num(row[3] as string), num(row[5] as string)], [redis, postgres], `${name}: bytes per entry as measured`)
    t.ok(Math.abs(num(row[4] as string) - live * redis / 1e6) <= 0.05 && Math.abs(num(row[6] as string) - live * postgres / 1e6) <= 0.05, `${name}: MB`)
    sums.live += live
    sums.redis += live * redis / 1e6
    sums.postgres += live * postgres / 1e6
  }
  const total = rows.find(row => row[0] === '**total**') as string[]
  t.equal(num(total[1] as string), sums.live, 'live entries in all')
  t.ok(Math.abs(num(total[4] as string) - sums.redis) <= 0.05 && Math.abs(num(total[6] as string) - sums.postgres) <= 0.05, 'MB in all')
})
