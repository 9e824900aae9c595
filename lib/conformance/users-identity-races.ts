// The user adapter's rules for linked provider accounts under concurrent sign-ins, and when their user is deleted.
import assert from 'node:assert/strict'
import { isIdentityTaken } from '../adapters/users.js'
import { settleAll } from './port-helpers.js'
import { inSuiteRealm } from './realm.js'
import { assertOneWinner, assertSameUser, describe, findsNobody, kitOf, race, refind, type UserRule } from './users-kit.js'
import { SHOWN, assertLinks, detailsAt, linksOf } from './users-identities.js'

const LINK_RACE = 'decided atomically with the insert (unique indexes on (provider, subject) and (user, provider), or a check under a lock)'

export const IDENTITY_RACE_RULES: UserRule[] = [
  {
    name: 'of concurrent links of one account to many users, exactly one succeeds',
    contract: LINK_RACE,
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const users = await settleAll(Array.from({ length: settings.parallelism }, async () => (await kit.seed()).user))
      const github = kit.provider('github')
      const outcome = await race(users.length, async (index) => await link(users[index], github, 'contested', detailsAt(index)))
      const { index: won } = assertOneWinner(outcome, 'links of one account', isIdentityTaken, 'IdentityTakenError')
      assertSameUser(kit.adapter, await find(github, 'contested'), users[won], 'findByIdentity after the race')
      assertLinks(await list(users[won]), [{ provider: github, subject: 'contested', ...detailsAt(won) }], 'the winner, with its details', SHOWN)
      for (const { index } of outcome.lost) assertLinks(await list(users[index]), [], `the losing user of call ${index}`)
    }
  },
  {
    name: 'of concurrent links of many accounts of one provider to one user, exactly one succeeds',
    contract: LINK_RACE,
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const github = kit.provider('github')
      const outcome = await race(settings.parallelism, async (index) => await link(alice, github, `account-${index}`, detailsAt(index)))
      const { index: won } = assertOneWinner(outcome, 'links of accounts of one provider', isIdentityTaken, 'IdentityTakenError')
      assertLinks(await list(alice), [{ provider: github, subject: `account-${won}`, ...detailsAt(won) }], 'one link, the winner\'s')
      assertSameUser(kit.adapter, await find(github, `account-${won}`), alice, 'findByIdentity of the winning account')
      for (const { index } of outcome.lost) assert.ok(await findsNobody(async () => await find(github, `account-${index}`)), `the losing account-${index} is linked all the same`)
    }
  },
  {
    name: 'concurrent links of one account to its user all resolve, and one says it linked',
    contract: 'Resolves whether this call made the link (`false`: it was there), so that of concurrent sign-ins only the one that linked reports it.',
    needs: ['identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { link, list } = linksOf(kit)
      const alice = (await kit.seed()).user
      const github = kit.provider('github')
      const outcome = await race(settings.parallelism, async (index) => await link(alice, github, 'mine', detailsAt(index)))
      const [failed] = outcome.lost
      if (failed !== undefined) assert.fail(`${outcome.lost.length} of the concurrent links of one account to its user threw, the first ${describe(failed.error)}`)
      const linked = outcome.won.filter(({ value }) => value === true)
      assert.equal(linked.length, 1, `${linked.length} of ${outcome.won.length} concurrent links of one account to its user resolved true; exactly one must`)
      assert.deepEqual(inSuiteRealm((await list(alice)).map(({ subject }) => subject)), ['mine'], 'the concurrent links made more than one link')
    }
  },
  {
    name: 'deleteUser removes the user\'s links, and their accounts can be linked again',
    contract: 'A user\'s deletion (`deleteUser`) removes the user\'s links too.',
    needs: ['deleteUser', 'identities'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { find, link } = linksOf(kit)
      const [gone, stays, heir] = [(await kit.seed()).user, (await kit.seed()).user, (await kit.seed()).user]
      const [github, discord] = [kit.provider('github'), kit.provider('discord')]
      await link(gone, github, 'gone-gh', detailsAt(0))
      await link(gone, discord, 'gone-dc', detailsAt(1))
      await link(stays, github, 'stays-gh', detailsAt(2))
      await kit.method('deleteUser')(await refind(kit.adapter, gone))
      for (const [provider, subject] of [[github, 'gone-gh'], [discord, 'gone-dc']] as const) {
        assert.ok(await findsNobody(async () => await find(provider, subject)), `the deleted user's account ${subject} still finds a user`)
      }
      assertSameUser(kit.adapter, await find(github, 'stays-gh'), stays, 'another user\'s link')
      for (const [provider, subject, days] of [[github, 'gone-gh', 3], [discord, 'gone-dc', 4]] as const) {
        await link(heir, provider, subject, detailsAt(days)).catch((error: unknown) => assert.fail(`linking the deleted user's account ${subject} to another user threw ${describe(error)}`))
        assertSameUser(kit.adapter, await find(provider, subject), heir, `findByIdentity of ${subject} linked again`)
      }
    }
  }
]
