/**
 * The texts of one plugin instance in every language it speaks: the shipped
 * catalogues with the host's own (the `messages` option) laid over them, the
 * language of a request negotiated from `Accept-Language` (through
 * `negotiator`, within the `locale` settings), and the lookups the error
 * handler, the flows and the mails make. Anything a catalogue lacks is
 * taken from English, so a host's partial catalogue still answers.
 */
import Negotiator from 'negotiator'
import { JwtLoginSettingsError, type FieldDetail, type JwtLoginError } from '../core/errors.js'
import { PLACEHOLDERS, type Catalogue, type MailName, type MailText, type SuccessMessage } from './catalogue.js'
import { de } from './catalogues/de.js'
import { en } from './catalogues/en.js'
import { es } from './catalogues/es.js'
import { fr } from './catalogues/fr.js'
import { pt } from './catalogues/pt.js'

/** The languages shipped, English first. */
export const SHIPPED_CATALOGUES: Readonly<Record<string, Catalogue>> = { en, de, fr, es, pt }

/** A host's catalogue: any part of one, for a shipped language (overrides) or a new one. */
export interface CatalogueInput {
  errors?: Partial<Catalogue['errors']>
  fields?: Partial<Catalogue['fields']>
  messages?: Partial<Catalogue['messages']>
  mails?: { [name in MailName]?: Partial<MailText> }
}

/** The `locale` settings: the language when the client states none it may get, and the languages it may get. */
export interface LocaleSettings {
  default: string
  allowed: string[]
}

/** A language tag as `Accept-Language` carries one: `de`, `pt-BR`, `zh-Hant-TW`. */
const LANGUAGE_TAG = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g
/** Distinct `Accept-Language` values remembered per instance: browsers send few, and the table is dropped whole when full. */
const NEGOTIATED_MAX = 256

/** The placeholders a text holds. */
function placeholdersOf (text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map(match => match[1] as string)
}

/** Fills `{{name}}` from `values`: a catalogue's placeholders are checked to be among them. */
function fill (text: string, values: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (_whole, name: string) => values[name] as string)
}

/** A problem of one entry: its path in the catalogue and what is wrong. */
export interface CatalogueProblem {
  path: string
  problem: string
}

/** Problems of one text: a placeholder the code does not fill, or one it needs missing. */
function textProblems (path: string, text: unknown, allowed: readonly string[], required: readonly string[]): CatalogueProblem[] {
  if (typeof text !== 'string' || text.trim() === '') return [{ path, problem: 'must be a non-empty string' }]
  const found = placeholdersOf(text)
  const problems = found.filter(name => !allowed.includes(name)).map(name => ({
    path,
    problem: allowed.length === 0 ? `has the placeholder {{${name}}}, but this text takes none` : `has the placeholder {{${name}}}, which is never filled (it takes ${allowed.map(a => `{{${a}}}`).join(', ')})`
  }))
  for (const name of required) if (!found.includes(name)) problems.push({ path, problem: `must hold {{${name}}}` })
  return problems
}

/** Problems of one section: names the section does not have, and each text's. */
function sectionProblems (path: string, section: unknown, known: readonly string[], complete: boolean, check: (name: string, text: unknown) => CatalogueProblem[]): CatalogueProblem[] {
  if (section === undefined && !complete) return []
  if (section === null || typeof section !== 'object') return [{ path, problem: 'must be an object' }]
  const entries = section as Record<string, unknown>
  const problems = Object.keys(entries).filter(name => !known.includes(name)).map(name => ({ path: `${path}/${name}`, problem: 'is not a text jwt-login has' }))
  for (const name of known) {
    if (entries[name] === undefined) {
      if (complete) problems.push({ path: `${path}/${name}`, problem: 'is missing' })
    } else {
      problems.push(...check(name, entries[name]))
    }
  }
  return problems
}

/**
 * Every problem of a catalogue: unknown entries, texts that are not
 * strings, placeholders the code does not fill, a mail without its code
 * and, when `complete`, every missing entry. A shipped catalogue must have
 * none (the catalogue test); a host's is refused at registration.
 */
export function catalogueProblems (input: unknown, complete: boolean): CatalogueProblem[] {
  if (input === null || typeof input !== 'object') return [{ path: '', problem: 'must be an object' }]
  const catalogue = input as Record<string, unknown>
  const problems: CatalogueProblem[] = Object.keys(catalogue)
    .filter(part => !['errors', 'fields', 'messages', 'mails'].includes(part))
    .map(part => ({ path: part, problem: 'is not a part of a catalogue (errors, fields, messages, mails)' }))
  problems.push(
    ...sectionProblems('errors', catalogue.errors, Object.keys(en.errors), complete, (code, text) => textProblems(`errors/${code}`, text, PLACEHOLDERS.errors, [])),
    ...sectionProblems('fields', catalogue.fields, Object.keys(en.fields), complete, (place, text) => textProblems(`fields/${place}`, text, PLACEHOLDERS.fields, ['field'])),
    ...sectionProblems('messages', catalogue.messages, Object.keys(en.messages), complete, (key, text) => textProblems(`messages/${key}`, text, PLACEHOLDERS.messages, [])),
    ...sectionProblems('mails', catalogue.mails, Object.keys(en.mails), complete, (name, mail) => {
      const allowed = PLACEHOLDERS.mails[name as MailName]
      return sectionProblems(`mails/${name}`, mail, ['subject', 'text', 'html'], complete, (part, text) =>
        textProblems(`mails/${name}/${part}`, text, allowed, part === 'subject' || !(allowed as readonly string[]).includes('code') ? [] : ['code']))
    })
  )
  return problems
}

/** How a catalogue names a malformed field. */
export function fieldPhrase (catalogue: Catalogue, field: FieldDetail): string {
  return fill(catalogue.fields[field.place], { field: field.field, reason: field.reason })
}

/** An error's message from a catalogue, the malformed field it names appended. */
export function localisedError (catalogue: Catalogue, error: JwtLoginError): string {
  const message = catalogue.errors[error.code]
  return error.field === undefined ? message : `${message.replace(/\.$/, '')}: ${fieldPhrase(catalogue, error.field)}.`
}

/** `base` with `over`'s entries laid over it, section by section. */
function merge (base: Catalogue, over: CatalogueInput): Catalogue {
  return {
    errors: { ...base.errors, ...over.errors },
    fields: { ...base.fields, ...over.fields },
    messages: { ...base.messages, ...over.messages },
    mails: Object.fromEntries(Object.entries(base.mails).map(([name, mail]) => [name, { ...mail, ...over.mails?.[name as MailName] }])) as Catalogue['mails']
  }
}

/**
 * The catalogues of one instance: the shipped ones, the host's laid over
 * them (a new language over English). Refuses a host catalogue with a bad
 * tag or a problem, naming its path under the `messages` option.
 */
function buildCatalogues (option: Record<string, CatalogueInput> | undefined): Map<string, Catalogue> {
  const catalogues = new Map(Object.entries(SHIPPED_CATALOGUES))
  if (option === undefined) return catalogues
  if (option === null || typeof option !== 'object') throw new JwtLoginSettingsError('messages', 'must be an object of catalogues by language tag (`{ de: { errors: { … } } }`)', 'option')
  for (const [tag, input] of Object.entries(option)) {
    if (!LANGUAGE_TAG.test(tag)) throw new JwtLoginSettingsError(`messages/${tag}`, 'is not a language tag (such as `it` or `pt-BR`)', 'option')
    const [first] = catalogueProblems(input, false)
    if (first !== undefined) throw new JwtLoginSettingsError(`messages/${tag}${first.path === '' ? '' : `/${first.path}`}`, first.problem, 'option')
    const shipped = [...catalogues.keys()].find(known => known.toLowerCase() === tag.toLowerCase())
    catalogues.set(shipped ?? tag, merge(catalogues.get(shipped ?? 'en') as Catalogue, input))
  }
  return catalogues
}

/** Who asks for a text: a request's `Accept-Language` (as sent) and its settings snapshot. */
export interface Asker {
  readonly acceptLanguage?: string
  readonly settings: { readonly locale: LocaleSettings }
}

export class Messages {
  /** Every language this instance can answer in, English first. */
  readonly locales: readonly string[]
  readonly #catalogues: Map<string, Catalogue>
  /** Whether English is the shipped catalogue unchanged: then an error's own message is its English text. */
  readonly #plainEnglish: boolean
  /** Per `locale` settings (one object per settings in force), the language of each header seen. */
  readonly #negotiated = new WeakMap<LocaleSettings, Map<string, string>>()

  constructor (option?: Record<string, CatalogueInput>) {
    this.#catalogues = buildCatalogues(option)
    this.locales = [...this.#catalogues.keys()]
    this.#plainEnglish = this.#catalogues.get('en') === en
  }

  /**
   * Refuses `locale` settings that name a language the instance has no
   * catalogue for (tags as the catalogues write them: `de`, `pt-BR`), or a
   * default outside `allowed`. At registration and on every reload.
   */
  checkLocale (settings: LocaleSettings): void {
    const unknown = [settings.default, ...settings.allowed].find(tag => !this.locales.includes(tag))
    if (unknown !== undefined) {
      const path = unknown === settings.default ? 'locale/default' : `locale/allowed/${settings.allowed.indexOf(unknown)}`
      throw new JwtLoginSettingsError(path, `\`${unknown}\` is not a language jwt-login has here (${this.locales.join(', ')}); add its catalogue with the \`messages\` option`)
    }
    if (settings.allowed.length > 0 && !settings.allowed.includes(settings.default)) {
      throw new JwtLoginSettingsError('locale/default', `must be one of locale.allowed (${settings.allowed.join(', ')})`)
    }
  }

  /**
   * The language of a request: the client's most preferred one among those
   * allowed (all when `allowed` is empty), else the default. Negotiated once
   * per distinct header value and settings, and only when a text is needed:
   * an answer without a message never negotiates.
   */
  negotiate (header: string | undefined, settings: LocaleSettings): string {
    if (header === undefined || header === '') return settings.default
    let seen = this.#negotiated.get(settings)
    if (seen === undefined) {
      seen = new Map()
      this.#negotiated.set(settings, seen)
    }
    let locale = seen.get(header)
    if (locale === undefined) {
      const allowed = settings.allowed.length === 0 ? this.locales : settings.allowed
      // the default first, so that `*` and equal preferences resolve to it
      const candidates = [settings.default, ...allowed.filter(tag => tag !== settings.default)]
      locale = new Negotiator({ headers: { 'accept-language': header } }).languages(candidates)[0] ?? settings.default
      if (seen.size >= NEGOTIATED_MAX) seen.clear()
      seen.set(header, locale)
    }
    return locale
  }

  /** The language of whoever asks. */
  localeOf (asker: Asker): string {
    return this.negotiate(asker.acceptLanguage, asker.settings.locale)
  }

  /** The catalogue of a negotiated language: `checkLocale` has made sure there is one. */
  #catalogue (locale: string): Catalogue {
    return this.#catalogues.get(locale) as Catalogue
  }

  /** An error's message in the language, with the malformed field it names. */
  error (locale: string, error: JwtLoginError): string {
    if (locale === 'en' && this.#plainEnglish) return error.message
    return localisedError(this.#catalogue(locale), error)
  }

  /** A success message in the asker's language. */
  text (asker: Asker, key: SuccessMessage): string {
    return this.#catalogue(this.localeOf(asker)).messages[key]
  }

  /** A mail's texts in the asker's language, placeholders unfilled. */
  mail (asker: Asker, name: MailName): MailText {
    return this.#catalogue(this.localeOf(asker)).mails[name]
  }
}
