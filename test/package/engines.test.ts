// No engine warning on a supported Node from our own dependency tree, except those the README names and explains.
import { readFile } from 'node:fs/promises'
import semver from 'semver'
import t from 'tap'

const root = new URL('../../', import.meta.url)
const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(await readFile(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { version: string, dev?: boolean, engines?: { node?: string } }> }
const readme = await readFile(new URL('README.md', root), 'utf8')

/** Packages whose engines leave out a supported Node, each named with its version in the README's install notes. */
const EXPLAINED = ['cookie']

t.test('every production dependency installs without EBADENGINE on the oldest supported Node', async (t) => {
  const oldest = semver.minVersion(pkg.engines.node)?.version as string
  t.ok(semver.satisfies(process.versions.node, pkg.engines.node), `this Node (${process.versions.node}) is supported`)
  const refusing = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.dev !== true && entry.engines?.node !== undefined && !semver.satisfies(oldest, entry.engines.node))
    .map(([path, entry]) => ({ name: path.replace(/^.*node_modules\//, ''), version: entry.version, node: entry.engines?.node }))
  t.same(refusing.map(({ name }) => name).filter(name => !EXPLAINED.includes(name)), [], `only the explained packages refuse Node ${oldest}`)
  for (const { name, version, node } of refusing) {
    t.ok(readme.includes(`EBADENGINE … ${name}@${version}`), `the README explains ${name}@${version} (engines ${String(node)})`)
  }
})
