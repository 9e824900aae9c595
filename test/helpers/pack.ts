// `npm pack` of the repository, one at a time: its `prepare` deletes and rebuilds dist/, so two packs at once (tap runs test files in parallel) would ship each other's half-built tree.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readFile, rmdir, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const execFileAsync = promisify(execFile)

/** What `npm pack --json` says of the tarball. */
export interface Packed { filename: string, files: Array<{ path: string }> }

/** A lock older than this was left by a test run that died: a pack takes well under it. */
const STALE_MS = 5 * 60_000

/** Takes the lock directory (`mkdir` is atomic), waiting while another pack holds it. */
async function lock (path: string): Promise<void> {
  for (;;) {
    try {
      await mkdir(path)
      return
    } catch {
      const held = await stat(path).then(({ mtimeMs }) => mtimeMs, () => Date.now())
      if (Date.now() - held > STALE_MS) await rmdir(path).catch(() => {})
      await sleep(250)
    }
  }
}

/** Packs `root` into `destination` (its `prepare` builds dist/ afresh), never while another test of this checkout packs it. */
export async function packRepository (root: string, destination: string, env: NodeJS.ProcessEnv): Promise<Packed> {
  const path = join(tmpdir(), `fastify-jwt-login-pack-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.lock`)
  await lock(path)
  try {
    const { stdout } = await execFileAsync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: root, env, maxBuffer: 16 * 1024 * 1024 })
    return (JSON.parse(stdout) as Packed[])[0] as Packed
  } finally {
    await rmdir(path)
  }
}

/** The repository's root. */
export const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url))

/** A plain environment for a child project: not tap's coverage collector or loaders. */
export const CHILD_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(NODE_V8_COVERAGE|NODE_OPTIONS|TAP|_TAP)/.test(name)))

/** The repository's tsx loader, for a child project's TypeScript (one install less). */
export const TSX_LOADER = pathToFileURL(join(REPOSITORY, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href

/** The version of a package the repository has installed, for the child project to install the same. */
export async function installedVersion (name: string): Promise<string> {
  return (JSON.parse(await readFile(join(REPOSITORY, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
}
