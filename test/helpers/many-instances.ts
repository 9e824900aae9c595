import { randomBytes } from 'node:crypto'
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import type t from 'tap'
import jwtLogin, { type SettingsInput, type StateStore } from '../../lib/index.js'
import { migrate, qualified } from '../../examples/postgres/migrate.js'
import { PostgresUserAdapter } from '../../examples/postgres/users.js'
import { storeFromEnv } from '../../examples/two-instances/store.js'
import { ALICE, API_KEY_SCOPE, BOB, CAROL, DAVE, ERIN, TOTP_SECRET } from '../../examples/two-instances/users.js'
import { startHost, stopHost, type Answer, type Host } from './example-hosts.js'
import { impersonationAcross } from './many-instances-impersonation.js'
import { keysAcross, PER_KEY } from './many-instances-keys.js'
import { adminApp, lockAcross, type AdminApp } from './many-instances-lock.js'
import { REDIRECT_URI, startOAuth2Provider, type GitHubAccount, type TestOAuth2Provider } from './oauth2-providers.js'
import { codeIn } from './reset.js'
import { DATABASE_URL } from './shared-stores.js'
import { totpAt } from './two-factor.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]
type Who = { email: string, password: string }
/** The three instances, A, B and C. */
type Trio = [Host, Host, Host]

/**
 * The invariants of test/faults/fault-injection.test.ts, across processes: three
 * host processes (examples/two-instances/host.ts) on one shared store, the
 * flows spread over them, concurrent where a race would show. Never a 5xx;
 * a revoked token never validates anywhere; a single-use secret (an interim
 * token, a TOTP step, an email code, a reset code, a sign-in code by email,
 * a refresh token past its retry) is used once across all instances; failed
 * logins and wrong sign-in codes add up across them; a settings change
 * reaches every instance. An API key, a lock and an impersonation made on
 * one instance (or beside them) hold on all of them.
 *
 * The store kind is a parameter: `kind` is the hosts' STORE, `env` the
 * variables that kind reads (its server and a namespace of this run), and
 * `cleanup` removes that namespace once the hosts have stopped.
 */
export interface StoreUnderTest {
  kind: string
  env: Record<string, string>
  cleanup: () => Promise<void>
}

/** Failed logins per account in this run's settings (a reset below costs three). */
const ACCOUNT_MAX = 5
/** How long every instance may take to follow a settings change: the TTL plus a generous margin, not a speed claim. */
const SETTINGS_TTL_MS = 300
const CONVERGE_MS = 30_000

/** The settings file every host reads (the hosts add the signing key). */
type SharedSettings = Omit<SettingsInput, 'tokens'>

const SETTINGS: SharedSettings = {
  refresh: { enabled: true },
  resetPassword: { enabled: true },
  sessions: { enabled: true },
  emailSignIn: { enabled: true },
  // every request of the run comes from 127.0.0.1: the per-IP limits would count them all
  limits: { loginPerAccount: { max: ACCOUNT_MAX, window: '15m' }, loginPerIp: { max: 10_000, window: '15m' }, requestsPerIp: { max: 100_000, window: '1m' } },
  // the example host's scope; a small per-key limit, reached across the hosts; every wrong key of the run comes from 127.0.0.1 too
  apiKeys: { enabled: true, scopes: [API_KEY_SCOPE], limits: { perKey: { max: PER_KEY, window: '1h' }, wrongKeysPerIp: { max: 10_000, window: '15m' } } }
}

/** The hosts' key id (examples/two-instances/host.ts): the admin app signs with it and the hosts' secret. */
const HOSTS_KID = 'shared-1'

/** Replaces the file in one rename, so no host ever reads half of it. */
async function writeSettings (file: string, settings: SharedSettings): Promise<void> {
  await writeFile(`${file}.next`, JSON.stringify(settings))
  await rename(`${file}.next`, file)
}

const pairOf = (answer: Answer): [number, unknown] => [answer.status, answer.data.errorCode]
const login = async (on: Host, who: Who): Promise<Answer> => await on.call('/auth', { email: who.email, password: who.password })

async function signIn (on: Host, who: Who): Promise<{ jwt: string, refresh_token: string, two_factor_required?: boolean }> {
  const answer = await login(on, who)
  if (answer.status !== 200) throw new Error(`login of ${who.email} on ${on.name}: ${answer.status} ${JSON.stringify(answer.data)}`)
  return answer.data as { jwt: string, refresh_token: string, two_factor_required?: boolean }
}

/** Validates `jwt` on every host at once. */
async function validateEverywhere (hosts: Host[], jwt: string): Promise<Answer[]> {
  return await Promise.all(hosts.map(async (host) => await host.call('/auth/validate', { JWT: jwt })))
}

/**
 * Starts A, B and C on the store with a settings file, and the admin app
 * beside them with their settings and key; stops them, cleans the store and
 * removes the file at the end.
 */
async function startThree (t: Test, store: StoreUnderTest): Promise<{ hosts: Trio, settingsFile: string, admin: AdminApp }> {
  const dir = await mkdtemp(join(tmpdir(), 'jwt-login-many-instances-'))
  const settingsFile = join(dir, 'settings.json')
  await writeSettings(settingsFile, SETTINGS)
  const secret = randomBytes(32).toString('base64url')
  const env = {
    ...store.env,
    STORE: store.kind,
    JWT_SECRET: secret,
    SETTINGS_FILE: settingsFile,
    SETTINGS_TTL: `${SETTINGS_TTL_MS}ms`,
    PORT: '0'
  }
  const started = await Promise.allSettled(['A', 'B', 'C'].map(async (name) => await startHost(env, name)))
  const running = started.flatMap((result) => result.status === 'fulfilled' ? [result.value] : [])
  const admins: AdminApp[] = []
  t.teardown(async () => {
    await Promise.all(running.map(stopHost))
    await Promise.all(admins.map(async (admin) => { await admin.close() }))
    await store.cleanup()
    await rm(dir, { recursive: true, force: true })
  })
  const failed = started.find((result) => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  // the hosts' settings but the mailed features (the admin app mails nothing, so it has no mailer), and their key
  const { resetPassword: _reset, emailSignIn: _email, ...shared } = SETTINGS
  const admin = await adminApp(store.kind, store.env, { ...shared, tokens: { keys: [{ kid: HOSTS_KID, secret }] } })
  admins.push(admin)
  return { hosts: running as Trio, settingsFile, admin }
}

/** Starts three hosts on the store, runs every flow, and stops them (and cleans the store) at the end. */
export async function runManyInstances (t: Test, store: StoreUnderTest): Promise<void> {
  t.setTimeout(300_000)
  const { hosts, settingsFile, admin } = await startThree(t, store)

  await t.test('logins on each instance; every token validates on every instance', async (t) => { await tokensEverywhere(t, hosts) })
  await t.test('two-factor by TOTP: one interim token and code sent to all three at once signs in once; the step is not replayed elsewhere', async (t) => { await totpOnce(t, hosts) })
  await t.test('two-factor by email: the mailed code works once, on one instance, for its own challenge', async (t) => { await emailCodeOnce(t, hosts) })
  await t.test('refresh: one token sent to all three at once gets one successor; an older token replayed ends the session everywhere', async (t) => { await refreshAcross(t, hosts) })
  await t.test('revoke on B: the very next validate on A and on C is refused', async (t) => { await revokeAcross(t, hosts) })
  // before the reset: erin has no session and no failed sign-in yet
  await t.test('sign-in by email: a code asked for on C, sent to A and B at once, signs in once, with one session listed everywhere', async (t) => { await emailCodeAcross(t, hosts) })
  await t.test('reset: one code sent to all three at once with three passwords sets exactly one of them', async (t) => { await resetOnce(t, hosts) })
  await t.test('lockout: failed logins spread over the instances, even concurrent, lock the account on all of them', async (t) => { await lockoutAcross(t, hosts) })
  await t.test('settings: a change of the settings file reaches every instance', async (t) => { await settingsConverge(t, hosts, settingsFile) })
  await t.test('sessions: DELETE /sessions on A ends the sessions started on A, B and C on all three; DELETE /sessions/{id} on B ends one started on C everywhere', async (t) => { await sessionsAcross(t, hosts) })
  await t.test('lock: a lock made beside the hosts ends alice\'s tokens on the next request on every host and refuses her sign-in there until the unlock', async (t) => { await lockAcross(t, hosts, admin) })
  await t.test('API keys: a key made on A works on B and C; its limit is counted across them; DELETE on C, a sign-out everywhere on A, a lock beside them end keys on every host', async (t) => { await keysAcross(t, hosts, admin) })
  await t.test('impersonation: the admin app acts as alice with the hosts\' key; the token validates on A with act.sub, is listed with its actor on B, is refused credential changes on C, and a revoke on A ends it on B and C', async (t) => { await impersonationAcross(t, hosts, admin) })
  // last to sign alice in: it locks her account
  await t.test('sign-in by email: wrong codes sent to all three at once are checked at most limits.loginPerAccount.max times, and lock the account everywhere', async (t) => { await emailGuessesAcross(t, hosts) })
  await t.test('GitHub sign-in on three instances sharing one user database: the link made on A finds the user on B; 20 concurrent first sign-ins of one account make one user and one link', async (t) => { await providerLinksAcross(t, store) })
  await t.test('never a 5xx in any answer of the run (nothing was made to fail: not even a 503)', async (t) => {
    const answered = hosts.flatMap((host) => host.answered)
    t.ok(answered.length > 80, `${answered.length} answers`)
    t.same(answered.filter(({ status }) => status >= 500), [])
    const errors = hosts.flatMap((host) => host.logged).filter(({ level }) => Number(level) >= 50)
    t.same(errors, [], 'and no error in the hosts\' logs')
  })
}

async function tokensEverywhere (t: Test, hosts: Host[]): Promise<void> {
  const tokens = await Promise.all(hosts.map(async (host) => await signIn(host, ALICE)))
  for (const [i, { jwt }] of tokens.entries()) {
    const answers = await validateEverywhere(hosts, jwt)
    t.same(answers.map(({ status, data }) => [status, data.user?.user_email]), hosts.map(() => [200, ALICE.email]), `the token from ${hosts[i]?.name as string}`)
  }
}

/** Exactly one answer is 200; the others are refused with one of `codes` (401). */
function oneWinner (t: Test, answers: Answer[], status: number, codes: number[]): number {
  const winners = answers.flatMap((answer, i) => answer.status === 200 ? [i] : [])
  t.equal(winners.length, 1, 'exactly one succeeds')
  for (const answer of answers.filter(({ status }) => status !== 200)) {
    t.equal(answer.status, status, 'the others are refused')
    t.ok(codes.includes(answer.data.errorCode), `with errorCode ${String(answer.data.errorCode)} (one of ${codes.join(', ')})`)
  }
  return winners[0] as number
}

async function totpOnce (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  const interim = await signIn(a, CAROL)
  t.equal(interim.two_factor_required, true, 'the password gives an interim token')
  const code = await totpAt(TOTP_SECRET, Date.now())
  const answers = await Promise.all(hosts.map(async (host) => await host.call('/auth/2fa', { JWT: interim.jwt, code })))
  // a loser finds the challenge spent (107) or the step claimed (109), whichever it meets first
  const winner = answers[oneWinner(t, answers, 401, [107, 109])] as Answer
  const validated = await validateEverywhere(hosts, winner.data.jwt)
  t.same(validated.map(({ status }) => status), [200, 200, 200], 'the final token validates everywhere')

  // the same code on a fresh challenge from B, sent to C: the step is spent for every instance
  const again = await signIn(b, CAROL)
  t.same(pairOf(await c.call('/auth/2fa', { JWT: again.jwt, code })), [401, 109], 'the TOTP code is not replayed')
}

async function emailCodeOnce (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  const interim = await signIn(a, DAVE)
  const mail = await a.nextMail(DAVE.email)
  const code = /sign-in code is (\d{6})/.exec(mail.text)?.[1] as string
  t.match(code, /^\d{6}$/, 'the code came by mail from the instance that served the login')
  const answers = await Promise.all(hosts.map(async (host) => await host.call('/auth/2fa', { JWT: interim.jwt, code })))
  // a loser finds the challenge spent (107) or the code gone with it (109), whichever it meets first
  oneWinner(t, answers, 401, [107, 109])
  t.same(pairOf(await b.call('/auth/2fa', { JWT: interim.jwt, code })), [401, 107], 'the interim token is spent')

  // a new login on C mails a new code; the old one does not open the new challenge anywhere
  const fresh = await signIn(c, DAVE)
  t.same(pairOf(await a.call('/auth/2fa', { JWT: fresh.jwt, code })), [401, 109], 'an old code is bound to its own challenge')
  const newCode = /sign-in code is (\d{6})/.exec((await c.nextMail(DAVE.email)).text)?.[1] as string
  t.equal((await b.call('/auth/2fa', { JWT: fresh.jwt, code: newCode })).status, 200, 'its own code opens it, on another instance')
}

async function refreshAcross (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  const first = await signIn(a, ALICE)
  // within refresh.reuseInterval (30 s by default) every use of the token gets the one successor
  const answers = await Promise.all(hosts.map(async (host) => await host.call('/auth/refresh', { refresh_token: first.refresh_token })))
  t.same(answers.map(({ status }) => status), [200, 200, 200], 'every concurrent use succeeds')
  const successor = answers[0]?.data.refresh_token as string
  t.same(answers.map(({ data }) => data.refresh_token), [successor, successor, successor], 'with the same successor')
  t.not(successor, first.refresh_token)

  const next = await a.call('/auth/refresh', { refresh_token: successor })
  t.equal(next.status, 200, 'the successor rotates on A')
  // the first token is now two rotations old: neither current nor previous, so a reuse at any time
  t.same(pairOf(await b.call('/auth/refresh', { refresh_token: first.refresh_token })), [401, 51], 'replayed on B: refused')
  t.same(pairOf(await c.call('/auth/refresh', { refresh_token: next.data.refresh_token })), [401, 51], 'the newest refresh token ends with the session')
  for (const jwt of [first.jwt, ...answers.map(({ data }) => data.jwt as string), next.data.jwt as string]) {
    const refused = await validateEverywhere(hosts, jwt)
    t.same(refused.map(pairOf), [[401, 55], [401, 55], [401, 55]], 'every access token of the session is revoked on every instance')
  }
}

async function revokeAcross (t: Test, [a, b, c]: Trio): Promise<void> {
  const tokens = await signIn(c, ALICE)
  t.equal((await a.call('/auth/validate', { JWT: tokens.jwt })).status, 200, 'valid on A before')
  t.equal((await b.call('/auth/revoke', { JWT: tokens.jwt })).status, 200, 'revoked on B')
  // issued as soon as B answered, no wait
  const after = await Promise.all([a, c].map(async (host) => await host.call('/auth/validate', { JWT: tokens.jwt })))
  t.same(after.map(pairOf), [[401, 55], [401, 55]], 'refused on A and on C')
  t.same(pairOf(await a.call('/auth/refresh', { refresh_token: tokens.refresh_token })), [401, 51], 'its refresh token too')
}

async function resetOnce (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  const before = await signIn(b, ERIN)
  t.equal((await c.call('/user/reset_password', { email: ERIN.email })).status, 200, 'the code is asked for on C')
  const code = codeIn((await c.nextMail(ERIN.email)).text)
  const passwords = hosts.map((host) => `erin's new password, set through ${host.name}`)
  const answers = await Promise.all(hosts.map(async (host, i) => await host.call('/user/reset_password', { email: ERIN.email, code, new_password: passwords[i] }, 'PUT')))
  const w = oneWinner(t, answers, 400, [62])
  const winner = hosts[w] as Host

  // The example's users live in each process, so the new password is in the winner's users only
  // (a real host has one user database); the code and the sessions are in the shared store.
  t.equal((await login(winner, { email: ERIN.email, password: passwords[w] as string })).status, 200, `the password is the one sent to ${winner.name}`)
  for (const password of [...passwords.filter((_, i) => i !== w), ERIN.password]) {
    t.same(pairOf(await login(winner, { email: ERIN.email, password })), [401, 48], 'no other password')
  }
  for (const host of hosts) {
    const reused = await host.call('/user/reset_password', { email: ERIN.email, code, new_password: 'one more new password' }, 'PUT')
    t.same(pairOf(reused), [400, 62], `the code is spent for ${host.name} too`)
  }
  t.same((await validateEverywhere(hosts, before.jwt)).map(pairOf), [[401, 55], [401, 55], [401, 55]], 'a session from before the reset ends everywhere')
  t.same(pairOf(await a.call('/auth/refresh', { refresh_token: before.refresh_token })), [401, 51])
}

/** The code of the next sign-in mail to `to` that `host` sent. */
async function signInCode (host: Host, to: string): Promise<string> {
  const code = /sign-in code is (\d+)/.exec((await host.nextMail(to)).text)?.[1]
  if (code === undefined) throw new Error(`no sign-in code in the mail ${host.name} sent to ${to}`)
  return code
}

/**
 * How many verifies of one code race, spread over A and B: fewer than the
 * account's lockout, with the replay after them. Every use of the code
 * after its claim counts as a failed sign-in of erin, whose next password
 * sign-in (the reset's below) must not find her locked.
 */
const EMAIL_RACERS = ACCOUNT_MAX - 1

async function emailCodeAcross (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  t.equal((await c.call('/auth/email', { email: ERIN.email })).status, 200, 'the code is asked for on C')
  const code = await signInCode(c, ERIN.email)
  // not on C: the instance that mailed the code is not the one it signs in on
  const answers = await Promise.all(Array.from({ length: EMAIL_RACERS }, async (_, i) => await (i % 2 === 0 ? a : b).call('/auth/email/verify', { email: ERIN.email, code })))
  const won = answers.filter(({ status }) => status === 200)
  t.equal(won.length, 1, 'exactly one signs in')
  for (const answer of answers.filter(({ status }) => status !== 200)) {
    t.same(pairOf(answer), [401, 246], 'another use is refused as a used code')
  }
  const jwt = won[0]?.data.jwt as string
  t.same((await validateEverywhere(hosts, jwt)).map(({ status }) => status), [200, 200, 200], 'its token validates everywhere')
  for (const host of hosts) t.same(await listedOn(t, host, jwt), [sessionIdOf(jwt)], `${host.name} lists the one session`)
  t.same(pairOf(await c.call('/auth/email/verify', { email: ERIN.email, code })), [401, 246], 'the code is spent for C too')
}

async function emailGuessesAcross (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  t.equal((await a.call('/auth/email', { email: ALICE.email })).status, 200, 'the code is asked for on A')
  const code = await signInCode(a, ALICE.email)
  const wrong = (i: number): string => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0')
  const tries = Array.from({ length: ACCOUNT_MAX + 15 }, (_, i) => hosts[i % hosts.length] as Host)
  const answers = await Promise.all(tries.map(async (host, i) => await host.call('/auth/email/verify', { email: ALICE.email, code: wrong(i) })))
  const checked = answers.filter(({ status }) => status === 401)
  t.same(checked.map(pairOf), Array(checked.length).fill([401, 246]), 'a checked guess is a wrong code')
  t.ok(checked.length >= 1 && checked.length <= ACCOUNT_MAX, `at most ${ACCOUNT_MAX} codes checked (${checked.length})`)
  t.same(answers.filter(({ status }) => status !== 401).map(pairOf), Array(answers.length - checked.length).fill([429, 200]), 'the others are refused unchecked')
  // on a cluster the three counts of a guess (address, account, client) are not one atomic batch: a guess can rank
  // within the limit on one and over it on another, and the burst leave fewer failures than the limit; guesses one at a time fill it
  for (let n = checked.length; n < ACCOUNT_MAX; n++) {
    t.same(pairOf(await hosts[n % hosts.length]?.call('/auth/email/verify', { email: ALICE.email, code: wrong(100 + n) }) as Answer), [401, 246], 'a guess after the burst is checked, up to the limit')
  }
  for (const host of [b, c]) t.same(pairOf(await host.call('/auth/email/verify', { email: ALICE.email, code })), [429, 200], `locked on ${host.name}: even the right code is refused`)
}

async function lockoutAcross (t: Test, hosts: Trio): Promise<void> {
  const wrong = { email: BOB.email, password: 'not the password' }
  const tries = Array.from({ length: ACCOUNT_MAX + 3 }, (_, i) => hosts[i % hosts.length] as Host)
  const answers = await Promise.all(tries.map(async (host) => await login(host, wrong)))
  const checked = answers.filter(({ status }) => status === 401)
  t.same(answers.filter(({ status }) => status !== 401).map(pairOf), Array(answers.length - checked.length).fill([429, 200]), 'the others are refused unchecked')
  t.same(checked.map(pairOf), Array(checked.length).fill([401, 48]))
  t.ok(checked.length <= ACCOUNT_MAX, `at most ${ACCOUNT_MAX} passwords checked (${checked.length})`)
  // on a cluster the counts of one attempt (account, client) are not one atomic batch: the burst may leave fewer
  // failures than the limit (as with the email codes above); wrong passwords one at a time fill it
  for (let n = checked.length; n < ACCOUNT_MAX; n++) {
    t.same(pairOf(await login(hosts[n % hosts.length] as Host, wrong)), [401, 48], 'a wrong password after the burst is checked, up to the limit')
  }
  for (const host of hosts) {
    const res = await login(host, BOB)
    t.same(pairOf(res), [429, 200], `locked on ${host.name}: even the right password is refused`)
    t.ok(Number(res.retryAfter) > 0, 'with Retry-After')
  }
  t.equal((await login(hosts[0], ALICE)).status, 200, 'another account is not locked')
}

/** Polls every host until `answers` says yes for each, or the deadline passes; whether they converged. */
async function converged (hosts: Host[], check: (host: Host) => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + CONVERGE_MS
  const pending = new Set(hosts)
  while (pending.size > 0 && Date.now() < deadline) {
    for (const host of [...pending]) if (await check(host)) pending.delete(host)
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return pending.size === 0
}

async function settingsConverge (t: Test, hosts: Trio, file: string): Promise<void> {
  const { jwt } = await signIn(hosts[0], ALICE)
  const seen = new Set<string>()
  const validateIs = (expected: [number, unknown]) => async (host: Host): Promise<boolean> => {
    const answer = pairOf(await host.call('/auth/validate', { JWT: jwt }))
    seen.add(JSON.stringify(answer))
    return JSON.stringify(answer) === JSON.stringify(expected)
  }
  t.ok(await converged(hosts, validateIs([200, undefined])), 'valid everywhere before')

  await writeSettings(file, { ...SETTINGS, validate: { enabled: false } })
  t.ok(await converged(hosts, validateIs([403, 82])), `validate off on every instance within ${CONVERGE_MS} ms`)
  await writeSettings(file, SETTINGS)
  t.ok(await converged(hosts, validateIs([200, undefined])), `and on again within ${CONVERGE_MS} ms`)
  t.same([...seen].sort(), ['[200,null]', '[403,82]'], 'no other answer while they changed over')
}

/** The session id of a token (its `sid` claim), read without verifying it. */
function sessionIdOf (jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as { sid: string }).sid
}

/** `GET <prefix><path>` on a host, kept in its answers like a call (`call` sends a body, which a GET cannot have). */
async function getFrom (host: Host, path: string): Promise<Answer> {
  const res = await fetch(`${host.base}/jwt-login/v1${path}`)
  host.answered.push({ host: host.name, method: 'GET', path: path.split('?')[0] as string, status: res.status })
  return { status: res.status, data: (await res.json() as { data: Record<string, any> }).data, retryAfter: res.headers.get('retry-after') }
}

/** The ids of the sessions `GET /sessions` lists on `host` for `jwt`'s user, sorted. */
async function listedOn (t: Test, host: Host, jwt: string): Promise<string[]> {
  const answer = await getFrom(host, `/sessions?JWT=${jwt}`)
  t.equal(answer.status, 200, `GET /sessions on ${host.name}`)
  return (answer.data.sessions as Array<{ id: string }>).map(({ id }) => id).sort()
}

async function sessionsAcross (t: Test, hosts: Trio): Promise<void> {
  const [a, b, c] = hosts
  const refused = [[401, 55], [401, 55], [401, 55]]
  const live = [[200, undefined], [200, undefined], [200, undefined]]
  const before = await Promise.all(hosts.map(async (host) => await signIn(host, ALICE)))
  const ids = before.map(({ jwt }) => sessionIdOf(jwt))
  for (const host of hosts) {
    const listed = await listedOn(t, host, before[0]?.jwt as string)
    t.ok(ids.every((id) => listed.includes(id)), `${host.name} lists the sessions started on A, B and C`)
  }

  t.same(pairOf(await a.call('/sessions', { JWT: before[0]?.jwt }, 'DELETE')), [200, undefined], 'DELETE /sessions on A')
  // issued as soon as A answered, no wait
  for (const [i, { jwt }] of before.entries()) {
    t.same((await validateEverywhere(hosts, jwt)).map(pairOf), refused, `the token from ${hosts[i]?.name as string} is refused on every instance`)
  }
  const refreshed = await Promise.all(before.map(async ({ refresh_token: token }, i) => await (hosts[(i + 1) % 3] as Host).call('/auth/refresh', { refresh_token: token })))
  t.same(refreshed.map(pairOf), [[401, 51], [401, 51], [401, 51]], 'and every refresh token, on another instance')

  const after = await Promise.all(hosts.map(async (host) => await signIn(host, ALICE)))
  const [fromA, fromB, fromC] = after.map(({ jwt }) => sessionIdOf(jwt)) as [string, string, string]
  t.same(await listedOn(t, c, after[0]?.jwt as string), [fromA, fromB, fromC].sort(), 'new sign-ins work; only they are listed')

  t.same(pairOf(await b.call(`/sessions/${fromC}`, { JWT: after[1]?.jwt }, 'DELETE')), [200, undefined], 'DELETE on B of the session started on C')
  t.same((await validateEverywhere(hosts, after[2]?.jwt as string)).map(pairOf), refused, 'refused on all three')
  t.same(pairOf(await a.call('/auth/refresh', { refresh_token: after[2]?.refresh_token })), [401, 51], 'its refresh token too')
  for (const [i, { jwt }] of after.slice(0, 2).entries()) {
    t.same((await validateEverywhere(hosts, jwt)).map(pairOf), live, `the session from ${hosts[i]?.name as string} lives on everywhere`)
  }
  t.same(await listedOn(t, a, after[0]?.jwt as string), [fromA, fromB].sort(), 'A no longer lists it')
  t.same(pairOf(await c.call(`/sessions/${fromC}`, { JWT: after[0]?.jwt }, 'DELETE')), [404, 213], 'C finds it ended too')
}

// ---- provider sign-in and identity links --------------------------------------------

/**
 * The host processes each seed their own in-memory users (see
 * examples/two-instances/users.ts): a link one of them made is in its memory
 * only. Links live in the user database, which a real service's instances
 * share; so the provider sign-ins run on three instances in this process,
 * each with its own connections to one PostgreSQL user database (the
 * example's PostgresUserAdapter) and its own client of the store under test
 * (beside the hosts' keys, in a namespace of its own).
 */
interface LinkedInstances {
  instances: Array<{ name: string, app: FastifyInstance }>
  /** A view of the shared user database, for the checks. */
  users: PostgresUserAdapter
  /** How many users the database holds. */
  count: () => Promise<number>
  gh: TestOAuth2Provider<'github'>
}

/** How many first sign-ins of one provider account race. */
const FIRST_SIGN_INS = 20

/** The store's namespace for the in-process instances: beside the hosts', removed with theirs. */
function besideHosts (env: Record<string, string>): Record<string, string> {
  const own = { ...env }
  if (own.REDIS_PREFIX !== undefined) own.REDIS_PREFIX = `${own.REDIS_PREFIX}oauth:`
  if (own.PG_TABLE !== undefined) own.PG_TABLE = `${own.PG_TABLE}_oauth`
  return own
}

async function startLinkedInstances (t: Test, store: StoreUnderTest): Promise<LinkedInstances> {
  const gh = await startOAuth2Provider('github')
  const schema = `jwt_login_many_users_${randomBytes(6).toString('hex')}`
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
  const pools: pg.Pool[] = []
  const stores: StateStore[] = []
  const apps: FastifyInstance[] = []
  t.teardown(async () => {
    await Promise.all(apps.map(async (app) => { await app.close() }))
    await Promise.all(stores.map(async (one) => { await one.close?.() }))
    await Promise.all(pools.map(async (pool) => { await pool.end() }))
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`)
    await admin.end()
    await gh.close()
  })
  await migrate(admin, schema)
  const settings: SettingsInput = {
    tokens: { keys: [{ kid: 'shared-1', secret: randomBytes(32).toString('base64url') }] },
    refresh: { enabled: true },
    sessions: { enabled: true },
    limits: { requestsPerIp: { max: 100_000, window: '1m' }, signInsPerAccount: { max: 1000, window: '1h' } },
    // registration on: a sign-in the link did not find would make a new user, which the checks would see
    oauth: { providers: { gh: { enabled: true, preset: 'github', clientId: gh.clientId, clientSecret: gh.clientSecret, redirectUris: [REDIRECT_URI], autoRegister: true, ...gh.settings } } }
  }
  const instances = await Promise.all(['A', 'B', 'C'].map(async (name) => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
    pools.push(pool)
    const own = await storeFromEnv({ ...besideHosts(store.env), STORE: store.kind })
    stores.push(own)
    const app = Fastify()
    apps.push(app)
    await app.register(jwtLogin, { users: new PostgresUserAdapter(pool, schema), store: own, settings })
    await app.ready()
    return { name, app }
  }))
  const count = async (): Promise<number> => Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${qualified(schema, 'users')}`)).rows[0]?.n)
  return { instances, users: new PostgresUserAdapter(admin, schema), count, gh }
}

/** A GitHub account whose one address, its primary, is verified. */
function gitHubAccount (id: number, login: string, email: string): GitHubAccount {
  return { id, login, name: null, email: null, emails: [{ email, primary: true, verified: true, visibility: 'private' }] }
}

async function providerLinksAcross (t: Test, store: StoreUnderTest): Promise<void> {
  const { instances, users, count, gh } = await startLinkedInstances(t, store)
  const [a, b, c] = instances as [LinkedInstances['instances'][number], LinkedInstances['instances'][number], LinkedInstances['instances'][number]]
  const signIn = async (on: { app: FastifyInstance }, code: string): Promise<{ status: number, data: Record<string, any> }> => {
    const res = await on.app.inject({ method: 'POST', url: '/jwt-login/v1/oauth/token', payload: { provider: 'gh', code } })
    return { status: res.statusCode, data: (res.json() as { data: Record<string, any> }).data }
  }
  const validate = async (on: { app: FastifyInstance }, jwt: string): Promise<number> =>
    (await on.app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: jwt } })).statusCode
  const linksOf = async (user: Parameters<PostgresUserAdapter['listIdentities']>[0]): Promise<string[]> =>
    (await users.listIdentities(user)).map(({ provider, subject }) => `${provider}:${subject}`)
  /** A link to the GitHub account `id`, as `linksOf` lists it: its subject qualified by the server's origin. */
  const linkTo = (id: number): string => `gh:${gh.linkSubject(id)}`

  await t.test('a sign-in on A links the GitHub account; the next one, on B, finds the user by the link', async (t) => {
    const user = await users.addUser({ login: 'octavia', email: 'octavia@example.com', password: 'octavia has a password too', emailVerified: true })
    const atGitHub = gitHubAccount(7001, 'octavia-gh', user.email)
    const first = await signIn(a, gh.code(atGitHub).code)
    t.same([first.status, first.data.user?.ID], [200, user.id], 'on A: the user of the verified email signs in')
    t.same(await linksOf(user), [linkTo(7001)], 'and the GitHub account is linked to her')
    // her address at GitHub changes to one nobody has here: only the link can find her now
    const moved = gitHubAccount(7001, 'octavia-gh', 'octavia@elsewhere.example')
    const before = await count()
    const next = await signIn(b, gh.code(moved).code)
    t.same([next.status, next.data.user?.ID], [200, user.id], 'on B: the same user, found by the link made on A')
    t.equal(await count(), before, 'nobody was registered for the new address (registration is on)')
    t.same(await linksOf(user), [linkTo(7001)], 'still the one link')
    t.equal(await validate(c, next.data.jwt as string), 200, 'the token from B validates on C')
  })

  await t.test(`${FIRST_SIGN_INS} concurrent first sign-ins of one GitHub account, spread over A, B and C: all 200, one user, one link`, async (t) => {
    const email = 'newcomer@example.com'
    const atGitHub = gitHubAccount(7002, 'newcomer-gh', email)
    const before = await count()
    const codes = Array.from({ length: FIRST_SIGN_INS }, () => gh.code(atGitHub).code)
    const linked: unknown[] = []
    for (const { app } of instances) app.jwtLogin.events.on('identity.linked', (event) => { linked.push(event) })
    const answers = await Promise.all(codes.map(async (code, i) => await signIn(instances[i % instances.length] as typeof a, code)))
    t.same(answers.filter(({ status }) => status !== 200), [], 'every sign-in answers 200')
    const user = await users.findByEmail(email)
    if (!t.ok(user, 'the user was registered') || user === null) return
    t.same([...new Set(answers.map(({ data }) => data.user?.ID))], [user.id], 'every answer names that user')
    t.equal(await count(), before + 1, 'one user was registered')
    t.same(await linksOf(user), [linkTo(7002)], 'with one link, the GitHub account\'s')
    t.equal((await users.findByIdentity('gh', gh.linkSubject(7002)))?.id, user.id, 'which finds the user')
    t.same(linked, [{ userId: user.id, ip: '127.0.0.1', provider: 'gh', via: 'sign_in' }], 'and one sign-in, the one that made the link, reports it')
    const statuses = await Promise.all(answers.map(async ({ data }, i) => await validate(instances[(i + 1) % instances.length] as typeof a, data.jwt as string)))
    t.same(statuses, Array(FIRST_SIGN_INS).fill(200), 'every token validates on another instance')
  })
}
