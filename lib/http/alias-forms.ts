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
 * The paths before an alias's route that answer, in their exact case as
 * WordPress's rewrite rules match them: `/wp-json` and `/index.php/wp-json`
 * for an alias under `/wp-json/`, nothing for another alias (its whole path
 * is its route).
 */
export function aliasBases (alias: string): string[] {
  return alias === aliasRoute(alias) ? [''] : [WP_JSON, `${INDEX_PHP}${WP_JSON}`]
}

/** A letter as a pattern of both its cases; `.` and `-` escaped, the other characters of an alias as they are. */
const anyCaseChar = (char: string): string => {
  if (char === '.' || char === '-') return `\\${char}`
  const upper = char.toUpperCase()
  return upper === char.toLowerCase() ? char : `[${char.toLowerCase()}${upper}]`
}

/**
 * The route of an alias as a Fastify path matching it in any letter case, as
 * WordPress matches a REST route: each segment with a letter becomes a path
 * parameter whose pattern allows both cases of each letter (`[vV]1`).
 */
export function anyCasePath (route: string): string {
  return route.split('/').map((segment, index) => /[A-Za-z]/.test(segment)
    ? `:jwtLoginAlias${index}(${[...segment].map(anyCaseChar).join('')})`
    : segment).join('/')
}

/** The path without its trailing slashes, as WordPress's `untrailingslashit` leaves a REST route. */
export function untrailed (path: string): string {
  return path.replace(/\/+$/, '')
}

/** The plugin's routes as the segments of their path under the prefix (`['', 'sessions', ':id']`). */
export type RouteShapes = string[][]

/** Collects into `shapes` the path of each route declared in the plugin's scope `instance` (or in a scope under it). */
export function collectRouteShapes (instance: FastifyInstance, shapes: RouteShapes): void {
  const seen = new Set<string>()
  const prefix = instance.prefix
  instance.addHook('onRoute', (route) => {
    const path = route.url.slice(prefix.length)
    if (seen.has(path)) return
    seen.add(path)
    shapes.push(path.split('/'))
  })
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
export function routeCase (path: string, shapes: RouteShapes): string {
  const sent = path.split('/')
  let best: { shape: readonly string[], rank: number[] } | null = null
  for (const shape of shapes) {
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
 * What a path form of an alias passes on: the URL after the alias (its
 * first `segments` path segments, as many as the alias and the scope's prefix
 * have, whatever their case or encoding), the trailing slashes cut and the
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
