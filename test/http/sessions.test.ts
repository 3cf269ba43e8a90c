/**
 * API.md "Sessions" through `app.inject`: create, list, recent, continue and read.
 * The routes that change or remove a session are in sessions-lifecycle.test.ts.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { type SessionInfoView, type SessionView } from '../../src/registry/session-registry.js'
import { encodeCwd } from '../../src/session/cwd.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp, testConfig } from '../helpers/app.js'
import { append, assistant, createSession, getSession, persistedSession, user } from './session-helpers.js'
import { problemOf } from '../helpers/problem.js'

const DATA = testConfig().dataDir

let app: App
let storage: MemorySessionStorage

beforeEach(async () => {
  storage = new MemorySessionStorage()
  app = await buildTestApp({ storage })
})
afterEach(async () => { await app.close() })

describe('POST /v1/sessions', () => {
  it('creates a deferred session: 201, Location, ETag, Session body', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/work/p', title: 'T', parentSession: 'x' } })
    expect(res.statusCode).toBe(201)
    const body = res.json<SessionView>()
    expect(body.header).toMatchObject({ type: 'session', version: 3, cwd: '/work/p', title: 'T', parentSession: 'x' })
    expect(body.header.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(body).toMatchObject({ leafId: null, entryCount: 0, messageCount: 0, persisted: false })
    expect(res.headers.location).toBe(`/v1/sessions/${body.header.id}`)
    expect(res.headers.etag).toBe(body.etag)
    expect(storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/work/p')), '*.jsonl')).toEqual([])
  })

  it('accepts a client-chosen id; the session is deferred like any other until an assistant message', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/work/p', id: 'my-Session_1', title: 'T' } })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ header: { id: 'my-Session_1', title: 'T' }, persisted: false })
    expect((await getSession(app, 'my-Session_1')).header.cwd).toBe('/work/p')
    expect((await append(app, 'my-Session_1', { type: 'message', message: user() })).persisted).toBe(false)
    expect((await append(app, 'my-Session_1', { type: 'message', message: assistant() })).persisted).toBe(true)
    expect((await getSession(app, 'my-Session_1')).persisted).toBe(true)
  })

  it.each([
    ['recent', 'SS_INVALID_SESSION_ID'], ['continue', 'SS_INVALID_SESSION_ID'], ['import', 'SS_INVALID_SESSION_ID'],
    ['-leading-dash', 'SS_VALIDATION'], ['has space', 'SS_VALIDATION'], ['x'.repeat(129), 'SS_VALIDATION'], ['../etc', 'SS_VALIDATION'],
  ])('rejects id %j with 400 %s', async (id, code) => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/work/p', id } })
    expect(problemOf(res)).toEqual({ status: 400, code })
  })

  it('answers 409 for an id that exists', async () => {
    await createSession(app, { cwd: '/a', id: 'taken' })
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/b', id: 'taken' } })
    expect(res.statusCode).toBe(409)
    expect(problemOf(res).code).toBe('SS_SESSION_EXISTS')
  })

  it.each([
    [{}, 'SS_VALIDATION'], [{ cwd: '' }, 'SS_VALIDATION'], [{ cwd: 'a\nb' }, 'SS_VALIDATION'],
    [{ cwd: '/w', extra: 1 }, 'SS_VALIDATION'], [{ cwd: 5 }, 'SS_VALIDATION'],
  ])('answers 400 for body %j with %s', async (payload, code) => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload })
    expect(problemOf(res)).toEqual({ status: 400, code })
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  })
})

describe('GET /v1/sessions', () => {
  it('lists sessions with messages, newest first, as SessionInfo', async () => {
    const a = await persistedSession(app, '/a')
    await createSession(app, { cwd: '/a' }) // no message: hidden
    const b = await persistedSession(app, '/b')
    const res = await app.inject({ method: 'GET', url: '/v1/sessions' })
    expect(res.statusCode).toBe(200)
    const { sessions, nextCursor } = res.json<{ sessions: SessionInfoView[], nextCursor: string | null }>()
    expect(sessions.map((s) => s.id)).toEqual([b.session.header.id, a.session.header.id])
    expect(sessions[0]).toEqual({
      id: b.session.header.id,
      cwd: '/b',
      created: b.session.header.timestamp,
      modified: expect.any(String),
      messageCount: 2,
      firstMessage: 'hello',
      entryCount: 2,
    })
    expect(nextCursor).toBeNull()
  })

  it('filters by cwd and shows empty sessions with includeEmpty=true', async () => {
    await persistedSession(app, '/a')
    const empty = await createSession(app, { cwd: '/a' })
    await persistedSession(app, '/b')
    const only = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/a' })
    expect(only.json().sessions).toHaveLength(1)
    const all = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/a&includeEmpty=true' })
    const ids = all.json<{ sessions: SessionInfoView[] }>().sessions.map((s) => s.id)
    expect(ids).toHaveLength(2)
    expect(ids[0]).toBe(empty.header.id)
  })

  it('pages with limit and an opaque cursor, each session exactly once', async () => {
    const created: string[] = []
    for (let i = 0; i < 7; i++) created.push((await persistedSession(app, `/p${i % 2}`)).session.header.id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const url: string = `/v1/sessions?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      const page: { sessions: SessionInfoView[], nextCursor: string | null } = res.json()
      expect(page.sessions.length).toBeLessThanOrEqual(3)
      seen.push(...page.sessions.map((s) => s.id))
      cursor = page.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual([...created].reverse())
  })

  it('answers 400 for a bad cursor or limit', async () => {
    for (const url of ['/v1/sessions?cursor=nonsense', '/v1/sessions?cursor=!!', '/v1/sessions?limit=0', '/v1/sessions?limit=1001', '/v1/sessions?limit=x']) {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(400)
    }
    const bad = await app.inject({ method: 'GET', url: '/v1/sessions?cursor=nonsense' })
    expect(problemOf(bad).code).toBe('SS_INVALID_CURSOR')
  })
})

describe('GET /v1/sessions/recent', () => {
  it('returns RecentSession items of the cwd, header-only sessions included', async () => {
    const a = await persistedSession(app, '/r')
    const headerOnly = JSON.stringify({ type: 'session', version: 3, id: 'header-only', timestamp: new Date().toISOString(), cwd: '/r', title: 'Named' }) + '\n'
    const imported = await app.inject({ method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload: headerOnly })
    expect(imported.statusCode).toBe(201)
    const res = await app.inject({ method: 'GET', url: '/v1/sessions/recent?cwd=/r' })
    expect(res.statusCode).toBe(200)
    expect(res.json().sessions).toEqual([
      { id: 'header-only', name: 'Named', modified: expect.any(String) },
      { id: a.session.header.id, name: 'hello', modified: expect.any(String) },
    ])
    const one = await app.inject({ method: 'GET', url: '/v1/sessions/recent?cwd=/r&limit=1' })
    expect(one.json().sessions).toHaveLength(1)
  })

  it('answers 400 without cwd', async () => {
    expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions/recent' }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
  })
})

describe('POST /v1/sessions/continue', () => {
  it('starts a new session (201) when the cwd has none, then resumes the newest (200)', async () => {
    const first = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/c' } })
    expect(first.statusCode).toBe(201)
    expect(first.headers.location).toBe(`/v1/sessions/${first.json().header.id}`)
    const { session } = await persistedSession(app, '/c')
    const again = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/c' } })
    expect(again.statusCode).toBe(200)
    expect(again.json().header.id).toBe(session.header.id)
    expect(again.json().entryCount).toBe(2)
  })

  it("resumes the terminal's breadcrumb before the newest session", async () => {
    const older = await persistedSession(app, '/c')
    const pick = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/c', terminalId: 'pts-3' } })
    expect(pick.json().header.id).toBe(older.session.header.id)
    await persistedSession(app, '/c')
    const res = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/c', terminalId: 'pts-3' } })
    expect(res.statusCode).toBe(200)
    expect(res.json().header.id).toBe(older.session.header.id)
  })

  it('answers 400 for an invalid terminal id or cwd', async () => {
    for (const payload of [{ cwd: '/c', terminalId: '../x' }, { cwd: '' }, {}]) {
      const res = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload })
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
    }
  })
})

describe('GET /v1/sessions/{id}', () => {
  it('returns the Session with an ETag header', async () => {
    const { session } = await persistedSession(app)
    const res = await app.inject({ method: 'GET', url: `/v1/sessions/${session.header.id}` })
    expect(res.statusCode).toBe(200)
    const body = res.json<SessionView>()
    expect(body).toMatchObject({ entryCount: 2, messageCount: 2, persisted: true })
    expect(res.headers.etag).toBe(body.etag)
    expect(body.etag).not.toBe(session.etag)
  })

  it('answers 404 for an unknown id, never touching a path built from it', async () => {
    for (const id of ['nope', '..%2F..%2Fetc%2Fpasswd', 'recent2']) {
      const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })
      expect(res.statusCode).toBe(404)
      expect(problemOf(res).code).toBe('SS_SESSION_NOT_FOUND')
    }
  })
})
