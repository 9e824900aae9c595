// The user adapter's rules for linked provider accounts, one call at a time: link, find, list, unlink.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { IdentityDetails, LinkedIdentity } from '../adapters/users.js'
import { settleAll } from './port-helpers.js'
import { inSuiteRealm } from './realm.js'
import { FIND_NULL, assertIdentityTaken, assertNull, assertSameUser, describe, findsNobody, kitOf, type Kit, type UserRule } from './users-kit.js'

/** A moment with milliseconds, so that an adapter that keeps seconds only is caught. */
const MAY_1 = Date.UTC(2024, 4, 1, 10, 0, 0, 123)
const DAY = 86_400_000

/** What is shown of a link made `days` after MAY_1. */
export function detailsAt (days: number, display: string | null = `account ${days}`): IdentityDetails {
  return { display, linkedAt: MAY_1 + days * DAY + days }
}

/** A subject of 255 characters, the longest the suite asks an adapter to keep. */
const LONG_SUBJECT = 'S'.repeat(200) + '0123456789'.repeat(5) + 'Z'.repeat(5)

/** Opaque to the adapter: letters beyond Latin, a decomposed é, an emoji beyond 16 bits, a zero-width joiner. */
const UNICODE_SUBJECT = 'ünïcødé-Ключ-鍵-e\u0301-🔑-👩\u200d💻'

/** The four identity methods, bound to the adapter. */
export function linksOf (kit: Kit): {
  find: (provider: string, subject: string) => Promise<unknown>
  link: (user: unknown, provider: string, subject: string, details: IdentityDetails) => Promise<boolean>
  list: (user: unknown) => Promise<LinkedIdentity[]>
  unlink: (user: unknown, provider: string, subject: string) => Promise<boolean>
} {
  return { find: kit.method('findByIdentity'), link: kit.method('linkIdentity'), list: kit.method('listIdentities'), unlink: kit.method('unlinkIdentity') }
}

/** What the rules compare of a link: which account it is, and for some rules what is shown of it. */
type LinkField = keyof LinkedIdentity

/** The link's `fields`, in a fixed order (an adapter may answer more). */
const fieldsOf = (link: LinkedIdentity, fields: readonly LinkField[]): Partial<LinkedIdentity> => Object.fromEntries(fields.map(field => [field, link[field]]))

/**
 * Fails unless `actual` holds exactly the `expected` links, compared by
 * `fields` (default: which accounts), in any order: the order and the
 * details are rules of their own, so that one broken rule fails one test.
 */
export function assertLinks (actual: LinkedIdentity[], expected: LinkedIdentity[], what: string, fields: readonly LinkField[] = ['provider', 'subject']): void {
  const sorted = (links: LinkedIdentity[]): Array<Partial<LinkedIdentity>> =>
    [...links].sort((a, b) => `${a.provider}\u0000${a.subject}` < `${b.provider}\u0000${b.subject}` ? -1 : 1).map(link => fieldsOf(link, fields))
  const [seen, wanted] = [sorted(actual), sorted(expected)]
  assert.deepEqual(inSuiteRealm(seen), wanted, `${what}: listIdentities answered ${JSON.stringify(seen)}, not ${JSON.stringify(wanted)}`)
}

/** The fields that tell whose details a link kept. */
export const SHOWN: readonly LinkField[] = ['provider', 'subject', 'display']

export const IDENTITY_RULES: UserRule[] = [
  {
    name: 'findByIdentity resolves null for an account nobody linked',
    contract: FIND_NULL,
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link } = linksOf(kit)
      await link((await kit.seed()).user, kit.provider('github'), 'z-1', detailsAt(0))
      const asked: Array<[string, string]> = [[kit.provider('github'), 'z-2'], [kit.provider('alpha'), 'z-1'], [kit.provider('unknown'), 'z-1']]
      for (const [provider, subject] of asked) await assertNull(async () => await find(provider, subject), `findByIdentity(${provider}, ${subject})`)
    }
  },
  {
    name: 'linkIdentity resolves true, and findByIdentity finds the user by the link',
    contract: 'Links the provider account to the user',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link } = linksOf(kit)
      const alice = (await kit.seed()).user
      const github = kit.provider('github')
      const linked = await link(alice, github, '583231', detailsAt(0, 'octocat'))
      assert.equal(linked, true, `the first linkIdentity of an account resolved ${String(linked)}, not true`)
      assertSameUser(kit.adapter, await find(github, '583231'), alice, 'findByIdentity of the linked account')
    }
  },
  {
    name: 'listIdentities answers the links oldest first',
    contract: 'The user\'s linked identities, oldest first.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { link, list } = linksOf(kit)
      const [alice, bob] = [(await kit.seed()).user, (await kit.seed()).user]
      assert.equal((await list(alice)).length, 0, 'a user who linked nothing has links')
      // linked in time order, under names whose alphabetical order is another one
      const order = [kit.provider('zeta'), kit.provider('alpha'), kit.provider('mid')]
      for (const [days, provider] of order.entries()) await link(alice, provider, `s-${days}`, detailsAt(days))
      const answered = (await list(alice)).map(({ provider }) => provider)
      assert.deepEqual(inSuiteRealm(answered), order, `listIdentities answered ${answered.join(', ')}; oldest first is ${order.join(', ')}`)
      assert.equal((await list(bob)).length, 0, 'another user has the links too')
    }
  },
  {
    name: 'listIdentities keeps each link\'s display and linkedAt as given',
    contract: 'with `details` to show in `GET /account/identities` (a login or an email, or `null`), at `details.linkedAt` (ms since the epoch)',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const links: LinkedIdentity[] = [
        { provider: kit.provider('zeta'), subject: 'z-1', ...detailsAt(0, 'alice@zeta.example') },
        { provider: kit.provider('alpha'), subject: 'a-1', ...detailsAt(1, null) },
        { provider: kit.provider('mid'), subject: 'm-1', ...detailsAt(2, 'Alice "O\'Brien" \\ Ünïcode 🔑') },
        { provider: kit.provider('long'), subject: 'l-1', ...detailsAt(3, 'x'.repeat(255)) }
      ]
      for (const { provider, subject, display, linkedAt } of links) await link(alice, provider, subject, { display, linkedAt })
      const answered = await list(alice)
      const every: readonly LinkField[] = ['provider', 'subject', 'display', 'linkedAt']
      assertLinks(answered, links, 'every link with its display and linkedAt', every)
      for (const link of answered) link.display = 'changed by the caller'
      answered.pop()
      assertLinks(await list(alice), links, 'after the caller changed the list it was given', every)
    }
  },
  {
    name: 'linking the same account to the same user again resolves false and keeps the first link',
    contract: 'Linking the same provider account to the same user again is not an error: keep the first link.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const github = kit.provider('github')
      await link(alice, github, '583231', detailsAt(0, 'octocat'))
      const again = await link(alice, github, '583231', detailsAt(5, 'renamed')).then(value => value, (error: unknown) => assert.fail(`linking the same account again threw ${describe(error)}`))
      assert.equal(again, false, `linking the same account again resolved ${String(again)}, not false`)
      assertLinks(await list(alice), [{ provider: github, subject: '583231', ...detailsAt(0, 'octocat') }], 'one link, with the first one\'s details', SHOWN)
      assertSameUser(kit.adapter, await find(github, '583231'), alice, 'findByIdentity after the second link')
    }
  },
  {
    name: 'linking an account another user has throws IdentityTakenError',
    contract: 'a provider account belongs to at most one user',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const [alice, bob] = [(await kit.seed()).user, (await kit.seed()).user]
      const github = kit.provider('github')
      await link(alice, github, '583231', detailsAt(0, 'octocat'))
      await assertIdentityTaken(link(bob, github, '583231', detailsAt(1, 'bob')), 'linking another user\'s account')
      assertSameUser(kit.adapter, await find(github, '583231'), alice, 'findByIdentity after the refused link')
      assertLinks(await list(alice), [{ provider: github, subject: '583231', ...detailsAt(0, 'octocat') }], 'the first user\'s link, unchanged', SHOWN)
      assertLinks(await list(bob), [], 'the refused user')
    }
  },
  {
    name: 'linking a second account of one provider to a user throws IdentityTakenError',
    contract: 'A user has at most one identity per provider',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const github = kit.provider('github')
      await link(alice, github, 'first', detailsAt(0))
      await assertIdentityTaken(link(alice, github, 'second', detailsAt(1)), 'linking a second account of the provider')
      assert.ok(await findsNobody(async () => await find(github, 'second')), 'the refused account is linked all the same')
      const discord = kit.provider('discord')
      await link(alice, discord, 'second', detailsAt(2)).catch((error: unknown) => assert.fail(`an account of another provider was refused: ${describe(error)}`))
      assertLinks(await list(alice), [{ provider: github, subject: 'first', ...detailsAt(0) }, { provider: discord, subject: 'second', ...detailsAt(2) }], 'one account of each provider')
    }
  },
  {
    name: 'one subject under two provider names is two accounts, and provider names compare exactly',
    contract: 'The user linked to the provider account `subject` of `provider`',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link } = linksOf(kit)
      const [alice, bob] = [(await kit.seed()).user, (await kit.seed()).user]
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await link(alice, github, '12345', detailsAt(0))
      await link(bob, discord, '12345', detailsAt(1))
      assertSameUser(kit.adapter, await find(github, '12345'), alice, `findByIdentity(${github}, 12345)`)
      assertSameUser(kit.adapter, await find(discord, '12345'), bob, `findByIdentity(${discord}, 12345)`)
      assert.ok(await findsNobody(async () => await find(kit.provider('GitHub'), '12345')), 'a provider name in another case finds the user')
    }
  },
  {
    name: 'subjects compare exactly: case, leading zeros, spaces and Unicode forms tell them apart',
    contract: 'compare them exactly, without folding case, leading zeros, spaces or Unicode forms',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link } = linksOf(kit)
      const github = kit.provider('github')
      // each pair differs only in what an adapter must not fold: a number, a case, a pad, a normalisation
      const subjects = ['12345', '012345', 'AbC', 'abc', 'abc ', '\u00e9']
      const users = await settleAll(subjects.map(async () => (await kit.seed()).user))
      for (const [index, subject] of subjects.entries()) await link(users[index], github, subject, detailsAt(index))
      for (const [index, subject] of subjects.entries()) assertSameUser(kit.adapter, await find(github, subject), users[index], `findByIdentity of ${JSON.stringify(subject)}`)
      for (const subject of ['e\u0301', '12345.0', 'ABC']) assert.ok(await findsNobody(async () => await find(github, subject)), `${JSON.stringify(subject)} finds another subject's user`)
    }
  },
  {
    name: 'a subject of 255 characters, one beyond Latin, and a provider name of 64 are kept whole',
    contract: 'Keep subjects of at least 255 characters and provider names of 64, whole.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const longest = `p${randomBytes(31).toString('hex')}a`
      const links: LinkedIdentity[] = [
        { provider: kit.provider('long'), subject: LONG_SUBJECT, ...detailsAt(0) },
        { provider: kit.provider('uni'), subject: UNICODE_SUBJECT, ...detailsAt(1, UNICODE_SUBJECT) },
        { provider: longest, subject: 'under-a-long-name', ...detailsAt(2) }
      ]
      for (const { provider, subject, display, linkedAt } of links) await link(alice, provider, subject, { display, linkedAt })
      for (const { provider, subject } of links) assertSameUser(kit.adapter, await find(provider, subject), alice, `findByIdentity(${provider.slice(0, 12)}…, ${subject.slice(0, 12)}…)`)
      assertLinks(await list(alice), links, 'the long and the Unicode links')
      assert.ok(await findsNobody(async () => await find(kit.provider('long'), LONG_SUBJECT.slice(0, 254))), 'a prefix of a subject finds its user')
    }
  },
  {
    name: 'unlinkIdentity removes the link and resolves true',
    contract: 'Removes the link; resolves whether there was one.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list, unlink } = linksOf(kit)
      const alice = (await kit.seed()).user
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await link(alice, github, 'alice-gh', detailsAt(0))
      await link(alice, discord, 'alice-dc', detailsAt(1))
      const answer = await unlink(alice, github, 'alice-gh')
      assert.equal(answer, true, `unlinkIdentity of a link resolved ${String(answer)}, not true`)
      assert.ok(await findsNobody(async () => await find(github, 'alice-gh')), 'the unlinked account still finds the user')
      assertLinks(await list(alice), [{ provider: discord, subject: 'alice-dc', ...detailsAt(1) }], 'the other link, left')
    }
  },
  {
    name: 'unlinkIdentity resolves false, and removes nothing, where the user has no such link',
    contract: 'Removes the link; resolves whether there was one.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, unlink } = linksOf(kit)
      const [alice, bob, carol] = [(await kit.seed()).user, (await kit.seed()).user, (await kit.seed()).user]
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await link(alice, github, 'alice-gh', detailsAt(0))
      await link(bob, github, 'bob-gh', detailsAt(1))
      const none: Array<[string, unknown, string, string]> = [
        ['another user\'s link', bob, github, 'alice-gh'],
        ['the user\'s provider with another user\'s subject', alice, github, 'bob-gh'],
        ['a subject never linked', alice, github, 'another'],
        ['the user\'s subject under another provider', alice, discord, 'alice-gh'],
        ['a user without links', carol, github, 'alice-gh']
      ]
      for (const [what, user, provider, subject] of none) {
        const answer = await unlink(user, provider, subject)
        assert.equal(answer, false, `unlinkIdentity of ${what} resolved ${String(answer)}, not false`)
      }
      assertSameUser(kit.adapter, await find(github, 'alice-gh'), alice, 'the link that was not the caller\'s')
      assertSameUser(kit.adapter, await find(github, 'bob-gh'), bob, 'another link')
      await unlink(alice, github, 'alice-gh')
      const twice = await unlink(alice, github, 'alice-gh')
      assert.equal(twice, false, `unlinkIdentity of a link already removed resolved ${String(twice)}, not false`)
    }
  },
  {
    name: 'after an unlink the account can go to another user, and the user can link another account',
    contract: 'After an unlink the provider account is free for another user, and the user for another account of the provider.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list, unlink } = linksOf(kit)
      const [alice, bob] = [(await kit.seed()).user, (await kit.seed()).user]
      const github = kit.provider('github')
      await link(alice, github, 'shared', detailsAt(0))
      await unlink(alice, github, 'shared')
      const refused = (error: unknown, what: string): never => assert.fail(`${what} after the unlink threw ${describe(error)}`)
      await link(bob, github, 'shared', detailsAt(1, 'bob now')).catch((error: unknown) => refused(error, 'linking the account to another user'))
      assertSameUser(kit.adapter, await find(github, 'shared'), bob, 'findByIdentity of the account linked again')
      await link(alice, github, 'alice-new', detailsAt(2)).catch((error: unknown) => refused(error, 'linking another account of the provider'))
      assertLinks(await list(alice), [{ provider: github, subject: 'alice-new', ...detailsAt(2) }], 'a new account of the same provider')
    }
  }
]
