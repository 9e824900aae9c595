// Login names and display names at registration: refused or cleaned as WordPress would (checked against WordPress's own functions, test/fixtures/wordpress-names.json), no login that squats an email, and the WordPress adapter writing the columns WordPress writes.
import { readFileSync } from 'node:fs'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { cleanText, isCleanLogin } from '../../lib/core/clean-text.js'
import { nicenameOf, wordPressDisplayName } from '../../lib/wordpress/names.js'
import { WordPressUserAdapter } from '../../lib/wordpress/users.js'
import { ALICE } from '../helpers/app.js'
import { claimsOf, errorOf, PREFIX } from '../helpers/http.js'
import { loggingHost } from '../helpers/users.js'
import { createWordPressDb } from '../helpers/wordpress-db.js'

interface LoginCase { given: string, sanitized: string, accepted: boolean, user_nicename: string | null, nickname: string | null }
interface NameCase { given: string, sanitize_text_field: string, display_name: string }

/** What WordPress 6.1's own functions and default filters made of each input (scripts/wordpress-names.php). */
const wordpress = JSON.parse(readFileSync(new URL('../fixtures/wordpress-names.json', import.meta.url), 'utf8')) as { logins: LoginCase[], displayNames: NameCase[] }

const PASSWORD = 'a long enough new password'

interface Registrar {
  users: MemoryUserAdapter
  register: (body: Record<string, unknown>) => Promise<LightMyRequestResponse>
  signIn: (body: Record<string, unknown>) => Promise<LightMyRequestResponse>
}

/** A host with registration on, over memory users with alice. */
async function registrar (t: Test): Promise<Registrar> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const { app } = await loggingHost(t, users, { users: { register: { enabled: true, perIp: { max: 100 } } } })
  return {
    users,
    register: async (body) => await app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: body }),
    signIn: async (body) => await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: body })
  }
}

t.test('a login is accepted exactly when WordPress\'s sanitize_user (strict) leaves it as given', async (t) => {
  for (const entry of wordpress.logins) t.equal(isCleanLogin(entry.given), entry.accepted, JSON.stringify(entry.given))
})

t.test('display names are cleaned as WordPress\'s sanitize_text_field cleans them', async (t) => {
  for (const entry of wordpress.displayNames) t.equal(cleanText(entry.given), entry.sanitize_text_field, JSON.stringify(entry.given))
  t.equal(cleanText('Bob \uD800'), '', 'text that is no Unicode cleans to nothing, as invalid UTF-8 does in WordPress')
})

t.test('the WordPress adapter\'s nicename and display name are WordPress\'s', async (t) => {
  for (const entry of wordpress.logins.filter(entry => entry.accepted)) t.equal(nicenameOf(entry.given), entry.user_nicename, JSON.stringify(entry.given))
  for (const entry of wordpress.displayNames) t.equal(wordPressDisplayName(entry.given, 'alice'), entry.display_name, JSON.stringify(entry.given))
})

t.test('a login name that is another account\'s email, or any address but the registrant\'s own, is 400 / 229 and creates nothing', async (t) => {
  const kit = await registrar(t)
  for (const login of [ALICE.email, ALICE.email.toUpperCase(), 'nobody@example.net', 'bob@home']) {
    t.same(errorOf(await kit.register({ email: 'bob@example.org', password: PASSWORD, user_login: login })), [400, 229], login)
  }
  t.equal(await kit.users.findByEmail('bob@example.org'), null, 'no user')
  t.same(errorOf(await kit.signIn({ login: ALICE.email, password: PASSWORD })), [401, 48], 'alice\'s address names no other account')
  const own = await kit.register({ email: 'bob@example.org', password: PASSWORD, user_login: 'Bob@Example.org' })
  t.equal(own.statusCode, 200, 'the registrant\'s own address, in any case, is a login')
  const signedIn = await kit.signIn({ login: 'bob@example.org', password: PASSWORD })
  t.equal(claimsOf(signedIn.json().data.jwt).sub, String(own.json().data.id), 'login by the email signs bob in')
})

t.test('a login with edge spaces, doubled spaces, markup, octets, entities or characters outside a-z 0-9 _ . - @ is 400 / 229', async (t) => {
  const kit = await registrar(t)
  for (const login of [' bob', 'bob ', 'b  ob', '<b>bob</b>', 'bob%41', 'b&amp;ob', 'josé', 'bob!', ' ']) {
    t.same(errorOf(await kit.register({ email: 'bob@example.org', password: PASSWORD, user_login: login })), [400, 229], JSON.stringify(login))
  }
  t.same(errorOf(await kit.register({ email: 'bob+tag@example.org', password: PASSWORD })), [400, 229], 'an email WordPress would not keep as a login needs a user_login')
  t.equal((await kit.register({ email: 'bob+tag@example.org', password: PASSWORD, user_login: 'bob tag' })).statusCode, 200, 'and registers with one')
})

t.test('a display name is stored without markup, line breaks or edge spaces; nothing left is the login', async (t) => {
  const kit = await registrar(t)
  const res = await kit.register({ email: 'bob@example.org', password: PASSWORD, user_login: 'bob', display_name: '<script>alert(1)</script>Bob\n <b>Builder</b> ' })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.user.display_name, 'Bob Builder')
  t.equal((await kit.users.findByLogin('bob'))?.display_name, 'Bob Builder', 'as stored')
  const empty = await kit.register({ email: 'sue@example.org', password: PASSWORD, user_login: 'sue', display_name: '<img src=x onerror=alert(1)>' })
  t.equal(empty.json().data.user.display_name, 'sue')
})

t.test('the WordPress adapter writes the login, nicename, nickname and display name WordPress writes, and refuses a login WordPress would change', async (t) => {
  const db = await createWordPressDb(t)
  const adapter = new WordPressUserAdapter({ pool: db.pool, tablePrefix: db.prefix })
  const cases = wordpress.logins.filter(entry => entry.accepted && entry.given.length <= 50).slice(0, 6)
  for (const [index, entry] of cases.entries()) {
    const name = wordpress.displayNames[index] as NameCase
    const created = await adapter.createUser({ email: `u${index}@example.org`, login: entry.given, displayName: name.given, role: 'subscriber' })
    const row = await db.readUser(created.ID)
    t.match(row, { user_login: entry.given, user_nicename: entry.user_nicename, display_name: name.display_name }, JSON.stringify(entry.given))
    t.equal(await db.readMeta(created.ID, 'nickname'), entry.nickname)
    t.equal(created.display_name, name.display_name, 'the user answered is the row')
  }
  const script = await adapter.createUser({ email: 'script@example.org', login: 'script', displayName: '<script>alert(1)</script>Bob & Co', role: 'subscriber' })
  t.equal((await db.readUser(script.ID))?.display_name, 'Bob &amp; Co')
  for (const entry of wordpress.logins.filter(entry => !entry.accepted)) {
    await t.rejects(adapter.createUser({ email: 'refused@example.org', login: entry.given, displayName: 'x', role: 'subscriber' }), /would store another login/, JSON.stringify(entry.given))
  }
})
