/**
 * The search index of the JSONL store: SQLite FTS5 (unicode61, diacritics folded) in the
 * database of the listing index (listing-index.ts), so that a search joins the sessions' listing
 * rows: a removed session's hits are gone at once, and a hit shows the session's title and cwd
 * as they are now. Derived from the files like the listing rows, and rebuilt from them when
 * missing, damaged or of another version (jsonl-store.ts).
 *
 * Changes are queued as the journals make them durable, in order, and indexed off the append's
 * path, `BATCH_MS` later in one batch: a turn of the event loop indexes queued changes for at
 * most `TURN_MS`, in one transaction, parsing each line once (src/search/extract.ts). A query
 * ranks the newest `CANDIDATES` matches (FTS5 walks a term's matches newest first), so that a
 * word in every entry costs no more than a rarer one. A search first indexes what waits
 * when that is little (`CATCH_UP_LINES`), so it sees every change made before it; the gauges
 * `ss_search_lag_seconds` and `ss_search_pending` show what waits. A failing index write is
 * logged and dropped: it never touches the files, and the next rebuild repairs the index.
 */
import type Database from 'better-sqlite3'
import { addGaugeSource } from '../../metrics/instruments.js'
import { docsOfLine, PART_TEXT, type SearchDoc } from '../../search/extract.js'
import { ELLIPSIS, MARK_END, MARK_START, readableSnippet } from '../../search/text.js'
import type { Logger } from '../../session/logger.js'
import type { ListingItem, SearchHit, SearchPage, SearchQuery, SearchTerm } from '../store.js'

/** Bumped when what the index holds changes: an index of another version is built anew. */
export const SEARCH_VERSION = 1
/** Time a turn of the event loop spends indexing at most, ms. */
const TURN_MS = 20
/** A search indexes what waits first when it is at most this many lines. */
const CATCH_UP_LINES = 5000
/** Tokens of a snippet. */
const SNIPPET_TOKENS = 24
/** Changes wait this long (ms) to be indexed together: FTS5 writes a large batch for far less than many small ones. */
const BATCH_MS = 100
/** Matches ranked at most: the newest ones (README "Search"). */
export const CANDIDATES = 2000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_docs (
  rowid INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  session TEXT NOT NULL,
  entry TEXT,
  type TEXT NOT NULL,
  role TEXT,
  ts TEXT NOT NULL,
  part INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS search_docs_session ON search_docs (tenant, session);
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
`

type Change =
  | { kind: 'append' | 'replace', tenant: string, id: string, lines: readonly string[], at: number }
  | { kind: 'head', tenant: string, id: string, lines: readonly string[], at: number }
  | { kind: 'remove', tenant: string, id: string, at: number }

/** A search's MATCH expression: each term one FTS5 string (a phrase when it has several words). */
export function matchOf (terms: readonly SearchTerm[]): string {
  const quoted = (t: SearchTerm): string => `"${t.text.replaceAll('"', ' ')}"${t.prefix ? '*' : ''}`
  const wanted = terms.filter((t) => !t.exclude).map(quoted).join(' AND ')
  const unwanted = terms.filter((t) => t.exclude).map(quoted)
  return unwanted.length === 0 ? wanted : `(${wanted}) NOT (${unwanted.join(' OR ')})`
}

export class SearchIndex {
  readonly #db: Database.Database
  readonly #log: Logger
  readonly #enabled: boolean
  readonly #queue: Change[] = []
  #head = 0
  #lines = 0
  #scheduled = false
  #closed = false
  readonly #statements
  readonly #gauges: Array<() => void>

  /** Opens the search tables in `db`; `enabled` false: changes are not indexed (and the index is marked stale). */
  constructor (db: Database.Database, log: Logger, enabled: boolean) {
    this.#db = db
    this.#log = log
    this.#enabled = enabled
    db.exec(SCHEMA)
    if (!enabled) this.markStale()
    this.#statements = {
      doc: db.prepare('INSERT INTO search_docs (tenant, session, entry, type, role, ts, part) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      text: db.prepare('INSERT INTO search_text (rowid, body) VALUES (?, ?)'),
      dropText: db.prepare('DELETE FROM search_text WHERE rowid IN (SELECT rowid FROM search_docs WHERE tenant = ? AND session = ?)'),
      dropDocs: db.prepare('DELETE FROM search_docs WHERE tenant = ? AND session = ?'),
      dropTitleText: db.prepare("DELETE FROM search_text WHERE rowid IN (SELECT rowid FROM search_docs WHERE tenant = ? AND session = ? AND type = 'session')"),
      dropTitleDocs: db.prepare("DELETE FROM search_docs WHERE tenant = ? AND session = ? AND type = 'session'"),
      mark: db.prepare("SELECT value FROM marks WHERE name = 'search'"),
    }
    this.#gauges = [
      addGaugeSource('ss_search_pending', () => this.#lines),
      addGaugeSource('ss_search_lag_seconds', () => this.#head < this.#queue.length ? (Date.now() - (this.#queue[this.#head] as Change).at) / 1000 : 0),
    ]
  }

  /** The index holds every stored session (built whole, of this version, and kept since). */
  complete (): boolean {
    return (this.#statements.mark.get() as { value: number } | undefined)?.value === SEARCH_VERSION
  }

  /** Records that the index holds every stored session. */
  markComplete (): void {
    this.#db.prepare("INSERT OR REPLACE INTO marks (name, value) VALUES ('search', ?)").run(SEARCH_VERSION)
  }

  /** Records that the index misses changes: the next start builds it anew. */
  markStale (): void {
    this.#db.prepare("DELETE FROM marks WHERE name = 'search'").run()
  }

  /** Empties the index (a rebuild starts with this). */
  clear (): void {
    this.#queue.length = 0
    this.#head = 0
    this.#lines = 0
    this.#db.exec('DELETE FROM search_docs; DELETE FROM search_text;')
  }

  /** Lines appended to a session (after they are stored). */
  append (tenant: string, id: string, lines: readonly string[]): void {
    this.#push({ kind: 'append', tenant, id, lines, at: Date.now() })
  }

  /** A session's whole text now: every earlier document of it goes. */
  replace (tenant: string, id: string, lines: readonly string[]): void {
    this.#push({ kind: 'replace', tenant, id, lines, at: Date.now() })
  }

  /** A session's new header (its title). */
  head (tenant: string, id: string, header: string): void {
    this.#push({ kind: 'head', tenant, id, lines: [header], at: Date.now() })
  }

  remove (tenant: string, id: string): void {
    this.#push({ kind: 'remove', tenant, id, at: Date.now() })
  }

  /** Lines waiting to be indexed. */
  get pending (): number { return this.#lines }

  /** One page of hits (src/storage/store.ts `search`). */
  search (tenant: string, q: SearchQuery): SearchPage {
    if (this.#lines <= CATCH_UP_LINES) this.drain(Infinity)
    const where = ['search_text MATCH @match', 'd.tenant = @tenant']
    const params: Record<string, unknown> = { match: matchOf(q.terms), tenant, limit: q.limit + 1, offset: q.offset }
    if (!q.thinking) where.push(`d.part = ${PART_TEXT}`)
    if (q.cwd !== undefined) {
      where.push('s.cwd = @cwd')
      params.cwd = JSON.stringify(q.cwd)
    }
    const from = `FROM search_text JOIN search_docs d ON d.rowid = search_text.rowid
      JOIN sessions s ON s.tenant = d.tenant AND s.id = d.session WHERE ${where.join(' AND ')}`
    params.floor = (this.#db.prepare(`SELECT min(at) AS floor FROM (SELECT search_text.rowid AS at ${from}
      ORDER BY search_text.rowid DESC LIMIT ${CANDIDATES})`).get(params) as { floor: number | null }).floor ?? 0
    const rows = this.#db.prepare(`WITH m AS MATERIALIZED (
        SELECT d.rowid AS at, d.session, d.entry, d.type, d.role, d.ts, s.info, -bm25(search_text) AS score
        ${from} AND search_text.rowid >= @floor)
      SELECT * FROM (SELECT m.*, row_number() OVER (PARTITION BY session, entry ORDER BY score DESC) AS nth FROM m)
      WHERE nth = 1 ORDER BY score DESC, ts DESC, at DESC LIMIT @limit OFFSET @offset`).all(params) as HitRow[]
    // Snippets of the page's hits only.
    const snippets = new Map((this.#db.prepare(`SELECT rowid AS at, snippet(search_text, 0, '${MARK_START}', '${MARK_END}', '${ELLIPSIS}', ${SNIPPET_TOKENS}) AS snippet
      FROM search_text WHERE search_text MATCH ? AND rowid >= ? AND rowid IN (SELECT value FROM json_each(?))`)
      .all(params.match, params.floor, JSON.stringify(rows.slice(0, q.limit).map((r) => r.at))) as Array<{ at: number, snippet: string }>).map((r) => [r.at, r.snippet]))
    for (const row of rows) row.snippet = snippets.get(row.at) ?? ''
    return { hits: rows.slice(0, q.limit).map(hitOf), more: rows.length > q.limit }
  }

  /** Indexes what waits, for at most `ms` (all of it with `Infinity`). */
  drain (ms = TURN_MS): void {
    if (this.#closed || this.#head >= this.#queue.length) return
    const until = performance.now() + ms
    try {
      this.#db.transaction(() => {
        do this.#apply(this.#queue[this.#head++] as Change)
        while (this.#head < this.#queue.length && performance.now() < until)
      })()
    } catch (err) {
      this.#log.error({ err }, 'Indexing sessions for search failed; the index is rebuilt at the next start')
      try {
        this.markStale()
      } catch {
        // The database takes no write at all (a full disk): it is checked, and rebuilt, at the next start.
      }
    }
    if (this.#head >= this.#queue.length) {
      this.#queue.length = 0
      this.#head = 0
      this.#lines = 0
    } else if (this.#head > 1024) {
      this.#queue.splice(0, this.#head)
      this.#head = 0
    }
  }

  close (): void {
    this.drain(Infinity)
    this.#closed = true
    for (const stop of this.#gauges) stop()
  }

  #push (change: Change): void {
    if (!this.#enabled || this.#closed) return
    this.#queue.push(change)
    this.#lines += change.kind === 'remove' ? 1 : change.lines.length
    this.#schedule()
  }

  #apply (change: Change): void {
    const s = this.#statements
    const session = JSON.stringify(change.id)
    this.#lines -= change.kind === 'remove' ? 1 : change.lines.length
    if (change.kind === 'remove' || change.kind === 'replace') {
      s.dropText.run(change.tenant, session)
      s.dropDocs.run(change.tenant, session)
    } else if (change.kind === 'head') {
      s.dropTitleText.run(change.tenant, session)
      s.dropTitleDocs.run(change.tenant, session)
    }
    if (change.kind === 'remove') return
    for (const line of change.lines) {
      for (const doc of docsOfLine(line)) this.#insert(change.tenant, session, doc)
    }
  }

  #insert (tenant: string, session: string, doc: SearchDoc): void {
    const entry = doc.entryId === null ? null : JSON.stringify(doc.entryId)
    const { lastInsertRowid } = this.#statements.doc.run(tenant, session, entry, doc.type, doc.role, doc.timestamp, doc.part)
    this.#statements.text.run(lastInsertRowid, doc.text)
  }

  #schedule (): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setTimeout(() => {
      this.#scheduled = false
      this.drain()
      if (this.#head < this.#queue.length) this.#schedule()
    }, this.#lines > CATCH_UP_LINES ? 0 : BATCH_MS)
  }
}

interface HitRow { at: number, session: string, entry: string | null, type: string, role: string | null, ts: string, info: string, score: number, snippet: string }

function hitOf (row: HitRow): SearchHit {
  const info = JSON.parse(row.info) as ListingItem
  return {
    sessionId: JSON.parse(row.session) as string,
    entryId: row.entry === null ? null : JSON.parse(row.entry) as string,
    type: row.type,
    role: row.role,
    timestamp: row.ts,
    ...(info.title === undefined ? {} : { title: info.title }),
    cwd: info.cwd,
    snippet: readableSnippet(row.snippet),
    score: row.score,
  }
}
