/**
 * Plain OAuth 2.0 sign-in and identity links in the fault sweep
 * (test/helpers/fault-suite.ts says what it checks; lib/oauth/flow.ts,
 * links.ts and account-identities.ts what these flows promise), against a
 * local GitHub (test/helpers/oauth2-providers.ts), one server for the file:
 *
 * - `oauth2-code-github`: `POST /oauth/token` with a GitHub code, for a
 *   verified user found by its email and not linked yet (the sign-in links it);
 * - `oauth2-linked`: the same for a user found by its link (the GitHub
 *   account's email is nobody's, so only the link can find the user);
 * - `identity-link`: `POST /account/identities` with a GitHub code and its
 *   PKCE verifier (the route takes no code without one);
 * - `identity-unlink`: `DELETE /account/identities/gh` for a user without a
 *   password whose other way in is a second GitHub link (provider `gh2`).
 *
 * What a failed request leaves:
 * - a provider code is claimed in the store before the provider sees it, so
 *   a failure after the claim spends it (a retry with it is 401 / 72, and the
 *   client needs a new code); a store failure before the claim spends
 *   nothing, and the same code signs in;
 * - a failed sign-in starts no session, and the user ends with one link for
 *   the GitHub account, whichever request made it;
 * - the links are as before the request or as after it, never in between,
 *   and an unlink never takes away the last way in: the way left signs in.
 *
 * GitHub itself is not swept by position: in cases of their own its token
 * endpoint, its user API and its email list fail once each, during the
 * sign-in of `oauth2-code-github`. Beyond the sweep's own, every case checks
 * that no log line holds a code, an access token or the client's secret.
 */
import t from 'tap'
import type { SettingsInput } from '../../lib/index.js'
import type { MemoryUser } from '../../lib/testing.js'
import { accountOptions } from './fault-account.js'
import {
  bearer, buildRig, checkListConsistent, dataOf, errorCodeOf, expect, listedIds, listSessions, MANY, noted, ok, PASSWORD, PREFIX, runFlow, session, setupData, sidOf, where,
  type FaultInfo, type Flow, type Response, type Rig, type Session, type StoreName, type Test
} from './fault-rig.js'
import { REDIRECT_URI, startOAuth2Provider, type GitHubAccount, type OAuth2Endpoint, type OAuth2Fault, type TestOAuth2Provider } from './oauth2-providers.js'

type GitHub = TestOAuth2Provider<'github'>

// one GitHub for the whole file (every store's rig), started by the first sweep that needs it
let started: Promise<GitHub> | null = null

async function gitHub (): Promise<GitHub> {
  if (started === null) {
    started = startOAuth2Provider('github')
    t.teardown(async () => { await (await started)?.close() })
  }
  return await started
}

/** The rig's settings: `gh` and `gh2`, two clients' worth of the same GitHub, and the account routes, their counters out of the way. */
function settingsOf (gh: GitHub): Partial<SettingsInput> {
  const provider = { enabled: true, preset: 'github' as const, clientId: gh.clientId, clientSecret: gh.clientSecret, redirectUris: [REDIRECT_URI], ...gh.settings }
  return {
    oauth: { providers: { gh: provider, gh2: provider } },
    account: { enabled: true, limits: { perAccount: MANY, perIp: MANY } }
  }
}

/** A GitHub account whose one address, its primary, is verified. */
function account (id: number, login: string, email: string): GitHubAccount {
  return { id, login, name: null, email: null, emails: [{ email, primary: true, verified: true, visibility: 'private' }] }
}

/**
 * Whether the fault came once the adapter's `method` had made its change: a
 * host that made it and then threw, or a later adapter call that failed.
 * Only then may a failed request leave the change made.
 */
function failedAfter (info: FaultInfo, method: string): boolean {
  const write = info.sequence.findIndex(call => call.method === method) + 1
  return info.layer === 'adapter' && write > 0 && (info.k > write || (info.k === write && info.mode === 'after'))
}

/**
 * Whether the faulty request left its provider code unclaimed: a store fault
 * before the claim (the `oauth-code:` increment), or on it before it ran; on
 * the adapter layer, whose calls are counted apart, a fault on the first
 * `before` calls (the caller's lookup of a route that wants a session), which
 * come before the claim; every other adapter call comes after it.
 */
function codeLeft (info: FaultInfo, before = 0): boolean {
  if (info.layer === 'adapter') return info.call !== null && info.k <= before
  const claim = info.sequence.findIndex(call => call.key.startsWith('oauth-code:')) + 1
  return claim > 0 && (info.k < claim || (info.k === claim && info.mode === 'before'))
}

/** A user's links as `provider:subject`, sorted (the subject as the link holds it, qualified by GitHub's origin). */
async function linksOf (rig: Rig, user: MemoryUser): Promise<string[]> {
  return (await rig.users.listIdentities(user)).map(link => `${link.provider}:${link.subject}`).sort()
}

/** Sweeps the plain OAuth 2.0 flows on `store`: their rig (logged), the flows, and the whole log at the end. */
export async function oauth2Sweep (t: Test, store: StoreName): Promise<void> {
  const gh = await gitHub()
  const rig = await buildRig(t, store, 'oauth2', settingsOf(gh), accountOptions, { logged: true })
  const { flows, providerCases, checkWholeLog } = await oauth2Flows(rig, gh)
  for (const flow of flows) {
    await t.test(`${store} ${flow.name}`, async (t) => { await runFlow(t, flow) })
  }
  await providerCases(t)
  checkWholeLog(t)
}

/** A failure of GitHub in the middle of a sign-in: where, and how (given the code being redeemed). */
interface ProviderFailure { name: string, endpoint: OAuth2Endpoint, fault: (code: string) => OAuth2Fault }

/** GitHub failing, once per case: its token endpoint (quoting what it was sent), its user API, its email list. */
function providerFailures (gh: GitHub): ProviderFailure[] {
  return [
    {
      name: 'the token endpoint fails, quoting the code and the secret it was sent',
      endpoint: 'token',
      // as a provider's error page may: the plugin must not log it
      fault: (code) => ({ status: 500, body: { error: 'server_error', error_description: `could not redeem ${code} for ${gh.clientId} (${gh.clientSecret})` } })
    },
    { name: 'the user API answers 503', endpoint: 'user', fault: () => ({ status: 503, body: { message: 'Service Unavailable' } }) },
    { name: 'the email list drops the connection', endpoint: 'emails', fault: () => ({ destroy: true }) }
  ]
}

async function oauth2Flows (rig: Rig, gh: GitHub): Promise<{ flows: Array<Flow<any>>, providerCases: (t: Test) => Promise<void>, checkWholeLog: (t: Test) => void }> {
  const { app, users } = rig
  /** Every provider code (and PKCE verifier) this rig used; the access tokens are read from what GitHub was sent, from `firstRequest` on. */
  const codes = new Set<string>()
  const firstRequest = gh.requests.length

  const codeFor = (who: GitHubAccount): string => {
    const { code } = gh.code(who)
    codes.add(code)
    return code
  }
  /** A code bound to a PKCE challenge, with its verifier. */
  const pkceCodeFor = (who: GitHubAccount): { code: string, codeVerifier: string } => {
    const { code, codeVerifier } = gh.code(who, { pkce: true }) as { code: string, codeVerifier: string }
    codes.add(code)
    codes.add(codeVerifier)
    return { code, codeVerifier }
  }
  /** A link to the GitHub account, as `linksOf` lists it. */
  const linkTo = (provider: string, who: GitHubAccount): string => `${provider}:${gh.linkSubject(who.id)}`
  const signIn = async (provider: string, code: string): Promise<Response> =>
    noted(await app.inject({ method: 'POST', url: `${PREFIX}/oauth/token`, payload: { provider, code } }))
  const userOf = (res: Response): number => dataOf(res).user.ID as number

  /** The access tokens GitHub was shown (its user API's Authorization headers) from request `from` on. */
  const tokensSince = (from: number): string[] => gh.requests.slice(from).flatMap(({ headers }) => {
    const match = /^(?:bearer|token)\s+(\S+)$/i.exec(headers.authorization ?? '')
    return match === null ? [] : [match[1] as string]
  })
  /** Asserts that no log line from `from` on holds one of `secrets`, nor the client's secret. */
  const checkLogClean = (t: Test, from: number, secrets: readonly string[], what: string): void => {
    const held = [...secrets, gh.clientSecret]
    const leaks = rig.logs.slice(from).filter(line => held.some(secret => line.includes(secret)))
    t.same(leaks, [], `no log line holds a code, an access token or the client secret [${what}]`)
  }

  /** The sessions `lister` lists for its user. */
  const listed = async (lister: Session): Promise<string[]> => {
    const res = await listSessions(app, lister.jwt)
    if (res.statusCode !== 200) throw new Error(`the session list failed: ${res.body}`)
    return listedIds(res)
  }
  /**
   * No session was started unless its answer was 200: the user's index holds
   * what it held before the request, and the sessions answered since
   * (`delivered`), each of them validating.
   */
  const checkSessions = async (t: Test, lister: Session, before: readonly string[], delivered: readonly string[], info: FaultInfo): Promise<void> => {
    const now = await listed(lister)
    const sids = delivered.map(sidOf)
    t.same(now.filter(id => !before.includes(id) && !sids.includes(id)), [], `no session was started but those answered 200 [${where(info)}]`, { calls: info.log.split('\n') })
    await checkListConsistent(t, rig, info, delivered, async () => lister.jwt)
  }

  /**
   * What every code flow shares after its one faulty request: the same code
   * retried signs in when the fault came before its claim and is refused as
   * spent after it; whatever happened, it is refused once the retry is done.
   * Answers the requests that succeeded (at most one).
   */
  const checkCode = async (t: Test, res: Response, info: FaultInfo, again: () => Promise<Response>, adapterCallsBefore = 0): Promise<Response[]> => {
    const answers = [res]
    if (!ok(res)) {
      const retry = await again()
      answers.push(retry)
      if (codeLeft(info, adapterCallsBefore)) expect(t, retry, 200, null, 'a fault before the code was claimed spends nothing: the same code succeeds', info)
      else expect(t, retry, 401, 72, 'the code was claimed: a retry with it is refused as spent', info)
    }
    expect(t, await again(), 401, 72, 'the code is spent: it is refused now', info)
    const won = answers.filter(ok)
    t.ok(won.length <= 1, `the provider code succeeds at most once [${where(info)}]`)
    return won
  }

  // ---- POST /oauth/token: a verified user found by its email, linked by the sign-in ----

  const known = await users.addUser({ login: 'known', email: 'known@example.com', password: PASSWORD, emailVerified: true })
  const knownAtGitHub = account(4201, 'known-octo', known.user_email)
  const knownLister = await session(rig, known.user_email)

  interface SignInCase { code: string, before: string[], from: number, mark: number }
  const codeFlow: Flow<SignInCase> = {
    name: 'oauth2-code-github',
    rig,
    setup: async () => {
      // not linked yet: the sign-in finds the user by its email, then links the GitHub account
      for (const link of await users.listIdentities(known)) await users.unlinkIdentity(known, link.provider, link.subject)
      return { code: codeFor(knownAtGitHub), before: await listed(knownLister), from: rig.logs.length, mark: gh.requests.length }
    },
    act: async (c) => await signIn('gh', c.code),
    check: async (t, c, res, info) => {
      const won = await checkCode(t, res, info, async () => await signIn('gh', c.code))
      for (const answer of won) t.equal(userOf(answer), known.ID, `the answer names the user of the email [${where(info)}]`)
      const fresh = await signIn('gh', codeFor(knownAtGitHub))
      if (expect(t, fresh, 200, null, 'a new code signs in', info)) t.equal(userOf(fresh), known.ID, `the user of the email [${where(info)}]`)
      t.same(await linksOf(rig, known), [linkTo('gh', knownAtGitHub)], `the user ends with exactly one link, the GitHub account's [${where(info)}]`)
      await checkSessions(t, knownLister, c.before, [...won, fresh].filter(ok).map(one => dataOf<Session>(one).jwt), info)
      checkLogClean(t, c.from, [...codes, ...tokensSince(c.mark)], where(info))
    }
  }

  // ---- POST /oauth/token: a user found by its link ----

  const linked = await users.addUser({ login: 'linked', email: 'linked@example.com', password: PASSWORD, emailVerified: true })
  // an address that is nobody's at the host: only the link finds the user
  const linkedAtGitHub = account(4202, 'linked-octo', 'somewhere-else@example.org')
  await users.linkIdentity(linked, 'gh', gh.linkSubject(linkedAtGitHub.id), { display: linkedAtGitHub.login, linkedAt: rig.clock() })
  const linkedLister = await session(rig, linked.user_email)

  const linkedFlow: Flow<SignInCase> = {
    name: 'oauth2-linked',
    rig,
    setup: async () => ({ code: codeFor(linkedAtGitHub), before: await listed(linkedLister), from: rig.logs.length, mark: gh.requests.length }),
    act: async (c) => await signIn('gh', c.code),
    // its store calls are `oauth2-code-github`'s, in the same order, so only the last (the session
    // index's write) is swept again; its adapter calls are its own, swept from the link lookup on
    sweepFrom: (call) => call.method === 'findByIdentity' || (call.method === 'compareAndSet' && call.key.startsWith('sessions:user:')),
    check: async (t, c, res, info) => {
      const won = await checkCode(t, res, info, async () => await signIn('gh', c.code))
      for (const answer of won) t.equal(userOf(answer), linked.ID, `the answer names the linked user [${where(info)}]`)
      const fresh = await signIn('gh', codeFor(linkedAtGitHub))
      if (expect(t, fresh, 200, null, 'a new code signs in', info)) t.equal(userOf(fresh), linked.ID, `the linked user [${where(info)}]`)
      t.same(await linksOf(rig, linked), [linkTo('gh', linkedAtGitHub)], `the link is the one it was [${where(info)}]`)
      t.equal(await users.findByEmail(linkedAtGitHub.emails[0]?.email as string), null, `nobody was made for the GitHub account's address [${where(info)}]`)
      await checkSessions(t, linkedLister, c.before, [...won, fresh].filter(ok).map(one => dataOf<Session>(one).jwt), info)
      checkLogClean(t, c.from, [...codes, ...tokensSince(c.mark)], where(info))
    }
  }

  // ---- POST /account/identities ----

  const linker = await users.addUser({ login: 'linker', email: 'linker@example.com', password: PASSWORD, emailVerified: true })
  // whatever its email: the caller holds the session and proves the GitHub account with the code
  const linkerAtGitHub = account(4203, 'linker-octo', 'linker-at-github@example.org')
  const linkerLinked = [linkTo('gh', linkerAtGitHub)]
  const linkByCode = async (jwt: string, { code, codeVerifier }: { code: string, codeVerifier: string }): Promise<Response> =>
    await app.inject({ method: 'POST', url: `${PREFIX}/account/identities`, headers: bearer(jwt), payload: { provider: 'gh', code, code_verifier: codeVerifier } })

  interface LinkCase { jwt: string, code: { code: string, codeVerifier: string }, from: number, mark: number }
  const linkFlow: Flow<LinkCase> = {
    name: 'identity-link',
    rig,
    setup: async () => {
      for (const link of await users.listIdentities(linker)) await users.unlinkIdentity(linker, link.provider, link.subject)
      // a new session each case: the route wants a recent sign-in
      const { jwt } = await session(rig, linker.user_email)
      return { jwt, code: pkceCodeFor(linkerAtGitHub), from: rig.logs.length, mark: gh.requests.length }
    },
    act: async (c) => await linkByCode(c.jwt, c.code),
    check: async (t, c, res, info) => {
      const now = await linksOf(rig, linker)
      t.ok(now.length === 0 || JSON.stringify(now) === JSON.stringify(linkerLinked), `the links are as before or as after (${now.join(', ')}) [${where(info)}]`)
      if (ok(res)) t.same(now, linkerLinked, `a 200 linked the GitHub account [${where(info)}]`)
      else if (now.length > 0) t.ok(failedAfter(info, 'linkIdentity'), `a failed link left the links as they were (unless it failed once the link was made) [${where(info)}]`, { calls: info.log.split('\n') })
      // the caller's lookup (`findById`) comes before the claim
      await checkCode(t, res, info, async () => await linkByCode(c.jwt, c.code), 1)
      // a new code links it, or finds it linked to the caller already: done either way
      expect(t, await linkByCode(c.jwt, pkceCodeFor(linkerAtGitHub)), 200, null, 'a new code links the GitHub account', info)
      t.same(await linksOf(rig, linker), linkerLinked, `the user ends with exactly one link, the GitHub account's [${where(info)}]`)
      checkLogClean(t, c.from, [...codes, ...tokensSince(c.mark)], where(info))
    }
  }

  // ---- DELETE /account/identities/gh ----

  // no password: its ways in are its two GitHub links, `gh` (unlinked by the flow) and `gh2` (the one left)
  const unlinker = await users.createUser({ login: 'unlinker', email: 'unlinker@example.com', displayName: 'Unlinker', role: 'subscriber', emailVerified: true })
  const unlinkerAtGh = account(4204, 'unlinker-octo', 'unlinker-gh@example.org')
  const unlinkerAtGh2 = account(4205, 'unlinker-other', 'unlinker-gh2@example.org')
  await users.linkIdentity(unlinker, 'gh2', gh.linkSubject(unlinkerAtGh2.id), { display: unlinkerAtGh2.login, linkedAt: rig.clock() })
  const bothLinks = [linkTo('gh2', unlinkerAtGh2), linkTo('gh', unlinkerAtGh)].sort()
  const oneLeft = [linkTo('gh2', unlinkerAtGh2)]
  const unlink = async (jwt: string): Promise<Response> => await app.inject({ method: 'DELETE', url: `${PREFIX}/account/identities/gh`, headers: bearer(jwt) })

  interface UnlinkCase { jwt: string, from: number, mark: number }
  const unlinkFlow: Flow<UnlinkCase> = {
    name: 'identity-unlink',
    rig,
    setup: async () => {
      if ((await users.findByIdentity('gh', gh.linkSubject(unlinkerAtGh.id))) === null) {
        await users.linkIdentity(unlinker, 'gh', gh.linkSubject(unlinkerAtGh.id), { display: unlinkerAtGh.login, linkedAt: rig.clock() })
      }
      const from = rig.logs.length
      const mark = gh.requests.length
      // a new session each case, through the way in that stays (it has no password)
      const { jwt } = await setupData<Session>('sign-in through gh2', signIn('gh2', codeFor(unlinkerAtGh2)))
      return { jwt, from, mark }
    },
    act: async (c) => await unlink(c.jwt),
    check: async (t, c, res, info) => {
      const now = await linksOf(rig, unlinker)
      const unlinked = JSON.stringify(now) === JSON.stringify(oneLeft)
      t.ok(unlinked || JSON.stringify(now) === JSON.stringify(bothLinks), `the links are as before or as after (${now.join(', ')}) [${where(info)}]`)
      if (ok(res)) t.ok(unlinked, `a 200 removed the link [${where(info)}]`)
      else if (unlinked) t.ok(failedAfter(info, 'unlinkIdentity'), `a failed unlink left the links as they were (unless it failed once the link was removed) [${where(info)}]`, { calls: info.log.split('\n') })
      if (!ok(res)) {
        // the link still there is removed by the retry; one gone already is not found
        if (unlinked) expect(t, await unlink(c.jwt), 404, 249, 'the link is gone: a retry finds nothing to unlink', info)
        else expect(t, await unlink(c.jwt), 200, null, 'an identical retry unlinks', info)
      }
      t.same(await linksOf(rig, unlinker), oneLeft, `the link is gone, the other one stays [${where(info)}]`)
      // the way in that is left signs in; the GitHub account unlinked finds nobody (its address is nobody's)
      const left = await signIn('gh2', codeFor(unlinkerAtGh2))
      if (expect(t, left, 200, null, 'the way in left signs in', info)) t.equal(userOf(left), unlinker.ID, `as the same user [${where(info)}]`)
      expect(t, await signIn('gh', codeFor(unlinkerAtGh)), 404, 74, 'the unlinked GitHub account no longer signs in', info)
      checkLogClean(t, c.from, [...codes, ...tokensSince(c.mark)], where(info))
    }
  }

  // ---- GitHub fails during the sign-in: not swept by position, a case each ----

  const providerCases = async (t: Test): Promise<void> => {
    for (const failure of providerFailures(gh)) {
      await t.test(`${rig.store} oauth2-code-github provider: ${failure.name}`, async (t) => {
        for (const link of await users.listIdentities(known)) await users.unlinkIdentity(known, link.provider, link.subject)
        const from = rig.logs.length
        const mark = gh.requests.length
        const before = await listed(knownLister)
        const code = codeFor(knownAtGitHub)
        gh.failNext(failure.endpoint, failure.fault(code))
        const res = await signIn('gh', code)
        t.equal(`${res.statusCode}/${String(errorCodeOf(res))}`, '502/202', 'the provider\'s failure answers 502 / 202', { body: res.body.slice(0, 300) })
        t.same(await linksOf(rig, known), [], 'no link was made')
        t.same(await listed(knownLister), before, 'no session was started')
        const retry = await signIn('gh', code)
        t.equal(`${retry.statusCode}/${String(errorCodeOf(retry))}`, '401/72', 'the code was claimed before GitHub was asked: it is spent')
        const fresh = await signIn('gh', codeFor(knownAtGitHub))
        if (t.equal(fresh.statusCode, 200, 'a new code signs in', { body: fresh.body.slice(0, 300) })) t.equal(userOf(fresh), known.ID, 'the user of the email')
        t.same(await linksOf(rig, known), [linkTo('gh', knownAtGitHub)], 'the user ends with exactly one link')
        checkLogClean(t, from, [...codes, ...tokensSince(mark)], failure.name)
      })
    }
  }

  /** Once at the end: no line of the whole log holds a code, an access token or the secret (and the log did catch the sweep's failures). */
  const checkWholeLog = (t: Test): void => {
    const tokens = tokensSince(firstRequest)
    t.ok(rig.logs.some(line => line.includes('injected fault')), 'the log holds the failures of the sweep')
    t.ok(tokens.length > 0 && codes.size > 0, `the codes and access tokens were seen (${codes.size} codes, ${tokens.length} tokens)`)
    checkLogClean(t, 0, [...codes, ...tokens], `${rig.store} OAuth 2.0, the whole log`)
  }

  return { flows: [codeFlow, linkedFlow, linkFlow, unlinkFlow], providerCases, checkWholeLog }
}
