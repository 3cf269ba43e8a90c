/**
 * `GET /v1/search` (README "Search"): the query parsed (src/search/query.ts), the store searched
 * (each store keeps its own index), pages by offset under a cursor bound to the search.
 */
import { parseQuery } from '../search/query.js'
import { assertValidCwd } from '../session/cwd.js'
import { decodeSearchCursor, encodeSearchCursor } from './cursor.js'
import type { RegistryCore } from './registry-core.js'
import type { SearchHitView, SearchResults } from './types.js'

export interface SearchRequest {
  q: string
  cwd?: string
  /** Default 20, at most 100. */
  limit?: number
  cursor?: string
  /** Also the thinking of assistant messages. */
  thinking?: boolean
}

export async function search (core: RegistryCore, req: SearchRequest): Promise<SearchResults> {
  const terms = parseQuery(req.q)
  if (req.cwd !== undefined) assertValidCwd(req.cwd)
  const thinking = req.thinking === true
  const limit = Math.min(Math.max(req.limit ?? 20, 1), 100)
  const key = JSON.stringify([req.q, req.cwd ?? null, thinking])
  const offset = req.cursor === undefined ? 0 : decodeSearchCursor(req.cursor, key)
  const page = await core.store.search(core.tenant, { terms, cwd: req.cwd, thinking, offset, limit })
  const hits: SearchHitView[] = page.hits.map((h) => ({ ...h, title: h.title ?? null }))
  return { hits, nextCursor: page.more ? encodeSearchCursor(offset + hits.length, key) : null }
}
