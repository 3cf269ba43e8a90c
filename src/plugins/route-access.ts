/**
 * What each route requires, decided in one place as routes are registered: its scope (a route's
 * `config.scope`, else `read` for GET/HEAD and `write` for every other method; CORS preflights,
 * the `/docs` pages and the dashboard's `/ui` files are public), whether it is a live stream
 * (which takes `?access_token=` and counts against MAX_SSE_PER_TOKEN), and whether it is shed
 * under load (every route that is not public, plus those that opt in with `config.shedLoad`).
 * The same facts document the route: 401, 403 (when more than `read` is needed), 429 and 503
 * join its responses, and its `security` says how it takes credentials. Registered before
 * every route.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Scope } from '../auth/tokens.js'
import { problemResponses } from '../errors.js'
import { requiredHeader } from '../schemas/responses.js'

/** A token scope, or `public` for a route anyone may call. */
export type RouteScope = Scope | 'public'

/** The access facts of one method of one route. */
export interface RouteAccess {
  method: string
  url: string
  scope: RouteScope
  stream: boolean
  shedLoad: boolean
}

const RANK: Record<RouteScope, number> = { public: 0, read: 1, write: 2, admin: 3 }

/** Whether `url` is `prefix` or below it: pages whose static files are served by a plugin. */
const isPagePath = (url: string, prefix: string): boolean => url === prefix || url.startsWith(`${prefix}/`)

/** The scope `method` on `url` needs when the route does not say. */
export function defaultScope (method: string, url: string): RouteScope {
  if (method === 'OPTIONS' || isPagePath(url, '/docs') || isPagePath(url, '/ui')) return 'public'
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write'
}

/** OpenAPI security of a live stream: a bearer header, `?access_token=`, or nothing in open mode. */
export const STREAM_SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { accessToken: [] }, {}]

const RETRY_AFTER = { 'Retry-After': requiredHeader(Type.String({ description: 'Seconds to wait before retrying' })) }
const CHALLENGE = {
  'WWW-Authenticate': requiredHeader(Type.String({ description: '`Bearer realm="session-store"`' })),
}
const withHeaders = <T extends object>(response: T, headers: object) => ({ ...response, headers })

/** The responses access control and load shedding add to a route. */
function accessResponses (access: RouteAccess): Record<number, unknown> {
  const out: Record<number, unknown> = { 401: withHeaders(problemResponses(401)[401], CHALLENGE) }
  // 403 also answers a foreign Origin's write in open mode (src/plugins/loopback-guard.ts).
  if (RANK[access.scope] > RANK.read) out[403] = problemResponses(403)[403]
  out[429] = withHeaders(problemResponses(429)[429], RETRY_AFTER)
  if (access.shedLoad) out[503] = withHeaders(problemResponses(503)[503], RETRY_AFTER)
  return out
}

/** Adds what `access` implies to the route's documented schema (a copy: schema objects are shared). */
function document (route: RouteOptions, access: RouteAccess): void {
  const schema = route.schema as (Record<string, unknown> & { hide?: boolean, response?: Record<number, unknown> }) | undefined
  if (schema === undefined || schema.hide === true) return
  // Every route answers 421 to a foreign Host in open mode (src/plugins/loopback-guard.ts).
  const misdirected = problemResponses(421)
  if (access.scope === 'public') {
    // PUBLIC_RATE_LIMIT_MAX answers 429 (src/plugins/access.ts).
    const limited = { 429: withHeaders(problemResponses(429)[429], RETRY_AFTER) }
    route.schema = { ...schema, security: [], response: { ...misdirected, ...limited, ...schema.response } }
    return
  }
  const response = { ...accessResponses(access), ...misdirected, ...schema.response }
  route.schema = { ...schema, response, ...(access.stream ? { security: STREAM_SECURITY } : {}) }
}

/** The access facts of a route as registered (the highest scope of its methods). */
export function accessOf (route: RouteOptions): RouteAccess {
  const methods = typeof route.method === 'string' ? [route.method] : [...route.method]
  const config = route.config ?? {}
  const scope = config.scope ?? methods.map((m) => defaultScope(m.toUpperCase(), route.url))
    .reduce((a, b) => RANK[b] > RANK[a] ? b : a, 'public')
  const stream = config.stream === true
  const shedLoad = config.shedLoad ?? scope !== 'public'
  return { method: methods.join(','), url: route.url, scope, stream, shedLoad }
}

async function routeAccess (app: FastifyInstance): Promise<void> {
  const routes: RouteAccess[] = []
  app.decorate('routeAccess', routes)
  app.addHook('onRoute', (route: RouteOptions) => {
    const access = accessOf(route)
    route.config = { ...route.config, scope: access.scope, stream: access.stream, shedLoad: access.shedLoad }
    document(route, access)
    for (const method of access.method.split(',')) routes.push({ ...access, method: method.toUpperCase() })
  })
}

export default fp(routeAccess, { name: 'route-access', fastify: '5.x' })
