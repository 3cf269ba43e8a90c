/**
 * Storage hygiene through the OpenAPI client: a collection of the tenant's blobs (200, 400 for a
 * bad query, 409 while another runs, 507 when a session cannot be read: nothing is removed
 * then) and the tenant's usage.
 */
import { describe, expect, it } from 'vitest'
import { ctx, expectProblem } from './context.js'

export function hygieneSuite (): void {
  describe('POST /v1/blobs/gc', () => {
    it('reports a collection (200), a dry run, and answers 400, 409 and 507', async () => {
      const collect = async (dryRun?: unknown) => await ctx.client.POST('/v1/blobs/gc', { params: { query: dryRun === undefined ? {} : { dryRun: dryRun as boolean } } })
      // Every session is read to mark its refs: one that cannot be read fails the collection.
      expectProblem(await collect(), 507, 'SS_STORAGE_FAILED')
      ctx.server.faults.reads.delete('--unreadable--')
      try {
        const dry = await collect(true)
        expect(dry.response.status).toBe(200)
        expect(dry.data).toMatchObject({ referenced: expect.any(Number), deleted: expect.any(Number) })
        const done = await collect()
        expect(done.response.status).toBe(200)
        expectProblem(await collect('maybe'), 400, 'SS_VALIDATION')
        const release = ctx.server.holdCollection()
        try {
          expectProblem(await collect(), 409, 'SS_COLLECTION_RUNNING')
        } finally {
          await release()
        }
      } finally {
        ctx.server.faults.reads.add('--unreadable--')
      }
    })
  })

  describe('GET /v1/usage', () => {
    it('counts what the tenant stores (200)', async () => {
      const { data, response } = await ctx.client.GET('/v1/usage')
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ tenant: 'default', quota: { bytes: null, sessions: null } })
      expect(data?.bytes).toBe((data?.sessionBytes ?? 0) + (data?.blobBytes ?? 0))
    })
  })
}
