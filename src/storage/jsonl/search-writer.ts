/**
 * The write side of the JSONL store's search index (search-index.ts): the tables, and the
 * changes applied to them in order, each line parsed once (src/search/extract.ts). It runs in
 * the search worker (search-worker.ts) on a connection of its own to `search.sqlite`, or, for an
 * index kept in memory, in the server's thread on the connection that has the index attached.
 */
import type Database from 'better-sqlite3'
import { docsOfLine, type SearchDoc } from '../../search/extract.js'

/** Bumped when what the index holds changes: an index of another version is built anew. */
export const SEARCH_VERSION = 2

/**
 * Segments FTS5 merges at a time (its default is 4). Each batch the index takes becomes a segment
 * of its own, and every merge writes its segments' entries again: merging 8 at a time writes each
 * entry fewer times over the index's life, for a few more segments for a query to look in.
 */
const AUTOMERGE = 8

/** The tables, in `schema` (`main` in the worker's own connection, `search` where attached). */
export function searchSchema (schema: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${schema}.search_docs (
  rowid INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  session TEXT NOT NULL,
  entry TEXT,
  type TEXT NOT NULL,
  role TEXT,
  ts TEXT NOT NULL,
  part INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${schema}.search_docs_session ON search_docs (tenant, session);
CREATE VIRTUAL TABLE IF NOT EXISTS ${schema}.search_text USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO ${schema}.search_text (search_text, rank) VALUES ('automerge', ${AUTOMERGE});
CREATE TABLE IF NOT EXISTS ${schema}.search_marks (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`
}

/**
 * A change to the index, applied in order: lines a session's journal made durable, a session's
 * end, or the index emptied (`clear`) or marked as holding every stored session or not.
 */
export type SearchChange =
  | { kind: 'append' | 'replace' | 'head', tenant: string, id: string, lines: readonly string[] }
  | { kind: 'remove', tenant: string, id: string }
  | { kind: 'clear' | 'complete' | 'stale' }

/** Characters of the lines a change carries. */
export function charsOf (change: SearchChange): number {
  let chars = 0
  if ('lines' in change) for (const line of change.lines) chars += line.length
  return chars
}

/** Lines a change carries (a removal counts as one, a mark as none). */
export function linesOf (change: SearchChange): number {
  return change.kind === 'remove' ? 1 : 'lines' in change ? change.lines.length : 0
}

export class SearchWriter {
  readonly #db: Database.Database
  readonly #s

  /** Over `db`, whose schema `schema` holds the tables (created when missing). */
  constructor (db: Database.Database, schema: string) {
    this.#db = db
    db.exec(searchSchema(schema))
    const t = (name: string): string => `${schema}.${name}`
    this.#s = {
      doc: db.prepare(`INSERT INTO ${t('search_docs')} (tenant, session, entry, type, role, ts, part) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      text: db.prepare(`INSERT INTO ${t('search_text')} (rowid, body) VALUES (?, ?)`),
      dropText: db.prepare(`DELETE FROM ${t('search_text')} WHERE rowid IN (SELECT rowid FROM ${t('search_docs')} WHERE tenant = ? AND session = ?)`),
      dropDocs: db.prepare(`DELETE FROM ${t('search_docs')} WHERE tenant = ? AND session = ?`),
      dropTitleText: db.prepare(`DELETE FROM ${t('search_text')} WHERE rowid IN (SELECT rowid FROM ${t('search_docs')} WHERE tenant = ? AND session = ? AND type = 'session')`),
      dropTitleDocs: db.prepare(`DELETE FROM ${t('search_docs')} WHERE tenant = ? AND session = ? AND type = 'session'`),
      setMark: db.prepare(`INSERT OR REPLACE INTO ${t('search_marks')} (name, value) VALUES ('complete', ?)`),
      dropMark: db.prepare(`DELETE FROM ${t('search_marks')} WHERE name = 'complete'`),
      // Dropped and made anew: deleting the rows of an FTS5 table tokenizes each of them again.
      clear: `DROP TABLE ${t('search_text')}; DROP TABLE ${t('search_docs')}; ${searchSchema(schema)}`,
    }
  }

  /**
   * Applies `changes` from `from` on in one transaction, stopping once `until` (a
   * `performance.now()`) has passed; returns the position after the last one applied.
   */
  apply (changes: readonly SearchChange[], from = 0, until = Infinity): number {
    let at = from
    this.#db.transaction(() => {
      do this.#change(changes[at++] as SearchChange)
      while (at < changes.length && performance.now() < until)
    })()
    return at
  }

  #change (change: SearchChange): void {
    const s = this.#s
    if (change.kind === 'clear') {
      s.dropMark.run()
      this.#db.exec(s.clear)
    } else if (change.kind === 'complete') s.setMark.run(SEARCH_VERSION)
    else if (change.kind === 'stale') s.dropMark.run()
    if (!('id' in change)) return
    const session = JSON.stringify(change.id)
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
    const { lastInsertRowid } = this.#s.doc.run(tenant, session, entry, doc.type, doc.role, doc.timestamp, doc.part)
    this.#s.text.run(lastInsertRowid, doc.text)
  }
}
