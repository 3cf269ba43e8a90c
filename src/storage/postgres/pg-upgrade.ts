/**
 * The part of moving a database of the file layout (migrations 3–8) forward that SQL alone
 * cannot do, run once by the first server that starts on it (schema-log.ts moved the rows):
 * - files that were kept whole (`ss_legacy_files`): session files become sessions (their text
 *   byte for byte), terminal breadcrumbs become breadcrumb rows, anything else is dropped;
 * - every session's listing facts and display name are computed from its text.
 * Servers that start meanwhile wait for the one doing it (an advisory lock).
 */
import type pg from 'pg'
import { listingItemOf } from '../../session/listing-item.js'
import type { Logger } from '../../session/logger.js'
import { parseJsonlLenient } from '../../session/parser.js'
import { headLineCount, SessionPrefix, textOf } from '../session-head.js'
import { databaseError } from './pool.js'

/** Key of the advisory lock of the upgrade ("ss-upgr" in ASCII). */
const LOCK_KEY = 0x73732d7570677200n
const SESSION_FILE = /^(?:tenants\/([^/]+)\/)?sessions\/[^/]+\/[^/]+\.jsonl$/
const BREADCRUMB = /^(?:tenants\/([^/]+)\/)?terminal-sessions\/([^/]+)$/
const FILE_ID = /_([^_/]+)\.jsonl$/

export async function upgradeLegacy (pool: pg.Pool, dataDir: string, log: Logger): Promise<void> {
  const client = await pool.connect().catch((err: unknown) => { throw databaseError(err) })
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY.toString()])
    const { rows } = await client.query<{ files: boolean, sessions: boolean }>(
      "SELECT to_regclass('ss_legacy_files') IS NOT NULL AS files, to_regclass('ss_legacy_sessions') IS NOT NULL AS sessions")
    if (rows[0]?.files === true) await convertFiles(client, log)
    await fillListings(client, dataDir, log)
    if (rows[0]?.sessions === true) await client.query('DROP TABLE ss_legacy_sessions')
  } catch (err) {
    throw databaseError(err)
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY.toString()]).catch(() => {})
    client.release()
  }
}

async function convertFiles (client: pg.PoolClient, log: Logger): Promise<void> {
  const { rows } = await client.query<{ path: string, text: string }>("SELECT path, convert_from(content, 'UTF8') AS text FROM ss_legacy_files")
  let sessions = 0
  let breadcrumbs = 0
  await client.query('BEGIN')
  for (const { path, text } of rows) {
    const session = SESSION_FILE.exec(path)
    const crumb = BREADCRUMB.exec(path)
    if (session !== null && await insertSession(client, session[1] ?? 'default', text)) sessions++
    else if (crumb !== null && await insertBreadcrumb(client, crumb[1] ?? 'default', crumb[2] as string, text)) breadcrumbs++
  }
  await client.query('DROP TABLE ss_legacy_files')
  await client.query('COMMIT')
  log.info({ files: rows.length, sessions, breadcrumbs }, 'files of the earlier database layout moved into the session log')
}

async function insertSession (client: pg.PoolClient, tenant: string, text: string): Promise<boolean> {
  const torn = text !== '' && !text.endsWith('\n')
  const all = (torn ? text : text.slice(0, -1)).split('\n')
  const header = parseJsonlLenient(all.slice(0, headLineCount(all)).join('\n')).at(-1)
  if (typeof header?.id !== 'string' || header.type !== 'session') return false
  const h = headLineCount(all)
  const { rowCount } = await client.query(`INSERT INTO ss_sessions (tenant, id, head, lines, torn, saved, version, reset_version, modified, cwd)
    VALUES ($1, $2, $3, $4, $5, true, nextval('ss_version'), currval('ss_version'), $6, $7) ON CONFLICT DO NOTHING`,
  [tenant, header.id, textOf(all.slice(0, h)), all.length - h, torn, Date.now(), JSON.stringify(String(header.cwd ?? ''))])
  if (rowCount === 0) return false
  await client.query(`INSERT INTO ss_lines (tenant, session, pos, line) SELECT $1, $2, l.o, l.line
    FROM unnest($3::text[]) WITH ORDINALITY AS l (line, o)`, [tenant, header.id, all.slice(h)])
  return true
}

async function insertBreadcrumb (client: pg.PoolClient, tenant: string, terminalId: string, text: string): Promise<boolean> {
  const [cwd, file] = text.split('\n')
  const id = FILE_ID.exec(file ?? '')?.[1]
  if (cwd === undefined || id === undefined) return false
  await client.query(`INSERT INTO ss_breadcrumbs (tenant, terminal_id, cwd, session) VALUES ($1, $2, $3, $4)
    ON CONFLICT (tenant, terminal_id) DO NOTHING`, [tenant, terminalId, JSON.stringify(cwd), id])
  return true
}

/** Listing facts, display names and sizes of the sessions that have none yet (moved over by migration 9). */
async function fillListings (client: pg.PoolClient, dataDir: string, log: Logger): Promise<void> {
  const { rows } = await client.query<{ tenant: string, id: string }>('SELECT tenant, id FROM ss_sessions WHERE info IS NULL')
  for (const [i, { tenant, id }] of rows.entries()) {
    if (i > 0 && i % 1000 === 0) log.info({ done: i, of: rows.length }, 'computing the listings of the sessions moved over')
    const session = await client.query<{ head: string, torn: boolean, modified: number }>('SELECT head, torn, modified FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, id])
    const lines = await client.query<{ line: string }>('SELECT line FROM ss_lines WHERE tenant = $1 AND session = $2 ORDER BY pos', [tenant, id])
    const row = session.rows[0]
    if (row === undefined) continue
    const text = row.head + textOf(lines.rows.map((r) => r.line), row.torn)
    const item = listingItemOf(parseJsonlLenient(text), dataDir, row.modified)
    if (item === undefined) {
      await client.query('DELETE FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, id])
      continue
    }
    const recent = new SessionPrefix(text.slice(0, 8192), `${id}.jsonl`).name()
    await client.query('UPDATE ss_sessions SET info = $3, messages = $4, cwd = $5, recent = $6, size = $7 WHERE tenant = $1 AND id = $2',
      [tenant, id, JSON.stringify(item), item.messageCount, JSON.stringify(item.cwd), JSON.stringify(recent), Buffer.byteLength(text, 'utf8')])
  }
  if (rows.length > 0) log.info({ sessions: rows.length }, 'listings of the sessions moved over computed')
}
