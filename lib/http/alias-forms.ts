import type { FastifyInstance } from 'fastify'

/** WordPress serves its REST API under `/wp-json`, and the query form names the route without it. */
export const WP_JSON = '/wp-json'

/** WordPress's front controller: `/index.php?rest_route=…` (plain permalinks) and `/index.php/wp-json/…` (PATH_INFO permalinks). */
export const INDEX_PHP = '/index.php'

/** The route an alias names in the query form: an alias under `/wp-json/` without `/wp-json`, as WordPress names it. */
export function aliasRoute (alias: string): string {
  return alias.startsWith(`${WP_JSON}/`) ? alias.slice(WP_JSON.length) : alias
}

/**
 * The Fastify paths of an alias's path forms, matching its route in any
 * letter case (anyCasePath): under `/wp-json` and `/index.php/wp-json`, in
 * their exact case as WordPress's rewrite rules match them, for an alias
 * under `/wp-json/`; the whole alias for another (its whole path is its route).
 */
export function anyCasePaths (alias: string): string[] {
  const route = aliasRoute(alias)
  return route === alias ? [anyCasePath(route)] : [WP_JSON, `${INDEX_PHP}${WP_JSON}`].map(base => base + anyCasePath(route))
}

/**
 * The route of an alias as a Fastify path matching it in any letter case, as
 * WordPress matches a REST route: each run of letters becomes a path
 * parameter whose pattern allows both cases of each letter, the other
 * characters stay as they are (`v1` is `:jwtLoginAlias0([vV])1`).
 */
export function anyCasePath (route: string): string {
  let count = 0
  const bothCases = (letters: string): string => [...letters].map(letter => `[${letter.toLowerCase()}${letter.toUpperCase()}]`).join('')
  return route.replace(/[A-Za-z]+/g, (letters) => `:jwtLoginAlias${count++}(${bothCases(letters)})`)
}

/**
 * A path as Fastify's router tells routes apart: without the patterns of its
 * parameters (two routes that differ only in them are one route to it).
 */
export function routerKey (path: string): string {
  return path.replace(/:jwtLoginAlias\d+\([^)]*\)/g, '()')
}

/** The path without its trailing slashes, as WordPress's `untrailingslashit` leaves a REST route. */
export function untrailed (path: string): string {
  return path.replace(/\/+$/, '')
}

/**
 * The plugin's routes: each as the segments of its path under the prefix
 * (`['', 'sessions', ':id']`), and the paths without a parameter or a
 * wildcard, which a request in the route's own case names exactly (what
 * nearly every client sends: answered without a scan of the routes).
 */
export class RouteShapes {
  readonly shapes: string[][] = []
  readonly exact = new Set<string>()
  readonly #seen = new Set<string>()

  add (path: string): void {
    if (this.#seen.has(path)) return
    this.#seen.add(path)
    this.shapes.push(path.split('/'))
    if (!/[:*]/.test(path)) this.exact.add(path)
  }
}

/** Collects into `shapes` the path of each route declared in the plugin's scope `instance` (or in a scope under it). */
export function collectRouteShapes (instance: FastifyInstance, shapes: RouteShapes): void {
  const prefix = instance.prefix
  instance.addHook('onRoute', (route) => { shapes.add(route.url.slice(prefix.length)) })
}

const STATIC = 0
const PARAMETER = 1
const WILDCARD = 2

/** How a route's shape matches the sent segments, letter case aside: the kind of each segment, or `null` when it does not. */
function rankOf (shape: readonly string[], sent: readonly string[]): number[] | null {
  const rank: number[] = []
  for (let index = 1; index < shape.length; index++) {
    const part = shape[index] as string
    const segment = sent[index]
    if (segment === undefined) return null
    if (part === '*') return [...rank, WILDCARD]
    if (part.startsWith(':')) {
      if (segment === '') return null
      rank.push(PARAMETER)
    } else if (part.toLowerCase() === segment.toLowerCase()) {
      rank.push(STATIC)
    } else {
      return null
    }
  }
  return shape.length === sent.length ? rank : null
}

/** Whether `rank` is the more specific match: the first segment that differs is static rather than a parameter, a parameter rather than the wildcard (the router's order). */
function moreSpecific (rank: readonly number[], than: readonly number[]): boolean {
  const at = rank.findIndex((kind, index) => kind !== than[index])
  return at !== -1 && (rank[at] as number) < (than[at] as number)
}

/**
 * The path of the plugin's route that `path` (under the prefix, without its
 * query) names in any letter case, as WordPress matches a REST route: the
 * route's own segments in their case, the parameters and what a wildcard
 * takes as sent (a passkey's or a session's id keeps its case). A path no
 * route matches is kept as sent, for the plugin's 404.
 */
export function routeCase (path: string, routes: RouteShapes): string {
  // a static route named in its own case is its own most specific match
  if (routes.exact.has(path)) return path
  const sent = path.split('/')
  let best: { shape: readonly string[], rank: number[] } | null = null
  for (const shape of routes.shapes) {
    const rank = rankOf(shape, sent)
    if (rank !== null && (best === null || moreSpecific(rank, best.rank))) best = { shape, rank }
  }
  if (best === null) return path
  const { shape } = best
  return sent.map((segment, index) => {
    const part = shape[index]
    return part === undefined || part === '*' || part.startsWith(':') ? segment : part
  }).join('/')
}

/**
 * What a path form of an alias passes on: the URL after the alias (`skip`
 * cuts as many path segments as the scope's prefix and the alias have,
 * whatever their case or encoding), its trailing slashes cut and in the
 * route's case, then its query as sent.
 */
export function aliasRest (url: string, skip: RegExp, shapes: RouteShapes): string {
  const rest = url.replace(skip, '')
  const queryAt = rest.search(/\?|$/)
  return routeCase(untrailed(rest.slice(0, queryAt)), shapes) + rest.slice(queryAt)
}

/** The pattern that skips the first `count` segments of a URL's path (runs of slashes count as one, as a router that ignores duplicate slashes reads them). */
export function skipSegments (count: number): RegExp {
  return new RegExp(`^(?:/+[^/?]+){${count}}`)
}
