/**
 * Search of the session log (migration 10, schema-search.ts): the query's plain words, phrases
 * and exclusions go through `websearch_to_tsquery`, its prefixes through `to_tsquery` (`:*`),
 * both with the `ss_search` configuration (schema-search.ts) the documents were indexed with; documents match by the
 * GIN index (or, for a word in most entries, by walking the newest documents), the newest
 * `CANDIDATES` of them rank by `ts_rank` of the wanted terms, and the snippets of the page's hits
 * come from `ts_headline`.
 */
import type pg from 'pg'
import { InvalidSearchQuery } from '../../errors.js'
import { PART_TEXT } from '../../search/extract.js'
import { ELLIPSIS, MARK_END, MARK_START, readableSnippet } from '../../search/text.js'
import type { ListingItem, SearchHit, SearchPage, SearchQuery, SearchTerm } from '../store.js'
import { query } from './pool.js'

/** Matches ranked at most: the newest ones (README "Search"). */
const CANDIDATES = 2000

const HEADLINE = `StartSel=${MARK_START}, StopSel=${MARK_END}, MaxWords=24, MinWords=8, ShortWord=0, MaxFragments=2, FragmentDelimiter=" ${ELLIPSIS} "`

/** The query text of `websearch_to_tsquery` for the terms without a prefix, and of `to_tsquery` for those with one. */
export function tsqueriesOf (terms: readonly SearchTerm[]): { web: string, prefix: string } {
  const web = terms.filter((t) => !t.prefix).map((t) => `${t.exclude ? '-' : ''}"${t.text.replaceAll('"', ' ')}"`).join(' ')
  const prefix = terms.filter((t) => t.prefix).map((t) => {
    const quoted = `'${t.text.replaceAll('\\', '\\\\').replaceAll("'", "''")}':*`
    return t.exclude ? `!(${quoted})` : quoted
  }).join(' & ')
  return { web, prefix }
}

interface HitRow { session: string, entry_id: string | null, type: string, role: string | null, ts: string, info: string, score: number, snippet: string }

/** One page of hits of `tenant` (src/storage/store.ts `search`). */
export async function searchLog (pool: pg.Pool, tenant: string, q: SearchQuery): Promise<SearchPage> {
  const values: unknown[] = [tenant, q.limit + 1, q.offset]
  const tsqueryOf = (terms: readonly SearchTerm[]): string => {
    const { web, prefix } = tsqueriesOf(terms)
    const parts: string[] = []
    if (web !== '') parts.push(`websearch_to_tsquery('ss_search', $${values.push(web)}::text)`)
    if (prefix !== '') parts.push(`to_tsquery('ss_search', $${values.push(prefix)}::text)`)
    return parts.join(' && ')
  }
  // The query as an expression of its parameters, not the CTE's column, so that the planner
  // estimates how many documents match: a common word walks the newest documents, a rare one the GIN index.
  const tsquery = tsqueryOf(q.terms)
  // A hit holds no excluded word: the wanted words alone rank it and are marked in its snippet
  // (ts_rank counts an excluded phrase's words where they occur apart).
  const wanted = q.terms.some((t) => t.exclude) ? tsqueryOf(q.terms.filter((t) => !t.exclude)) : tsquery
  const where = ['x.tenant = $1', `x.tsv @@ (${tsquery})`]
  if (!q.thinking) where.push(`x.part = ${PART_TEXT}`)
  const cwd = q.cwd === undefined ? '' : `AND s.cwd = $${values.push(JSON.stringify(q.cwd))}`
  let rows: HitRow[]
  try {
    // The candidates are sorted narrow (no text, no listing facts): wide rows made the newest-first
    // sort spill to disk. The sessions are a semi-join; their facts come with the page only.
    rows = (await query<HitRow>(pool, `WITH q AS (SELECT ${wanted} AS q),
      candidates AS MATERIALIZED (
        SELECT x.session, x.pos, x.part, x.chunk, x.ts, x.seq, x.tsv FROM ss_search x
        WHERE ${where.join(' AND ')}
          AND EXISTS (SELECT 1 FROM ss_sessions s WHERE s.tenant = x.tenant AND s.id = x.session AND s.info IS NOT NULL ${cwd})
        ORDER BY x.seq DESC LIMIT ${CANDIDATES}),
      ranked AS (
        SELECT c.session, c.pos, c.part, c.chunk, c.ts, c.seq, ts_rank(c.tsv, q.q) AS score,
          row_number() OVER (PARTITION BY c.session, c.pos ORDER BY ts_rank(c.tsv, q.q) DESC, c.part, c.chunk) AS nth
        FROM candidates c, q),
      page AS (SELECT * FROM ranked WHERE nth = 1 ORDER BY score DESC, ts DESC, seq DESC LIMIT $2 OFFSET $3)
      SELECT p.session, x.entry_id, x.type, x.role, p.ts, s.info, p.score::float8 AS score,
        ts_headline('ss_search', x.body, q.q, '${HEADLINE}') AS snippet
      FROM page p JOIN ss_search x ON x.tenant = $1 AND x.session = p.session AND x.pos = p.pos AND x.part = p.part AND x.chunk = p.chunk
        JOIN ss_sessions s ON s.tenant = $1 AND s.id = p.session, q
      ORDER BY p.score DESC, p.ts DESC, p.seq DESC`, values)).rows
  } catch (err) {
    // A query text PostgreSQL cannot take (it names why) is the client's: 400, never 500.
    const code = (err as { code?: unknown }).code
    if (typeof code === 'string' && (code === '42601' || code.startsWith('22'))) throw new InvalidSearchQuery((err as Error).message)
    throw err
  }
  return { hits: rows.slice(0, q.limit).map(hitOf), more: rows.length > q.limit }
}

function hitOf (row: HitRow): SearchHit {
  const info = JSON.parse(row.info) as ListingItem
  return {
    sessionId: row.session,
    entryId: row.entry_id === null ? null : JSON.parse(row.entry_id) as string,
    type: JSON.parse(row.type) as string,
    role: row.role === null ? null : JSON.parse(row.role) as string,
    timestamp: JSON.parse(row.ts) as string,
    ...(info.title === undefined ? {} : { title: info.title }),
    cwd: info.cwd,
    snippet: readableSnippet(row.snippet),
    score: row.score,
  }
}
