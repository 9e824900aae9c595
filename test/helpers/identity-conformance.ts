// The conformance suite of a user adapter's linked identities: what every UserAdapter with
// findByIdentity, linkIdentity, listIdentities and unlinkIdentity (in memory, on PostgreSQL, a host's own) must do.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { isIdentityTaken, type IdentityDetails, type LinkedIdentity, type UserAdapter } from '../../lib/adapters/users.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** An adapter to test, how to make its users, and what to do once a case is over. */
export interface IdentityAdapterUnderTest<U> {
  adapter: UserAdapter<U>
  /**
   * A new user with this email and a password (`options.password`, or one
   * of the helper's own), made by the adapter's own means (its sign-up, not
   * `createUser`). The suite gives a fresh email each time.
   */
  addUser: (email: string, options?: { password?: string }) => Promise<U>
  /**
   * How the host deletes a user, for an adapter without `deleteUser` (a
   * plain DELETE of the row): the links must go with the user all the same.
   */
  removeUser?: (user: U) => Promise<void>
  close?: () => Promise<void>
}

/** The four identity methods, which come together, bound to the adapter. */
interface IdentityMethods<U> {
  find: (provider: string, subject: string) => Promise<U | null>
  link: (user: U, provider: string, subject: string, details: IdentityDetails) => Promise<boolean>
  list: (user: U) => Promise<LinkedIdentity[]>
  unlink: (user: U, provider: string, subject: string) => Promise<boolean>
}

function identityMethods<U> (adapter: UserAdapter<U>): IdentityMethods<U> {
  const { findByIdentity, linkIdentity, listIdentities, unlinkIdentity } = adapter
  if (findByIdentity === undefined || linkIdentity === undefined || listIdentities === undefined || unlinkIdentity === undefined) {
    throw new Error('the adapter lacks one of findByIdentity, linkIdentity, listIdentities, unlinkIdentity')
  }
  return {
    find: async (provider, subject) => await findByIdentity.call(adapter, provider, subject),
    link: async (user, provider, subject, details) => await linkIdentity.call(adapter, user, provider, subject, details),
    list: async (user) => await listIdentities.call(adapter, user),
    unlink: async (user, provider, subject) => await unlinkIdentity.call(adapter, user, provider, subject)
  }
}

/** A moment with milliseconds, so that an adapter that keeps seconds only is caught. */
const MAY_1 = Date.UTC(2024, 4, 1, 10, 0, 0, 123)
const DAY = 86_400_000

/** What is shown of a link made `days` after MAY_1. */
function detailsAt (days: number, display: string | null = `account ${days}`): IdentityDetails {
  return { display, linkedAt: MAY_1 + days * DAY + days }
}

/** A subject of 255 characters, the longest the suite asks an adapter to keep. */
const LONG_SUBJECT = 'S'.repeat(200) + '0123456789'.repeat(5) + 'Z'.repeat(5)

/** Opaque to the adapter: letters beyond Latin, a decomposed é, an emoji beyond 16 bits, a zero-width joiner. */
const UNICODE_SUBJECT = 'ünïcødé-Ключ-鍵-e\u0301-🔑-👩\u200d💻'

/** A case of the suite: a subtest with its own adapter, its own way to add users, and names no other case uses. */
type Case<U> = (title: string, body: (t: Tap, kit: Kit<U>) => Promise<void>) => void

interface Kit<U> extends IdentityMethods<U> {
  adapter: UserAdapter<U>
  under: IdentityAdapterUnderTest<U>
  /** A fresh user with a password. */
  user: (options?: { password?: string }) => Promise<U>
  /**
   * A provider name of this case: `base` and a random part, so that cases
   * sharing one store never meet. Within ^[A-Za-z0-9_-]{1,64}$.
   */
  provider: (base: string) => string
  /** A random word of this case, for names that must be its own. */
  run: string
  /** The user's ID, as the adapter's public view answers it. */
  idOf: (user: U | null) => number | null
}

function caseOf<U> (parent: Tap, make: () => Promise<IdentityAdapterUnderTest<U>>): Case<U> {
  return (title, body) => {
    parent.test(title, async (t) => {
      const under = await make()
      if (under.close !== undefined) t.teardown(under.close)
      const { adapter } = under
      const run = randomBytes(4).toString('hex')
      let users = 0
      await body(t, {
        ...identityMethods(adapter),
        adapter,
        under,
        user: async (options) => await under.addUser(`identity-${run}-${++users}@example.com`, options),
        provider: (base) => `${base}-${run}`,
        run,
        idOf: (user) => user === null ? null : adapter.toPublicUser(user).ID
      })
    })
  }
}

/** Settles every call; answers the indexes of those that resolved, and whether every rejection was a taken identity. */
async function settle (calls: Array<Promise<unknown>>): Promise<{ won: number[], allTaken: boolean }> {
  const results = await Promise.allSettled(calls)
  return {
    won: results.flatMap((result, index) => result.status === 'fulfilled' ? [index] : []),
    allTaken: results.every(result => result.status === 'fulfilled' || isIdentityTaken(result.reason))
  }
}

/**
 * The suite, as one subtest `name` of `t`. Each case calls `make` for an
 * adapter of its own (or a shared store: the users and provider names of
 * each case are its own), and `close` (if any) when it ends.
 */
export function identityConformance<U> (t: Tap, name: string, make: () => Promise<IdentityAdapterUnderTest<U>>): void {
  t.test(name, async (t) => {
    const conformance = caseOf(t, make)

    conformance('link, find and list: the user found by the link, the details kept, oldest first', async (t, kit) => {
      const [alice, bob] = [await kit.user(), await kit.user()]
      // linked in time order, under names whose alphabetical order is another one
      const links: LinkedIdentity[] = [
        { provider: kit.provider('zeta'), subject: 'z-1', ...detailsAt(0, 'alice@zeta.example') },
        { provider: kit.provider('alpha'), subject: 'a-1', ...detailsAt(1, null) },
        { provider: kit.provider('mid'), subject: 'm-1', ...detailsAt(2, 'Alice Ünïcode 🔑') }
      ]
      t.strictSame(await kit.list(alice), [], 'none yet')
      for (const link of links) {
        t.equal(await kit.link(alice, link.provider, link.subject, { display: link.display, linkedAt: link.linkedAt }), true, `linked ${link.subject}`)
      }
      for (const link of links) t.equal(kit.idOf(await kit.find(link.provider, link.subject)), kit.idOf(alice), `${link.subject} finds alice`)
      t.strictSame(await kit.list(alice), links, 'every link with its display and linkedAt, oldest first')
      t.strictSame(await kit.list(bob), [], 'another user has none')

      t.equal(await kit.find(kit.provider('zeta'), 'z-2'), null, 'an unknown subject: null')
      t.equal(await kit.find(kit.provider('alpha'), 'z-1'), null, 'a known subject under another provider: null')
      t.equal(await kit.find(kit.provider('unknown'), 'z-1'), null, 'an unknown provider: null')

      const listed = await kit.list(alice)
      listed.pop()
      ;(listed[0] as LinkedIdentity).display = 'changed by the caller'
      t.strictSame(await kit.list(alice), links, 'a list the caller changes changes nothing stored')
    })

    conformance('the same link again resolves and keeps the first details', async (t, kit) => {
      const alice = await kit.user()
      const github = kit.provider('github')
      t.equal(await kit.link(alice, github, '583231', detailsAt(0, 'octocat')), true, 'the first link says it linked')
      t.equal(await kit.link(alice, github, '583231', detailsAt(5, 'renamed')), false, 'linking again resolves, saying it linked nothing')
      t.strictSame(await kit.list(alice), [{ provider: github, subject: '583231', ...detailsAt(0, 'octocat') }], 'one link, the first one\'s details')
      t.equal(kit.idOf(await kit.find(github, '583231')), kit.idOf(alice))
    })

    conformance('a provider account linked to another user: IdentityTaken, and the first link stays', async (t, kit) => {
      const [alice, bob] = [await kit.user(), await kit.user()]
      const github = kit.provider('github')
      await kit.link(alice, github, '583231', detailsAt(0, 'octocat'))
      const refused = await kit.link(bob, github, '583231', detailsAt(1, 'bob')).then(() => null, (error: unknown) => error)
      t.ok(isIdentityTaken(refused), `IdentityTaken (code ERR_JWT_LOGIN_IDENTITY_TAKEN), not ${String(refused)}`)
      t.equal((refused as { code?: unknown } | null)?.code, 'ERR_JWT_LOGIN_IDENTITY_TAKEN')
      t.equal(kit.idOf(await kit.find(github, '583231')), kit.idOf(alice), 'still alice\'s')
      t.strictSame(await kit.list(alice), [{ provider: github, subject: '583231', ...detailsAt(0, 'octocat') }], 'alice\'s link unchanged')
      t.strictSame(await kit.list(bob), [], 'bob has nothing')
    })

    conformance('a second account of the same provider for one user: IdentityTaken', async (t, kit) => {
      const alice = await kit.user()
      const github = kit.provider('github')
      await kit.link(alice, github, 'first', detailsAt(0))
      const refused = await kit.link(alice, github, 'second', detailsAt(1)).then(() => null, (error: unknown) => error)
      t.ok(isIdentityTaken(refused), `IdentityTaken, not ${String(refused)}`)
      t.equal(await kit.find(github, 'second'), null, 'the second account is linked to nobody')
      t.strictSame(await kit.list(alice), [{ provider: github, subject: 'first', ...detailsAt(0) }], 'the first link alone')
      await t.resolves(kit.link(alice, kit.provider('discord'), 'second', detailsAt(2)), 'another provider is another identity')
    })

    conformance('one subject under two provider names is two identities, of two users or of one', async (t, kit) => {
      const [alice, bob] = [await kit.user(), await kit.user()]
      const [github, discord, gitlab] = [kit.provider('github'), kit.provider('discord'), kit.provider('gitlab')]
      await kit.link(alice, github, '12345', detailsAt(0))
      await kit.link(bob, discord, '12345', detailsAt(1))
      t.equal(kit.idOf(await kit.find(github, '12345')), kit.idOf(alice))
      t.equal(kit.idOf(await kit.find(discord, '12345')), kit.idOf(bob))
      await kit.link(alice, gitlab, '12345', detailsAt(2))
      t.strictSame((await kit.list(alice)).map(link => link.provider), [github, gitlab], 'alice has both')
    })

    conformance('subjects are opaque: case, leading zeros, spaces, Unicode forms, 255 characters; provider names of 64', async (t, kit) => {
      const users = [await kit.user(), await kit.user(), await kit.user(), await kit.user(), await kit.user(), await kit.user()]
      const github = kit.provider('github')
      // each pair differs only in what an adapter must not fold: a number, a case, a pad, a normalisation
      const subjects = ['12345', '012345', 'AbC', 'abc', 'abc ', '\u00e9']
      for (const [index, subject] of subjects.entries()) await kit.link(users[index] as U, github, subject, detailsAt(index))
      for (const [index, subject] of subjects.entries()) {
        t.equal(kit.idOf(await kit.find(github, subject)), kit.idOf(users[index] as U), `${JSON.stringify(subject)} is its own`)
      }
      t.equal(await kit.find(github, 'e\u0301'), null, 'é decomposed is not é composed')
      t.equal(await kit.find(github, '12345.0'), null)
      t.equal(await kit.find(kit.provider('GitHub'), '12345'), null, 'provider names compare exactly')

      const alice = users[0] as U
      const longest = `p${randomBytes(31).toString('hex')}a`
      t.equal(longest.length, 64)
      const odd: LinkedIdentity[] = [
        { provider: kit.provider('long'), subject: LONG_SUBJECT, ...detailsAt(10, 'x'.repeat(255)) },
        { provider: kit.provider('uni'), subject: UNICODE_SUBJECT, ...detailsAt(11, UNICODE_SUBJECT) },
        { provider: longest, subject: 'under-a-long-name', ...detailsAt(12) }
      ]
      t.equal(LONG_SUBJECT.length, 255)
      for (const link of odd) await kit.link(alice, link.provider, link.subject, { display: link.display, linkedAt: link.linkedAt })
      for (const link of odd) t.equal(kit.idOf(await kit.find(link.provider, link.subject)), kit.idOf(alice), `${link.subject.slice(0, 12)}… found`)
      t.strictSame(await kit.list(alice), [{ provider: github, subject: '12345', ...detailsAt(0) }, ...odd], 'kept exactly')
      t.equal(await kit.find(kit.provider('long'), LONG_SUBJECT.slice(0, 254)), null, 'not a prefix')
      t.equal(await kit.unlink(alice, kit.provider('uni'), UNICODE_SUBJECT), true, 'unlinked by the same string')
    })

    conformance('unlink answers true, then false; another user\'s link or another subject is not unlinked', async (t, kit) => {
      const [alice, bob] = [await kit.user(), await kit.user()]
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await kit.link(alice, github, 'alice-gh', detailsAt(0))
      await kit.link(alice, discord, 'alice-dc', detailsAt(1))
      await kit.link(bob, github, 'bob-gh', detailsAt(2))

      t.equal(await kit.unlink(bob, github, 'alice-gh'), false, 'bob cannot unlink alice\'s')
      t.equal(await kit.unlink(alice, github, 'bob-gh'), false, 'nor alice bob\'s')
      t.equal(await kit.unlink(alice, github, 'another'), false, 'a subject alice never linked')
      t.equal(await kit.unlink(alice, discord, 'alice-gh'), false, 'alice\'s subject under another provider')
      t.equal(await kit.unlink(await kit.user(), github, 'alice-gh'), false, 'a user without links')
      t.equal(kit.idOf(await kit.find(github, 'alice-gh')), kit.idOf(alice), 'alice\'s link stays')
      t.equal(kit.idOf(await kit.find(github, 'bob-gh')), kit.idOf(bob), 'bob\'s link stays')

      t.equal(await kit.unlink(alice, github, 'alice-gh'), true, 'alice unlinks hers')
      t.equal(await kit.unlink(alice, github, 'alice-gh'), false, 'a second time: false')
      t.equal(await kit.find(github, 'alice-gh'), null)
      t.strictSame(await kit.list(alice), [{ provider: discord, subject: 'alice-dc', ...detailsAt(1) }], 'the other link stays')
      t.strictSame(await kit.list(bob), [{ provider: github, subject: 'bob-gh', ...detailsAt(2) }])
    })

    conformance('after an unlink the account can go to another user, and the user can link another account', async (t, kit) => {
      const [alice, bob] = [await kit.user(), await kit.user()]
      const github = kit.provider('github')
      await kit.link(alice, github, 'shared', detailsAt(0))
      t.equal(await kit.unlink(alice, github, 'shared'), true)
      await kit.link(bob, github, 'shared', detailsAt(1, 'bob now'))
      t.equal(kit.idOf(await kit.find(github, 'shared')), kit.idOf(bob))
      t.strictSame(await kit.list(bob), [{ provider: github, subject: 'shared', ...detailsAt(1, 'bob now') }])
      await kit.link(alice, github, 'alice-new', detailsAt(2))
      t.strictSame(await kit.list(alice), [{ provider: github, subject: 'alice-new', ...detailsAt(2) }], 'a new account of the same provider')
      t.ok(isIdentityTaken(await kit.link(alice, github, 'shared', detailsAt(3)).catch((error: unknown) => error)), 'bob\'s now')
    })

    conformance('deleting a user removes the user\'s links, and their accounts can be linked again', async (t, kit) => {
      const remove = kit.adapter.deleteUser?.bind(kit.adapter) ?? kit.under.removeUser
      if (remove === undefined) {
        t.comment('no deleteUser and no removeUser: nothing to check')
        return
      }
      const [gone, stays] = [await kit.user(), await kit.user()]
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await kit.link(gone, github, 'gone-gh', detailsAt(0))
      await kit.link(gone, discord, 'gone-dc', detailsAt(1))
      await kit.link(stays, github, 'stays-gh', detailsAt(2))
      await remove(gone)
      t.equal(await kit.find(github, 'gone-gh'), null)
      t.equal(await kit.find(discord, 'gone-dc'), null)
      t.equal(kit.idOf(await kit.find(github, 'stays-gh')), kit.idOf(stays), 'another user\'s link stays')
      const heir = await kit.user()
      await kit.link(heir, github, 'gone-gh', detailsAt(3))
      await kit.link(heir, discord, 'gone-dc', detailsAt(4))
      t.equal(kit.idOf(await kit.find(github, 'gone-gh')), kit.idOf(heir), 'linked again, to another user')
      t.strictSame((await kit.list(heir)).map(link => link.subject), ['gone-gh', 'gone-dc'])
    })

    conformance('hasPassword: false for a user created without a password until one is set, true for one with', async (t, kit) => {
      const { adapter } = kit
      if (adapter.hasPassword === undefined) {
        t.comment('no hasPassword: nothing to check')
        return
      }
      t.equal(await adapter.hasPassword(await kit.user({ password: 'a password of the sign-up' })), true, 'the host\'s sign-up')
      if (adapter.createUser === undefined) return
      const { run } = kit
      const registered = await adapter.createUser({ email: `registered-${run}@example.com`, login: `registered-${run}`, displayName: 'R', role: 'subscriber', password: 'chosen at POST /users' })
      t.equal(await adapter.hasPassword(registered), true, 'createUser with a password')
      const byProvider = await adapter.createUser({ email: `provided-${run}@example.com`, login: `provided-${run}`, displayName: 'P', role: 'subscriber', emailVerified: true })
      t.equal(await adapter.hasPassword(byProvider), false, 'createUser without a password')
      const again = await adapter.findById(kit.idOf(byProvider) as number)
      t.equal(await adapter.hasPassword(again as U), false, 'and so when looked up again')
      if (adapter.setPassword === undefined) return
      await adapter.setPassword(byProvider, 'a password set later')
      t.equal(await adapter.hasPassword(byProvider), true, 'true once a password is set')
      t.equal(await adapter.hasPassword(await adapter.findById(kit.idOf(byProvider) as number) as U), true, 'and so when looked up again')
      t.equal(await adapter.verifyPassword(await adapter.findById(kit.idOf(byProvider) as number) as U, 'a password set later'), true, 'the password works')
    })

    conformance('20 concurrent links of one account to 20 users: one wins, the rest IdentityTaken', async (t, kit) => {
      const users = await Promise.all(Array.from({ length: 20 }, async () => await kit.user()))
      const github = kit.provider('github')
      const { won, allTaken } = await settle(users.map(async (user, index) => await kit.link(user, github, 'contested', detailsAt(index))))
      t.equal(won.length, 1, 'exactly one succeeds')
      t.ok(allTaken, 'every other one is IdentityTaken')
      const winner = users[won[0] as number] as U
      t.equal(kit.idOf(await kit.find(github, 'contested')), kit.idOf(winner), 'found: the winner')
      t.strictSame(await kit.list(winner), [{ provider: github, subject: 'contested', ...detailsAt(won[0] as number) }], 'with the winner\'s details')
      const losers = await Promise.all(users.filter(user => user !== winner).map(async (user) => await kit.list(user)))
      t.ok(losers.every(links => links.length === 0), 'the losers have no link')
    })

    conformance('20 concurrent links of 20 accounts of one provider to one user: one wins', async (t, kit) => {
      const alice = await kit.user()
      const github = kit.provider('github')
      const subjects = Array.from({ length: 20 }, (_, index) => `account-${index}`)
      const { won, allTaken } = await settle(subjects.map(async (subject, index) => await kit.link(alice, github, subject, detailsAt(index))))
      t.equal(won.length, 1, 'exactly one succeeds')
      t.ok(allTaken, 'every other one is IdentityTaken')
      const winner = subjects[won[0] as number] as string
      t.strictSame(await kit.list(alice), [{ provider: github, subject: winner, ...detailsAt(won[0] as number) }], 'one link, the winner\'s')
      const found = await Promise.all(subjects.map(async (subject) => kit.idOf(await kit.find(github, subject))))
      t.strictSame(found, subjects.map(subject => subject === winner ? kit.idOf(alice) : null), 'only the winner finds alice')
    })

    conformance('20 concurrent links of one account to one user all resolve, and make one link', async (t, kit) => {
      const alice = await kit.user()
      const github = kit.provider('github')
      const made = await Promise.allSettled(Array.from({ length: 20 }, async (_, index) => await kit.link(alice, github, 'mine', detailsAt(index))))
      t.ok(made.every(result => result.status === 'fulfilled'), 'every one resolves')
      t.equal(made.filter(result => result.status === 'fulfilled' && result.value).length, 1, 'and one of them says it linked')
      const links = await kit.list(alice)
      t.equal(links.length, 1, 'one link')
      t.match(links[0], { provider: github, subject: 'mine' })
    })
  })
}
