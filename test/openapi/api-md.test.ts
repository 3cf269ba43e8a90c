/**
 * The OpenAPI document held against the HTTP contract itself: test/fixtures/API.md is a verbatim
 * copy of the contract (API.md), and its route tables are parsed here. Every route and status
 * they name must be in the document; for the session, entry and blob routes, whose tables are
 * exhaustive, every route of the document and every success status must be in API.md too.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

type Json = Record<string, any>

const API_MD = readFileSync(new URL('../fixtures/API.md', import.meta.url), 'utf8')
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
/** The README's tables of what the server adds to API.md, in API.md's terms: each section so named, to the next heading. */
const ADDITIONS = README.split(/\n(?=#{2,3} )/).filter((section) => section.startsWith('### What the server adds to API.md')).join('\n')
const document: Json = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'))

/** A route of API.md: `GET /v1/sessions/{id}`, with the statuses its table row names. */
interface ContractRoute { route: string, statuses: Set<number> }

/**
 * The rows of every table whose first column is `route`: methods and path from the first cell
 * (`GET` / `HEAD /path` names two), query strings dropped; statuses are the backticked 3-digit
 * numbers of the other cells.
 */
export function contractRoutes (markdown: string): ContractRoute[] {
  const routes: ContractRoute[] = []
  let inRouteTable = false
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) { inRouteTable = false; continue }
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim())
    if (cells[0] === 'route') { inRouteTable = true; continue }
    if (!inRouteTable || /^-+$/.test(cells[0] ?? '')) continue
    const first = cells[0] ?? ''
    // The longest path-like part: in "`GET` / `HEAD /v1/…`" the lone "/" separates the methods.
    const path = [...first.matchAll(/\/[^\s`?]*/g)].map((m) => m[0]).sort((a, b) => b.length - a.length)[0]
    const methods = [...first.matchAll(/`?\b(GET|HEAD|POST|PUT|PATCH|DELETE)\b/g)].map((m) => m[1] as string)
    if (path === undefined || methods.length === 0) throw new Error(`unparsed route row: ${line}`)
    const statuses = new Set([...cells.slice(1).join(' ').matchAll(/`(\d{3})\b/g)].map((m) => Number(m[1])))
    for (const method of methods) routes.push({ route: `${method} ${path}`, statuses })
  }
  return routes
}

/** The live-stream routes, named in prose (API.md "Live stream (SSE)"). */
function streamRoutes (markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf('## Live stream'), markdown.indexOf('## Blobs'))
  return [...new Set([...section.matchAll(/`GET (\/v1\/[^\s`]+)`/g)].map((m) => `GET ${m[1] as string}`))]
}

const documented = new Map<string, Set<number>>()
for (const [path, item] of Object.entries(document.paths as Json)) {
  for (const [method, op] of Object.entries(item as Json)) {
    documented.set(`${method.toUpperCase()} ${path}`, new Set(Object.keys((op as Json).responses).map(Number)))
  }
}

const contract = contractRoutes(API_MD)
const additions = contractRoutes(ADDITIONS)

describe('API.md route tables', () => {
  it('are parsed: every table row gives a route', () => {
    expect(contract.length).toBe(29)
    expect(contract.find((r) => r.route === 'POST /v1/sessions/continue')?.statuses).toEqual(new Set([200, 201]))
    expect(contract.find((r) => r.route === 'PUT /v1/blobs/sha256/{hex}')?.statuses).toEqual(new Set([201, 200, 400, 422]))
    expect(contract.filter((r) => r.route.endsWith(' /v1/blobs/sha256/{hex}')).map((r) => r.route)).toEqual([
      'PUT /v1/blobs/sha256/{hex}', 'GET /v1/blobs/sha256/{hex}', 'HEAD /v1/blobs/sha256/{hex}',
    ])
    expect(streamRoutes(API_MD)).toEqual(['GET /v1/sessions/{id}/events', 'GET /v1/events'])
  })

  it('every route and status of API.md is in the document', () => {
    const missing: string[] = []
    for (const { route, statuses } of contract) {
      const own = documented.get(route)
      if (own === undefined) { missing.push(route); continue }
      for (const status of statuses) if (!own.has(status)) missing.push(`${route} ${status}`)
      // A success: 2xx, or the 3xx of a redirect (`GET /`).
      if (![...own].some((status) => status >= 200 && status < 400)) missing.push(`${route} success`)
    }
    for (const route of streamRoutes(API_MD)) if (documented.get(route)?.has(200) !== true) missing.push(`${route} 200`)
    expect(missing).toEqual([])
  })

  it('every route and status the README adds to API.md is in the document', () => {
    expect(additions.map((r) => r.route)).toEqual([
      'POST /v1/blobs/gc', 'GET /v1/usage', 'POST /v1/sessions/{id}/records', 'PUT /v1/sessions/{id}/file', 'GET /v1/sessions/{id}/export',
    ])
    const missing = additions.flatMap(({ route, statuses }) => [...statuses].filter((s) => documented.get(route)?.has(s) !== true).map((s) => `${route} ${s}`))
    expect(missing).toEqual([])
  })

  it('every session, entry and blob route of the document, and its success statuses, is in API.md or the README\'s additions', () => {
    const inContract = new Map(contract.map(({ route, statuses }) => [route, statuses]))
    for (const { route, statuses } of additions) inContract.set(route, new Set([...inContract.get(route) ?? [], ...statuses]))
    for (const route of streamRoutes(API_MD)) inContract.set(route, new Set([200]))
    const extra: string[] = []
    for (const [route, statuses] of documented) {
      if (!/ \/v1\/(sessions|blobs)\b/.test(route)) continue
      const own = inContract.get(route)
      if (own === undefined) { extra.push(route); continue }
      // 304 answers If-None-Match, which API.md names in prose.
      for (const status of statuses) if (status >= 200 && status < 300 && !own.has(status)) extra.push(`${route} ${status}`)
    }
    expect(extra).toEqual([])
  })
})
