/**
 * The store of `STORAGE=postgres` (schema-log.ts): PostgreSQL is the session log, shared by any
 * number of servers. A server reads a session when a request needs it, keeps no catalog of the
 * others, and hears of what other servers change through `ss_changes` (pg-feed.ts). Listings,
 * `recent` and `continue` are indexed queries with keyset cursors.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { InvalidSessionId, SessionExists } from '../../errors.js'
import type { Logger } from '../../session/logger.js'
import { headLineCount, SessionPrefix, textOf } from '../session-head.js'
import type {
  AloneOutcome, Breadcrumb, Journal, ListingItem, ListPage, ListQuery, LoadedSession, NewSession, RecentItem,
  ReindexProgress, SearchPage, SearchQuery, SessionStore, SessionUsage, StoreChange, StoredText,
} from '../store.js'
import { AppendGroups } from './pg-appends.js'
import { ChangeFeed } from './pg-feed.js'
import { pgRefLines, pgRunAlone, pgUsage } from './pg-hygiene.js'
import { listingColumns, notifyChange, PgJournal, type JournalStart, type PgJournalContext } from './pg-journal.js'
import { searchLog } from './pg-search.js'
import { SearchQueue } from './pg-search-queue.js'
import { storable, textArray } from './pg-text.js'
import { databaseError, DEFAULT_DATABASE_TIMEOUT_MS, query, transaction } from './pool.js'

/** Lines read per page while a session's text is sent on. */
const PAGE_LINES = 5000
/** Characters of a session's start kept for its display name (at least its first 4096 bytes). */
const PREFIX_CHARS = 8192

interface SessionRow { head: string, lines: number, torn: boolean, saved: boolean, version: string, modified: number, size: string }

export interface PgStoreOptions {
  /** The database's URL, for the connection that listens to other servers' changes. */
  listenUrl: string
  logger: Logger
  /** Longest wait for the database: an append, the change feed's heartbeat (default DEFAULT_DATABASE_TIMEOUT_MS). */
  timeoutMs?: number
  /** Drain the search queue on this server (`SEARCH_INDEX`); default true. */
  searchIndex?: boolean
}

export class PgStore implements SessionStore {
  readonly #pool: pg.Pool
  readonly #ctx: PgJournalContext
  readonly #open = new Set<PgJournal>()
  readonly #feed: ChangeFeed
  readonly #search: SearchQueue
  readonly #searching: boolean

  private constructor (pool: pg.Pool, options: PgStoreOptions) {
    const origin = randomUUID()
    this.#pool = pool
    this.#search = new SearchQueue(pool, options.logger)
    this.#searching = options.searchIndex !== false
    const timeoutMs = options.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS
    this.#ctx = { pool, appends: new AppendGroups(pool, origin, timeoutMs), origin, forget: (j) => { this.#open.delete(j) } }
    this.#feed = new ChangeFeed({ url: options.listenUrl, origin, logger: options.logger, open: () => this.#open, pool, timeoutMs })
  }

  /** The store over the (migrated) database of `pool`, following the changes of other servers. */
  static async open (pool: pg.Pool, options: PgStoreOptions): Promise<PgStore> {
    const store = new PgStore(pool, options)
    await store.#feed.start()
    if (store.#searching) store.#search.start()
    return store
  }

  async load (tenant: string, id: string): Promise<LoadedSession | undefined> {
    const opened = await this.#read(tenant, id, false)
    if (opened === undefined) return undefined
    const { row, text } = opened
    const journal = new PgJournal(this.#ctx, startOf(tenant, id, row), new SessionPrefix('', `${id}.jsonl`))
    this.#open.add(journal)
    return { text: capture(text, journal), size: Number(row.size), modifiedMs: row.modified, journal }
  }

  async read (tenant: string, id: string): Promise<StoredText | undefined> {
    const opened = await this.#read(tenant, id, true)
    return opened === undefined ? undefined : { text: opened.text, size: Number(opened.row.size) }
  }

  async create (tenant: string, session: NewSession): Promise<Journal> {
    if (!storable(session.id)) throw new InvalidSessionId('Session id holds characters a session id cannot have')
    const all = session.lines.map((l) => l.line)
    const h = headLineCount(all)
    const body = all.slice(h)
    const whole = textOf(all, session.torn)
    const prefix = new SessionPrefix(whole.slice(0, PREFIX_CHARS), `${session.id}.jsonl`)
    const version = await transaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ version: string }>(`INSERT INTO ss_sessions (tenant, id, head, lines, torn, saved, version,
        reset_version, info, modified, cwd, messages, recent, size) VALUES ($1, $2, $3, $4, $5, $6, nextval('ss_version'),
        currval('ss_version'), $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING RETURNING version`,
      [tenant, session.id, textOf(all.slice(0, h)), body.length, session.torn === true && body.length > 0, session.saved,
        ...listingColumns(session.info), JSON.stringify(prefix.name()), Buffer.byteLength(whole, 'utf8')])
      if (rows[0] === undefined) throw new SessionExists(session.id)
      const text = textArray(3, body)
      await client.query(`INSERT INTO ss_lines (tenant, session, pos, line) SELECT $1, $2, l.o, l.line
        FROM unnest(${text.sql}) WITH ORDINALITY AS l (line, o)`, [tenant, session.id, text.value])
      const created = Number(rows[0].version)
      await notifyChange(client, tenant, session.id, created, 'created', this.#ctx.origin)
      return created
    })
    const journal = new PgJournal(this.#ctx, { tenant, id: session.id, version, saved: session.saved, lines: body.length, torn: session.torn === true }, prefix)
    this.#open.add(journal)
    return journal
  }

  async list (tenant: string, q: ListQuery): Promise<ListPage> {
    const where = ['tenant = $1', 'info IS NOT NULL']
    const values: unknown[] = [tenant, q.limit + 1]
    if (q.cwd !== undefined) where.push(`cwd = $${values.push(JSON.stringify(q.cwd))}`)
    if (!q.includeEmpty) where.push('messages > 0')
    if (q.after !== undefined) {
      // `modified <= m` lets the index scan start at the cursor; the rest breaks the ties.
      const m = values.push(q.after.modifiedMs)
      where.push(`modified <= $${m} AND (modified < $${m} OR id > $${values.push(q.after.id)})`)
    }
    const { rows } = await query<{ info: string }>(this.#pool,
      `SELECT info FROM ss_sessions WHERE ${where.join(' AND ')} ORDER BY modified DESC, id ASC LIMIT $2`, values)
    return { items: rows.slice(0, q.limit).map((r) => JSON.parse(r.info) as ListingItem), more: rows.length > q.limit }
  }

  async info (tenant: string, id: string): Promise<ListingItem | undefined> {
    if (!storable(id)) return undefined
    const { rows } = await query<{ info: string | null }>(this.#pool, 'SELECT info FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, id])
    const info = rows[0]?.info
    return info === undefined || info === null ? undefined : JSON.parse(info) as ListingItem
  }

  async recent (tenant: string, cwd: string, limit: number): Promise<RecentItem[]> {
    const { rows } = await query<{ id: string, recent: string | null, modified: number }>(this.#pool,
      'SELECT id, recent, modified FROM ss_sessions WHERE tenant = $1 AND cwd = $2 ORDER BY modified DESC, id ASC LIMIT $3',
      [tenant, JSON.stringify(cwd), limit])
    return rows.map((r) => ({ id: r.id, name: r.recent === null ? r.id : JSON.parse(r.recent) as string, modifiedMs: r.modified }))
  }

  async continueTarget (tenant: string, cwd: string, terminalId?: string): Promise<string | undefined> {
    const { rows } = await query<{ id: string }>(this.#pool, `SELECT id FROM (
        SELECT s.id, 0 AS rank FROM ss_breadcrumbs b JOIN ss_sessions s ON s.tenant = b.tenant AND s.id = b.session AND s.saved
          WHERE b.tenant = $1 AND b.terminal_id = $3 AND b.cwd = $2
        UNION ALL
        (SELECT id, 1 FROM ss_sessions WHERE tenant = $1 AND cwd = $2 AND saved ORDER BY modified DESC, id ASC LIMIT 1)
      ) found ORDER BY rank LIMIT 1`, [tenant, JSON.stringify(cwd), terminalId ?? null])
    return rows[0]?.id
  }

  async setBreadcrumb (tenant: string, terminalId: string, cwd: string, id: string): Promise<void> {
    await query(this.#pool, `INSERT INTO ss_breadcrumbs (tenant, terminal_id, cwd, session) VALUES ($1, $2, $3, $4)
      ON CONFLICT (tenant, terminal_id) DO UPDATE SET cwd = excluded.cwd, session = excluded.session`, [tenant, terminalId, JSON.stringify(cwd), id])
  }

  async breadcrumbs (tenant: string): Promise<Breadcrumb[]> {
    const { rows } = await query<{ terminal_id: string, cwd: string, session: string }>(this.#pool, `SELECT b.terminal_id, b.cwd, b.session
      FROM ss_breadcrumbs b JOIN ss_sessions s ON s.tenant = b.tenant AND s.id = b.session AND s.saved WHERE b.tenant = $1 ORDER BY b.terminal_id`, [tenant])
    return rows.map((r) => ({ terminalId: r.terminal_id, cwd: JSON.parse(r.cwd) as string, id: r.session }))
  }

  async tenants (): Promise<string[]> {
    const { rows } = await query<{ tenant: string }>(this.#pool, 'SELECT tenant FROM ss_sessions UNION SELECT tenant FROM ss_blobs ORDER BY tenant')
    return rows.map((r) => r.tenant)
  }

  refLines (tenant: string): AsyncIterable<string> {
    return pgRefLines(this.#pool, tenant)
  }

  async usage (tenant: string): Promise<SessionUsage> {
    return await pgUsage(this.#pool, tenant)
  }

  async runAlone<T> (name: string, work: () => Promise<T>): Promise<AloneOutcome<T>> {
    return await pgRunAlone(this.#pool, name, work)
  }

  async search (tenant: string, q: SearchQuery): Promise<SearchPage> {
    // What waits is indexed first (a batch), so a search sees the changes made before it.
    if (this.#searching) await this.#search.drain()
    return await searchLog(this.#pool, tenant, q)
  }

  async reindex (progress: ReindexProgress): Promise<void> {
    await this.#search.rebuild(progress)
  }

  follow (listener: (change: StoreChange) => void): () => void {
    return this.#feed.add(listener)
  }

  async writable (): Promise<boolean> {
    try {
      const { rows } = await query<{ ok: boolean }>(this.#pool, 'SELECT NOT pg_is_in_recovery() AS ok')
      return rows[0]?.ok === true
    } catch {
      return false
    }
  }

  async close (): Promise<void> {
    await this.#search.close()
    await this.#feed.close()
  }

  /**
   * The session row and its text, read in one snapshot as it is consumed (the connection is held
   * until the text is read whole, or its reading stops). `savedOnly`: undefined for an unsaved one.
   */
  async #read (tenant: string, id: string, savedOnly: boolean): Promise<{ row: SessionRow, text: AsyncIterable<string> } | undefined> {
    if (!storable(id)) return undefined
    const client = await this.#pool.connect().catch((err: unknown) => { throw databaseError(err) })
    let handedOver = false
    try {
      // Read as fast as the reader takes it, so a slow one is not cut off by the idle timeout.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = 0')
      const { rows } = await client.query<SessionRow>(
        'SELECT head, lines, torn, saved, version, modified, size FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, id])
      const row = rows[0]
      if (row === undefined || (savedOnly && !row.saved)) return undefined
      handedOver = true
      return { row, text: pages(client, tenant, id, row) }
    } finally {
      if (!handedOver) {
        await client.query('COMMIT').catch(() => {})
        client.release()
      }
    }
  }
}

function startOf (tenant: string, id: string, row: SessionRow): JournalStart {
  return { tenant, id, version: Number(row.version), saved: row.saved, lines: row.lines, torn: row.torn }
}

/** The head, then the lines page by page, in the transaction of `client`, which is then released. */
async function * pages (client: pg.PoolClient, tenant: string, id: string, row: SessionRow): AsyncIterable<string> {
  let broken: unknown
  try {
    yield row.head
    for (let after = 0; after < row.lines;) {
      const { rows } = await client.query<{ pos: number, line: string }>(
        'SELECT pos, line FROM ss_lines WHERE tenant = $1 AND session = $2 AND pos > $3 ORDER BY pos LIMIT $4', [tenant, id, after, PAGE_LINES])
      if (rows.length === 0) break
      after = (rows[rows.length - 1] as { pos: number }).pos
      const last = after >= row.lines
      yield rows.map((r) => r.line).join('\n') + (last && row.torn ? '' : '\n')
    }
  } catch (err) {
    broken = err
    throw err
  } finally {
    await client.query('COMMIT').catch((err: unknown) => { broken ??= err })
    client.release(broken instanceof Error ? broken : undefined)
  }
}

/** `text` as read, its start handed to `journal` once read whole. */
async function * capture (text: AsyncIterable<string>, journal: PgJournal): AsyncIterable<string> {
  let start = ''
  for await (const chunk of text) {
    if (start.length < PREFIX_CHARS) start = (start + chunk).slice(0, PREFIX_CHARS)
    yield chunk
  }
  journal.loaded(start)
}
