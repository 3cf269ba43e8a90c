/**
 * The files of `PgSessionStorage` as rows, by path relative to DATA_DIR (schema.ts, migration
 * 3): a `.jsonl` file of session form (session-form.ts) is its `ss_sessions` row, which carries
 * the path, and its `ss_entries`; every other file is one `ss_files` row. Functions that change
 * rows take a client inside the caller's transaction.
 */
import type pg from 'pg'
import { DEFAULT_TENANT } from '../../auth/tokens.js'
import { query } from './pool.js'
import { sessionForm } from './session-form.js'

/**
 * `items` as the SQL `text[]` parameter `$n`: joined by `"\n"` into one text and split in the
 * database, which costs far less than the driver's array encoding for thousands of JSON lines;
 * as an array when an item is empty or holds `"\n"` (an odd entry id), which joining would lose.
 */
export function textArray (n: number, items: string[]): { sql: string, value: string | string[] } {
  return items.some((i) => i === '' || i.includes('\n'))
    ? { sql: `$${n}::text[]`, value: items }
    : { sql: `string_to_array($${n}::text, E'\\n')`, value: items.join('\n') }
}

/** Where a file's bytes are. */
export type Stored = { kind: 'session', tenant: string, id: string } | { kind: 'file' }

/** A stored row's place in the history of every change (schema.ts, migration 4). */
export interface Versioned {
  /** Taken anew by every change of the row; never comes back. */
  version: number
  /** The version the row was inserted with: a rewrite inserts a new row, a rename keeps it. */
  born: number
}

/** Thrown when the row at a path moved past the version the writer based its change on. */
export class StaleFile extends Error {
  readonly code = 'ESTALE'
  readonly path: string
  constructor (path: string) {
    super(`ESTALE: stored by another server since it was read, '${path}'`)
    this.name = 'StaleFile'
    this.path = path
  }
}

function versioned (row: { version: string | number, born: string | number }): Versioned {
  return { version: Number(row.version), born: Number(row.born) }
}

export interface StoredFile extends Versioned {
  /** Path relative to DATA_DIR, `/`-separated. */
  rel: string
  stored: Stored
  /** Bytes of its text. */
  size: number
  mtimeMs: number
  /** Entry rows of a session (0 for a plain file). */
  entries: number
}

/**
 * The tenant a path belongs to, by the layout of `tenantRoot` (src/auth/tenants.ts): a session
 * id is unique within its tenant.
 */
export function tenantOf (rel: string): string {
  const parts = rel.split('/')
  return parts[0] === 'tenants' && parts.length > 2 ? parts[1] as string : DEFAULT_TENANT
}

/** Every stored file: session rows that have a path, and plain files. */
export async function loadStoredFiles (pool: pg.Pool): Promise<StoredFile[]> {
  const sessions = await query<SessionRow>(pool, `
    SELECT s.path, s.tenant, s.id, s.modified_at, s.version, s.born, s.entry_count,
      octet_length(s.header) + 1 + coalesce(sum(octet_length(e.line) + 1), 0) AS size
    FROM ss_sessions s LEFT JOIN ss_entries e ON e.tenant = s.tenant AND e.session = s.id
    WHERE s.path IS NOT NULL GROUP BY s.tenant, s.id`)
  const files = await query<FileRow>(pool, 'SELECT path, octet_length(content) AS size, modified_at, version, born FROM ss_files')
  return [...sessions.rows.map(sessionFile), ...files.rows.map(plainFile)]
}

interface FileRow { path: string, size: string | number, modified_at: Date, version: string, born: string }
interface SessionRow extends FileRow { tenant: string, id: string, entry_count: string }

function sessionFile (r: SessionRow): StoredFile {
  return {
    rel: r.path,
    stored: { kind: 'session', tenant: r.tenant, id: r.id },
    size: Number(r.size),
    mtimeMs: r.modified_at.getTime(),
    entries: Number(r.entry_count),
    ...versioned(r),
  }
}

function plainFile (r: FileRow): StoredFile {
  return { rel: r.path, stored: { kind: 'file' }, size: Number(r.size), mtimeMs: r.modified_at.getTime(), entries: 0, ...versioned(r) }
}

/**
 * What is stored at `rel` now, or undefined. `known`, what the caller last knew of it: when it
 * is the same session row, only the entries after the known ones are measured.
 */
export async function loadStoredFile (pool: pg.Pool, rel: string, known?: StoredFile): Promise<StoredFile | undefined> {
  const same = known?.stored.kind === 'session' ? known : undefined
  const sessions = await query<SessionRow>(pool, `
    SELECT s.path, s.tenant, s.id, s.modified_at, s.version, s.born, s.entry_count,
      CASE WHEN s.born = $2 THEN $4::bigint ELSE octet_length(s.header) + 1 END
        + coalesce((SELECT sum(octet_length(e.line) + 1) FROM ss_entries e
            WHERE e.tenant = s.tenant AND e.session = s.id AND e.seq > CASE WHEN s.born = $2 THEN $3::bigint ELSE 0 END), 0) AS size
    FROM ss_sessions s WHERE s.path = $1`, [rel, same?.born ?? -1, same?.entries ?? 0, same?.size ?? 0])
  if (sessions.rows[0] !== undefined) return sessionFile(sessions.rows[0])
  const files = await query<FileRow>(pool, 'SELECT path, octet_length(content) AS size, modified_at, version, born FROM ss_files WHERE path = $1', [rel])
  return files.rows[0] === undefined ? undefined : plainFile(files.rows[0])
}

/** The version of every stored file, by path: a cheap comparison with a catalog. */
export async function storedVersions (pool: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await query<{ path: string, version: string }>(pool,
    'SELECT path, version FROM ss_sessions WHERE path IS NOT NULL UNION ALL SELECT path, version FROM ss_files')
  return new Map(rows.map((r) => [r.path, Number(r.version)]))
}

/** Where the session `tenant`/`id` is stored now, or undefined. */
export async function sessionPath (pool: pg.Pool, tenant: string, id: string): Promise<string | undefined> {
  const { rows } = await query<{ path: string | null }>(pool, 'SELECT path FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, id])
  return rows[0]?.path ?? undefined
}

/**
 * The session at `rel` as of one snapshot: its version, and its entry lines after `seq`, each
 * ending in `"\n"` (`''` when it has none). One statement, so one round trip and one snapshot.
 */
export async function readEntriesAfter (pool: pg.Pool, rel: string, seq: number): Promise<(Versioned & { text: string }) | undefined> {
  const { rows } = await query<{ version: string, born: string, text: string | null }>(pool, `
    SELECT s.version, s.born, (SELECT string_agg(e.line || E'\n', '' ORDER BY e.seq) FROM ss_entries e
      WHERE e.tenant = s.tenant AND e.session = s.id AND e.seq > $2) AS text
    FROM ss_sessions s WHERE s.path = $1`, [rel, seq])
  const row = rows[0]
  return row === undefined ? undefined : { ...versioned(row), text: row.text ?? '' }
}

/** The paths of the stored sessions of id `id`, in any tenant. */
export async function sessionPaths (pool: pg.Pool, id: string): Promise<string[]> {
  const { rows } = await query<{ path: string }>(pool, 'SELECT path FROM ss_sessions WHERE id = $1 AND path IS NOT NULL', [id])
  return rows.map((r) => r.path)
}

/** The version stored at `rel` now, or undefined when nothing is. */
export async function storedVersion (pool: pg.Pool, rel: string): Promise<Versioned | undefined> {
  const { rows } = await query<{ version: string, born: string }>(pool,
    'SELECT version, born FROM ss_sessions WHERE path = $1 UNION ALL SELECT version, born FROM ss_files WHERE path = $1', [rel])
  return rows[0] === undefined ? undefined : versioned(rows[0])
}

/** Removes whatever is stored at `rel` (a session with its entries, or a file). */
export async function removeAt (client: pg.PoolClient, rel: string): Promise<void> {
  await client.query('WITH s AS (DELETE FROM ss_sessions WHERE path = $1) DELETE FROM ss_files WHERE path = $1', [rel])
}

/**
 * Stores `text` at the free path `rel`: as session rows when it is a `.jsonl` file of session
 * form whose id is free in its tenant, else as a plain file.
 */
export async function placeAt (client: pg.PoolClient, rel: string, text: string, mtime: Date): Promise<{ stored: Stored } & Versioned> {
  const form = rel.endsWith('.jsonl') ? sessionForm(text) : undefined
  if (form !== undefined) {
    const tenant = tenantOf(rel)
    const inserted = await client.query(`
      INSERT INTO ss_sessions (tenant, id, cwd, header, title, entry_count, unsaved, created_at, modified_at, path)
      VALUES ($1, $2, $3, $4, $5, $6, false, $7, $7, $8) ON CONFLICT (tenant, id) DO NOTHING RETURNING version, born`,
    [tenant, form.id, form.cwd, form.header, form.title, form.entries.length, mtime, rel])
    const row = inserted.rows[0] as { version: string, born: string } | undefined
    if (row !== undefined) {
      if (form.entries.length > 0) {
        const ids = textArray(3, form.entries.map((e) => e.id))
        const lines = textArray(4, form.entries.map((e) => e.line))
        await client.query(`
          INSERT INTO ss_entries (tenant, session, seq, id, line)
          SELECT $1, $2, t.n, t.id, t.line FROM unnest(${ids.sql}, ${lines.sql}) WITH ORDINALITY AS t (id, line, n)`,
        [tenant, form.id, ids.value, lines.value])
      }
      return { stored: { kind: 'session', tenant, id: form.id }, ...versioned(row) }
    }
  }
  const { rows } = await client.query<{ version: string, born: string }>(
    'INSERT INTO ss_files (path, content, modified_at) VALUES ($1, $2, $3) RETURNING version, born', [rel, Buffer.from(text, 'utf8'), mtime])
  return { stored: { kind: 'file' }, ...versioned(rows[0] as { version: string, born: string }) }
}

/**
 * Appends `text` to the plain file at `rel`; returns the row's version after it. (Appends to a
 * session are committed in groups, append-groups.ts.)
 */
export async function appendToFile (client: pg.PoolClient, rel: string, text: string, mtime: Date): Promise<Versioned> {
  const res = await client.query<{ version: string, born: string }>(
    'UPDATE ss_files SET content = content || $2, modified_at = $3 WHERE path = $1 RETURNING version, born', [rel, Buffer.from(text, 'utf8'), mtime])
  if (res.rows[0] === undefined) throw new Error(`stored file ${rel} is missing`)
  return versioned(res.rows[0])
}

/**
 * True when the file `stored` keeps its form at `to`, so a rename only changes its path: a
 * session moving to a `.jsonl` path of its tenant, a plain file to a path that is not `.jsonl`.
 */
export function keepsForm (stored: Stored, to: string): boolean {
  return stored.kind === 'session' ? to.endsWith('.jsonl') && tenantOf(to) === stored.tenant : !to.endsWith('.jsonl')
}

/** Gives the stored file at `from` the free path `to`; only for a move that `keepsForm`. */
export async function moveAt (client: pg.PoolClient, from: string, to: string, stored: Stored): Promise<Versioned> {
  const table = stored.kind === 'session' ? 'ss_sessions' : 'ss_files'
  const { rows } = await client.query<{ version: string, born: string }>(`UPDATE ${table} SET path = $2 WHERE path = $1 RETURNING version, born`, [from, to])
  if (rows[0] === undefined) throw new Error(`stored file ${from} is missing`)
  return versioned(rows[0])
}

/**
 * Locks what is stored at `rel` for the rest of the transaction and throws unless it is at
 * `expect` (nothing stored there passes).
 * @throws StaleFile
 */
export async function assertVersionAt (client: pg.PoolClient, rel: string, expect: number): Promise<void> {
  const { rows } = await client.query<{ version: string }>(
    'SELECT version FROM ss_sessions WHERE path = $1 FOR UPDATE', [rel])
  if (rows[0] !== undefined && Number(rows[0].version) !== expect) throw new StaleFile(rel)
}

/** A plain file's text, or its first `maxBytes` bytes; undefined when it is not stored. */
export async function fileBytes (pool: pg.Pool, rel: string, maxBytes?: number): Promise<Buffer | undefined> {
  const { rows } = maxBytes === undefined
    ? await query<{ content: Buffer }>(pool, 'SELECT content FROM ss_files WHERE path = $1', [rel])
    : await query<{ content: Buffer }>(pool, 'SELECT substring(content FROM 1 FOR $2) AS content FROM ss_files WHERE path = $1', [rel, maxBytes])
  return rows[0]?.content
}
