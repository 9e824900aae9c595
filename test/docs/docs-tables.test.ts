import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { OAuthProviderSchema, SettingsSchema } from '../../schemas/settings.js'
import { errorDefinitions, type JwtLoginErrorCode } from '../../lib/core/errors.js'
import * as main from '../../lib/index.js'
import * as nodemailer from '../../lib/nodemailer.js'
import * as postgres from '../../lib/postgres.js'
import * as redis from '../../lib/redis.js'
import * as testing from '../../lib/testing.js'
import * as wordpress from '../../lib/wordpress.js'
import * as client from '../../lib/client.js'
import * as conformance from '../../lib/conformance.js'
import {
  coveredSettings, errorTable, formatDefault, GENERATED_PAGES, renderRegions, settingRows, settingsTable
} from '../../scripts/docs-tables.js'
import { readPage } from '../helpers/markdown.js'

/** The rows of the first Markdown table after `marker`, as arrays of cells (backticks kept). */
function tableAfter (markdown: string, marker: string): string[][] {
  const lines = markdown.slice(markdown.indexOf(marker)).split('\n')
  const start = lines.findIndex(line => line.startsWith('|'))
  const rows: string[][] = []
  for (let index = start + 2; (lines[index] ?? '').startsWith('|'); index++) {
    rows.push((lines[index] as string).slice(1, -1).split(/(?<!\\)\|/).map(cell => cell.trim()))
  }
  return rows
}

t.test('the committed pages hold the tables generated from the code (npm run docs:tables)', async (t) => {
  for (const page of GENERATED_PAGES) {
    const text = readPage(page)
    t.equal(renderRegions(text), text, `${page} is current; run npm run docs:tables`)
  }
})

t.test('docs/settings.md: every schema setting is in exactly one table', async (t) => {
  const covered = coveredSettings(readPage('docs/settings.md'))
  t.equal(new Set(covered).size, covered.length, 'no setting twice')
  t.same([...covered].sort(), settingRows().map(row => row.path).sort())
})

/** A default cell back as a value: `'15m'` → '15m', `10` → 10. */
function parseDefault (cell: string): unknown {
  const inner = cell.replace(/^`(.*)`$/, '$1')
  return JSON.parse(inner.replace(/^'(.*)'$/, '"$1"'))
}

function valueAt (root: unknown, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], root)
}

t.test('docs/settings.md: each default in the tables is the one the schema fills in', async (t) => {
  const settings = Value.Default(SettingsSchema, { tokens: { keys: [{ kid: 'k', secret: 's' }] } })
  const provider = Value.Default(OAuthProviderSchema, { clientId: 'c' })
  const regions = [...readPage('docs/settings.md').matchAll(/<!-- generated:settings[^>]*-->\n([\s\S]*?)<!-- \/generated -->/g)]
  const rows = regions.flatMap(region => (region[1] as string).split('\n').filter(line => line.startsWith('| `')))
  let checked = 0
  for (const row of rows) {
    const [path = '', fallback = ''] = row.slice(1).split(' | ').map(cell => cell.trim().replace(/^`(.*)`$/, '$1'))
    if (fallback === 'required' || fallback === '–') continue
    const [, providerPath] = path.split('oauth.providers.<name>.')
    const actual = providerPath === undefined ? valueAt(settings, path.split('.')) : valueAt(provider, providerPath.split('.'))
    t.same(actual, parseDefault(`\`${fallback}\``), path)
    checked++
  }
  t.ok(checked > 60, `${checked} defaults checked`)
})

t.test('docs/errors.md: the error table is errorDefinitions', async (t) => {
  const rows = tableAfter(readPage('docs/errors.md'), '<!-- generated:errors -->')
  t.same(rows.map(row => row[0]).sort(), Object.keys(errorDefinitions).sort(), 'every code, once')
  for (const [code, errorCode, status, message] of rows) {
    const definition = errorDefinitions[code as JwtLoginErrorCode]
    t.same([Number(errorCode), Number(status), message?.replaceAll('\\|', '|')], [definition.errorCode, definition.statusCode, definition.message], code as string)
  }
})

t.test('README.md: the exports table names what each entry exports at runtime, and its types', async (t) => {
  const rows = tableAfter(readPage('README.md'), '## Exports')
  const names = (cell = ''): string[] => cell === '' ? [] : cell.split(', ').map(name => name.replace(/^`(.*)`$/, '$1'))
  const runtime: Record<string, object> = { '`fastify-jwt-login`': main, '`fastify-jwt-login/redis`': redis, '`fastify-jwt-login/postgres`': postgres, '`fastify-jwt-login/nodemailer`': nodemailer, '`fastify-jwt-login/testing`': testing, '`fastify-jwt-login/wordpress`': wordpress, '`fastify-jwt-login/client`': client, '`fastify-jwt-login/conformance`': conformance }
  t.same(rows.map(row => row[0]), Object.keys(runtime), 'one row per entry')
  for (const [entry = '', values, types] of rows) {
    t.same(names(values).sort(), Object.keys(runtime[entry] as object).sort(), `${entry}: the values are the runtime exports`)
    t.ok(names(types).length > 0 && names(types).every(name => !(name in (runtime[entry] as object))), `${entry}: the types exist only as types`)
  }
})

t.test('the generator refuses what it cannot document', async (t) => {
  t.throws(() => settingsTable(['bodyLimit'], {}), /setting bodyLimit has no meaning/)
  t.throws(() => renderRegions('<!-- generated:nope -->\n<!-- /generated -->'), /unknown generated region "nope"/)
  t.same(coveredSettings('<!-- generated:errors -->\n<!-- /generated -->'), [], 'only settings regions cover settings')
  t.equal(formatDefault(5), '`5`')
  t.match(errorTable(), /^\| code \| errorCode \| status \| message \|/)
  t.equal(renderRegions('<!-- generated:exports -->\nold\n<!-- /generated -->', { exports: () => 'new' }), '<!-- generated:exports -->\nnew\n<!-- /generated -->')
})
