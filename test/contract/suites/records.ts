/**
 * The routes that take a session as an agent wrote it, through the OpenAPI client: `POST
 * records` (entries with their own ids) and `PUT file` (the whole file), their successes and errors.
 */
import { describe, expect, it } from 'vitest'
import { createSession, ctx, expectProblem, FAILING, STALE } from './context.js'

const path = (id: string) => ({ params: { path: { id } } })
const record = (id: string, parentId: string | null, role = 'user') => ({
  type: 'message', id, parentId, timestamp: '2026-03-14T15:04:07.123Z', message: { role, content: `${role} ${id}`, timestamp: 1 },
})
const fileOf = (id: string, ...lines: object[]): string =>
  [{ type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:07.123Z', cwd: '/contract/files' }, ...lines].map((l) => JSON.stringify(l) + '\n').join('')
const ndjson = { bodySerializer: (body: unknown) => String(body), headers: { 'content-type': 'application/x-ndjson' } }

export function recordsSuite (): void {
  describe('POST /v1/sessions/{id}/records', () => {
    it('appends (201), takes the same records again (200), and answers 404, 409, 412, 422 and 507', async () => {
      const { header: { id } } = await createSession()
      const first = await ctx.client.POST('/v1/sessions/{id}/records', { ...path(id), body: { records: [record('r1', null)] } })
      expect(first.response.status).toBe(201)
      expect(first.data).toEqual({ appended: 1, existing: 0, leafId: 'r1', total: 1, persisted: false })
      const again = await ctx.client.POST('/v1/sessions/{id}/records', { ...path(id), body: { records: [record('r1', null)] } })
      expect(again.response.status).toBe(200)
      expect(again.data).toMatchObject({ appended: 0, existing: 1 })
      const taken = { ...path(id), body: { records: [{ ...record('r1', null), message: { role: 'user', content: 'other', timestamp: 2 } }] } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/records', taken), 409, 'SS_ENTRY_ID_TAKEN')
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/records', { ...path(id), body: { records: [record('r2', 'nope')] } }), 422, 'SS_UNKNOWN_PARENT')
      const stale = { params: { path: { id }, header: { 'if-match': STALE } }, body: { records: [record('r2', 'r1')] } }
      expectProblem(await ctx.client.POST('/v1/sessions/{id}/records', stale), 412, 'SS_PRECONDITION_FAILED')
      for (const [sid, status, code] of FAILING) {
        expectProblem(await ctx.client.POST('/v1/sessions/{id}/records', { ...path(sid), body: { records: [record('r1', null)] } }), status, code)
      }
    })
  })

  describe('PUT /v1/sessions/{id}/file', () => {
    it('creates (201), replaces (200), and answers 412, 422 and 507', async () => {
      const id = 'contract-file'
      const created = await ctx.client.PUT('/v1/sessions/{id}/file', { ...path(id), body: fileOf(id, record('f1', null)), ...ndjson })
      expect(created.response.status).toBe(201)
      const etag = created.response.headers.get('etag') as string
      const replace = { params: { path: { id }, header: { 'if-match': etag } }, body: fileOf(id, record('f1', null), record('f2', 'f1', 'assistant')), ...ndjson }
      const replaced = await ctx.client.PUT('/v1/sessions/{id}/file', replace)
      expect(replaced.response.status).toBe(200)
      expect(replaced.data).toMatchObject({ leafId: 'f2', entryCount: 2 })
      expectProblem(await ctx.client.PUT('/v1/sessions/{id}/file', replace), 412, 'SS_PRECONDITION_FAILED')
      const tooNew = fileOf(id).replace('"version":3', '"version":9')
      expectProblem(await ctx.client.PUT('/v1/sessions/{id}/file', { ...path(id), body: tooNew, ...ndjson }), 422, 'SS_SESSION_VERSION_TOO_NEW')
      for (const [sid, status, code] of FAILING.slice(1)) {
        expectProblem(await ctx.client.PUT('/v1/sessions/{id}/file', { ...path(sid), body: fileOf(sid), ...ndjson }), status, code)
      }
    })
  })
}
