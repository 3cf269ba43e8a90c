/**
 * Unsaved sessions in PostgreSQL (schema.ts, migration 5): a session without an assistant
 * message yet has no file, so it is a session row without a `path`, `unsaved` set, the path its
 * file will have in `unsaved_path`, and its entry rows. Any server finds it by id, so it lives
 * in no single process; listings never see it (they read files only).
 *
 * Each process remembers the revision of every unsaved session it found or stored; storing it
 * again, or storing its file (`claim`, in the transaction that places the file), checks that the
 * row is still at that revision and otherwise fails with `ESTALE`, changing nothing: the caller
 * reloads the session and tries again, as for a file. A store of a session is queued on its
 * path at once, so the write of its file, queued after it on the same path, follows it.
 *
 * Every change notifies `ss_unsaved` with only `[schema, tenant, id, revision]` (`null` once the
 * row is gone: saved or removed); a server holding that session at another revision tells its
 * watchers, which check it and load it again (their live streams with it).
 */
import type pg from 'pg'
import { silentLogger, type Logger } from '../../session/logger.js'
import { pathKey } from '../path-tree.js'
import type { UnsavedSessions } from '../types.js'
import { ListenConnection } from './listen-connection.js'
import type { PathQueues } from './path-queues.js'
import { query, transaction } from './pool.js'
import { transactionKeeping, type PgReplayStore } from './replays.js'
import { sessionForm } from './session-form.js'
import { StaleFile, tenantOf } from './stored-files.js'

export const UNSAVED_CHANNEL = 'ss_unsaved'

/** Notifies the servers holding session `$1`/`$2` that it is now at revision `$3` (null: gone). */
const NOTIFY = `SELECT pg_notify('${UNSAVED_CHANNEL}', json_build_array(current_schema(), $1::text, $2::text, $3::bigint)::text)`

/** How long an unsaved session is kept after its last change by default: seven days. */
export const DEFAULT_UNSAVED_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000

interface Held { tenant: string, id: string, revision: number }

/** How the storage names paths: DATA_DIR-relative for the rows, absolute for its callers. */
export interface PathNames {
  rel: (path: string) => string
  abs: (rel: string) => string
}

/** The session id of a JSONL text's header line, if it has one. */
function headerId (text: string): string | undefined {
  const end = text.indexOf('\n')
  try {
    const header: unknown = JSON.parse(end === -1 ? text : text.slice(0, end))
    const id = (header as { type?: unknown, id?: unknown } | null)?.id
    return (header as { type?: unknown }).type === 'session' && typeof id === 'string' ? id : undefined
  } catch {
    return undefined
  }
}

export class PgUnsavedSessions implements UnsavedSessions {
  readonly #pool: pg.Pool
  readonly #queues: PathQueues
  readonly #names: PathNames
  readonly #replays: PgReplayStore
  /** Per path key: the session this process holds there, at the revision it last found or stored. */
  readonly #held = new Map<string, Held>()
  readonly #watchers = new Set<(path: string) => void>()
  #listen: ListenConnection | undefined
  #schema = ''

  constructor (pool: pg.Pool, queues: PathQueues, names: PathNames, replays: PgReplayStore) {
    this.#pool = pool
    this.#queues = queues
    this.#names = names
    this.#replays = replays
  }

  async put (path: string, text: string): Promise<void> {
    const rel = this.#names.rel(path)
    const form = sessionForm(text)
    if (form === undefined) throw new Error(`unsaved session at ${rel} is not of session form`)
    const tenant = tenantOf(rel)
    // Answers to idempotent appends whose entries this stores are kept with them.
    const keeps = this.#replays.takeKeeps(path, text, form.entries)
    await this.#queues.exclusive([path], async () => {
      const held = this.#held.get(pathKey(path))
      const expect = held?.tenant === tenant && held.id === form.id ? held.revision : undefined
      const revision = await transactionKeeping(this.#pool, keeps, async (client) => {
        const { rows } = await client.query<{ revision: string, open: boolean }>(
          'SELECT revision, path IS NULL AND unsaved AS open FROM ss_sessions WHERE tenant = $1 AND id = $2 FOR UPDATE', [tenant, form.id])
        const row = rows[0]
        if (row === undefined ? expect !== undefined : !row.open || Number(row.revision) !== expect) throw new StaleFile(rel)
        const values = [tenant, form.id, form.cwd, form.header, form.title, form.entries.length, rel]
        const stored = row === undefined
          ? await client.query<{ revision: string }>(`
              INSERT INTO ss_sessions (tenant, id, cwd, header, title, revision, entry_count, unsaved, unsaved_path)
              VALUES ($1, $2, $3, $4, $5, 1, $6, true, $7) RETURNING revision`, values)
          : await client.query<{ revision: string }>(`
              UPDATE ss_sessions SET cwd = $3, header = $4, title = $5, revision = revision + 1, entry_count = $6,
                unsaved_path = $7, modified_at = clock_timestamp() WHERE tenant = $1 AND id = $2 RETURNING revision`, values)
        await client.query('DELETE FROM ss_entries WHERE tenant = $1 AND session = $2', [tenant, form.id])
        if (form.entries.length > 0) {
          await client.query(`
            INSERT INTO ss_entries (tenant, session, seq, id, line)
            SELECT $1, $2, t.n, t.id, t.line FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t (id, line, n)`,
          [tenant, form.id, form.entries.map((e) => e.id), form.entries.map((e) => e.line)])
        }
        const revision = Number((stored.rows[0] as { revision: string }).revision)
        await client.query(NOTIFY, [tenant, form.id, revision])
        return revision
      })
      this.#held.set(pathKey(path), { tenant, id: form.id, revision })
    }, false)
  }

  async find (id: string): Promise<Array<{ path: string, text: string }>> {
    const { rows } = await query<{ tenant: string, revision: string, unsaved_path: string, header: string, body: string | null }>(this.#pool, `
      SELECT s.tenant, s.revision, s.unsaved_path, s.header,
        (SELECT string_agg(e.line || E'\\n', '' ORDER BY e.seq) FROM ss_entries e WHERE e.tenant = s.tenant AND e.session = s.id) AS body
      FROM ss_sessions s WHERE s.id = $1 AND s.path IS NULL AND s.unsaved AND s.unsaved_path IS NOT NULL`, [id])
    return rows.map((r) => {
      const path = this.#names.abs(r.unsaved_path)
      this.#held.set(pathKey(path), { tenant: r.tenant, id, revision: Number(r.revision) })
      return { path, text: `${r.header}\n${r.body ?? ''}` }
    })
  }

  async isCurrent (path: string): Promise<boolean> {
    await this.#queues.settled(path).catch(() => {})
    const held = this.#held.get(pathKey(path))
    if (held === undefined) return true
    const { rows } = await query<{ revision: string }>(this.#pool,
      'SELECT revision FROM ss_sessions WHERE tenant = $1 AND id = $2 AND path IS NULL AND unsaved', [held.tenant, held.id])
    return rows[0] !== undefined && Number(rows[0].revision) === held.revision
  }

  async remove (path: string): Promise<void> {
    await this.#queues.exclusive([path], async () => {
      const held = this.#held.get(pathKey(path))
      if (held === undefined) return
      await transaction(this.#pool, async (client) => {
        await client.query('DELETE FROM ss_sessions WHERE tenant = $1 AND id = $2 AND path IS NULL AND unsaved', [held.tenant, held.id])
        await client.query(NOTIFY, [held.tenant, held.id, null])
      })
      this.#held.delete(pathKey(path))
    }, false)
  }

  /**
   * In the transaction that stores `text` as the file at `path`: when it is a session this
   * process holds unsaved, removes the unsaved row, which must still be at the revision held.
   * @throws StaleFile when another process changed, saved or removed it meanwhile
   */
  async claim (client: pg.PoolClient, path: string, text: string): Promise<void> {
    const held = [...this.#heldOf(text, path)][0]
    if (held === undefined) return
    const { rowCount } = await client.query(
      'DELETE FROM ss_sessions WHERE tenant = $1 AND id = $2 AND path IS NULL AND unsaved AND revision = $3', [held.tenant, held.id, held.revision])
    if (rowCount === 0) throw new StaleFile(this.#names.rel(path))
    await client.query(NOTIFY, [held.tenant, held.id, null])
    for (const [k, h] of this.#held) if (h === held) this.#held.delete(k)
  }

  /** Calls `listener` with the path of each session held here that another server changed. */
  watch (listener: (path: string) => void): () => void {
    this.#watchers.add(listener)
    return () => { this.#watchers.delete(listener) }
  }

  /** LISTENs for the changes of other servers (after a lost connection, every held session is reported). */
  async listen (url: string, logger: Logger = silentLogger): Promise<void> {
    this.#schema = (await query<{ schema: string }>(this.#pool, 'SELECT current_schema() AS schema')).rows[0]?.schema ?? ''
    this.#listen = new ListenConnection({
      url,
      channel: UNSAVED_CHANNEL,
      reconnectMs: 100,
      logger,
      onNotification: (payload) => { this.#onNotification(payload) },
      onReconnect: () => { for (const path of this.#held.keys()) this.#tell(path) },
    })
    await this.#listen.connect()
  }

  async close (): Promise<void> {
    await this.#listen?.close()
  }

  #onNotification (payload: string | undefined): void {
    let schema: unknown, tenant: unknown, id: unknown, revision: unknown
    try {
      [schema, tenant, id, revision] = JSON.parse(payload ?? '') as unknown[]
    } catch {}
    if (schema !== this.#schema) return
    for (const [path, h] of this.#held) {
      if (h.tenant === tenant && h.id === id && h.revision !== revision) this.#tell(path)
    }
  }

  #tell (path: string): void {
    for (const watcher of [...this.#watchers]) watcher(path)
  }

  /** What this process holds unsaved of the session whose text is `text`, stored at `path`. */
  * #heldOf (text: string, path: string): Iterable<Held> {
    if (this.#held.size === 0 || !path.endsWith('.jsonl')) return
    const id = headerId(text)
    if (id === undefined) return
    const tenant = tenantOf(this.#names.rel(path))
    for (const h of this.#held.values()) if (h.tenant === tenant && h.id === id) yield h
  }
}

/** Removes unsaved sessions unchanged for `maxAgeMs` and expired idempotency keys; the counts removed. */
export async function purgeExpired (pool: pg.Pool, maxAgeMs: number): Promise<{ sessions: number, keys: number }> {
  const sessions = await query(pool,
    "DELETE FROM ss_sessions WHERE unsaved AND path IS NULL AND modified_at < clock_timestamp() - $1 * interval '1 millisecond'", [maxAgeMs])
  const keys = await query(pool, 'DELETE FROM ss_idempotency_keys WHERE expires_at < clock_timestamp()')
  return { sessions: sessions.rowCount ?? 0, keys: keys.rowCount ?? 0 }
}

/**
 * Purges at once, then every `min(maxAgeMs / 4, 10 min)`; returns the stop function. Every
 * server on the database purges; a purge that fails (database away) is logged and tried again.
 */
export async function startPurging (pool: pg.Pool, maxAgeMs: number, log: Logger): Promise<() => void> {
  const run = async (): Promise<void> => {
    try {
      const removed = await purgeExpired(pool, maxAgeMs)
      if (removed.sessions > 0 || removed.keys > 0) log.info(removed, 'expired unsaved sessions and idempotency keys purged')
    } catch (err) {
      log.warn({ err }, 'Purging expired unsaved sessions failed')
    }
  }
  await run()
  const timer = setInterval(() => { void run() }, Math.max(1000, Math.min(maxAgeMs / 4, 600_000)))
  timer.unref()
  return () => { clearInterval(timer) }
}
