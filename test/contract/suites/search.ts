/** README "Search" (in API.md's terms) through the OpenAPI client: hits (200) and a refused query (400). */
import { describe, expect, it } from 'vitest'
import { ctx, expectProblem, freshCwd, persistedSession } from './context.js'

export function searchSuite (): void {
  describe('GET /v1/search', () => {
    it('finds a word of a session (200) and refuses a query with no word (400)', async () => {
      const cwd = freshCwd()
      const { id } = await persistedSession(cwd)
      const found = await ctx.client.GET('/v1/search', { params: { query: { q: 'hello', cwd } } })
      expect(found.data?.hits.map((h) => h.sessionId)).toEqual([id])
      expect(found.data?.hits[0]?.snippet).toContain('«')
      expectProblem(await ctx.client.GET('/v1/search', { params: { query: { q: '-hello' } } }), 400, 'SS_INVALID_QUERY')
    })
  })
}
