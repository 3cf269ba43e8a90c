/**
 * The methods each registered path answers, so that a request for a known path with another
 * method is answered `405` with `Allow` (RFC 9110 §15.5.6) instead of `404`.
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

export class RouteMethods {
  readonly #routes = new Map<string, { pattern: RegExp, methods: Set<string> }>()

  /** Records that `url` (a route URL, as registered) answers `method`. */
  add (url: string, method: string | readonly string[]): void {
    let route = this.#routes.get(url)
    if (route === undefined) this.#routes.set(url, route = { pattern: patternOf(url), methods: new Set() })
    for (const m of typeof method === 'string' ? [method] : method) route.methods.add(m.toUpperCase())
  }

  /** The methods some route answers for this request URL (query ignored), sorted; `[]` for none. */
  allowed (requestUrl: string): string[] {
    const path = requestUrl.split('?')[0] ?? ''
    const methods = new Set<string>()
    for (const { pattern, methods: own } of this.#routes.values()) {
      if (pattern.test(path)) for (const m of own) methods.add(m)
    }
    return [...methods].sort()
  }
}
