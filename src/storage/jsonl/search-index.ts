/**
 * The search index of the JSONL store: SQLite FTS5 (unicode61, diacritics folded) in
 * `search.sqlite` beside the listing index (listing-index.ts), attached to the listing's
 * connection as `search`, so that a search joins the sessions' listing rows: a removed
 * session's hits are gone at once, and a hit shows the session's title and cwd as they are now.
 * Derived from the files like the listing rows, and rebuilt from them when missing, damaged or of
 * another version (search-build.ts).
 *
 * Changes are queued as the journals make them durable, in order, and indexed off the append's
 * path: `BATCH_MS` later, in one batch, by the search worker (search-worker.ts), a thread of its
 * own that parses each line once and writes the index, so the server's thread does neither. An
 * index kept in memory is written in the server's thread instead, at most `TURN_MS` per turn of
 * the event loop. A query ranks the newest `CANDIDATES` matches (FTS5 walks a term's matches
 * newest first and stops there), so that a word in every entry costs little more than a rarer one. A search first
 * waits for what is queued when that is little (`CATCH_UP_LINES`), so it sees every change made
 * before it; the gauges `ss_search_lag_seconds` and `ss_search_pending` show what waits. A
 * failing index write is logged and dropped: it never touches the files, and the index is
 * marked for a rebuild at the next start.
 */
import type Database from 'better-sqlite3'
import { rmSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { addGaugeSource } from '../../metrics/instruments.js'
import { PART_TEXT } from '../../search/extract.js'
import { ELLIPSIS, MARK_END, MARK_START, readableSnippet } from '../../search/text.js'
import type { Logger } from '../../session/logger.js'
import type { ListingItem, SearchHit, SearchPage, SearchQuery, SearchTerm } from '../store.js'
import { charsOf, linesOf, searchSchema, SEARCH_VERSION, SearchWriter, type SearchChange } from './search-writer.js'

/** Time a turn of the event loop spends indexing at most, ms (an index in memory). */
const TURN_MS = 20
/** A search waits for what is queued first when it is at most this many lines. */
const CATCH_UP_LINES = 5000
/** Tokens of a snippet. */
const SNIPPET_TOKENS = 24
/** Changes wait this long (ms) to be indexed together: FTS5 writes a large batch for far less than many small ones. */
const BATCH_MS = 100
/** Matches ranked at most: the newest ones (README "Search"). */
export const CANDIDATES = 2000

/** Where batches of changes are applied: the worker, or a writer in this thread. */
interface Sink {
  /** Applies `changes` in order; rejects when that failed. */
  send(changes: SearchChange[]): Promise<void>
  close(): Promise<void>
}

/** The writer in this thread, at most `TURN_MS` per turn of the event loop. */
function inThread (writer: SearchWriter): Sink {
  return {
    send: async (changes) => {
      for (let at = 0; at < changes.length;) {
        at = writer.apply(changes, at, performance.now() + TURN_MS)
        if (at < changes.length) await new Promise((resolve) => setImmediate(resolve))
      }
    },
    close: async () => {},
  }
}

/**
 * The search worker on `file`; should it end, the batches go to `fallback` (a writer in this
 * thread) from then on.
 */
function inWorker (file: string, log: Logger, fallback: () => Sink): Sink {
  const worker = startWorker(file)
  const waiting = new Map<number, { resolve: () => void, reject: (err: Error) => void }>()
  let sent = 0
  let gone: Sink | undefined
  const end = (err: Error): void => {
    gone ??= fallback()
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
  }
  worker.on('message', (m: { done: number, error?: string }) => {
    const w = waiting.get(m.done)
    waiting.delete(m.done)
    if (m.error === undefined) w?.resolve()
    else w?.reject(new Error(m.error))
  })
  worker.on('error', (err) => {
    log.error({ err }, 'The search worker failed; indexing goes on in the server\'s thread')
    end(err)
  })
  worker.on('exit', () => { end(new Error('The search worker has ended')) })
  return {
    send: async (changes) => {
      if (gone !== undefined) return await gone.send(changes)
      const done = ++sent
      await new Promise<void>((resolve, reject) => {
        waiting.set(done, { resolve, reject })
        worker.postMessage({ done, changes })
      })
    },
    close: async () => {
      if (gone !== undefined) return
      gone = { send: async () => {}, close: async () => {} }
      const exited = new Promise((resolve) => worker.once('exit', resolve))
      worker.postMessage({ close: true })
      await exited
    },
  }
}

/**
 * The worker's young generation, MB: what it parses is garbage at once, and V8's default lets
 * that garbage take tens of MB of a server that may be loading a large session meanwhile.
 */
const WORKER_YOUNG_MB = 4

/** Compiled, the worker is the .js file beside this one; run from the sources (the tests), the .ts one through tsx (search-worker-source.mjs). */
function startWorker (file: string): Worker {
  const entry = import.meta.url.endsWith('.ts') ? './search-worker-source.mjs' : './search-worker.js'
  return new Worker(new URL(entry, import.meta.url), { workerData: { file }, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } })
}

/**
 * Attaches the search database at `file` (`:memory:` for one in memory) to `db` as `search`,
 * made anew when it cannot be opened; the tables of an index kept in the listing's own database
 * (before it had a file of its own) are dropped.
 */
function attach (db: Database.Database, file: string): void {
  db.exec('DROP TABLE IF EXISTS main.search_text; DROP TABLE IF EXISTS main.search_docs')
  db.prepare("DELETE FROM main.marks WHERE name = 'search'").run()
  try {
    db.prepare('ATTACH DATABASE ? AS search').run(file)
    if (file !== ':memory:') db.pragma('search.journal_mode = WAL')
    db.exec(searchSchema('search'))
  } catch {
    if (db.prepare("SELECT 1 FROM pragma_database_list WHERE name = 'search'").get() !== undefined) db.exec('DETACH DATABASE search')
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    db.prepare('ATTACH DATABASE ? AS search').run(file)
    db.pragma('search.journal_mode = WAL')
    db.exec(searchSchema('search'))
  }
  if (file !== ':memory:') db.pragma('search.synchronous = NORMAL')
}

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
  readonly #sink: Sink
  /** Changes not yet handed to the sink, and their lines. */
  #queue: SearchChange[] = []
  #queued = 0
  #queuedChars = 0
  /** When the oldest change of the queue was queued (undefined: none waits). */
  #queuedAt: number | undefined
  /** Lines of the batch being applied, and when its oldest change was queued. */
  #sending = 0
  #sendingChars = 0
  #sendingAt: number | undefined
  #timer: NodeJS.Timeout | undefined
  #pumping: Promise<void> | undefined
  /** Settles once the batch being applied is (or failed). */
  #inFlight: Promise<void> = Promise.resolve()
  #closed = false
  readonly #gauges: Array<() => void>

  /**
   * The index in `file` (`:memory:`: in memory, written in this thread), attached to the
   * listing's connection `db`; `enabled` false: changes are not indexed (and the index is marked
   * stale).
   */
  constructor (db: Database.Database, file: string, log: Logger, enabled: boolean) {
    this.#db = db
    this.#log = log
    this.#enabled = enabled
    attach(db, file)
    const here = (): Sink => inThread(new SearchWriter(db, 'search'))
    this.#sink = file === ':memory:' || !enabled ? here() : inWorker(file, log, here)
    if (!enabled) this.markStale()
    this.#gauges = [
      addGaugeSource('ss_search_pending', () => this.pending),
      addGaugeSource('ss_search_lag_seconds', () => {
        const oldest = this.#sendingAt ?? this.#queuedAt
        return oldest === undefined ? 0 : (Date.now() - oldest) / 1000
      }),
    ]
  }

  /** The index holds every stored session (built whole, of this version, and kept since). */
  complete (): boolean {
    return (this.#db.prepare("SELECT value FROM search.search_marks WHERE name = 'complete'").get() as { value: number } | undefined)?.value === SEARCH_VERSION
  }

  /** Records, after every change queued before, that the index holds every stored session. */
  markComplete (): void { this.#push({ kind: 'complete' }, true) }

  /** Records that the index misses changes: the next start builds it anew. */
  markStale (): void { this.#push({ kind: 'stale' }, true) }

  /** Empties the index, which then misses every session (a rebuild starts with this); what was queued is dropped. */
  clear (): void {
    this.#queue = []
    this.#queued = 0
    this.#queuedChars = 0
    this.#queuedAt = undefined
    this.#push({ kind: 'clear' }, true)
  }

  /** Lines appended to a session (after they are stored). */
  append (tenant: string, id: string, lines: readonly string[]): void {
    this.#push({ kind: 'append', tenant, id, lines })
  }

  /** A session's whole text now: every earlier document of it goes. */
  replace (tenant: string, id: string, lines: readonly string[]): void {
    this.#push({ kind: 'replace', tenant, id, lines })
  }

  /** A session's new header (its title). */
  head (tenant: string, id: string, header: string): void {
    this.#push({ kind: 'head', tenant, id, lines: [header] })
  }

  remove (tenant: string, id: string): void {
    this.#push({ kind: 'remove', tenant, id })
  }

  /** Lines waiting to be indexed. */
  get pending (): number { return this.#queued + this.#sending }

  /** Characters of the lines waiting to be indexed. */
  get pendingChars (): number { return this.#queuedChars + this.#sendingChars }

  /** Resolves once every change queued before the call is applied (or failed). */
  async flushed (): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    while (this.#queue.length > 0 || this.#pumping !== undefined) await this.#pump()
  }

  /**
   * Resolves once at most `chars` characters wait to be indexed, the batch being applied
   * included: a reader that waits for this before it queues more stays that far ahead of the
   * index, and the index is never left without a batch meanwhile.
   */
  async room (chars: number): Promise<void> {
    while (this.pendingChars > chars && !this.#closed) {
      if (this.#pumping === undefined) {
        clearTimeout(this.#timer)
        this.#timer = undefined
        void this.#pump()
      }
      await this.#inFlight
    }
  }

  /** One page of hits (src/storage/store.ts `search`). */
  async search (tenant: string, q: SearchQuery): Promise<SearchPage> {
    if (this.pending <= CATCH_UP_LINES) await this.flushed()
    const where = ['search_text MATCH @match', 'd.tenant = @tenant']
    // A hit holds no excluded word: what ranks it and marks its snippet are the wanted words alone.
    const wanted = matchOf(q.terms.filter((t) => !t.exclude))
    const params: Record<string, unknown> = { match: matchOf(q.terms), wanted, tenant, limit: q.limit + 1, offset: q.offset }
    if (!q.thinking) where.push(`d.part = ${PART_TEXT}`)
    if (q.cwd !== undefined) {
      where.push('s.cwd = @cwd')
      params.cwd = JSON.stringify(q.cwd)
    }
    const from = `FROM search_text JOIN search_docs d ON d.rowid = search_text.rowid
      JOIN sessions s ON s.tenant = d.tenant AND s.id = d.session WHERE ${where.join(' AND ')}`
    // The newest candidates in one walk: FTS5 walks a term newest first and stops at the limit, where a
    // bound on rowid would have it read the term's every match. bm25 counts the matches of every word of
    // its query, so with excluded words the candidates are scored by a second walk of the wanted ones
    // over their range, the excluded words' matches never counted. The candidates carry only what ranks
    // them; the page's rows fetch the rest (2,000 copies of a session's listing row took a third of a query).
    const candidates = wanted === params.match
      ? `m AS MATERIALIZED (SELECT d.rowid AS at, d.session, d.entry, d.ts, -bm25(search_text) AS score
          ${from} ORDER BY search_text.rowid DESC LIMIT ${CANDIDATES})`
      : `c AS MATERIALIZED (SELECT d.rowid AS at, d.session, d.entry, d.ts ${from} ORDER BY search_text.rowid DESC LIMIT ${CANDIDATES}),
        r AS MATERIALIZED (SELECT rowid AS at, -bm25(search_text) AS score FROM search_text WHERE search_text MATCH @wanted
          AND rowid BETWEEN CAST((SELECT min(at) FROM c) AS INTEGER) AND CAST((SELECT max(at) FROM c) AS INTEGER)),
        m AS (SELECT c.*, r.score FROM c JOIN r ON r.at = c.at)`
    const rows = this.#db.prepare(`WITH ${candidates},
      page AS (SELECT * FROM (SELECT m.*, row_number() OVER (PARTITION BY session, entry ORDER BY score DESC) AS nth FROM m)
        WHERE nth = 1 ORDER BY score DESC, ts DESC, at DESC LIMIT @limit OFFSET @offset)
      SELECT page.*, d.type, d.role, s.info FROM page JOIN search_docs d ON d.rowid = page.at
        JOIN sessions s ON s.tenant = @tenant AND s.id = page.session ORDER BY score DESC, ts DESC, at DESC`).all(params) as HitRow[]
    const snippets = this.#snippets(wanted, rows.slice(0, q.limit).map((r) => r.at))
    for (const row of rows) row.snippet = snippets.get(row.at) ?? ''
    return { hits: rows.slice(0, q.limit).map(hitOf), more: rows.length > q.limit }
  }

  /**
   * The snippets of the page's hits, by rowid, in one walk over their range (bounds on rowid are
   * cast: FTS5 drops a bound bound as a double, and a lookup by rowid gathers a prefix's terms anew
   * each time).
   */
  #snippets (match: string, ats: number[]): Map<number, string> {
    if (ats.length === 0) return new Map()
    const found = this.#db.prepare(`SELECT rowid AS at, snippet(search_text, 0, '${MARK_START}', '${MARK_END}', '${ELLIPSIS}', ${SNIPPET_TOKENS}) AS snippet
      FROM search_text WHERE search_text MATCH ? AND rowid BETWEEN CAST(? AS INTEGER) AND CAST(? AS INTEGER)
      AND +rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid DESC`)
      .all(match, Math.min(...ats), Math.max(...ats), JSON.stringify(ats)) as Array<{ at: number, snippet: string }>
    return new Map(found.map((r) => [r.at, r.snippet]))
  }

  /** Applies what is queued, then stops the worker. */
  async close (): Promise<void> {
    if (this.#closed) return
    await this.flushed()
    this.#closed = true
    for (const stop of this.#gauges) stop()
    await this.#sink.close()
  }

  /** Queues `change`; a mark (`always`) is queued even with indexing off. */
  #push (change: SearchChange, always = false): void {
    if ((!this.#enabled && !always) || this.#closed) return
    this.#queue.push(change)
    this.#queued += linesOf(change)
    this.#queuedChars += charsOf(change)
    this.#queuedAt ??= Date.now()
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined
      void this.#pump()
    }, this.#queued > CATCH_UP_LINES ? 0 : BATCH_MS)
  }

  /** Hands what is queued to the sink, batch after batch, until nothing is queued. */
  #pump (): Promise<void> {
    this.#pumping ??= (async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue
        this.#queue = []
        this.#sending = this.#queued
        this.#sendingChars = this.#queuedChars
        this.#sendingAt = this.#queuedAt
        this.#queued = 0
        this.#queuedChars = 0
        this.#queuedAt = undefined
        const sent = this.#sink.send(batch)
        this.#inFlight = sent.then(() => {}, () => {})
        try {
          await sent
        } catch (err) {
          this.#log.error({ err }, 'Indexing sessions for search failed; the index is rebuilt at the next start')
          if (batch.some((c) => c.kind !== 'stale')) this.#queue.unshift({ kind: 'stale' })
        }
        this.#sending = 0
        this.#sendingChars = 0
        this.#sendingAt = undefined
      }
    })().finally(() => { this.#pumping = undefined })
    return this.#pumping
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
