/**
 * Sessions and their entries in PostgreSQL, the truth every instance shares. Appends to one
 * session serialize in the database: each transaction locks the session row
 * (`SELECT … FOR UPDATE`) and numbers its entries after the row's `entry_count`, so writers on
 * any number of instances get contiguous `seq`s. On one instance, appends to a session that
 * arrive while its transaction runs wait and then share the next one (group commit); an append
 * resolves only once its transaction committed. Every change bumps the session's `revision`,
 * which an instance compares with what it cached before it answers (If-Match across instances).
 * A commit that adds entries sends `NOTIFY ss_entries` with only `[tenant, session, lastSeq]`;
 * readers re-read the table (see notifier.ts).
 */
import type pg from 'pg'
import { InvalidArgument, PreconditionFailed, SessionExists, SessionNotFound } from '../../errors.js'
import { commitBatch } from '../../metrics/instruments.js'
import { query, transaction } from './pool.js'
import { sessionText, TEXT_PAGE_ROWS } from './session-text.js'

export const ENTRIES_CHANNEL = 'ss_entries'

export interface LogEntry {
  /** The entry's id (unique in its session). */
  id: string
  /** Its JSONL line exactly as a session file holds it, without the trailing newline. */
  line: string
}

export interface StoredEntry extends LogEntry {
  seq: number
  /** When its transaction committed (the clock of the database). */
  committedAt: Date
}

export interface SessionState {
  revision: number
  entryCount: number
  leafId: string | null
  unsaved: boolean
  cwd: string
  header: string
  title: string | null
  modifiedAt: Date
}

export interface AppendOptions {
  /** Refuse (PreconditionFailed) unless the session is still at this revision. */
  expectRevision?: number
  /** The leaf after this append (default: unchanged). */
  leafId?: string | null
  /** Mark the session saved (it becomes visible in listings). */
  save?: boolean
}

export interface Appended {
  firstSeq: number
  lastSeq: number
  revision: number
}

interface PendingAppend {
  entries: LogEntry[]
  options: AppendOptions
  resolve: (value: Appended) => void
  reject: (err: unknown) => void
}

export interface CreateInput {
  tenant: string
  id: string
  cwd: string
  /** The header line exactly as a session file starts, without the newline. */
  header: string
  title?: string | null
  /** Not yet saved (no assistant message): stored, but hidden from listings. Default true. */
  unsaved?: boolean
}

const keyOf = (tenant: string, session: string): string => `${tenant}\u0000${session}`

function stateOf (row: Record<string, unknown>): SessionState {
  return {
    revision: Number(row.revision),
    entryCount: Number(row.entry_count),
    leafId: row.leaf_id as string | null,
    unsaved: row.unsaved as boolean,
    cwd: row.cwd as string,
    header: row.header as string,
    title: row.title as string | null,
    modifiedAt: row.modified_at as Date,
  }
}

export class PgSessionLog {
  readonly #pool: pg.Pool
  /** Appends waiting for their session's next transaction, by session. */
  readonly #pending = new Map<string, PendingAppend[]>()
  /** Sessions whose append transaction is running now. */
  readonly #running = new Set<string>()

  constructor (pool: pg.Pool) {
    this.#pool = pool
  }

  /** Stores a new session (header only). @throws SessionExists when the id is taken in the tenant. */
  async create (input: CreateInput): Promise<SessionState> {
    try {
      const { rows } = await query(this.#pool,
        `INSERT INTO ss_sessions (tenant, id, cwd, header, title, unsaved) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING *`, [input.tenant, input.id, input.cwd, input.header, input.title ?? null, input.unsaved ?? true])
      return stateOf(rows[0] as Record<string, unknown>)
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new SessionExists(input.id)
      throw err
    }
  }

  /** The session's state now, or undefined when it does not exist. */
  async state (tenant: string, session: string): Promise<SessionState | undefined> {
    const { rows } = await query(this.#pool, 'SELECT * FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, session])
    return rows[0] === undefined ? undefined : stateOf(rows[0] as Record<string, unknown>)
  }

  /**
   * Appends `entries` after every append of this instance queued before it; resolves once
   * committed, with their seqs. Appends that arrive while the session's transaction runs share
   * the next one.
   * @throws SessionNotFound, PreconditionFailed (stale `expectRevision`), InvalidArgument (an id
   * the session already has); such a refusal fails only its own append, never the others sharing its transaction.
   */
  async append (tenant: string, session: string, entries: LogEntry[], options: AppendOptions = {}): Promise<Appended> {
    const ids = new Set(entries.map((e) => e.id))
    if (ids.size !== entries.length) throw new InvalidArgument('An append repeats an entry id')
    const key = keyOf(tenant, session)
    return await new Promise<Appended>((resolve, reject) => {
      let queue = this.#pending.get(key)
      if (queue === undefined) this.#pending.set(key, queue = [])
      queue.push({ entries, options, resolve, reject })
      if (!this.#running.has(key)) void this.#drain(tenant, session, key)
    })
  }

  async #drain (tenant: string, session: string, key: string): Promise<void> {
    this.#running.add(key)
    try {
      for (;;) {
        const batch = this.#pending.get(key)
        if (batch === undefined || batch.length === 0) break
        this.#pending.delete(key)
        await this.#commit(tenant, session, batch)
      }
    } finally {
      this.#running.delete(key)
      this.#pending.delete(key)
    }
  }

  /**
   * One statement, so one transaction and one round trip, for `batch` (`ss_append`, schema.ts):
   * refused appends are left out, the rest commit together.
   */
  async #commit (tenant: string, session: string, batch: PendingAppend[]): Promise<void> {
    const entries = batch.flatMap((p) => p.entries)
    let rows: Array<{ status: string, first_seq: string | null, last_seq: string | null, new_revision: string | null }>
    try {
      rows = (await query<typeof rows[number]>(this.#pool, 'SELECT * FROM ss_append($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
        tenant, session,
        batch.map((p) => p.entries.length),
        batch.map((p) => p.options.expectRevision ?? null),
        batch.map((p) => p.options.leafId !== undefined),
        batch.map((p) => p.options.leafId ?? null),
        batch.map((p) => p.options.save === true),
        entries.map((e) => e.id),
        entries.map((e) => e.line),
      ])).rows
    } catch (err) {
      for (const p of batch) p.reject(err)
      return
    }
    const committed = rows.reduce((n, r, i) => r.status === 'ok' ? n + (batch[i] as PendingAppend).entries.length : n, 0)
    if (committed > 0) commitBatch.observe({ storage: 'postgres' }, committed)
    batch.forEach((p, i) => {
      const r = rows[i]
      if (r?.status === 'ok') p.resolve({ firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq), revision: Number(r.new_revision) })
      else if (r?.status === 'stale') p.reject(new PreconditionFailed(`"r${p.options.expectRevision ?? ''}"`))
      else if (r?.status === 'duplicate') p.reject(new InvalidArgument(`An entry id of this append already exists in session ${session}`))
      else p.reject(new SessionNotFound(session))
    })
  }

  /** Entries with `seq > after`, in order, at most `limit`. */
  async read (tenant: string, session: string, after: number, limit: number): Promise<StoredEntry[]> {
    const { rows } = await query<{ seq: string, id: string, line: string, committed_at: Date }>(this.#pool,
      'SELECT seq, id, line, committed_at FROM ss_entries WHERE tenant = $1 AND session = $2 AND seq > $3 ORDER BY seq LIMIT $4',
      [tenant, session, after, limit])
    return rows.map((r) => ({ seq: Number(r.seq), id: r.id, line: r.line, committedAt: r.committed_at }))
  }

  /**
   * The session as its JSONL file, read in pages in one repeatable-read snapshot (session-text.ts).
   * @throws SessionNotFound
   */
  async exportJsonl (tenant: string, session: string, pageSize = TEXT_PAGE_ROWS): Promise<string> {
    return await sessionText(this.#pool, tenant, session, pageSize)
  }

  /** Moves the leaf; returns the new revision. @throws SessionNotFound, PreconditionFailed */
  async setLeaf (tenant: string, session: string, leafId: string | null, expectRevision?: number): Promise<number> {
    return await this.#update(tenant, session, expectRevision, 'leaf_id = $3', [leafId])
  }

  /** Changes the header line (title, cwd after a move); returns the new revision. */
  async setHeader (tenant: string, session: string, header: string, cwd: string, title: string | null, expectRevision?: number): Promise<number> {
    return await this.#update(tenant, session, expectRevision, 'header = $3, cwd = $4, title = $5', [header, cwd, title])
  }

  /** Deletes the session with its entries and keys. @throws SessionNotFound, PreconditionFailed */
  async delete (tenant: string, session: string, expectRevision?: number): Promise<void> {
    await transaction(this.#pool, async (client) => {
      const revision = await this.#lock(client, tenant, session, expectRevision)
      void revision
      await client.query('DELETE FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, session])
    })
  }

  /** Deletes unsaved sessions untouched for `olderThanMs`; returns how many. */
  async purgeUnsaved (olderThanMs: number): Promise<number> {
    const { rowCount } = await query(this.#pool,
      'DELETE FROM ss_sessions WHERE unsaved AND modified_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)', [olderThanMs])
    return rowCount ?? 0
  }

  async #lock (client: pg.PoolClient, tenant: string, session: string, expectRevision: number | undefined): Promise<number> {
    const { rows } = await client.query<{ revision: string }>('SELECT revision FROM ss_sessions WHERE tenant = $1 AND id = $2 FOR UPDATE', [tenant, session])
    if (rows[0] === undefined) throw new SessionNotFound(session)
    const revision = Number(rows[0].revision)
    if (expectRevision !== undefined && expectRevision !== revision) throw new PreconditionFailed(`"r${expectRevision}"`)
    return revision
  }

  async #update (tenant: string, session: string, expectRevision: number | undefined, set: string, values: unknown[]): Promise<number> {
    return await transaction(this.#pool, async (client) => {
      const revision = await this.#lock(client, tenant, session, expectRevision) + 1
      await client.query(`UPDATE ss_sessions SET ${set}, revision = ${revision}, modified_at = clock_timestamp() WHERE tenant = $1 AND id = $2`,
        [tenant, session, ...values])
      return revision
    })
  }
}
