/**
 * Each rule of the published suites quotes its port's doc comment word for
 * word, within one doc comment (pieces may be joined by ` … `), and names
 * itself once: what a failing test says the contract is, the source says too.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { mailerRules, passkeyPortRules, stateStoreRules, twoFactorPortRules, userAdapterRules, type Rule } from '../../lib/conformance.js'

const ROOT = new URL('../../', import.meta.url)

/** The doc comments of a source file, each as one line: the `*` margins gone, whitespace collapsed. */
function docComments (path: string): string[] {
  const source = readFileSync(new URL(path, ROOT), 'utf8')
  return [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map(match => collapse((match[1] as string).replace(/^\s*\* ?/gm, '')))
}

const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim()

const SUITES: Array<[string, ReadonlyArray<Rule<never, never>>, string[]]> = [
  ['UserAdapter', userAdapterRules as unknown as Array<Rule<never, never>>, ['lib/adapters/users.ts']],
  ['StateStore', stateStoreRules as unknown as Array<Rule<never, never>>, ['lib/store/types.ts']],
  ['TwoFactorPort', twoFactorPortRules as unknown as Array<Rule<never, never>>, ['lib/adapters/two-factor.ts']],
  ['PasskeyPort', passkeyPortRules as unknown as Array<Rule<never, never>>, ['lib/adapters/passkeys.ts']],
  ['Mailer', mailerRules as unknown as Array<Rule<never, never>>, ['lib/mail/types.ts']]
]

for (const [port, rules, sources] of SUITES) {
  t.test(`${port}: every rule quotes the port's doc comments, and no two rules share a name`, async (t) => {
    const comments = sources.flatMap(docComments)
    t.ok(rules.length > 0)
    for (const rule of rules) {
      // one comment holds the whole quote, or each of its pieces
      for (const piece of rule.contract.split(' … ')) {
        t.ok(comments.some(comment => comment.includes(collapse(piece))), `${rule.name}: "${piece}"`)
      }
    }
    t.equal(new Set(rules.map(rule => rule.name)).size, rules.length, 'names are unique')
  })
}
