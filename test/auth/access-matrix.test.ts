/**
 * Every route of the app × every kind of caller: no token, a bad token, an expired one, and
 * tokens with `read`, `write` and `admin`. The routes come from the app itself (what its
 * onRoute hook recorded), so a route added later fails here until it has a request below; each
 * cell asserts its status: 401 for missing or invalid credentials on every protected route, 403
 * when the scope is missing, and otherwise the route's own answer (a success, or a 404 that can
 * only come after the access check passed).
 */
import { createHash } from 'node:crypto'
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { RouteAccess } from '../../src/plugins/route-access.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { DOCUMENT } from '../contract/openapi-validator.js'

const BLOB = Buffer.from('matrix blob')
const HEX = createHash('sha256').update(BLOB).digest('hex')
const SESSION = 'matrix-session'
const ORIGIN = 'https://app.example'

interface Cell {
  /** The path, with its parameters filled in. */
  url: string
  body?: string | Buffer
  type?: string
  headers?: Record<string, string>
  /** What an authorized caller gets; a list when either answer is right. */
  expect: number | number[]
}

const json = (value: unknown): Pick<Cell, 'body' | 'type'> => ({ body: JSON.stringify(value), type: 'application/json' })
const importBody = `${JSON.stringify({ type: 'session', version: 3, id: 'matrix-import', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/m' })}\n`

let entryId = ''

/** The request of each route (`METHOD url` as registered). HEAD twins reuse their GET's. */
function cells (): Record<string, Cell> {
  const s = `/v1/sessions/${SESSION}`
  return {
    'OPTIONS *': { url: '/v1/sessions', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' }, expect: 204 },
    'GET /docs': { url: '/docs', expect: 200 },
    'HEAD /docs/': { url: '/docs/', expect: [200, 302] },
    'GET /docs/static/index.html': { url: '/docs/static/index.html', expect: 302 },
    'GET /docs/static/swagger-initializer.js': { url: '/docs/static/swagger-initializer.js', expect: 200 },
    'GET /docs/json': { url: '/docs/json', expect: 200 },
    'GET /docs/yaml': { url: '/docs/yaml', expect: 200 },
    'GET /docs/static/*': { url: '/docs/static/swagger-ui.css', expect: 200 },
    'GET /openapi.json': { url: '/openapi.json', expect: 200 },
    'GET /': { url: '/', expect: 302 },
    'GET /ui': { url: '/ui', expect: 301 },
    'GET /ui/*': { url: '/ui/app.js', expect: 200 },
    'GET /ui/sessions/:id': { url: `/ui/sessions/${SESSION}`, expect: 200 },
    'GET /healthz': { url: '/healthz', expect: 200 },
    'GET /readyz': { url: '/readyz', expect: 200 },
    'GET /metrics': { url: '/metrics', expect: 200 },
    'PUT /v1/blobs/sha256/:hex': { url: `/v1/blobs/sha256/${HEX}`, body: BLOB, type: 'application/octet-stream', expect: [200, 201] },
    'POST /v1/blobs': { url: '/v1/blobs', body: BLOB, type: 'application/octet-stream', expect: 201 },
    'GET /v1/blobs/sha256/:hex': { url: `/v1/blobs/sha256/${HEX}`, expect: 200 },
    'POST /v1/sessions': { url: '/v1/sessions', ...json({ cwd: '/m' }), expect: 201 },
    'GET /v1/sessions': { url: '/v1/sessions', expect: 200 },
    'GET /v1/sessions/recent': { url: '/v1/sessions/recent?cwd=%2Fm', expect: 200 },
    'POST /v1/sessions/continue': { url: '/v1/sessions/continue', ...json({ cwd: '/m' }), expect: [200, 201] },
    'POST /v1/sessions/import': { url: '/v1/sessions/import?newId=true', body: importBody, type: 'application/x-ndjson', expect: 201 },
    'GET /v1/sessions/:id': { url: s, expect: 200 },
    'PATCH /v1/sessions/:id': { url: '/v1/sessions/nope', ...json({ title: 't' }), expect: 404 },
    'POST /v1/sessions/:id/move': { url: '/v1/sessions/nope/move', ...json({ cwd: '/n' }), expect: 404 },
    'POST /v1/sessions/:id/fork': { url: `${s}/fork`, ...json({}), expect: 201 },
    'GET /v1/sessions/:id/export': { url: `${s}/export`, expect: 200 },
    'DELETE /v1/sessions/:id': { url: '/v1/sessions/nope', expect: 404 },
    'GET /v1/sessions/:id/entries': { url: `${s}/entries`, expect: 200 },
    'GET /v1/sessions/:id/entries/:entryId': { url: `${s}/entries/${entryId}`, expect: 200 },
    'POST /v1/sessions/:id/entries': { url: `${s}/entries`, ...json({ type: 'custom', customType: 'm' }), expect: 201 },
    'POST /v1/sessions/:id/records': { url: '/v1/sessions/nope/records', ...json({ records: [{ type: 'custom', id: 'm1', parentId: null, timestamp: 't' }] }), expect: 404 },
    'PUT /v1/sessions/:id/file': { url: '/v1/sessions/matrix-file/file', body: importBody.replace('matrix-import', 'matrix-file'), type: 'application/x-ndjson', expect: [200, 201] },
    'PUT /v1/sessions/:id/leaf': { url: '/v1/sessions/nope/leaf', ...json({ leafId: null }), expect: 404 },
    'POST /v1/sessions/:id/branch-summary': { url: '/v1/sessions/nope/branch-summary', ...json({ fromId: null, summary: 's' }), expect: 404 },
    'GET /v1/sessions/:id/tree': { url: `${s}/tree`, expect: 200 },
    'GET /v1/sessions/:id/branch': { url: `${s}/branch`, expect: 200 },
    'GET /v1/sessions/:id/context': { url: `${s}/context`, expect: 200 },
    'GET /v1/sessions/:id/events': { url: `${s}/events`, expect: 200 },
    'GET /v1/events': { url: '/v1/events', expect: 200 },
    'GET /v1/search': { url: '/v1/search?q=matrix', expect: 200 },
    'GET /v1/tokens': { url: '/v1/tokens', expect: 200 },
    'POST /v1/tokens': { url: '/v1/tokens', ...json({ scopes: ['read'] }), expect: 201 },
    'DELETE /v1/tokens/:id': { url: '/v1/tokens/tok_nope', expect: 404 },
    'POST /v1/blobs/gc': { url: '/v1/blobs/gc?dryRun=true', expect: 200 },
    'GET /v1/usage': { url: '/v1/usage', expect: 200 },
  }
}

type Caller = 'none' | 'bad' | 'expired' | 'read' | 'write' | 'admin'
const CALLERS: Caller[] = ['none', 'bad', 'expired', 'read', 'write', 'admin']
const RANK = { public: 0, read: 1, write: 2, admin: 3 } as const

let fx: TokenFixture
let app: App
let base: string
const agent = new Agent()

function credentials (caller: Caller): Record<string, string> {
  if (caller === 'none') return {}
  if (caller === 'bad') return bearer('sst_not-a-token')
  return bearer(fx.secrets[caller])
}

function cellOf (route: RouteAccess): Cell {
  const all = cells()
  const own = all[`${route.method} ${route.url}`] ?? (route.method === 'HEAD' ? all[`GET ${route.url}`] : undefined)
  if (own === undefined) throw new Error(`no request for ${route.method} ${route.url}: add one to the matrix`)
  return own
}

/** Sends the cell's request; a stream is cut as soon as its head arrived. */
async function send (route: RouteAccess, cell: Cell, caller: Caller): Promise<{ status: number, headers: Record<string, unknown>, body: string }> {
  const headers = { ...cell.headers, ...credentials(caller), ...(cell.type === undefined ? {} : { 'content-type': cell.type }) }
  const res = await request(`${base}${cell.url}`, { method: route.method as 'GET', headers, body: cell.body, dispatcher: agent })
  const streaming = String(res.headers['content-type']).startsWith('text/event-stream')
  if (streaming) res.body.destroy()
  const body = streaming || route.method === 'HEAD' ? '' : await res.body.text()
  return { status: res.statusCode, headers: res.headers, body }
}

/** What `caller` gets from `route`: a 401, a 403, or the route's own answer. */
function expected (route: RouteAccess, caller: Caller, cell: Cell): number[] {
  const own = Array.isArray(cell.expect) ? cell.expect : [cell.expect]
  if (route.scope === 'public') return own
  if (caller === 'none' || caller === 'bad' || caller === 'expired') return [401]
  return RANK[caller] >= RANK[route.scope] ? own : [403]
}

beforeAll(async () => {
  fx = await tokenFixture()
  app = await buildTestApp({ tokens: await fx.load(), config: { corsOrigins: [ORIGIN], rateLimitMax: 0 } })
  base = await app.listen({ port: 0, host: '127.0.0.1' })
  const admin = bearer(fx.secrets.admin)
  await app.inject({ method: 'POST', url: '/v1/sessions', headers: admin, payload: { cwd: '/m', id: SESSION } })
  const appended = await app.inject({ method: 'POST', url: `/v1/sessions/${SESSION}/entries`, headers: admin, payload: { type: 'custom', customType: 'first' } })
  entryId = appended.json().entries[0].id
  await app.inject({ method: 'PUT', url: `/v1/blobs/sha256/${HEX}`, headers: { ...admin, 'content-type': 'application/octet-stream' }, payload: BLOB })
})
afterAll(async () => {
  await agent.destroy() // its idle sockets would keep the server from closing
  await app.close()
  fx.cleanup()
})

describe('the route list', () => {
  it('holds every operation of the OpenAPI document, so none escapes the matrix', () => {
    const registered = new Set(app.routeAccess.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`))
    const documented = Object.entries(DOCUMENT.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
    expect(documented.filter((op) => !registered.has(op))).toEqual([])
    // Registered beyond the document: CORS preflights, HEAD twins of GET routes, the
    // documentation UI's own files (@fastify/swagger-ui) and the dashboard's pages (its redirect,
    // `GET /`, is documented).
    expect([...registered].filter((op) => !documented.includes(op) && !/^(OPTIONS|HEAD) /.test(op)).sort()).toEqual([
      'GET /docs/json', 'GET /docs/static/*', 'GET /docs/static/index.html', 'GET /docs/static/swagger-initializer.js', 'GET /docs/yaml',
      'GET /ui', 'GET /ui/*', 'GET /ui/sessions/{id}',
    ])
  })

  it('makes everything under /v1 protected and only health, metrics, docs, the dashboard pages and preflight public', () => {
    const publicUrls = app.routeAccess.filter((r) => r.scope === 'public').map((r) => r.url)
    const pages = (u: string): boolean => u.startsWith('/docs') || u === '/' || u === '/ui' || u.startsWith('/ui/')
    expect(publicUrls.filter((u) => !['/healthz', '/readyz', '/metrics', '/openapi.json', '*'].includes(u) && !pages(u))).toEqual([])
    expect(app.routeAccess.filter((r) => r.url.startsWith('/v1')).every((r) => r.scope !== 'public')).toBe(true)
  })
})

describe('every route × every caller', () => {
  it.each(CALLERS)('caller: %s', async (caller) => {
    const failures: string[] = []
    for (const route of app.routeAccess) {
      const cell = cellOf(route)
      const res = await send(route, cell, caller)
      const want = expected(route, caller, cell)
      const label = `${route.method} ${route.url} (${route.scope}) as ${caller}: ${res.status}`
      if (!want.includes(res.status)) failures.push(`${label}, expected ${want.join(' or ')}: ${res.body.slice(0, 160)}`)
      if (res.status === 401) {
        if (res.headers['www-authenticate'] !== 'Bearer realm="session-store"') failures.push(`${label} without WWW-Authenticate`)
        const code = route.method === 'HEAD' ? undefined : JSON.parse(res.body).code
        const wanted = caller === 'expired' ? 'SS_TOKEN_EXPIRED' : 'SS_UNAUTHENTICATED'
        if (code !== undefined && code !== wanted) failures.push(`${label} with code ${String(code)}, expected ${wanted}`)
      }
      if (res.status === 403 && route.method !== 'HEAD' && JSON.parse(res.body).code !== 'SS_FORBIDDEN') failures.push(`${label} not SS_FORBIDDEN`)
    }
    expect(failures).toEqual([])
  })
})
