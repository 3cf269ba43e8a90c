/**
 * The embedded index of the JSONL store (SQLite through better-sqlite3): one row per session of
 * every tenant, kept current on every change, so that a listing page, `recent`, `continue` and a
 * lookup by id are one indexed query each, however many sessions there are. The files stay the
 * truth: the index is derived, checked against them at start (reconcile.ts), and rebuilt when
 * missing or damaged.
 *
 * Writes are coalesced: `put` and `delete` land in the database in one transaction at most every
 * `FLUSH_MS`, and every read first writes what is pending, so reads always see every change.
 * Text keys (`id`, `cwd`) are stored as JSON strings: SQLite takes UTF-8, which cannot hold a
 * lone surrogate, and JSON escapes it, so two different strings never share a key.
 */
import Database from 'better-sqlite3'
import { rmSync } from 'node:fs'
import type { ListingItem, ListKey, ListPage, ListQuery, RecentItem } from '../store.js'

/**
 * How long changes wait to be written together: a session appended to many times meanwhile is
 * one row write. Under 100 sessions appended to at once, 50 ms cost the server's thread about
 * 7 % of its time in SQLite transactions, 250 ms about 1.5 %. Every read writes what waits first,
 * and the files stay the truth: a crash meanwhile is made good by the check against the files at start.
 */
const FLUSH_MS = 1000

/** Bumped when the tables change: an index of another version is rebuilt from the files. */
const SCHEMA_VERSION = 1

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  tenant TEXT NOT NULL,
  id TEXT NOT NULL,
  path TEXT NOT NULL,
  saved INTEGER NOT NULL,
  version INTEGER NOT NULL,
  modified REAL NOT NULL,
  cwd TEXT NOT NULL,
  messages INTEGER NOT NULL,
  info TEXT NOT NULL,
  recent TEXT NOT NULL,
  size INTEGER NOT NULL,
  checked REAL NOT NULL,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_listing ON sessions (tenant, modified DESC, id);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions (tenant, cwd, modified DESC, id);
CREATE INDEX IF NOT EXISTS sessions_path ON sessions (path);
CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, value REAL NOT NULL);
`

/** One session as the index keeps it. */
export interface IndexRow {
  tenant: string
  id: string
  /** The session file's path relative to DATA_DIR, as the file system spells it. */
  path: string
  saved: boolean
  version: number
  /** Epoch ms of the last change. */
  modified: number
  item: ListingItem
  /** The §11.2 display name. */
  recent: string
  /** Bytes of the file as this process last wrote or read it. */
  size: number
  /** Epoch ms when the file was last known to hold `size` bytes (reconcile compares mtimes with it). */
  checked: number
}

interface SqlRow {
  tenant: string
  id: string
  path: string
  saved: number
  version: number
  modified: number
  cwd: string
  messages: number
  info: string
  recent: string
  size: number
  checked: number
}

const key = (tenant: string, id: string): string => `${tenant}\n${id}`

function fromSql (row: SqlRow): IndexRow {
  return {
    tenant: row.tenant,
    id: JSON.parse(row.id) as string,
    path: row.path,
    saved: row.saved === 1,
    version: row.version,
    modified: row.modified,
    item: JSON.parse(row.info) as ListingItem,
    recent: JSON.parse(row.recent) as string,
    size: row.size,
    checked: row.checked,
  }
}

function toSql (row: IndexRow): SqlRow {
  return {
    tenant: row.tenant,
    id: JSON.stringify(row.id),
    path: row.path,
    saved: row.saved ? 1 : 0,
    version: row.version,
    modified: row.modified,
    cwd: JSON.stringify(row.item.cwd),
    messages: row.item.messageCount,
    info: JSON.stringify(row.item),
    recent: JSON.stringify(row.recent),
    size: row.size,
    checked: row.checked,
  }
}

export class ListingIndex {
  readonly #db: Database.Database
  /** Rows (or deletions, `null`) not yet in the database, by tenant and id. */
  readonly #pending = new Map<string, { tenant: string, id: string, row: IndexRow | null }>()
  #scheduled = false
  readonly #statements

  /**
   * Opens the index at `file` (`:memory:` for one kept in memory), creating it. An index that
   * cannot be opened or is of another version is started anew; `fresh` then says the files
   * must all be read again.
   */
  static open (file: string): { index: ListingIndex, fresh: boolean } {
    let db: Database.Database | undefined
    try {
      db = new Database(file)
      const version = db.pragma('user_version', { simple: true }) as number
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }
      if (tables.n === 0 || version === SCHEMA_VERSION) {
        if (db.pragma('quick_check', { simple: true }) !== 'ok') throw new Error('index damaged')
        return { index: new ListingIndex(db), fresh: tables.n === 0 }
      }
      throw new Error(`index version ${version}`)
    } catch {
      db?.close()
      if (file === ':memory:') throw new Error('cannot open an in-memory index')
      return { index: new ListingIndex(ListingIndex.#recreate(file)), fresh: true }
    }
  }

  static #recreate (file: string): Database.Database {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
    return new Database(file)
  }

  private constructor (db: Database.Database) {
    this.#db = db
    db.pragma('journal_mode = WAL')
    // The files are the truth and reconcile.ts repairs a lagging index: no fsync per commit.
    db.pragma('synchronous = NORMAL')
    db.exec(SCHEMA)
    db.pragma(`user_version = ${SCHEMA_VERSION}`)
    this.#statements = {
      upsert: db.prepare(`INSERT INTO sessions (tenant, id, path, saved, version, modified, cwd, messages, info, recent, size, checked)
        VALUES (@tenant, @id, @path, @saved, @version, @modified, @cwd, @messages, @info, @recent, @size, @checked)
        ON CONFLICT (tenant, id) DO UPDATE SET path = excluded.path, saved = excluded.saved, version = excluded.version,
          modified = excluded.modified, cwd = excluded.cwd, messages = excluded.messages, info = excluded.info,
          recent = excluded.recent, size = excluded.size, checked = excluded.checked`),
      delete: db.prepare('DELETE FROM sessions WHERE tenant = ? AND id = ?'),
      get: db.prepare('SELECT * FROM sessions WHERE tenant = ? AND id = ?'),
      byPath: db.prepare('SELECT * FROM sessions WHERE path = ?'),
      files: db.prepare('SELECT tenant, id, path, size, checked FROM sessions WHERE saved = 1'),
      unsaved: db.prepare('DELETE FROM sessions WHERE saved = 0 RETURNING tenant, id'),
      tenants: db.prepare('SELECT DISTINCT tenant FROM sessions ORDER BY tenant'),
      maxVersion: db.prepare('SELECT max(version) AS v FROM sessions'),
      ofTenant: db.prepare('SELECT id, path, saved FROM sessions WHERE tenant = ?'),
      usage: db.prepare('SELECT count(*) AS sessions, coalesce(sum(size), 0) AS bytes FROM sessions WHERE tenant = ?'),
    }
  }

  /** Records `row` (coalesced; visible to every read from now on). */
  put (row: IndexRow): void {
    this.#pending.set(key(row.tenant, row.id), { tenant: row.tenant, id: row.id, row })
    this.#schedule()
  }

  delete (tenant: string, id: string): void {
    this.#pending.set(key(tenant, id), { tenant, id, row: null })
    this.#schedule()
  }

  get (tenant: string, id: string): IndexRow | undefined {
    const pending = this.#pending.get(key(tenant, id))
    if (pending !== undefined) return pending.row ?? undefined
    const row = this.#statements.get.get(tenant, JSON.stringify(id)) as SqlRow | undefined
    return row === undefined ? undefined : fromSql(row)
  }

  /** Sessions whose file is at `path` (relative to DATA_DIR). */
  byPath (path: string): IndexRow[] {
    this.flush()
    return (this.#statements.byPath.all(path) as SqlRow[]).map(fromSql)
  }

  /** One page of a listing (API.md: `modified` descending, then id ascending). */
  list (tenant: string, query: ListQuery): ListPage {
    this.flush()
    const where = ['tenant = @tenant']
    const params: Record<string, unknown> = { tenant, limit: query.limit + 1 }
    if (query.cwd !== undefined) {
      where.push('cwd = @cwd')
      params.cwd = JSON.stringify(query.cwd)
    }
    if (!query.includeEmpty) where.push('messages > 0')
    if (query.after !== undefined) {
      where.push('modified <= @m AND (modified < @m OR id > @id)')
      params.m = query.after.modifiedMs
      params.id = JSON.stringify(query.after.id)
    }
    const rows = this.#db.prepare(`SELECT info FROM sessions WHERE ${where.join(' AND ')} ORDER BY modified DESC, id ASC LIMIT @limit`)
      .all(params) as Array<{ info: string }>
    const items = rows.slice(0, query.limit).map((r) => JSON.parse(r.info) as ListingItem)
    return { items, more: rows.length > query.limit }
  }

  /** The newest sessions of `cwd`; only saved ones when `savedOnly`. */
  recent (tenant: string, cwd: string, limit: number, savedOnly: boolean): RecentItem[] {
    this.flush()
    const rows = this.#db.prepare(`SELECT id, recent, modified FROM sessions WHERE tenant = ? AND cwd = ?${savedOnly ? ' AND saved = 1' : ''}
      ORDER BY modified DESC, id ASC LIMIT ?`).all(tenant, JSON.stringify(cwd), limit) as Array<{ id: string, recent: string, modified: number }>
    return rows.map((r) => ({ id: JSON.parse(r.id) as string, name: JSON.parse(r.recent) as string, modifiedMs: r.modified }))
  }

  /** Every saved session's file, for the check against the files at start. */
  files (): Array<Pick<IndexRow, 'tenant' | 'id' | 'path' | 'size' | 'checked'>> {
    this.flush()
    return (this.#statements.files.all() as SqlRow[]).map((r) => ({ tenant: r.tenant, id: JSON.parse(r.id) as string, path: r.path, size: r.size, checked: r.checked }))
  }

  /** Every session of `tenant` (saved or not) and where its file is. */
  sessionsOf (tenant: string): Array<Pick<IndexRow, 'id' | 'path' | 'saved'>> {
    this.flush()
    return (this.#statements.ofTenant.all(tenant) as SqlRow[]).map((r) => ({ id: JSON.parse(r.id) as string, path: r.path, saved: r.saved === 1 }))
  }

  /** How many sessions `tenant` has, and their bytes. */
  usage (tenant: string): { sessions: number, bytes: number } {
    this.flush()
    return this.#statements.usage.get(tenant) as { sessions: number, bytes: number }
  }

  /** Forgets every unsaved session (they lived in the memory of a process that is gone); returns them. */
  dropUnsaved (): Array<{ tenant: string, id: string }> {
    this.flush()
    return (this.#statements.unsaved.all() as Array<{ tenant: string, id: string }>).map((r) => ({ tenant: r.tenant, id: JSON.parse(r.id) as string }))
  }

  /** The database, for the search index that lives beside the listing (search-index.ts). */
  get database (): Database.Database { return this.#db }

  tenants (): string[] {
    this.flush()
    return (this.#statements.tenants.all() as Array<{ tenant: string }>).map((r) => r.tenant)
  }

  /** The largest version any session has, so that versions keep growing across restarts. */
  maxVersion (): number {
    this.flush()
    return (this.#statements.maxVersion.get() as { v: number | null }).v ?? 0
  }

  /** Records that the index was closed cleanly at `ms`: every change before it is in. */
  markClosed (ms: number): void {
    this.flush()
    this.#db.prepare("INSERT OR REPLACE INTO marks (name, value) VALUES ('closed', ?)").run(ms)
  }

  /** When the index was last closed cleanly, and the mark gone (a crash from now on leaves none). */
  takeClosedMark (): number | undefined {
    const row = this.#db.prepare("DELETE FROM marks WHERE name = 'closed' RETURNING value").get() as { value: number } | undefined
    return row?.value
  }

  /** Writes every pending change in one transaction. */
  flush (): void {
    if (this.#pending.size === 0) return
    this.#db.transaction(() => {
      for (const change of this.#pending.values()) {
        if (change.row === null) this.#statements.delete.run(change.tenant, JSON.stringify(change.id))
        else this.#statements.upsert.run(toSql(change.row))
      }
    })()
    // Only once written: a failed transaction keeps every change pending for the next try.
    this.#pending.clear()
  }

  close (): void {
    this.flush()
    this.#db.close()
  }

  #schedule (): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setTimeout(() => {
      this.#scheduled = false
      try {
        this.flush()
      } catch {
        // A failing index write is tried again with the next change or read; the files stay the truth.
      }
    }, FLUSH_MS).unref()
  }
}

export type { ListKey }
