/**
 * `GET /v1/search` over HTTP (README "Search"), on memory and on PostgreSQL: hits of appended
 * entries with marked snippets, pages, the changes that must show (delete, move, rename, fork,
 * import), scopes and tenants, and answers to any query: 200 or a 400 that names why, never 500.
 */
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { SearchResults } from '../../src/registry/session-registry.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { append, assistant, createSession, message, user } from './session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

async function search (query: string, headers: Record<string, string> = {}): Promise<{ status: number, body: SearchResults & { code?: string, detail?: string } }> {
  const res = await app.inject({ method: 'GET', url: `/v1/search?${query}`, headers })
  return { status: res.statusCode, body: res.json() }
}

/** `q=` with `text` percent-encoded as UTF-8 bytes (a lone surrogate as U+FFFD), then `extra`. */
const q = (text: string, extra = ''): string => `q=${[...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}${extra}`

async function seed (cwd = '/work/p', texts: string[] = ['where is the upload race', 'fixed the upload race in uploader.ts']): Promise<{ id: string, entries: string[] }> {
  const s = await createSession(app, { cwd })
  const r = await append(app, s.header.id, { entries: [message(user(texts[0])), message(assistant(texts[1]))] })
  return { id: s.header.id, entries: r.entries.map((e) => e.id) }
}

describe('GET /v1/search', () => {
  it('finds appended text with its session, entry and a marked snippet', async () => {
    const { id, entries } = await seed()
    const { status, body } = await search(q('upload race'))
    expect(status).toBe(200)
    expect(body.hits.map((h) => h.entryId).sort()).toEqual([...entries].sort())
    const hit = body.hits.find((h) => h.entryId === entries[1])
    expect(hit).toMatchObject({ sessionId: id, type: 'message', role: 'assistant', title: null, cwd: '/work/p' })
    expect(hit?.snippet).toBe('fixed the «upload» «race» in uploader.ts')
    expect(typeof hit?.timestamp).toBe('string')
    expect(body.nextCursor).toBeNull()
    expect((await search(q('uploader.ts'))).body.hits.map((h) => h.entryId)).toEqual([entries[1]])
  })

  it('pages with a cursor bound to its search', async () => {
    const s = await createSession(app, { cwd: '/p' })
    await append(app, s.header.id, { entries: Array.from({ length: 5 }, (_, i) => message(user(`pager item ${i}`))) })
    const seen: string[] = []
    let cursor: string | null = null
    for (let pages = 0; pages < 5; pages++) {
      const { status, body } = await search(q('pager', `&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`))
      expect(status).toBe(200)
      seen.push(...body.hits.map((h) => h.entryId as string))
      cursor = body.nextCursor
      if (cursor === null) break
    }
    expect(seen).toHaveLength(5)
    expect(new Set(seen).size).toBe(5)
    const first = await search(q('pager', '&limit=2'))
    const other = await search(q('item', `&cursor=${first.body.nextCursor ?? ''}`))
    expect(other).toMatchObject({ status: 400, body: { code: 'SS_INVALID_CURSOR' } })
    expect((await search(q('pager', '&cursor=%%%'))).status).toBe(400)
  })

  it('drops a deleted session, follows a move and a rename, and finds forks and imports', async () => {
    const { id } = await seed('/a')
    expect((await app.inject({ method: 'POST', url: `/v1/sessions/${id}/move`, payload: { cwd: '/b' } })).statusCode).toBe(200)
    expect((await app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: { title: 'Race hunt' } })).statusCode).toBe(200)
    expect((await search(q('uploader.ts', '&cwd=%2Fb'))).body.hits).toMatchObject([{ sessionId: id, cwd: '/b', title: 'Race hunt' }])
    expect((await search(q('uploader.ts', '&cwd=%2Fa'))).body.hits).toEqual([])
    expect((await search(q('hunt'))).body.hits).toMatchObject([{ sessionId: id, entryId: null, type: 'session', snippet: 'Race «hunt»' }])
    const fork = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/fork`, payload: {} })
    const forkId = fork.json().header.id as string
    const exported = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export` })
    const imported = await app.inject({ method: 'POST', url: '/v1/sessions/import?newId=true', payload: exported.body, headers: { 'content-type': 'application/x-ndjson' } })
    expect(imported.statusCode).toBe(201)
    const ids = new Set((await search(q('uploader.ts'))).body.hits.map((h) => h.sessionId))
    expect(ids).toEqual(new Set([id, forkId, imported.json().header.id]))
    expect((await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` })).statusCode).toBe(204)
    expect((await search(q('uploader.ts'))).body.hits.map((h) => h.sessionId)).not.toContain(id)
  })

  it('refuses a query it cannot search for with a 400 that names why', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['', 'SS_INVALID_QUERY', /empty/],
      ['   ', 'SS_INVALID_QUERY', /empty/],
      ['-upload', 'SS_INVALID_QUERY', /not excluded/],
      ['!!! ??? ...', 'SS_INVALID_QUERY', /no word/],
      [Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), 'SS_INVALID_QUERY', /more than 32 terms/],
      ['x'.repeat(1001), 'SS_VALIDATION', /1000/],
    ]
    for (const [text, code, detail] of cases) {
      const { status, body } = await search(q(text))
      expect(status, text.slice(0, 20)).toBe(400)
      expect(body.code).toBe(code)
      expect(body.detail).toMatch(detail)
    }
    expect((await search('')).status).toBe(400)
    expect((await search(q('race', '&limit=0'))).status).toBe(400)
    expect((await search(q('race', '&cwd=relative%0Adir'))).status).toBe(400)
  })

  it('answers any query with 200 or 400, never 500', async () => {
    await seed()
    const odd = ['"', '"unclosed', '-', '*', '**', 'a*b', 'NEAR(a b)', 'a AND OR NOT b', "it's", 'back\\slash', ':*', '!a & b | c',
      '\u0000', '\ud800', 'x\udfffy', '^', '{body}: x', 'a:b', '"a" "b" -"c"', '😀', '👩‍💻', '東京', 'ǝ01f600ǝ', '«x»', '\u200b', 'é', 'foo-*']
    for (const text of odd) expect([200, 400], JSON.stringify(text)).toContain((await search(q(text))).status)
    for (const raw of ['%ED%A0%80', '%FF%FE', '%00', '%C0%AF']) expect([200, 400], raw).toContain((await search(`q=${raw}`)).status)
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 40, unit: 'binary' }), async (text) => {
      expect([200, 400]).toContain((await search(q(text))).status)
    }), { numRuns: 150 })
  })
})

describe('GET /v1/search with tokens', () => {
  let fx: TokenFixture
  let secured: App
  beforeEach(async () => {
    fx = await tokenFixture()
    secured = await buildTestApp({ tokens: await fx.load() })
  })
  afterEach(async () => {
    await secured.close()
    fx.cleanup()
  })

  it('needs the read scope and answers only the caller\'s tenant', async () => {
    const call = async (secret: string | undefined, method: 'GET' | 'POST', url: string, payload?: object) =>
      await secured.inject({ method, url, headers: secret === undefined ? {} : bearer(secret), ...(payload === undefined ? {} : { payload }) })
    for (const [secret, text] of [[fx.secrets.admin, 'acme'], [fx.secrets.globex, 'globex']] as const) {
      const s = (await call(secret, 'POST', '/v1/sessions', { cwd: '/t' })).json().header.id as string
      expect((await call(secret, 'POST', `/v1/sessions/${s}/entries`, message(user(`${text} confidential plan`)))).statusCode).toBe(201)
    }
    expect((await call(undefined, 'GET', '/v1/search?q=plan')).statusCode).toBe(401)
    const read = await call(fx.secrets.read, 'GET', '/v1/search?q=confidential%20plan')
    expect(read.statusCode).toBe(200)
    expect(read.json().hits.map((h: { snippet: string }) => h.snippet)).toEqual(['acme «confidential» «plan»'])
    const other = await call(fx.secrets.globex, 'GET', '/v1/search?q=plan')
    expect(other.json().hits.map((h: { snippet: string }) => h.snippet)).toEqual(['globex confidential «plan»'])
  })
})
