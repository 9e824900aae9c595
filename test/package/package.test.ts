/**
 * The package as a host gets it: `npm pack`, its contents, and the tarball
 * installed into two new hosts (ESM on the lowest Fastify 5 release we
 * support, CommonJS through require(esm) on the current one) that each
 * type-check against the shipped declarations and log in; and into a new
 * ESM project that uses `fastify-jwt-login/client` in Node (type-checked,
 * signing in over HTTP) and bundles it for a page with esbuild.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import t from 'tap'
import { packRepository } from '../helpers/pack.js'

const execFileAsync = promisify(execFile)
/** Children get a plain environment: not tap's coverage collector or loaders. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(NODE_V8_COVERAGE|NODE_OPTIONS|TAP|_TAP)/.test(name)))
const run = async (file: string, args: string[], options: { cwd?: string } = {}): Promise<{ stdout: string }> =>
  await execFileAsync(file, args, { ...options, env, maxBuffer: 16 * 1024 * 1024 })
const root = fileURLToPath(new URL('../..', import.meta.url))
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
/** The lowest Fastify release jwt-login supports (the peer range starts there). */
const LOWEST_FASTIFY = '5.0.0'

/** The first optional peer the WordPress entry loads (its hashes, then its adapter's mysql2). */
const WORDPRESS_PEER = 'fastify-jwt-login/wordpress needs the package "bcrypt", an optional peer dependency of fastify-jwt-login: npm install bcrypt'

t.setTimeout(600_000)

const work = await mkdtemp(join(tmpdir(), 'jwt-login-pack-'))
t.teardown(async () => { await rm(work, { recursive: true, force: true }) })
// npm pack runs `prepare`, so the tarball holds a fresh build
const packed = await packRepository(root, work, env)
const tarball = join(work, packed.filename)
const shipped = new Set(packed.files.map((file) => file.path))

t.test('the package is published as fastify-jwt-login: the tarball is named for it', async (t) => {
  const { name, version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name: string, version: string }
  t.equal(name, 'fastify-jwt-login')
  t.equal(packed.filename, `fastify-jwt-login-${version}.tgz`)
})

t.test('the tarball holds the built entries and their documents, and no tests or tooling', async (t) => {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> }
  for (const [entry, target] of Object.entries(pkg.exports)) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
      t.ok(shipped.has(normalize(file)), `${entry} → ${file} is shipped`)
    }
  }
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) t.ok(shipped.has(file), `${file} is shipped`)
  const unwanted = [...shipped].filter((file) => /^(test|bench|\.ci|node_modules)\/|\.test\.|^tsconfig|^eslint|\.map$/.test(file))
  t.same(unwanted, [], 'no tests, bench, CI, source maps or tool configuration')
})

t.test('every relative link of a shipped document points into the tarball', async (t) => {
  for (const doc of [...shipped].filter((file) => file.endsWith('.md'))) {
    const text = await readFile(join(root, doc), 'utf8')
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target as string)) continue
      const path = normalize(join(dirname(doc), target as string)).replace(/\/$/, '')
      t.ok(shipped.has(path) || [...shipped].some((file) => file.startsWith(`${path}/`)), `${doc} → ${target as string}`)
    }
  }
})

/** Copies a host fixture, installs the tarball and its peers, type-checks and runs it; answers its one JSON line. */
async function host (name: string, peers: string[]): Promise<Record<string, unknown>> {
  const dir = join(work, name)
  await cp(join(root, 'test', 'package-hosts', name), dir, { recursive: true })
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...peers, '@types/node@20'], { cwd: dir })
  await run(process.execPath, [tsc, '-p', dir])
  const result = await run(process.execPath, [join(dir, 'out', 'main.js')], { cwd: dir })
  return JSON.parse(result.stdout) as Record<string, unknown>
}

// both hosts install at once; each test awaits its own
const { version: currentFastify } = JSON.parse(await readFile(join(root, 'node_modules', 'fastify', 'package.json'), 'utf8')) as { version: string }
const esmHost = host('esm', [`fastify@${LOWEST_FASTIFY}`])
const cjsHost = host('cjs', [`fastify@${currentFastify}`])
const clientHost = host('client', [`fastify@${currentFastify}`])
esmHost.catch(() => {})
cjsHost.catch(() => {})
clientHost.catch(() => {})

t.test('a new ESM host on the lowest supported Fastify type-checks and logs in; missing optional peers are named', async (t) => {
  const answer = await esmHost
  t.same(answer, {
    fastify: LOWEST_FASTIFY,
    login: 200,
    me: { login: 'alice' },
    redis: 'fastify-jwt-login/redis needs the package "ioredis", an optional peer dependency of fastify-jwt-login: npm install ioredis',
    postgres: 'fastify-jwt-login/postgres needs the package "pg", an optional peer dependency of fastify-jwt-login: npm install pg',
    nodemailer: 'fastify-jwt-login/nodemailer needs the package "nodemailer", an optional peer dependency of fastify-jwt-login: npm install nodemailer',
    wordpress: WORDPRESS_PEER
  })
})

t.test('a new CommonJS TypeScript host loads the package with require and logs in', async (t) => {
  const answer = await cjsHost
  t.same(answer, {
    fastify: currentFastify,
    login: 200,
    me: { login: 'bob' },
    loadedBy: 'function',
    entries: {
      redis: 'fastify-jwt-login/redis needs the package "ioredis", an optional peer dependency of fastify-jwt-login: npm install ioredis',
      postgres: 'fastify-jwt-login/postgres needs the package "pg", an optional peer dependency of fastify-jwt-login: npm install pg',
      nodemailer: 'fastify-jwt-login/nodemailer needs the package "nodemailer", an optional peer dependency of fastify-jwt-login: npm install nodemailer',
      wordpress: WORDPRESS_PEER
    }
  })
})

t.test('fastify-jwt-login/client in a new ESM project: Node type-checks, is refused with a JwtLoginClientError, signs in over HTTP, fetches, refreshes, signs out', async (t) => {
  t.same(await clientHost, {
    refused: { status: 401, errorCode: 48, code: 'ERR_JWT_LOGIN_WRONG_CREDENTIALS' },
    signedIn: true,
    me: { status: 200, body: { login: 'carol' } },
    refreshed: 'string',
    events: ['signed-in', 'refreshed', 'signed-out'],
    signedOut: true
  })
})

t.test('fastify-jwt-login/client in a new ESM project bundles for a page (esbuild, browser, ESM): the client alone, without the optional peer', async (t) => {
  await clientHost
  const dir = join(work, 'client')
  t.notOk(existsSync(join(dir, 'node_modules', '@simplewebauthn', 'browser')), 'the optional peer @simplewebauthn/browser is not installed')
  t.ok(existsSync(join(dir, 'node_modules', 'fastify')) && existsSync(join(dir, 'node_modules', 'argon2')), 'the server\'s packages are, beside it')
  const { metafile, outputFiles } = await build({
    absWorkingDir: dir, entryPoints: ['page.js'], bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, metafile: true, logLevel: 'silent'
  })
  const inputs = Object.keys(metafile.inputs)
  t.ok(inputs.includes('node_modules/fastify-jwt-login/dist/lib/client.js'), 'the client entry, as the exports map points to it')
  t.same(inputs.filter((file) => file !== 'page.js' && !file.startsWith('node_modules/fastify-jwt-login/dist/lib/client')), [], 'nothing but the page and the client\'s files: no fastify, no argon2')
  t.match(outputFiles[0]?.text, 'ERR_JWT_LOGIN_', 'the bundle holds the client (the error names)')
})
