/**
 * What a collection and quotas ask of the PostgreSQL store (src/storage/store.ts `refLines`,
 * `usage`, `runAlone`): the marked lines of a tenant read in one snapshot, page by page; the
 * count and bytes of its sessions from their rows; and an advisory lock that one server at a
 * time holds for a name.
 */
import type pg from 'pg'
import { REF_MARKS, type AloneOutcome, type SessionUsage } from '../store.js'
import { databaseError, query } from './pool.js'

/** Lines per statement while the marked lines are read. */
const PAGE = 2000

/** `strpos(<column>, $k) > 0` for each mark, joined with OR; the marks are `$2`, `$3`, …. */
const marked = (column: string): string => REF_MARKS.map((_, i) => `strpos(${column}, $${i + 2}) > 0`).join(' OR ')

/**
 * Heads, then lines, of `tenant`'s sessions holding a mark, in one repeatable-read snapshot (the
 * connection is held until the reading ends), by keyset pages on the primary keys.
 */
export async function * pgRefLines (pool: pg.Pool, tenant: string): AsyncIterable<string> {
  const client = await pool.connect().catch((err: unknown) => { throw databaseError(err) })
  let broken: unknown
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    for (let after = ''; ;) {
      const { rows } = await client.query<{ id: string, head: string }>(`SELECT id, head FROM ss_sessions
        WHERE tenant = $1 AND id > $${REF_MARKS.length + 2} AND (${marked('head')}) ORDER BY id LIMIT ${PAGE}`, [tenant, ...REF_MARKS, after])
      for (const row of rows) yield * row.head.split('\n').filter((line) => REF_MARKS.some((mark) => line.includes(mark)))
      if (rows.length < PAGE) break
      after = rows[rows.length - 1]?.id ?? after
    }
    const n = REF_MARKS.length + 2
    for (let session = '', pos = 0; ;) {
      const { rows } = await client.query<{ session: string, pos: number, line: string }>(`SELECT session, pos, line FROM ss_lines
        WHERE tenant = $1 AND (session, pos) > ($${n}, $${n + 1}) AND (${marked('line')}) ORDER BY session, pos LIMIT ${PAGE}`,
      [tenant, ...REF_MARKS, session, pos])
      for (const row of rows) yield row.line
      if (rows.length < PAGE) break
      const last = rows[rows.length - 1] as { session: string, pos: number }
      session = last.session
      pos = last.pos
    }
  } catch (err) {
    broken = err
    throw databaseError(err)
  } finally {
    await client.query('COMMIT').catch((err: unknown) => { broken ??= err })
    client.release(broken instanceof Error ? broken : undefined)
  }
}

export async function pgUsage (pool: pg.Pool, tenant: string): Promise<SessionUsage> {
  const { rows } = await query<{ sessions: string, bytes: string }>(pool,
    'SELECT count(*) AS sessions, coalesce(sum(size), 0) AS bytes FROM ss_sessions WHERE tenant = $1', [tenant])
  return { sessions: Number(rows[0]?.sessions ?? 0), bytes: Number(rows[0]?.bytes ?? 0) }
}

/**
 * `work` under the session-level advisory lock of `name` (hashed into the lock's 64-bit key
 * with a prefix of its own), on a connection held until it settles; `{ ran: false }` at once
 * when another connection holds it.
 */
export async function pgRunAlone<T> (pool: pg.Pool, name: string, work: () => Promise<T>): Promise<AloneOutcome<T>> {
  const client = await pool.connect().catch((err: unknown) => { throw databaseError(err) })
  const key = `ss-alone:${name}`
  let broken: unknown
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key])
    if (rows[0]?.ok !== true) return { ran: false }
    try {
      return { ran: true, value: await work() }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch((err: unknown) => { broken = err })
    }
  } catch (err) {
    broken ??= err
    throw databaseError(err)
  } finally {
    client.release(broken instanceof Error ? broken : undefined)
  }
}
