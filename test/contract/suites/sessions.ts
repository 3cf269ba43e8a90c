/** API.md "Sessions" through the OpenAPI client: every route, its success and its errors. */
import { describe, expect, it } from 'vitest'
import { FIXTURES } from '../contract-server.js'
import { raw } from '../contract-client.js'
import {
  createSession, ctx, expectProblem, freshCwd, persistedSession, STALE, UNKNOWN, userMessage,
} from './context.js'

const { tooNew, unreadable, moveBlocked, brokenCwd } = FIXTURES
const path = (id: string) => ({ params: { path: { id } } })

export function sessionsSuite (): void {
  describe('POST /v1/sessions', () => {
    it('creates (201), refuses a route word (400), a taken id (409) and an unwritable cwd (507)', async () => {
      const c = ctx.client
      const created = await c.POST('/v1/sessions', { body: { cwd: freshCwd(), id: 'contract-own-id', title: 'T' } })
      expect(created.response.headers.get('location')).toBe('/v1/sessions/contract-own-id')
      expect(created.data?.persisted).toBe(false)
      expectProblem(await c.POST('/v1/sessions', { body: { cwd: '/x', id: 'recent' } }), 400, 'SS_INVALID_SESSION_ID')
      expectProblem(await c.POST('/v1/sessions', { body: { cwd: '/x', id: 'contract-own-id' } }), 409, 'SS_SESSION_EXISTS')
      expectProblem(await c.POST('/v1/sessions', { body: { cwd: brokenCwd } }), 507, 'SS_STORAGE_FAILED')
    })
  })

  describe('GET /v1/sessions and /v1/sessions/recent', () => {
    it('lists by cwd, pages with a cursor (200) and refuses a bad cursor (400)', async () => {
      const cwd = freshCwd()
      await persistedSession(cwd)
      await persistedSession(cwd)
      const first = await ctx.client.GET('/v1/sessions', { params: { query: { cwd, limit: 1 } } })
      expect(first.data?.sessions).toHaveLength(1)
      const cursor = first.data?.nextCursor as string
      const second = await ctx.client.GET('/v1/sessions', { params: { query: { cwd, limit: 1, cursor } } })
      expect(second.data).toMatchObject({ nextCursor: null })
      expectProblem(await ctx.client.GET('/v1/sessions', { params: { query: { cursor: '!!' } } }), 400, 'SS_INVALID_CURSOR')
    })

    it('recent: RecentSession items (200), a bad limit (400)', async () => {
      const cwd = freshCwd()
      const { id } = await persistedSession(cwd)
      const recent = await ctx.client.GET('/v1/sessions/recent', { params: { query: { cwd } } })
      expect(recent.data?.sessions.map((s) => s.id)).toEqual([id])
      expectProblem(await ctx.client.GET('/v1/sessions/recent', { params: { query: { cwd, limit: 0 } } }), 400, 'SS_VALIDATION')
    })
  })

  describe('POST /v1/sessions/continue', () => {
    it('starts (201), resumes (200), and answers 400, 422 and 507', async () => {
      const cwd = freshCwd()
      const started = await ctx.client.POST('/v1/sessions/continue', { body: { cwd } })
      expect(started.response.status).toBe(201)
      const { id } = await persistedSession(cwd)
      const resumed = await ctx.client.POST('/v1/sessions/continue', { body: { cwd } })
      expect(resumed.response.status).toBe(200)
      expect(resumed.data?.header.id).toBe(id)
      expectProblem(await ctx.client.POST('/v1/sessions/continue', { body: { cwd, terminalId: '../x' } }), 400, 'SS_VALIDATION')
      expectProblem(await ctx.client.POST('/v1/sessions/continue', { body: { cwd: tooNew.cwd } }), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.POST('/v1/sessions/continue', { body: { cwd: brokenCwd } }), 507, 'SS_STORAGE_FAILED')
    })
  })

  describe('GET, PATCH, DELETE /v1/sessions/{id}', () => {
    it('reads (200) and answers 404, 422 and 507', async () => {
      const s = await createSession()
      const read = await ctx.client.GET('/v1/sessions/{id}', path(s.header.id))
      expect(read.data).toEqual(s)
      expectProblem(await ctx.client.GET('/v1/sessions/{id}', path(UNKNOWN)), 404, 'SS_SESSION_NOT_FOUND')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}', path(tooNew.id)), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}', path(unreadable.id)), 507, 'SS_STORAGE_FAILED')
    })

    it('renames (200) and answers 404, 412, 422 and 507', async () => {
      const s = await createSession()
      const body = { title: 'Renamed' }
      const renamed = await ctx.client.PATCH('/v1/sessions/{id}', { ...path(s.header.id), body })
      expect(renamed.data?.header.title).toBe('Renamed')
      expectProblem(await ctx.client.PATCH('/v1/sessions/{id}', { ...path(UNKNOWN), body }), 404, 'SS_SESSION_NOT_FOUND')
      const stale = { params: { path: { id: s.header.id }, header: { 'if-match': STALE } }, body }
      expectProblem(await ctx.client.PATCH('/v1/sessions/{id}', stale), 412, 'SS_PRECONDITION_FAILED')
      expectProblem(await ctx.client.PATCH('/v1/sessions/{id}', { ...path(tooNew.id), body }), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.PATCH('/v1/sessions/{id}', { ...path(unreadable.id), body }), 507, 'SS_STORAGE_FAILED')
    })

    it('deletes (204, then 404) and answers 412, 422 and 507', async () => {
      const s = await createSession()
      const stale = { params: { path: { id: s.header.id }, header: { 'if-match': STALE } } }
      expectProblem(await ctx.client.DELETE('/v1/sessions/{id}', stale), 412, 'SS_PRECONDITION_FAILED')
      expect((await ctx.client.DELETE('/v1/sessions/{id}', path(s.header.id))).response.status).toBe(204)
      expectProblem(await ctx.client.DELETE('/v1/sessions/{id}', path(s.header.id)), 404, 'SS_SESSION_NOT_FOUND')
      expectProblem(await ctx.client.DELETE('/v1/sessions/{id}', path(tooNew.id)), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.DELETE('/v1/sessions/{id}', path(unreadable.id)), 507, 'SS_STORAGE_FAILED')
    })
  })

  describe('POST /v1/sessions/{id}/move and /fork', () => {
    it('moves (200) and answers 404, 409, 412, 422 and 507', async () => {
      const { id } = await persistedSession()
      const cwd = freshCwd()
      const moved = await ctx.client.POST('/v1/sessions/{id}/move', { ...path(id), body: { cwd } })
      expect(moved.data?.header.cwd).toBe(cwd)
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/move', { ...path(UNKNOWN), body: { cwd: '/a' } }), 404, 'SS_SESSION_NOT_FOUND')
      const blocked = { ...path(moveBlocked.id), body: { cwd: moveBlocked.target } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/move', blocked), 409, 'SS_MOVE_DESTINATION_EXISTS')
      const stale = { params: { path: { id }, header: { 'if-match': STALE } }, body: { cwd: '/b' } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/move', stale), 412, 'SS_PRECONDITION_FAILED')
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/move', { ...path(tooNew.id), body: { cwd: '/c' } }), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/move', { ...path(id), body: { cwd: brokenCwd } }), 507, 'SS_STORAGE_FAILED')
    })

    it('forks (201) with or without a body and answers 404, 412, 422 and 507', async () => {
      const cwd = freshCwd()
      const { id, ids } = await persistedSession(cwd)
      /** The sessions of the source's cwd (a fork keeps it), empty ones included. */
      const sessionsOfCwd = async () => (await ctx.client.GET('/v1/sessions', { params: { query: { cwd, includeEmpty: true } } })).data?.sessions.map((s) => s.id).sort()
      const all = await ctx.client.POST('/v1/sessions/{id}/fork', path(id))
      expect(all.data).toMatchObject({ entryCount: 2, header: { parentSession: id } })
      const part = await ctx.client.POST('/v1/sessions/{id}/fork', { ...path(id), body: { leafId: ids[0] as string } })
      expect(part.data?.entryCount).toBe(1)
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/fork', { ...path(id), body: { leafId: 'nope' } }), 404, 'SS_ENTRY_NOT_FOUND')
      // A stale If-Match makes no fork: the cwd holds the same sessions; the current etag forks.
      const before = await sessionsOfCwd()
      expect(before).toHaveLength(3)
      const stale = { params: { path: { id }, header: { 'if-match': STALE } } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/fork', stale), 412, 'SS_PRECONDITION_FAILED')
      expect(await sessionsOfCwd()).toEqual(before)
      const current = (await ctx.client.GET('/v1/sessions/{id}', path(id))).response.headers.get('etag') as string
      const fresh = await ctx.client.POST('/v1/sessions/{id}/fork', { params: { path: { id }, header: { 'if-match': current } } })
      expect(fresh.response.status).toBe(201)
      expect(await sessionsOfCwd()).toEqual([...before as string[], fresh.data?.header.id].sort())
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/fork', path(tooNew.id)), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/fork', path(unreadable.id)), 507, 'SS_STORAGE_FAILED')
    })
  })

  describe('import and export', () => {
    const jsonl = (id: string, cwd: string, version?: number): string => [
      { type: 'session', ...(version === undefined ? {} : { version }), id, timestamp: '2026-02-01T00:00:00.000Z', cwd },
      { type: 'message', timestamp: '2026-02-01T00:00:01.000Z', message: { role: 'user', content: 'old', timestamp: 1 } },
    ].map((r) => JSON.stringify(r)).join('\n') + '\n'
    const importFile = async (text: string, newId?: boolean) => await ctx.client.POST('/v1/sessions/import', {
      body: text, params: { query: newId === undefined ? {} : { newId } }, ...raw('application/x-ndjson'),
    })

    it('imports a v1 file keeping its id (201), 409 unless newId, 422 too new, 400 not a file, 507', async () => {
      const imported = await importFile(jsonl('contract-imported', freshCwd()))
      expect(imported.data).toMatchObject({ header: { id: 'contract-imported', version: 3 }, entryCount: 1 })
      expectProblem(await importFile(jsonl('contract-imported', freshCwd())), 409, 'SS_SESSION_EXISTS')
      const copy = await importFile(jsonl('contract-imported', freshCwd()), true)
      expect(copy.data?.header.parentSession).toBe('contract-imported')
      expectProblem(await importFile(jsonl('contract-v4', freshCwd(), 4)), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await importFile('not a session\n'), 400, 'SS_INVALID_ARGUMENT')
      expectProblem(await importFile(jsonl('contract-broken', brokenCwd)), 507, 'SS_STORAGE_FAILED')
    })

    it('exports the stored file (200 application/x-ndjson) and answers 404, 422 and 507', async () => {
      const { id } = await persistedSession()
      await ctx.client.POST('/v1/sessions/{id}/entries', { ...path(id), body: { entries: [userMessage('third')] } })
      const exported = await ctx.client.GET('/v1/sessions/{id}/export', { ...path(id), parseAs: 'text' })
      expect(String(exported.data).trim().split('\n')).toHaveLength(4)
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/export', path(UNKNOWN)), 404, 'SS_SESSION_NOT_FOUND')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/export', path(tooNew.id)), 422, 'SS_SESSION_VERSION_TOO_NEW')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/export', path(unreadable.id)), 507, 'SS_STORAGE_FAILED')
    })
  })
}
