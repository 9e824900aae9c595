// The bundle budget of issue 38: `createClient` bundled for a page (esbuild: minified, ESM, browser; the passkey helpers' peer external)
// is at most 6 kB gzipped, and carries none of the server's code.
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import t from 'tap'
import { errorDefinitions } from '../../lib/index.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BUDGET = 6144

/** The page's bundle of `contents` (an app's module at the project's root). */
async function bundle (contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, sourcefile: 'app.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['@simplewebauthn/browser'],
    write: false,
    logLevel: 'silent'
  })
  return result.outputFiles[0]?.text ?? ''
}

t.test('createClient, minified and gzipped, fits in 6 kB', async (t) => {
  const code = await bundle("export { createClient } from './lib/client.ts'")
  const size = gzipSync(code, { level: 9 }).length
  t.ok(size <= BUDGET, `the client's entry is ${size} bytes gzipped (${code.length} minified); the budget is ${BUDGET}`)
  t.ok(size > 1000, `${size} bytes: the bundle holds the client`)
  t.match(code, /jwt-login\/v1/, 'the client is in it')
  t.notMatch(code, /\bimport\s*\(?\s*["']@simplewebauthn\/browser/, 'without the passkey helpers, their peer is not loaded')
})

t.test('the bundle holds no server code', async (t) => {
  const code = await bundle("export * from './lib/client.ts'")
  t.notMatch(code, /["']@?fastify[/"']/, 'no import of fastify or @fastify/*')
  t.notMatch(code, /argon2/i)
  t.notMatch(code, /typebox/i, 'types only: no schema reaches it')
  t.notMatch(code, /node:/, 'no Node module')
  const messages = Object.values(errorDefinitions).map(({ message }) => message)
  t.same(messages.filter(message => code.includes(message)), [], 'none of the server\'s error messages')
  t.match(code, /["']@simplewebauthn\/browser["']/, 'the passkey helpers load their peer, left to the app\'s bundler')
})
