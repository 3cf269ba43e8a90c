/**
 * The methods each registered path answers, so that a request for a known path with another
 * method is answered `405` with `Allow` (RFC 9110 §15.5.6) instead of `404`. A path that a
 * route without parameters names (`/v1/sessions/continue`) answers only that route's methods,
 * as the router prefers it: the `{id}` routes do not speak for it.
 */

/** A route URL (`/v1/sessions/:id`, `/docs/static/*`) as a regex over request paths. */
function patternOf (url: string): RegExp {
  const source = url.split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/).map((part) => {
    if (part === '*') return '.*'
    if (part.startsWith(':')) return '[^/]*'
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }).join('')
  return new RegExp(`^${source}$`)
}

/** Parameters and wildcards of a route URL: the fewer, the more specific the route. */
const variablePartsOf = (url: string): number => url.match(/:[A-Za-z0-9_]+|\*/g)?.length ?? 0

/** The path of a request URL, without its query. */
export const pathOf = (requestUrl: string): string => {
  const query = requestUrl.indexOf('?')
  return query === -1 ? requestUrl : requestUrl.slice(0, query)
}

interface Route { pattern: RegExp, variables: number, methods: Set<string> }

export class RouteMethods {
  readonly #routes = new Map<string, Route>()

  /** Records that `url` (a route URL, as registered) answers `method`. */
  add (url: string, method: string | readonly string[]): void {
    let route = this.#routes.get(url)
    if (route === undefined) this.#routes.set(url, route = { pattern: patternOf(url), variables: variablePartsOf(url), methods: new Set() })
    for (const m of typeof method === 'string' ? [method] : method) route.methods.add(m.toUpperCase())
  }

  /**
   * The methods of the most specific routes for this request URL (query ignored), sorted; `[]`
   * for none.
   */
  allowed (requestUrl: string): string[] {
    const path = pathOf(requestUrl)
    let fewest = Infinity
    const methods = new Set<string>()
    for (const { pattern, variables, methods: own } of this.#routes.values()) {
      if (variables > fewest || !pattern.test(path)) continue
      if (variables < fewest) methods.clear()
      fewest = variables
      for (const m of own) methods.add(m)
    }
    return [...methods].sort()
  }

  /**
   * True when a route without parameters names this path but a request for it was routed to
   * `routeUrl`, a route with parameters (another method): a method the path does not answer.
   */
  fellThrough (path: string, routeUrl: string | undefined): boolean {
    const exact = this.#routes.get(path)
    if (exact === undefined || exact.variables !== 0 || routeUrl === undefined || routeUrl === path) return false
    // Only a recorded route with parameters; a catch-all (the CORS preflight) is not recorded.
    return (this.#routes.get(routeUrl)?.variables ?? 0) > 0
  }
}
