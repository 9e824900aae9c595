import { createHash } from 'node:crypto'
import bcrypt from 'bcrypt'
import t from 'tap'
import { ARGON2_OPTIONS, hashPassword } from '../../lib/adapters/users.js'
import { hashWordPressPassword, verifyWordPressHash, WORDPRESS_BCRYPT_COST, wordPressHashFormat, type WordPressHashFormat, type WordPressHashWrite } from '../../lib/wordpress/hashes.js'
import { wordPressHashes, type FixtureHash } from '../helpers/wordpress-hashes.js'

const fixture = wordPressHashes

/** The fixture's hash named `name`. */
function fixtureHash (name: string): string {
  return (fixture.hashes.find(entry => entry.name === name) as FixtureHash).hash
}

/** A bcrypt hash's settings: prefix and cost, `$2y$10$`. */
function bcryptSettings (hash: string): string {
  return hash.replace(/^(\$wp)?(\$2[aby]\$\d\d\$).*$/, '$1$2')
}

/** The message `promise` rejects with (it must reject). */
async function refusal (promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('resolved; a rejection was expected')
}

t.test('the fixture covers every form WordPress reads', async (t) => {
  const formats = new Set(fixture.hashes.map(entry => entry.format))
  t.same([...formats].sort(), ['argon2', 'bcrypt', 'md5', 'phpass', 'wordpress'])
  for (const prefix of ['$wp$2y$', '$2y$', '$2a$', '$P$', '$H$', '$argon2id$', '$argon2i$']) {
    t.ok(fixture.hashes.some(entry => entry.hash.startsWith(prefix)), prefix)
  }
  t.ok(fixture.hashes.some(entry => entry.hash.startsWith('$P$5')), 'phpass with 2^7 rounds, the fewest it reads')
})

for (const entry of fixture.hashes) {
  t.test(`${entry.name}: ${entry.writer}`, async (t) => {
    t.equal(wordPressHashFormat(entry.hash), entry.format, 'form')
    const tried = [entry.password, entry.wrong, ...entry.signIns.map(signIn => signIn.password)]
    const [right, wrong, ...answers] = await Promise.all(tried.map(async password => await verifyWordPressHash(password, entry.hash)))
    t.equal(right, true, 'the right password')
    t.equal(wrong, false, 'a wrong password')
    t.same(entry.signIns.filter(signIn => [entry.password, entry.wrong].includes(signIn.password)), [
      { password: entry.password, accepted: true },
      { password: entry.wrong, accepted: false }
    ], 'WordPress answered the same for both')
    entry.signIns.forEach((signIn, at) => {
      t.equal(answers[at], signIn.accepted, `${JSON.stringify(signIn.password.slice(0, 40))} (${Buffer.byteLength(signIn.password)} bytes) as WordPress ${entry.rules} answers`)
    })
  })
}

t.test('passwords that WordPress trims sign in with or without the spaces around them', async (t) => {
  await Promise.all(fixture.hashes.filter(entry => entry.name.startsWith('spaced')).map(async (entry) => {
    t.equal(await verifyWordPressHash(entry.password.trim(), entry.hash), true, `${entry.name}, trimmed`)
    t.equal(await verifyWordPressHash(`\v\0${entry.password}\r`, entry.hash), true, `${entry.name}, in PHP's other trimmed characters`)
    t.equal(await verifyWordPressHash(`\u2003${entry.password}`, entry.hash), false, `${entry.name}, after an em space PHP keeps`)
  }))
})

t.test('a plain bcrypt hash reads 72 bytes and stops at a NUL; the 6.8 form reads every byte', async (t) => {
  const password = `${'x'.repeat(71)}ä tail`
  const sameStart = `${'x'.repeat(71)}ö other`
  t.equal(await verifyWordPressHash(sameStart, fixtureHash('over 72 bytes, bcrypt')), true)
  t.equal(await verifyWordPressHash(sameStart, fixtureHash('over 72 bytes, wordpress')), false)
  t.equal(await verifyWordPressHash(password, fixtureHash('over 72 bytes, wordpress')), true)
  t.equal(await verifyWordPressHash('x\0y', fixtureHash('short, bcrypt')), true)
  t.equal(await verifyWordPressHash('x\0y', fixtureHash('short, wordpress')), false)
})

t.test('hashes jwt-login wrote: WordPress accepted them (fixture)', async (t) => {
  const writes = new Set(fixture.writtenByJwtLogin.map(entry => entry.write))
  t.same([...writes].sort(), ['argon2id', 'bcrypt', 'wordpress'])
  for (const entry of fixture.writtenByJwtLogin) {
    const answers = await Promise.all(entry.signIns.map(async signIn => await verifyWordPressHash(signIn.password, entry.hash)))
    entry.signIns.forEach((signIn, at) => {
      const right = signIn.password.trim() === entry.password.trim()
      const tried = `${entry.write}, ${JSON.stringify(signIn.password.slice(0, 20))}`
      t.equal(signIn.wordpress68, right, `${tried}: WordPress 6.8`)
      // before 6.8, phpass hands crypt() a $2y$ hash but reads neither $wp nor argon2
      t.equal(signIn.wordpressBefore68, right && entry.write === 'bcrypt', `${tried}: WordPress before 6.8`)
      t.equal(answers[at], right, `${tried}: jwt-login`)
    })
  }
})

t.test('hashes jwt-login writes now have the shape of those WordPress accepted', async (t) => {
  for (const entry of fixture.writtenByJwtLogin) {
    const hash = await hashWordPressPassword(entry.password, entry.write)
    t.equal(hash.length, entry.hash.length, `${entry.write}: length`)
    if (entry.write === 'argon2id') {
      const settings = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/
      t.same(hash.match(settings)?.slice(1), entry.hash.match(settings)?.slice(1), 'argon2id settings')
      t.same(hash.match(settings)?.slice(1), [ARGON2_OPTIONS.memoryCost, ARGON2_OPTIONS.timeCost, ARGON2_OPTIONS.parallelism].map(String))
    } else {
      t.equal(bcryptSettings(hash), bcryptSettings(entry.hash), `${entry.write}: prefix and cost`)
    }
  }
})

t.test('each written form round-trips', async (t) => {
  const shapes: Record<WordPressHashWrite, { format: WordPressHashFormat, prefix: string, length?: number }> = {
    wordpress: { format: 'wordpress', prefix: `$wp$2y$${WORDPRESS_BCRYPT_COST}$`, length: 63 },
    bcrypt: { format: 'bcrypt', prefix: `$2y$${WORDPRESS_BCRYPT_COST}$`, length: 60 },
    argon2id: { format: 'argon2', prefix: '$argon2id$v=19$m=19456,t=2,p=1$' }
  }
  for (const [write, shape] of Object.entries(shapes) as Array<[WordPressHashWrite, typeof shapes.bcrypt]>) {
    for (const password of ['round trip', 'ünïcödé ✓ 日本', '\t padded  ']) {
      const hash = await hashWordPressPassword(password, write)
      t.ok(hash.startsWith(shape.prefix), `${write}: prefix`)
      if (shape.length !== undefined) t.equal(hash.length, shape.length, `${write}: length`)
      t.equal(wordPressHashFormat(hash), shape.format, `${write}: form`)
      t.equal(await verifyWordPressHash(password, hash), true, `${write}: the password`)
      t.equal(await verifyWordPressHash(password.trim(), hash), true, `${write}: the password, trimmed`)
      t.equal(await verifyWordPressHash(`${password}!`, hash), false, `${write}: another password`)
    }
  }
  t.ok((await hashWordPressPassword('default')).startsWith('$wp$2y$'), 'the WordPress 6.8 form by default')
})

t.test('passwords over 4096 bytes: never verified, never hashed', async (t) => {
  const hash = await hashWordPressPassword('a'.repeat(100), 'bcrypt')
  t.equal(await verifyWordPressHash('a'.repeat(4096), hash), true, '4096 bytes share the first 72')
  t.equal(await verifyWordPressHash('a'.repeat(4097), hash), false, '4097 characters')
  t.equal(await verifyWordPressHash(` ${'a'.repeat(4096)}\n`, hash), true, '4096 bytes once trimmed')
  t.equal(await verifyWordPressHash(`a${'é'.repeat(2048)}`, hash), false, '2049 characters, 4097 bytes')
  const message = await refusal(hashWordPressPassword('secret'.repeat(700)))
  t.match(message, /4096 bytes/)
  t.notMatch(message, /secret/, 'the message does not hold the password')
  await t.rejects(hashWordPressPassword('é'.repeat(2049), 'argon2id'), /4096 bytes/, '2049 characters, 4098 bytes')
  t.ok(await hashWordPressPassword(`  ${'a'.repeat(4096)}  `, 'bcrypt'), 'spaces around do not count')
})

t.test('plain bcrypt refuses to hash a NUL inside; the 6.8 form hashes it', async (t) => {
  const message = await refusal(hashWordPressPassword('nul\0secret', 'bcrypt'))
  t.match(message, /NUL/)
  t.notMatch(message, /secret/, 'the message does not hold the password')
  const hash = await hashWordPressPassword('nul\0secret')
  t.equal(await verifyWordPressHash('nul\0secret', hash), true)
  t.equal(await verifyWordPressHash('nul\0other', hash), false)
  t.ok(await hashWordPressPassword('\0 nul at the ends\0', 'bcrypt'), 'PHP trims a NUL at either end')
})

t.test('an unknown form to write is refused', async (t) => {
  const message = await refusal(hashWordPressPassword('secret', 'sha1' as WordPressHashWrite))
  t.match(message, /"sha1"/)
  t.notMatch(message, /secret/, 'the message does not hold the password')
})

t.test('empty and blank passwords never sign in', async (t) => {
  const emptyMd5 = createHash('md5').update('').digest('hex')
  t.equal(wordPressHashFormat(emptyMd5), 'md5')
  t.equal(await verifyWordPressHash('', emptyMd5), false)
  t.equal(await verifyWordPressHash(' \t\n', emptyMd5), false)
  t.equal(await verifyWordPressHash(' \t\n', await hashWordPressPassword(' \t\n')), false)
})

t.test('hashes no password matches', async (t) => {
  const phpass = fixtureHash('ascii, phpass')
  const wordpress = fixtureHash('ascii, wordpress')
  const bcrypt2y = fixtureHash('ascii, bcrypt')
  const md5 = fixtureHash('ascii, md5')
  const password = 'correct horse battery staple'
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['an asterisk (WordPress\'s refusal)', '*'],
    ['a truncated $wp$ hash', wordpress.slice(0, -1)],
    ['$wp$ and garbage', `$wp$${'z'.repeat(59)}`],
    ['a truncated bcrypt hash', bcrypt2y.slice(0, -1)],
    ['bcrypt $2x$', `$2x$${bcrypt2y.slice(4)}`],
    ['a truncated phpass hash', phpass.slice(0, -1)],
    ['phpass with a character outside its alphabet', `${phpass.slice(0, -1)}!`],
    ['MD5 in upper case', md5.toUpperCase()],
    ['MD5 one digit short', md5.slice(1)],
    ['sha512-crypt', '$6$rounds=5000$salt$x'],
    ['argon2d', '$argon2d$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g'],
    ['control characters', '\u0000\u0001\uffff\ud800'],
    ['prose', 'not a hash at all, just words']
  ]
  for (const [name, hash] of cases) {
    t.equal(wordPressHashFormat(hash), 'unknown', `${name}: form`)
    t.equal(await verifyWordPressHash(password, hash), false, name)
  }
})

t.test('phpass counts outside 2^7 to 2^30 are refused, as phpass refuses them', async (t) => {
  const phpass = fixtureHash('ascii, phpass')
  for (const count of ['.', '4', 'T', 'z']) {
    const hash = `${phpass.slice(0, 3)}${count}${phpass.slice(4)}`
    t.equal(wordPressHashFormat(hash), 'phpass', `count ${count}: form`)
    t.equal(await verifyWordPressHash('correct horse battery staple', hash), false, `count ${count}`)
  }
})

t.test('an argon2id hash from hashPassword (a user already upgraded), and a broken one', async (t) => {
  const hash = await hashPassword('upgraded already')
  t.equal(wordPressHashFormat(hash), 'argon2')
  t.equal(await verifyWordPressHash('upgraded already', hash), true)
  t.equal(await verifyWordPressHash(' upgraded already\t', hash), true)
  t.equal(await verifyWordPressHash('upgraded', hash), false)
  t.equal(await verifyWordPressHash('upgraded already', `${hash.slice(0, 20)}$`), false, 'a broken argon2 hash')
})

t.test('a $2b$ hash, as Node\'s bcrypt writes it', async (t) => {
  const hash = await bcrypt.hash('node wrote this', 4)
  t.ok(hash.startsWith('$2b$04$'))
  t.equal(wordPressHashFormat(hash), 'bcrypt')
  t.equal(await verifyWordPressHash('node wrote this', hash), true)
  t.equal(await verifyWordPressHash('node wrote that', hash), false)
})

t.test('values that are not strings', async (t) => {
  const hash = fixtureHash('ascii, md5')
  for (const garbage of [null, undefined, 42, {}, [], Buffer.from(hash), Symbol('hash')]) {
    t.equal(wordPressHashFormat(garbage as unknown as string), 'unknown', `${typeof garbage} hash: form`)
    t.equal(await verifyWordPressHash('correct horse battery staple', garbage as unknown as string), false, `${typeof garbage} hash`)
    t.equal(await verifyWordPressHash(garbage as unknown as string, hash), false, `${typeof garbage} password`)
  }
})
