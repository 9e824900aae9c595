// The WordPress user adapter through the published user adapter suite, over MariaDB: a WordPress database of its own for each rule.
import { test } from 'tap'
import { userAdapterSuite, type UserAdapterFixture } from '../../lib/conformance.js'
import { hashWordPressPassword, WordPressUserAdapter, wordPressSlash, type WordPressUser } from '../../lib/wordpress.js'
import { createWordPressDb } from '../helpers/wordpress-db.js'

interface Made extends UserAdapterFixture<WordPressUser> {
  adapter: WordPressUserAdapter
  /** Drops the database (the helper's teardown, run by `destroy`). */
  drop: () => Promise<void>
}

await userAdapterSuite<WordPressUser, Made>({
  test,
  title: 'WordPressUserAdapter',
  create: async () => {
    const drops: Array<() => Promise<void>> = []
    const db = await createWordPressDb({ teardown: (drop) => { drops.push(drop) } })
    // its own pool, and hashes upgraded at sign-in: every method the adapter can have
    const adapter = new WordPressUserAdapter({ uri: db.uri, tablePrefix: db.prefix, upgradeOnSignIn: true })
    return {
      adapter,
      // as WordPress before 6.8 wrote a user: a row, a plain bcrypt of the password as its forms slash it
      addUser: async ({ login, email, password }) => {
        const id = await db.insertUser({ login, email, pass: await hashWordPressPassword(wordPressSlash(password), 'bcrypt') })
        const user = await adapter.findById(id)
        if (user === null) throw new Error(`the user ${id} just inserted is not found`)
        return user
      },
      drop: async () => { for (const drop of drops) await drop() }
    }
  },
  destroy: async ({ adapter, drop }) => {
    await adapter.close()
    await drop()
  }
})
