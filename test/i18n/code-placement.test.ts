// Issue 39: every mail that carries a code writes it right after the word for "code", in every shipped language, so a reader (and a mail client's one-time-code autofill) finds it at once.
import t from 'tap'
import { PLACEHOLDERS, type Catalogue, type MailName, type MailText } from '../../lib/i18n/catalogue.js'
import { de } from '../../lib/i18n/catalogues/de.js'
import { en } from '../../lib/i18n/catalogues/en.js'
import { es } from '../../lib/i18n/catalogues/es.js'
import { fr } from '../../lib/i18n/catalogues/fr.js'
import { pt } from '../../lib/i18n/catalogues/pt.js'
import { SHIPPED_CATALOGUES } from '../../lib/i18n/messages.js'

/**
 * What may stand right before `{{code}}`, per language: the word for code,
 * then at most the language's "is" and a colon. German joins the word into
 * compounds (`Anmeldecode`), so there it need only end the word; French sets
 * a space before the colon.
 */
const BEFORE_THE_CODE: Record<string, RegExp> = {
  en: /\bcode(?:\s+is)?:?\s+$/iu,
  de: /code(?:\s+(?:lautet|ist))?:?\s+$/iu,
  fr: /\bcode(?:\s+est)?(?:\s?:)?\s+$/iu,
  es: /\bcódigo(?:\s+es)?:?\s+$/iu,
  pt: /\bcódigo(?:\s+é)?:?\s+$/iu
}

const CODE = /\{\{\s*code\s*\}\}/gu
/** The HTML parts may set the code apart; the tag is not a word. */
const OPENING_TAG = /<strong\b[^>]*>$/u

/** The mails that carry a code, as the code that sends them fills it. */
const CODE_MAILS = (Object.keys(PLACEHOLDERS.mails) as MailName[]).filter(name => (PLACEHOLDERS.mails[name] as readonly string[]).includes('code'))

/** Each place in a catalogue where a mail's code is missing or not right after the word for code. */
function misplacedCodes (language: string, catalogue: Catalogue): string[] {
  const before = BEFORE_THE_CODE[language]
  if (before === undefined) return [`${language}: no pattern for the word for code`]
  const problems: string[] = []
  for (const name of CODE_MAILS) {
    for (const part of ['subject', 'text', 'html'] as Array<keyof MailText>) {
      const text = catalogue.mails[name][part]
      const places = [...text.matchAll(CODE)]
      if (places.length === 0 && part !== 'subject') problems.push(`mails/${name}/${part}: holds no {{code}}`)
      for (const place of places) {
        const upTo = text.slice(0, place.index)
        const lead = part === 'html' ? upTo.replace(OPENING_TAG, '') : upTo
        if (!before.test(lead)) problems.push(`mails/${name}/${part}: "…${lead.slice(-40)}{{code}}" does not follow the word for code`)
      }
    }
  }
  return problems
}

t.test('a pattern for every shipped language, and the mails that carry a code are the ones expected', async (t) => {
  t.same(Object.keys(BEFORE_THE_CODE).sort(), Object.keys(SHIPPED_CATALOGUES).sort())
  t.same(CODE_MAILS, ['reset', 'emailCode', 'verifyEmail', 'emailChange', 'emailChanged', 'emailSignIn', 'emailSignInLink'])
})

for (const [language, catalogue] of Object.entries(SHIPPED_CATALOGUES)) {
  t.test(`${language}: every mail that carries a code, the revert code included, writes it right after the word for code`, async (t) => {
    t.same(misplacedCodes(language, catalogue), [])
  })
}

t.test('the check finds a code away from its word (so the tests above can fail)', async (t) => {
  const withMail = (catalogue: Catalogue, name: MailName, mail: Partial<MailText>): Catalogue =>
    ({ ...catalogue, mails: { ...catalogue.mails, [name]: { ...catalogue.mails[name], ...mail } } })

  /** The check's answer is exactly one problem, at this place. */
  const onlyProblem = (problems: string[], place: RegExp, message: string): void => {
    t.equal(problems.length, 1, `${message}: one problem`)
    t.match(problems[0], place, message)
  }
  onlyProblem(misplacedCodes('fr', withMail(fr, 'emailSignIn', { text: 'Votre code de connexion est {{code}}.' })),
    /^mails\/emailSignIn\/text: "…Votre code de connexion est \{\{code\}\}" does not follow the word for code$/, 'a qualifier between the word and the code')
  onlyProblem(misplacedCodes('de', withMail(de, 'reset', { html: '<p>Ihr Code zum Zurücksetzen lautet: <strong>{{code}}</strong></p>' })), /^mails\/reset\/html: /, 'in the HTML part too')
  onlyProblem(misplacedCodes('es', withMail(es, 'emailChanged', { text: 'Restaure la dirección con {{code}}' })), /^mails\/emailChanged\/text: /, 'the revert code')
  onlyProblem(misplacedCodes('pt', withMail(pt, 'emailSignInLink', { subject: 'Entre: {{code}}' })), /^mails\/emailSignInLink\/subject: /, 'a subject that holds the code')
  onlyProblem(misplacedCodes('en', withMail(en, 'emailCode', { text: 'Your sign-in code is {{code}}; code {{code}} again: {{ code }}' })),
    /^mails\/emailCode\/text: .* again: \{\{code\}\}" /, 'every place of the code is checked, a spaced placeholder too')
  t.same(misplacedCodes('en', withMail(en, 'verifyEmail', { html: '<p>Nothing here.</p>' })), ['mails/verifyEmail/html: holds no {{code}}'])
  t.same(misplacedCodes('it', en), ['it: no pattern for the word for code'], 'a new shipped language needs its row')

  t.same(misplacedCodes('de', withMail(de, 'emailSignIn', { text: 'Code: {{code}}', html: '<p>Ihr Code ist <strong class="c">{{code}}</strong></p>' })), [], 'the word alone, "ist", a tag around the code')
  t.same(misplacedCodes('fr', withMail(fr, 'emailSignIn', { text: 'Votre code est {{code}}', html: 'Votre code\u202f: {{code}}' })), [], 'French with a narrow space before the colon')
  t.same(misplacedCodes('en', withMail(en, 'emailSignIn', { text: 'Your code is:\n\n{{code}}' })), [], 'the code on a line of its own')
})
