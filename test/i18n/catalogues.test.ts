// The shipped catalogues: complete, every placeholder one the code fills, every text translated; and the check that says so.
import t from 'tap'
import { errorDefinitions } from '../../lib/core/errors.js'
import { PLACEHOLDERS, type Catalogue } from '../../lib/i18n/catalogue.js'
import { en } from '../../lib/i18n/catalogues/en.js'
import { catalogueProblems, SHIPPED_CATALOGUES } from '../../lib/i18n/messages.js'

const LANGUAGES = Object.keys(SHIPPED_CATALOGUES)
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g

/** Every text of a catalogue by its path. */
function texts (catalogue: Catalogue): Map<string, string> {
  const all = new Map<string, string>()
  for (const section of ['errors', 'fields', 'messages'] as const) {
    for (const [name, text] of Object.entries(catalogue[section])) all.set(`${section}/${name}`, text)
  }
  for (const [name, mail] of Object.entries(catalogue.mails)) {
    for (const [part, text] of Object.entries(mail)) all.set(`mails/${name}/${part}`, text)
  }
  return all
}

t.test('English and at least four more languages are shipped', async (t) => {
  t.same(LANGUAGES.slice(0, 5), ['en', 'de', 'fr', 'es', 'pt'])
})

for (const language of LANGUAGES) {
  const catalogue = SHIPPED_CATALOGUES[language] as Catalogue
  t.test(`${language}: a message for every error code, field place, success message and mail; no placeholder the code does not fill`, async (t) => {
    t.same(catalogueProblems(catalogue, true), [])
    t.same(Object.keys(catalogue.errors).sort(), Object.keys(errorDefinitions).sort(), 'exactly the error codes of the table')
    for (const [path, text] of texts(catalogue)) {
      const names = [...text.matchAll(PLACEHOLDER)].map(match => match[1])
      const [section, name] = path.split('/') as [keyof typeof PLACEHOLDERS, string]
      const allowed: readonly string[] = section === 'mails' ? PLACEHOLDERS.mails[name as keyof typeof PLACEHOLDERS.mails] : PLACEHOLDERS[section]
      for (const placeholder of names) t.ok(allowed.includes(placeholder as string), `${path}: {{${placeholder as string}}} is filled`)
    }
    // every mail that carries a code (the notice of a password change carries none)
    for (const [name, mail] of Object.entries(catalogue.mails).filter(([name]) => PLACEHOLDERS.mails[name as keyof typeof PLACEHOLDERS.mails].includes('code' as never))) {
      t.ok(name)
      t.match(mail.text, '{{code}}', 'the text part holds the code')
      t.match(mail.html, '{{code}}', 'the HTML part holds the code')
    }
  })
  if (language === 'en') continue
  t.test(`${language}: written in the language, not English left in place`, async (t) => {
    const english = texts(en)
    for (const [path, text] of texts(catalogue)) {
      t.not(text, english.get(path), `${path} differs from English`)
    }
    t.notMatch(catalogue.fields.body, '{{reason}}', "the schema check's English words are left out")
  })
}

t.test('the check finds each kind of problem (so the tests above can fail)', async (t) => {
  const { ERR_JWT_LOGIN_BAD_REQUEST: _dropped, ...fewerErrors } = en.errors
  const broken = (change: Partial<Catalogue>): unknown => ({ ...en, ...change })
  t.match(catalogueProblems(broken({ errors: fewerErrors as Catalogue['errors'] }), true), [{ path: 'errors/ERR_JWT_LOGIN_BAD_REQUEST', problem: 'is missing' }])
  t.same(catalogueProblems({ errors: fewerErrors }, false), [], 'a partial catalogue (a host\'s) need not be complete')
  t.match(catalogueProblems(broken({ errors: { ...en.errors, ERR_JWT_LOGIN_NOT_FOUND: 'No {{route}}.' } }), true),
    [{ path: 'errors/ERR_JWT_LOGIN_NOT_FOUND', problem: 'has the placeholder {{route}}, but this text takes none' }])
  t.match(catalogueProblems({ mails: { reset: { text: 'Code: {{kode}}' } } }, false), [
    { path: 'mails/reset/text', problem: /\{\{kode\}\}, which is never filled \(it takes \{\{code\}\}/ },
    { path: 'mails/reset/text', problem: 'must hold {{code}}' }
  ])
  t.match(catalogueProblems({ mails: { emailCode: { subject: 'Ihr Code' } } }, false), [], 'a subject need not hold the code')
  t.match(catalogueProblems({ fields: { body: 'Feld im Body' } }, false), [{ path: 'fields/body', problem: 'must hold {{field}}' }])
  t.match(catalogueProblems({ errors: { ERR_JWT_LOGIN_NOT_A_CODE: 'x' } }, false), [{ path: 'errors/ERR_JWT_LOGIN_NOT_A_CODE', problem: 'is not a text jwt-login has' }])
  t.match(catalogueProblems({ errors: { ERR_JWT_LOGIN_NOT_FOUND: '' } }, false), [{ path: 'errors/ERR_JWT_LOGIN_NOT_FOUND', problem: 'must be a non-empty string' }])
  t.match(catalogueProblems({ errors: { ERR_JWT_LOGIN_NOT_FOUND: 7 } }, false), [{ problem: 'must be a non-empty string' }])
  t.match(catalogueProblems({ mesages: {} }, false), [{ path: 'mesages', problem: /not a part of a catalogue/ }])
  t.match(catalogueProblems({ messages: 'x' }, false), [{ path: 'messages', problem: 'must be an object' }])
  t.match(catalogueProblems('x', false), [{ path: '', problem: 'must be an object' }])
  t.match(catalogueProblems({}, true), [{ path: 'errors', problem: 'must be an object' }, { path: 'fields' }, { path: 'messages' }, { path: 'mails' }])
})
