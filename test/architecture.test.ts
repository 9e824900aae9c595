import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { findCycles, importsOf, readSources, resolveImport, type ModuleImport } from './helpers/imports.js'

/** A runtime Fastify import allowed below the HTTP layer, and why. */
interface FastifyException {
  file: string
  module: string
  why: string
}

/** One layer of the package: where its files are and what of Fastify they may load. */
interface Layer {
  /** What the messages call it. */
  name: string
  /** Path prefixes (a folder ends in '/'; an entry is its file). Each folder may import itself and lower layers only. */
  paths: string[]
  /** May import fastify, fastify-plugin and @fastify/* at runtime. */
  fastify?: true
  /** Runtime Fastify imports allowed to single files of a layer below HTTP. */
  fastifyExceptions?: FastifyException[]
}

/** The layers, low to high: the index is the layer's number. */
const LAYERS: Layer[] = [
  // The request, reply and settings schemas: they import nothing from lib/.
  { name: 'schemas', paths: ['schemas/'] },
  // Errors, clock, crypto helpers, optional-peer loading, the client key.
  {
    name: 'core',
    paths: ['lib/core/'],
    fastifyExceptions: [{
      file: 'lib/core/client-key.ts',
      module: '@fastify/rate-limit',
      why: 'normalizeIP, so the per-IP lockouts count clients exactly as the request limit does'
    }]
  },
  // OpenTelemetry spans and metrics behind the optional @opentelemetry/api, and the rules of their attributes.
  { name: 'telemetry', paths: ['lib/telemetry/'] },
  // The texts in every language: the catalogues, the negotiation of a request's language.
  { name: 'messages', paths: ['lib/i18n/'] },
  // The state-store and mailer ports and their implementations.
  { name: 'store and mail', paths: ['lib/store/', 'lib/mail/'] },
  // Settings, durations, provider presets.
  { name: 'config', paths: ['lib/config/'] },
  // The host's ports (users, two-factor, second factor) and the guard around them.
  { name: 'adapters', paths: ['lib/adapters/'] },
  // Events, limits, code hashing, the user cache.
  { name: 'services', paths: ['lib/services/'] },
  // Services of one feature: tokens, the two-factor methods, OpenID providers, passkey ceremonies, the in-memory testing ports, the WordPress adapter and hashes.
  { name: 'feature services', paths: ['lib/tokens/', 'lib/two-factor/methods/', 'lib/oauth/providers/', 'lib/webauthn/', 'lib/testing/', 'lib/wordpress/'] },
  // The one context of the flows and how it is built.
  { name: 'context', paths: ['lib/context/'] },
  // Sign-in completion and the token flows shared by every sign-in.
  { name: 'sessions', paths: ['lib/sessions/'] },
  // The feature flows.
  { name: 'account', paths: ['lib/account/'] },
  { name: 'feature flows', paths: ['lib/login/', 'lib/two-factor/', 'lib/reset-password/', 'lib/oauth/', 'lib/passkeys/', 'lib/users/', 'lib/email-sign-in/'] },
  // The host's administration: locks, impersonation, API keys.
  { name: 'admin', paths: ['lib/admin/'] },
  // The plugin's HTTP layer.
  { name: 'http', paths: ['lib/http/'], fastify: true },
  // The routes.
  { name: 'routes', paths: ['lib/routes/'], fastify: true },
  // The conformance suites of fastify-jwt-login/conformance: the ports' contracts as tests, for any runner.
  { name: 'conformance', paths: ['lib/conformance/'] },
  // The client (lib/client/) of fastify-jwt-login/client: it loads nothing of the server at runtime (checked below), only its types.
  { name: 'client', paths: ['lib/client/'] },
  // The package entries, one for each export of package.json.
  { name: 'entries', paths: ['lib/index.ts', 'lib/redis.ts', 'lib/postgres.ts', 'lib/nodemailer.ts', 'lib/testing.ts', 'lib/wordpress.ts', 'lib/client.ts', 'lib/conformance.ts'], fastify: true }
]

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Where a file sits: its layer's number and its folder (the entries share the top of lib/). */
interface Place {
  layer: number
  folder: string
}

/** The place of a file by the longest path of the table that covers it; undefined if none does. */
function placeOf (file: string): Place | undefined {
  let best: (Place & { length: number }) | undefined
  LAYERS.forEach(({ paths }, layer) => {
    for (const path of paths) {
      const covers = path.endsWith('/') ? file.startsWith(path) : file === path
      if (covers && path.length > (best?.length ?? 0)) best = { layer, folder: path.endsWith('/') ? path : `${posix.dirname(path)}/`, length: path.length }
    }
  })
  return best === undefined ? undefined : { layer: best.layer, folder: best.folder }
}

/** The layer as the messages name it. */
function layerName (layer: number): string {
  return `layer ${layer} (${(LAYERS[layer] as Layer).name})`
}

/** Why an import from one file to another breaks the layers, if it does. */
function layerProblem (from: string, to: string): string | undefined {
  const source = placeOf(from)
  const target = placeOf(to)
  if (source === undefined || target === undefined || source.folder === target.folder || target.layer < source.layer) return undefined
  if (target.layer > source.layer) return `${from} imports ${to}: up from ${layerName(source.layer)} to ${layerName(target.layer)}`
  return `${from} imports ${to}: across ${layerName(source.layer)}, from ${source.folder} to ${target.folder}`
}

/** The package a bare specifier names: `@fastify/cookie`, `fastify`. */
function packageOf (specifier: string): string {
  return specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
}

/** Why a package import breaks the Fastify rule, if it does: a runtime load outside the layers that may. */
function fastifyProblem (from: string, { specifier, typeOnly }: ModuleImport): string | undefined {
  const name = packageOf(specifier)
  if (typeOnly || !(name === 'fastify' || name === 'fastify-plugin' || name.startsWith('@fastify/'))) return undefined
  const place = placeOf(from)
  if (place === undefined) return undefined
  const layer = LAYERS[place.layer] as Layer
  const excepted = layer.fastifyExceptions?.some(exception => exception.file === from && exception.module === name)
  if (layer.fastify === true || excepted === true) return undefined
  return `${from} imports ${specifier} at runtime, which ${layerName(place.layer)} may not (use import type)`
}

/** The files a file imports, and the problems of its imports on their own (Fastify, unknown files, layers). */
function checkFile (files: Map<string, string>, file: string): { targets: Set<string>, problems: string[] } {
  const targets = new Set<string>()
  const problems: Array<string | undefined> = [placeOf(file) === undefined ? `${file}: not in a layer` : undefined]
  for (const found of importsOf(file, files.get(file) as string)) {
    const target = resolveImport(file, found.specifier)
    if (target === undefined) problems.push(fastifyProblem(file, found))
    else if (!files.has(target)) problems.push(`${file} imports ${found.specifier}, which is no file of lib/ or schemas/`)
    else targets.add(target)
  }
  for (const target of targets) problems.push(layerProblem(file, target))
  return { targets, problems: problems.filter(problem => problem !== undefined) }
}

/** Every way the files break the house rules, as messages naming the files; empty if none. */
function checkImports (files: Map<string, string>): string[] {
  const graph = new Map<string, Set<string>>()
  const problems = new Set<string>()
  for (const file of files.keys()) {
    const read = checkFile(files, file)
    graph.set(file, read.targets)
    for (const problem of read.problems) problems.add(problem)
  }
  for (const cycle of findCycles(graph)) problems.add(`cycle: ${cycle.join(' -> ')}`)
  return [...problems]
}

/** A synthetic tree from file texts given as lines. */
function tree (files: Record<string, string[]>): Map<string, string> {
  return new Map(Object.entries(files).map(([path, lines]) => [path, lines.join('\n')]))
}

t.test('the imports of lib/ and schemas/ go down the layers, without cycles', async (t) => {
  const files = readSources(ROOT, ['lib', 'schemas'])
  t.ok(files.has('lib/index.ts') && files.has('schemas/settings.ts'), 'the sources were read')
  t.same(checkImports(files), [])
})

/** The most lines a file of lib/ or schemas/ may have: past it, a file holds more than one concern. */
const MAX_LINES = 320

/** The files of lib/ and schemas/ longer than `MAX_LINES`, with their lengths. */
function overlong (files: ReadonlyMap<string, string>): string[] {
  return [...files].map(([path, text]) => [path, text.replace(/\n$/, '').split('\n').length] as const)
    .filter(([, lines]) => lines > MAX_LINES).map(([path, lines]) => `${path}: ${lines} lines`)
}

t.test(`no file of lib/ or schemas/ has more than ${MAX_LINES} lines: a longer one is split by concern`, async (t) => {
  t.same(overlong(readSources(ROOT, ['lib', 'schemas'])), [])
  t.same(overlong(new Map([['lib/x.ts', 'a\n'.repeat(MAX_LINES)], ['lib/y.ts', 'a\n'.repeat(MAX_LINES + 1)]])), [`lib/y.ts: ${MAX_LINES + 1} lines`], 'a file one line over is named')
})

t.test('an import up a layer fails, naming both files', async (t) => {
  t.same(checkImports(tree({
    'lib/core/clock.ts': ["import { addGateHooks } from '../http/gates.js'"],
    'lib/http/gates.ts': []
  })), ['lib/core/clock.ts imports lib/http/gates.ts: up from layer 1 (core) to layer 14 (http)'])
  t.same(checkImports(tree({
    'schemas/settings.ts': ["export { DEFAULT_RESET_TEMPLATES } from '../lib/mail/templates.js'"],
    'lib/mail/templates.ts': ['export const DEFAULT_RESET_TEMPLATES = {}'],
    'lib/two-factor/methods/totp.ts': ["type Flow = typeof import('../flow.js')"],
    'lib/two-factor/flow.ts': ["import { TotpProvider } from './methods/totp.js'"],
    'lib/store/memory.ts': ["const context = await import('../context/context.js')"],
    'lib/context/context.ts': ["import type { StateStore } from '../store/memory.js'"]
  })), [
    'schemas/settings.ts imports lib/mail/templates.ts: up from layer 0 (schemas) to layer 4 (store and mail)',
    'lib/two-factor/methods/totp.ts imports lib/two-factor/flow.ts: up from layer 8 (feature services) to layer 12 (feature flows)',
    'lib/store/memory.ts imports lib/context/context.ts: up from layer 4 (store and mail) to layer 9 (context)',
    'cycle: lib/context/context.ts -> lib/store/memory.ts -> lib/context/context.ts',
    'cycle: lib/two-factor/flow.ts -> lib/two-factor/methods/totp.ts -> lib/two-factor/flow.ts'
  ], 'export from, typeof import() and dynamic import() count')
})

t.test('an import across a layer fails, naming both folders', async (t) => {
  t.same(checkImports(tree({
    'lib/login/flow.ts': ["import { oauthSignIn } from '../oauth/flow.js'"],
    'lib/oauth/flow.ts': ["import { completeSignIn } from '../sessions/flow.js'"],
    'lib/sessions/flow.ts': [],
    'lib/store/guard.ts': ["import type { Mailer } from '../mail/types.js'"],
    'lib/mail/types.ts': []
  })), [
    'lib/login/flow.ts imports lib/oauth/flow.ts: across layer 12 (feature flows), from lib/login/ to lib/oauth/',
    'lib/store/guard.ts imports lib/mail/types.ts: across layer 4 (store and mail), from lib/store/ to lib/mail/'
  ])
})

t.test('a cycle fails, naming its files, type-only imports included', async (t) => {
  t.same(checkImports(tree({
    'lib/store/types.ts': ["import type { Deadline } from './deadline.js'"],
    'lib/store/deadline.ts': ["import { type StateStore } from './types.js'"],
    'lib/store/read.ts': ["import './read.js'"]
  })), [
    'cycle: lib/store/deadline.ts -> lib/store/types.ts -> lib/store/deadline.ts',
    'cycle: lib/store/read.ts -> lib/store/read.ts'
  ])
  t.same(checkImports(tree({
    'lib/http/a.ts': ["import './b.js'", "import './c.js'"],
    'lib/http/b.ts': ["import './c.js'"],
    'lib/http/c.ts': ["import './d.js'"],
    'lib/http/d.ts': ["import './a.js'", "import './b.js'"]
  })), ['cycle: lib/http/a.ts -> lib/http/c.ts -> lib/http/d.ts -> lib/http/a.ts'], 'one cycle for each tangle, the shortest')
})

t.test('a runtime Fastify import in a flow fails; import type does not', async (t) => {
  t.same(checkImports(tree({
    'lib/login/flow.ts': [
      "import type { FastifyInstance } from 'fastify'",
      "import { type FastifyRequest } from 'fastify'",
      "import fp from 'fastify-plugin'",
      "const cookie = await import('@fastify/cookie')",
      "import { SignJWT } from 'jose'"
    ]
  })), [
    'lib/login/flow.ts imports fastify at runtime, which layer 12 (feature flows) may not (use import type)',
    'lib/login/flow.ts imports fastify-plugin at runtime, which layer 12 (feature flows) may not (use import type)',
    'lib/login/flow.ts imports @fastify/cookie at runtime, which layer 12 (feature flows) may not (use import type)'
  ])
})

t.test('Fastify at runtime: the entries, http and routes, and the one exception of the client key', async (t) => {
  t.same(checkImports(tree({
    'lib/index.ts': ["import fp from 'fastify-plugin'", "export { RedisStore } from './redis.js'"],
    'lib/redis.ts': ["import { clientKey } from './core/client-key.js'"],
    'lib/http/scope.ts': ["import fastifyRateLimit from '@fastify/rate-limit'"],
    'lib/routes/auth.ts': ["import { fastify } from 'fastify'", "import { setUpScope } from '../http/scope.js'"],
    'lib/core/client-key.ts': ["import { normalizeIP } from '@fastify/rate-limit'"]
  })), [])
  t.same(checkImports(tree({
    'lib/core/client-key.ts': ["import { fastify } from 'fastify'"],
    'lib/core/clock.ts': ["import { normalizeIP } from '@fastify/rate-limit'"]
  })), [
    'lib/core/client-key.ts imports fastify at runtime, which layer 1 (core) may not (use import type)',
    'lib/core/clock.ts imports @fastify/rate-limit at runtime, which layer 1 (core) may not (use import type)'
  ], 'the exception is one module for one file')
})

t.test('a file outside the layers, and an import of no file, fail', async (t) => {
  t.same(checkImports(tree({
    'lib/stray.ts': ["import { fastify } from 'fastify'"],
    'lib/misc/thing.ts': ["import { JwtLoginError } from '../core/errors.js'"],
    'lib/core/errors.ts': ["import { version } from '../../package.json'", "export * from './missing.js'"]
  })), [
    'lib/stray.ts: not in a layer',
    'lib/misc/thing.ts: not in a layer',
    'lib/core/errors.ts imports ../../package.json, which is no file of lib/ or schemas/',
    'lib/core/errors.ts imports ./missing.js, which is no file of lib/ or schemas/'
  ])
})

t.test('the client loads at runtime only its own files and its optional peer: what a page bundles', async (t) => {
  const files = readSources(ROOT, ['lib'])
  const client = [...files.keys()].filter((file) => file === 'lib/client.ts' || file.startsWith('lib/client/'))
  t.ok(client.length >= 6, 'the client\'s files are read')
  const loads = client.flatMap((file) => importsOf(file, files.get(file) as string)
    .filter(({ typeOnly }) => !typeOnly)
    .map(({ specifier }) => ({ file, specifier, target: resolveImport(file, specifier) })))
  const outside = loads.filter(({ specifier, target }) => target === undefined ? specifier !== '@simplewebauthn/browser' : !target.startsWith('lib/client/'))
  t.same(outside, [], 'no runtime import leaves lib/client/')
})
