// The WordPress user adapter's passwords as a person types them: WordPress's forms slash them (wp_magic_quotes), WP-CLI does not.
import t from 'tap'
import { verifyWordPressHash, wordPressHashFormat, wordPressSlash } from '../../lib/wordpress/hashes.js'
import { hashTypedWordPressPassword, verifyTypedWordPressPassword } from '../../lib/wordpress/user-passwords.js'
import { wordPressHashes } from '../helpers/wordpress-hashes.js'

const fixture = wordPressHashes

/** The issue's example: a password with each character WordPress slashes. */
const ISSUE_PASSWORD = 'it\'s "q"\\x'

t.test('wordPressSlash is PHP\'s addslashes', async (t) => {
  t.equal(wordPressSlash(ISSUE_PASSWORD), 'it\\\'s \\"q\\"\\\\x')
  t.equal(wordPressSlash('O\'Brien'), 'O\\\'Brien')
  t.equal(wordPressSlash('nul\0inside'), 'nul\\0inside', 'a NUL becomes the two characters \\0')
  t.equal(wordPressSlash('plain ✓ 日本 $`%'), 'plain ✓ 日本 $`%', 'nothing else changes')
  t.equal(wordPressSlash(''), '')
  // each slashed form in the fixture was made by PHP's addslashes
  for (const entry of fixture.slashed) {
    t.ok(entry.signIns.some((signIn) => signIn.password === wordPressSlash(entry.password)), `${entry.name}: PHP's addslashes made the same`)
  }
})

t.test('the fixture holds both kinds of hash, in each form WordPress reads', async (t) => {
  t.same([...new Set(fixture.slashed.map((entry) => entry.format))].sort(), ['bcrypt', 'md5', 'phpass', 'wordpress'])
  t.ok(fixture.slashed.some((entry) => entry.password === ISSUE_PASSWORD && entry.slashedWhenHashed), 'the issue\'s password, slashed')
  t.ok(fixture.slashed.some((entry) => entry.password === ISSUE_PASSWORD && !entry.slashedWhenHashed), 'and as given')
  for (const entry of fixture.slashed) {
    const typed = entry.signIns.find((signIn) => signIn.password === entry.password)
    t.same(typed, { password: entry.password, wpLogin: entry.slashedWhenHashed, asGiven: !entry.slashedWhenHashed },
      `${entry.name}: WordPress accepts the typed password at wp-login.php exactly when its forms hashed it`)
  }
})

for (const entry of fixture.slashed) {
  t.test(`${entry.name}: ${entry.writer}`, async (t) => {
    t.equal(wordPressHashFormat(entry.hash), entry.format, 'form')
    t.equal(await verifyTypedWordPressPassword(entry.password, entry.hash), true, 'the typed password signs in through jwt-login')
    t.equal(await verifyTypedWordPressPassword(entry.wrong, entry.hash), false, 'a wrong one does not')
    if (entry.slashedWhenHashed) {
      t.equal(await verifyWordPressHash(entry.password, entry.hash), false, 'checked only as typed (jwt-login before), the typed password was refused')
    }
    for (const signIn of entry.signIns) {
      // accepted: what wp-login.php accepts, or what the hash is of (the password as given)
      t.equal(await verifyTypedWordPressPassword(signIn.password, entry.hash), signIn.wpLogin || signIn.asGiven, JSON.stringify(signIn.password))
    }
  })
}

t.test('hashes the adapter writes: wp-login.php accepts the typed password (WordPress\'s verdicts, fixture)', async (t) => {
  t.same([...new Set(fixture.writtenForWordPressForms.map((entry) => entry.write))].sort(), ['argon2id', 'bcrypt', 'wordpress'])
  t.ok(fixture.writtenForWordPressForms.some((entry) => entry.password === ISSUE_PASSWORD), 'the issue\'s password')
  for (const entry of fixture.writtenForWordPressForms) {
    const quoted = wordPressSlash(entry.password) !== entry.password
    for (const signIn of entry.signIns) {
      const right = signIn.password.trim() === entry.password.trim()
      const tried = `${entry.write}, ${JSON.stringify(signIn.password)}`
      // argon2id is for WordPress gone: of the password as typed, which WordPress would slash
      t.equal(signIn.wpLogin68, right && (entry.write !== 'argon2id' || !quoted), `${tried}: wp-login.php of WordPress 6.8`)
      t.equal(signIn.wpLoginBefore68, right && entry.write === 'bcrypt', `${tried}: wp-login.php before 6.8 (it reads neither $wp nor argon2)`)
      t.equal(await verifyTypedWordPressPassword(signIn.password, entry.hash), right || (entry.write !== 'argon2id' && signIn.password === wordPressSlash(entry.password)), `${tried}: jwt-login`)
    }
  }
})

t.test('hashTypedWordPressPassword: a WordPress form of the slashed password, argon2id of the typed one', async (t) => {
  for (const write of ['wordpress', 'bcrypt'] as const) {
    const hash = await hashTypedWordPressPassword(ISSUE_PASSWORD, write)
    t.equal(await verifyWordPressHash(wordPressSlash(ISSUE_PASSWORD), hash), true, `${write}: of the slashed password, as wp-login.php checks it`)
    t.equal(await verifyWordPressHash(ISSUE_PASSWORD, hash), false, `${write}: not of the typed one`)
    t.equal(await verifyTypedWordPressPassword(ISSUE_PASSWORD, hash), true, `${write}: the typed password signs in`)
  }
  const argon = await hashTypedWordPressPassword(ISSUE_PASSWORD, 'argon2id')
  t.equal(await verifyWordPressHash(ISSUE_PASSWORD, argon), true, 'argon2id: of the typed password')
  t.equal(await verifyTypedWordPressPassword(ISSUE_PASSWORD, argon), true)
  t.equal(await verifyTypedWordPressPassword(wordPressSlash(ISSUE_PASSWORD), argon), false, 'argon2id is checked as typed only')

  const nul = await hashTypedWordPressPassword('nul\0inside', 'bcrypt')
  t.equal(await verifyTypedWordPressPassword('nul\0inside', nul), true, 'plain bcrypt takes a NUL inside once slashed (as \\0)')
  t.equal(await verifyTypedWordPressPassword('nul', nul), false)
  await t.rejects(hashTypedWordPressPassword(`'${'x'.repeat(4094)}'`, 'wordpress'), /4096 bytes/, 'over 4096 bytes once slashed')
  t.ok(await hashTypedWordPressPassword(`'${'x'.repeat(4094)}'`, 'argon2id'), '4096 bytes as typed, for argon2id')
})

t.test('a password WordPress does not slash is checked once, as it always was', async (t) => {
  const hash = await hashTypedWordPressPassword('plain password', 'wordpress')
  t.equal(await verifyTypedWordPressPassword('plain password', hash), true)
  t.equal(await verifyTypedWordPressPassword('plain passwor', hash), false)
  t.equal(await verifyTypedWordPressPassword(42 as unknown as string, hash), false, 'not a string')
  t.equal(await verifyTypedWordPressPassword(ISSUE_PASSWORD, 'not a hash'), false, 'a hash no password matches')
})
