/**
 * The files of `PgSessionStorage` as rows, by path relative to DATA_DIR (schema.ts, migration
 * 3): a `.jsonl` file of session form (session-form.ts) is its `ss_sessions` row, which carries
 * the path, and its `ss_entries`; every other file is one `ss_files` row. Functions that change
 * rows take a client inside the caller's transaction.
 */
import type pg from 'pg'
import { DEFAULT_TENANT } from '../../auth/tokens.js'
import { query } from './pool.js'
import { entryLines, sessionForm } from './session-form.js'

/**
 * `items` as the SQL `text[]` parameter `$n`: joined by `"\n"` into one text and split in the
 * database, which costs far less than the driver's array encoding for thousands of JSON lines;
 * as an array when an item is empty or holds `"\n"` (an odd entry id), which joining would lose.
 */
function textArray (n: number, items: string[]): { sql: string, value: string | string[] } {
  return items.some((i) => i === '' || i.includes('\n'))
    ? { sql: `$${n}::text[]`, value: items }
    : { sql: `string_to_array($${n}::text, E'\\n')`, value: items.join('\n') }
}

/** Where a file's bytes are. */
export type Stored = { kind: 'session', tenant: string, id: string } | { kind: 'file' }

export interface StoredFile {
  /** Path relative to DATA_DIR, `/`-separated. */
  rel: string
  stored: Stored
  /** Bytes of its text. */
  size: number
  mtimeMs: number
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
  const sessions = await query<{ path: string, tenant: string, id: string, size: string, modified_at: Date }>(pool, `
    SELECT s.path, s.tenant, s.id, s.modified_at,
      octet_length(s.header) + 1 + coalesce(sum(octet_length(e.line) + 1), 0) AS size
    FROM ss_sessions s LEFT JOIN ss_entries e ON e.tenant = s.tenant AND e.session = s.id
    WHERE s.path IS NOT NULL GROUP BY s.tenant, s.id`)
  const files = await query<{ path: string, size: number, modified_at: Date }>(pool,
    'SELECT path, octet_length(content) AS size, modified_at FROM ss_files')
  return [
    ...sessions.rows.map((r) => ({
      rel: r.path, stored: { kind: 'session', tenant: r.tenant, id: r.id } as const, size: Number(r.size), mtimeMs: r.modified_at.getTime(),
    })),
    ...files.rows.map((r) => ({ rel: r.path, stored: { kind: 'file' } as const, size: Number(r.size), mtimeMs: r.modified_at.getTime() })),
  ]
}

/** Removes whatever is stored at `rel` (a session with its entries, or a file). */
export async function removeAt (client: pg.PoolClient, rel: string): Promise<void> {
  await client.query('WITH s AS (DELETE FROM ss_sessions WHERE path = $1) DELETE FROM ss_files WHERE path = $1', [rel])
}

/**
 * Stores `text` at the free path `rel`: as session rows when it is a `.jsonl` file of session
 * form whose id is free in its tenant, else as a plain file.
 */
export async function placeAt (client: pg.PoolClient, rel: string, text: string, mtime: Date): Promise<Stored> {
  const form = rel.endsWith('.jsonl') ? sessionForm(text) : undefined
  if (form !== undefined) {
    const tenant = tenantOf(rel)
    const inserted = await client.query(`
      INSERT INTO ss_sessions (tenant, id, cwd, header, title, entry_count, unsaved, created_at, modified_at, path)
      VALUES ($1, $2, $3, $4, $5, $6, false, $7, $7, $8) ON CONFLICT (tenant, id) DO NOTHING RETURNING id`,
    [tenant, form.id, form.cwd, form.header, form.title, form.entries.length, mtime, rel])
    if (inserted.rowCount === 1) {
      if (form.entries.length > 0) {
        const ids = textArray(3, form.entries.map((e) => e.id))
        const lines = textArray(4, form.entries.map((e) => e.line))
        await client.query(`
          INSERT INTO ss_entries (tenant, session, seq, id, line)
          SELECT $1, $2, t.n, t.id, t.line FROM unnest(${ids.sql}, ${lines.sql}) WITH ORDINALITY AS t (id, line, n)`,
        [tenant, form.id, ids.value, lines.value])
      }
      return { kind: 'session', tenant, id: form.id }
    }
  }
  await client.query('INSERT INTO ss_files (path, content, modified_at) VALUES ($1, $2, $3)', [rel, Buffer.from(text, 'utf8'), mtime])
  return { kind: 'file' }
}

/**
 * Appends `text` to the stored file at `rel`. A session takes it as new entries through
 * `ss_append` (schema.ts, migration 2), which numbers them after the session's last; returns
 * false, changing nothing, when `text` is not entry lines whose ids the session lacks (the
 * caller then stores the whole text again as a plain file).
 */
export async function appendAt (client: pg.PoolClient, rel: string, stored: Stored, text: string, mtime: Date): Promise<boolean> {
  if (stored.kind === 'file') {
    const res = await client.query('UPDATE ss_files SET content = content || $2, modified_at = $3 WHERE path = $1', [rel, Buffer.from(text, 'utf8'), mtime])
    if (res.rowCount !== 1) throw new Error(`stored file ${rel} is missing`)
    return true
  }
  const entries = entryLines(text)
  if (entries === undefined) return false
  const ids = textArray(4, entries.map((e) => e.id))
  const lines = textArray(5, entries.map((e) => e.line))
  const { rows } = await client.query<{ status: string }>(
    `SELECT status FROM ss_append($1, $2, ARRAY[$3::integer], ARRAY[NULL::bigint], ARRAY[false], ARRAY[NULL::text], ARRAY[true], ${ids.sql}, ${lines.sql})`,
    [stored.tenant, stored.id, entries.length, ids.value, lines.value])
  const status = rows[0]?.status
  if (status === 'duplicate') return false
  if (status !== 'ok') throw new Error(`stored session ${rel} is missing`)
  await client.query('UPDATE ss_sessions SET modified_at = $3 WHERE tenant = $1 AND id = $2', [stored.tenant, stored.id, mtime])
  return true
}

/**
 * True when the file `stored` keeps its form at `to`, so a rename only changes its path: a
 * session moving to a `.jsonl` path of its tenant, a plain file to a path that is not `.jsonl`.
 */
export function keepsForm (stored: Stored, to: string): boolean {
  return stored.kind === 'session' ? to.endsWith('.jsonl') && tenantOf(to) === stored.tenant : !to.endsWith('.jsonl')
}

/** Gives the stored file at `from` the free path `to`; only for a move that `keepsForm`. */
export async function moveAt (client: pg.PoolClient, from: string, to: string, stored: Stored): Promise<void> {
  const table = stored.kind === 'session' ? 'ss_sessions' : 'ss_files'
  await client.query(`UPDATE ${table} SET path = $2 WHERE path = $1`, [from, to])
}

/** A plain file's text, or its first `maxBytes` bytes; undefined when it is not stored. */
export async function fileBytes (pool: pg.Pool, rel: string, maxBytes?: number): Promise<Buffer | undefined> {
  const { rows } = maxBytes === undefined
    ? await query<{ content: Buffer }>(pool, 'SELECT content FROM ss_files WHERE path = $1', [rel])
    : await query<{ content: Buffer }>(pool, 'SELECT substring(content FROM 1 FOR $2) AS content FROM ss_files WHERE path = $1', [rel, maxBytes])
  return rows[0]?.content
}
