import { createRequire } from 'node:module'

const load = createRequire(import.meta.url)

/**
 * Loads an optional peer dependency (a CommonJS package) synchronously, so
 * the entry that needs it stays loadable through `require(esm)`. When the
 * package cannot be loaded, the error names it and says how to install it.
 */
export function requirePeer<T> (name: string, entry: string): T {
  try {
    return load(name) as T
  } catch (error) {
    throw new Error(`${entry} needs the package "${name}", an optional peer dependency of fastify-jwt-login: npm install ${name}`, { cause: error })
  }
}
