import t from 'tap'
import { buildDemo, DEMO_2FA_USER, DEMO_USER } from '../../examples/demo.js'
import { codeBlocks, docPages, readPage, type CodeBlock } from '../helpers/markdown.js'

/** The address the documentation's curl commands use: the demo of `npm start`. */
const BASE = 'http://127.0.0.1:3000'

export interface Curl {
  where: string
  method: string
  /** Path and query, as `inject` takes it. */
  url: string
  headers: Record<string, string>
  body?: string
}

/** Shell words of one command line: quotes, backslashes and `$NAME` / `${NAME}` as sh reads them; a word from `#` on is a comment. */
export function shellWords (line: string, env: Record<string, string>): string[] {
  const expand = (name: string): string => {
    const value = env[name]
    if (value === undefined) throw new Error(`the shell variable $${name} is not set`)
    return value
  }
  const words: string[] = []
  const pattern = /\s+|'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)|\$\{?(\w+)\}?|(#.*)|([^\s'"\\$#]+)/gy
  let word: string | null = null
  for (let match = pattern.exec(line); match !== null && match[0] !== ''; match = pattern.exec(line)) {
    const [all, single, double, escaped, variable, comment, plain] = match
    if (/^\s+$/.test(all)) {
      if (word !== null) words.push(word)
      word = null
    } else if (comment !== undefined && word === null) {
      break
    } else {
      const part = single ?? escaped ?? plain ?? comment ??
        (variable !== undefined ? expand(variable) : (double as string).replace(/\\([\\"$`])/g, '$1').replace(/\$\{?(\w+)\}?/g, (_m, name: string) => expand(name)))
      word = (word ?? '') + part
    }
  }
  if (pattern.lastIndex !== 0 && pattern.lastIndex < line.length) throw new Error(`cannot read the shell line: ${line}`)
  pattern.lastIndex = 0
  if (word !== null) words.push(word)
  return words
}

function formField (value: string, encode: boolean): string {
  if (!encode) return value
  const at = value.indexOf('=')
  return at === -1 ? encodeURIComponent(value) : `${value.slice(0, at + 1)}${encodeURIComponent(value.slice(at + 1))}`
}

/** A curl command's request: method, URL under the demo's address, headers and body. Options it does not know stop the test. */
export function parseCurl (words: string[], where: string): Curl {
  let method: string | undefined
  let url: string | undefined
  const headers: Record<string, string> = {}
  const data: string[] = []
  for (let index = 1; index < words.length; index++) {
    const word = words[index] as string
    const next = (): string => words[++index] ?? ''
    if (word === '-s' || word === '--silent') continue
    if (word === '-X' || word === '--request') method = next()
    else if (word === '-H' || word === '--header') {
      const [name = '', ...value] = next().split(':')
      headers[name.trim().toLowerCase()] = value.join(':').trim()
    } else if (word === '-d' || word === '--data' || word === '--data-raw') data.push(next())
    else if (word === '--data-urlencode') data.push(formField(next(), true))
    else if (!word.startsWith('-') && url === undefined) url = word
    else throw new Error(`${where}: curl option ${word} is not understood by the docs test`)
  }
  if (url === undefined || !url.startsWith(BASE)) throw new Error(`${where}: a curl command must call the demo at ${BASE}`)
  if (data.length > 0) headers['content-type'] ??= 'application/x-www-form-urlencoded'
  return {
    where,
    method: method ?? (data.length > 0 ? 'POST' : 'GET'),
    url: url.slice(BASE.length) || '/',
    headers,
    ...(data.length > 0 ? { body: data.join('&') } : {})
  }
}

/** A block's commands with their first line: a line ending in a backslash goes on on the next. */
function commandLines (code: string): Array<{ index: number, line: string }> {
  const commands: Array<{ index: number, line: string }> = []
  let open: { index: number, line: string } | null = null
  code.split('\n').forEach((text, index) => {
    const command: { index: number, line: string } = open ?? { index, line: '' }
    const continued = text.endsWith('\\')
    command.line += continued ? `${text.slice(0, -1)} ` : text
    open = continued ? command : null
    if (!continued) commands.push(command)
  })
  return commands
}

/** Every curl command of a sh block, with the block's own `NAME=value` lines as variables. */
export function curlsOf (block: CodeBlock, env: Record<string, string>): Curl[] {
  const vars = { ...env }
  const curls: Curl[] = []
  for (const { index, line } of commandLines(block.code)) {
    const where = `${block.page}:${block.line + 1 + index}`
    const assignment = /^([A-Za-z_]\w*)=(\S+)$/.exec(line.trim())
    if (assignment !== null) vars[assignment[1] as string] = shellWords(assignment[2] as string, vars).join(' ')
    const words = shellWords(line, vars)
    if (words[0] === 'curl') curls.push(parseCurl(words, where))
  }
  return curls
}

t.test('every curl command of README.md and docs/*.md reaches a demo route with a body its schema takes', async (t) => {
  const app = await buildDemo({ print: () => {} })
  t.teardown(() => app.close())
  const signIn = async (email: string, password: string): Promise<Record<string, string>> =>
    (await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email, password } })).json().data
  const tokens = await signIn(DEMO_USER.email, DEMO_USER.password)
  const interim = await signIn(DEMO_2FA_USER.email, DEMO_2FA_USER.password)
  const env = { JWT: tokens.jwt as string, REFRESH: tokens.refresh_token as string, INTERIM: interim.jwt as string }

  const blocks = docPages().flatMap(page => codeBlocks(page, readPage(page))).filter(block => block.lang === 'sh')
  const curls = blocks.flatMap(block => curlsOf(block, env))
  t.ok(curls.length >= 20, `${curls.length} curl commands found`)
  for (const curl of curls) {
    const res = await app.inject({ method: curl.method as 'GET', url: curl.url, headers: curl.headers, ...(curl.body === undefined ? {} : { payload: curl.body }) })
    const errorCode = res.statusCode < 300 ? null : (res.json() as { data?: { errorCode?: number } }).data?.errorCode
    const label = `${curl.where}: ${curl.method} ${curl.url} → ${res.statusCode} ${errorCode ?? ''}`
    t.ok(res.statusCode !== 404 || (errorCode !== undefined && errorCode !== 207), `${label}: the route exists`)
    t.not(errorCode, 203, `${label}: the body passes the schema`)
    t.ok(res.statusCode < 500, `${label}: no server error`)
  }
})

t.test('the curl reader', async (t) => {
  const env = { JWT: 'a.b.c' }
  t.same(shellWords('curl -s "x$JWT" \'y$JWT\' -d "{\\"JWT\\":\\"$' + '{JWT}\\"}" a\\ b # comment', env), ['curl', '-s', 'xa.b.c', 'y$JWT', '-d', '{"JWT":"a.b.c"}', 'a b'])
  t.same(shellWords('a#b', env), ['a#b'], 'a # inside a word is no comment')
  t.throws(() => shellWords('curl $NOPE', env), /\$NOPE is not set/)
  t.same(parseCurl(['curl', '--data-urlencode', 'a=b c', '-d', 'd=e', `${BASE}/x`], 'p'), {
    where: 'p', method: 'POST', url: '/x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b%20c&d=e'
  })
  t.same(parseCurl(['curl', '-H', 'Authorization: Bearer x:y', BASE], 'p'), { where: 'p', method: 'GET', url: '/', headers: { authorization: 'Bearer x:y' } })
  t.throws(() => parseCurl(['curl', '-k', BASE], 'p'), /curl option -k is not understood/)
  t.throws(() => parseCurl(['curl', 'https://example.com/'], 'p'), /must call the demo/)
  const block: CodeBlock = { page: 'p.md', line: 1, lang: 'sh', code: `B=${BASE}/v1\n# note\ncurl -X PUT $B/r \\\n  -d a=1\ncurl $B/s\nnpm start` }
  t.same(curlsOf(block, {}).map(curl => curl.where), ['p.md:4', 'p.md:6'], 'each command by its first line')
  t.same(curlsOf(block, {})[0], { where: 'p.md:4', method: 'PUT', url: '/v1/r', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' })
})
