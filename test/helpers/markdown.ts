/**
 * Reading the documentation for the docs tests: its pages, their fenced code
 * blocks, their links and the anchors their headings make.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every page under docs/, as paths relative to the repository. */
export function docPages (): string[] {
  const pages = readdirSync(`${ROOT}docs`).filter(name => name.endsWith('.md')).sort().map(name => `docs/${name}`)
  return ['README.md', ...pages]
}

export function readPage (page: string): string {
  return readFileSync(`${ROOT}${page}`, 'utf8')
}

export interface CodeBlock {
  page: string
  /** The line of the opening fence, from 1. */
  line: number
  lang: string
  code: string
}

/** The fenced code blocks of a page (``` fences; the language is the first word after them). */
export function codeBlocks (page: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  const lines = markdown.split('\n')
  let open: { line: number, lang: string, body: string[] } | null = null
  lines.forEach((text, index) => {
    const fence = /^```(\S*)/.exec(text)
    if (open === null) {
      if (fence !== null) open = { line: index + 1, lang: fence[1] as string, body: [] }
    } else if (fence !== null) {
      blocks.push({ page, line: open.line, lang: open.lang, code: open.body.join('\n') })
      open = null
    } else {
      open.body.push(text)
    }
  })
  if (open !== null) throw new Error(`${page}: the code block at line ${(open as { line: number }).line} is not closed`)
  return blocks
}

/** The page without its fenced blocks. */
export function withoutFences (markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** The page's text outside fenced blocks and inline code, where links live. */
export function prose (markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '')
}

/** Every link target of `[text](target)` in the page's prose. */
export function links (markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map(match => match[1] as string)
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function anchors (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const match of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(match[1] as string)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}
