import { existsSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import t from 'tap'
import { anchors, codeBlocks, docPages, links, readPage, ROOT, slug } from '../helpers/markdown.js'

/** Why a relative link of `page` does not resolve, or null when it does. */
function brokenLink (page: string, target: string): string | null {
  const [path = '', anchor] = target.split('#')
  const file = path === '' ? page : relative(ROOT, join(dirname(join(ROOT, page)), decodeURIComponent(path)))
  if (!existsSync(join(ROOT, file))) return `${file} does not exist`
  if (anchor === undefined) return null
  if (!file.endsWith('.md') || statSync(join(ROOT, file)).isDirectory()) return `#${anchor} points into ${file}, which is not a page`
  return anchors(readPage(file)).has(anchor) ? null : `${file} has no heading with the anchor #${anchor}`
}

t.test('every relative link and #anchor in README.md and docs/*.md resolves', async (t) => {
  const pages = docPages()
  t.ok(pages.length > 10, 'the README and the docs pages are found')
  let checked = 0
  for (const page of pages) {
    for (const target of links(readPage(page))) {
      if (/^[a-z]+:/i.test(target)) continue // https:, mailto: — not ours to check offline
      checked++
      const problem = brokenLink(page, target)
      t.equal(problem, null, `${page}: (${target})`)
    }
  }
  t.ok(checked > 50, `${checked} relative links checked`)
})

t.test('every docs page is reachable from the README', async (t) => {
  const readme = links(readPage('README.md')).map(target => target.split('#')[0])
  for (const page of docPages().slice(1)) t.ok(readme.includes(page), `README links ${page}`)
})

t.test('the link checker finds what is broken', async (t) => {
  t.equal(brokenLink('README.md', 'docs/nope.md'), 'docs/nope.md does not exist')
  t.equal(brokenLink('docs/api.md', '../README.md#nope'), 'README.md has no heading with the anchor #nope')
  t.equal(brokenLink('docs/api.md', '#events'), null, 'an anchor of the page itself')
  t.equal(brokenLink('docs/api.md', '../examples/demo.ts'), null, 'a file')
  t.match(brokenLink('docs/api.md', '../examples#x'), /not a page/)
  t.match(brokenLink('docs/api.md', '../examples/demo.ts#x'), /not a page/)
})

t.test('the markdown helpers: anchors, links, code blocks', async (t) => {
  const page = '# A `b` (c)\n## Two words\n## Two words\n```sh\n# not a heading [x](nope.md)\n```\nSee [y](y.md#z) and `[z](inline.md)`.'
  t.same([...anchors(page)], ['a-b-c', 'two-words', 'two-words-1'])
  t.same(links(page), ['y.md#z'])
  t.same(codeBlocks('p.md', page), [{ page: 'p.md', line: 4, lang: 'sh', code: '# not a heading [x](nope.md)' }])
  t.throws(() => codeBlocks('p.md', 'text\n```ts\nopen'), /p\.md: the code block at line 2 is not closed/)
  t.equal(slug('Architecture: the request path'), 'architecture-the-request-path')
})
