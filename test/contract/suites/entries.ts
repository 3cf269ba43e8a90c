/** API.md "Entries" through the OpenAPI client: every route, its success and its errors. */
import { describe, expect, it } from 'vitest'
import { createSession, ctx, expectProblem, FAILING, persistedSession, STALE, userMessage } from './context.js'

const path = (id: string) => ({ params: { path: { id } } })

export function entriesSuite (): void {
  describe('GET /v1/sessions/{id}/entries and /entries/{entryId}', () => {
    it('pages (200), reads one (200), and answers 400, 404, 422 and 507', async () => {
      const { id, ids } = await persistedSession()
      const page = await ctx.client.GET('/v1/sessions/{id}/entries', { params: { path: { id }, query: { limit: 1 } } })
      expect(page.data).toMatchObject({ after: 0, next: 1, total: 2 })
      const entryId = ids[1] as string
      const one = await ctx.client.GET('/v1/sessions/{id}/entries/{entryId}', { params: { path: { id, entryId } } })
      expect(one.data?.id).toBe(entryId)
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/entries', { params: { path: { id }, query: { limit: 1001 } } }), 400, 'SS_VALIDATION')
      const badBlobs = { params: { path: { id, entryId }, query: { blobs: 'other' as 'ref' } } }
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/entries/{entryId}', badBlobs), 400, 'SS_VALIDATION')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/entries/{entryId}', { params: { path: { id, entryId: 'nope' } } }), 404, 'SS_ENTRY_NOT_FOUND')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.GET('/v1/sessions/{id}/entries', path(sid)), status, code)
        expectProblem(await ctx.client.GET('/v1/sessions/{id}/entries/{entryId}', { params: { path: { id: sid, entryId: 'u1' } } }), status, code)
      }
    })
  })

  describe('POST /v1/sessions/{id}/entries', () => {
    it('appends (201), replays an Idempotency-Key, and answers 404, 412, 422 and 507', async () => {
      const s = await createSession()
      const id = s.header.id
      const body = { entries: [userMessage('one'), userMessage('two')] }
      const key = { 'idempotency-key': 'contract-key' }
      const first = await ctx.client.POST('/v1/sessions/{id}/entries', { params: { path: { id }, header: key }, body })
      expect(first.data).toMatchObject({ firstSeq: 1, lastSeq: 2, persisted: false })
      const again = await ctx.client.POST('/v1/sessions/{id}/entries', { params: { path: { id }, header: key }, body })
      expect(again.response.headers.get('idempotent-replayed')).toBe('true')
      expect(again.data).toEqual(first.data)
      const reused = { params: { path: { id }, header: key }, body: { entries: [userMessage('other')] } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/entries', reused), 422, 'SS_IDEMPOTENCY_KEY_REUSED')
      const orphan = { ...path(id), body: { entries: [userMessage('x')], parentId: 'nope' } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/entries', orphan), 422, 'SS_UNKNOWN_PARENT')
      const stale = { params: { path: { id }, header: { 'if-match': STALE } }, body: { entries: [userMessage('x')] } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/entries', stale), 412, 'SS_PRECONDITION_FAILED')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.POST('/v1/sessions/{id}/entries', { ...path(sid), body: { entries: [userMessage('x')] } }), status, code)
      }
    })
  })

  describe('PUT leaf and POST branch-summary', () => {
    it('moves the leaf (200) and answers 404, 412, 422 and 507', async () => {
      const { id, ids } = await persistedSession()
      const moved = await ctx.client.PUT('/v1/sessions/{id}/leaf', { ...path(id), body: { leafId: ids[0] as string } })
      expect(moved.data?.leafId).toBe(ids[0])
      expect(moved.data?.etag).toBe(moved.response.headers.get('etag'))
      expectProblem(await ctx.client.PUT('/v1/sessions/{id}/leaf', { ...path(id), body: { leafId: 'nope' } }), 404, 'SS_ENTRY_NOT_FOUND')
      const stale = { params: { path: { id }, header: { 'if-match': STALE } }, body: { leafId: null } }
      expectProblem(await ctx.client.PUT('/v1/sessions/{id}/leaf', stale), 412, 'SS_PRECONDITION_FAILED')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.PUT('/v1/sessions/{id}/leaf', { ...path(sid), body: { leafId: null } }), status, code)
      }
    })

    it('appends a branch summary (201) and answers 404, 412, 422 and 507', async () => {
      const { id, ids } = await persistedSession()
      const body = { fromId: ids[0] as string, summary: 'tried something' }
      const created = await ctx.client.POST('/v1/sessions/{id}/branch-summary', { ...path(id), body })
      expect(created.data?.entry).toMatchObject({ type: 'branch_summary', parentId: ids[0], fromId: ids[0] })
      const unknownFrom = { ...path(id), body: { fromId: 'nope', summary: 's' } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/branch-summary', unknownFrom), 404, 'SS_ENTRY_NOT_FOUND')
      const stale = { params: { path: { id }, header: { 'if-match': STALE } }, body }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/branch-summary', stale), 412, 'SS_PRECONDITION_FAILED')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.POST('/v1/sessions/{id}/branch-summary', { ...path(sid), body: { fromId: null, summary: 's' } }), status, code)
      }
    })
  })

  describe('GET tree, branch and context', () => {
    it('answer 200 and 400, 404, 422 and 507', async () => {
      const { id, ids } = await persistedSession()
      const tree = await ctx.client.GET('/v1/sessions/{id}/tree', path(id))
      expect(tree.data?.nodes.map((n) => n.id)).toEqual(ids)
      const branch = await ctx.client.GET('/v1/sessions/{id}/branch', { params: { path: { id }, query: { leafId: ids[0] } } })
      expect(branch.data?.entries.map((e) => e.id)).toEqual([ids[0]])
      const unknownLeaf = await ctx.client.GET('/v1/sessions/{id}/branch', { params: { path: { id }, query: { leafId: 'nope' } } })
      expect(unknownLeaf.data).toEqual({ entries: [] })
      const context = await ctx.client.GET('/v1/sessions/{id}/context', path(id))
      expect(context.data).toMatchObject({ thinkingLevel: 'off', models: { default: 'anthropic/claude-test' } })
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/branch', { params: { path: { id }, query: { leafId: '' } } }), 400, 'SS_VALIDATION')
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/context', { params: { path: { id }, query: { leafId: '' } } }), 400, 'SS_VALIDATION')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.GET('/v1/sessions/{id}/tree', path(sid)), status, code)
        expectProblem(await ctx.client.GET('/v1/sessions/{id}/branch', path(sid)), status, code)
        expectProblem(await ctx.client.GET('/v1/sessions/{id}/context', path(sid)), status, code)
      }
    })
  })
}
