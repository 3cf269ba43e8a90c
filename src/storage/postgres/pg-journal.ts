/**
 * The journal of one session in PostgreSQL: appends go through the server's group commit
 * (pg-appends.ts), header changes, replacements and removal are transactions of their own.
 * Each write is applied only while the session row is still at the journal's version; otherwise
 * it changes nothing and says what changed since (read in one statement): lines that were
 * appended, or a change that needs the whole session read again.
 */
import type pg from 'pg'
import { headLineCount, textOf, type SessionPrefix } from '../session-head.js'
import type { AppendBatch, Journal, ListingItem, Newer, StoredLine, Version, WriteOutcome } from '../store.js'
import type { AppendGroups } from './pg-appends.js'
import { query, transaction } from './pool.js'
import { textArray } from './pg-text.js'

/** What a journal needs of its store. */
export interface PgJournalContext {
  pool: pg.Pool
  appends: AppendGroups
  /** This server's id, carried by its notifications. */
  origin: string
  /** The journal closed, or its session is gone. */
  forget(journal: PgJournal): void
}

/** A session row as a journal starts from it. */
export interface JournalStart {
  tenant: string
  id: string
  version: number
  saved: boolean
  /** Lines after the head. */
  lines: number
  torn: boolean
}

const OK: WriteOutcome = { ok: true }

/** Bytes a notification may hold (PostgreSQL refuses 8000 and more). */
const NOTIFY_BYTES = 7900

/**
 * Notifies the other servers of a change, in the transaction of `client`; a removal carries the
 * session's last listing item (`info`, as JSON) when it fits.
 */
export async function notifyChange (client: pg.PoolClient, tenant: string, id: string, version: number, kind: string, origin: string, info?: string | null): Promise<void> {
  const payload = `[${JSON.stringify(tenant)},${JSON.stringify(id)},${version},${JSON.stringify(kind)},${JSON.stringify(origin)}`
  const withInfo = info === undefined || info === null ? '' : `,${info}`
  const fits = Buffer.byteLength(payload + withInfo, 'utf8') < NOTIFY_BYTES
  await client.query('SELECT pg_notify($1, $2)', ['ss_changes', `${payload}${fits ? withInfo : ''}]`])
}

/** The columns every write sets from a session's listing item. */
export function listingColumns (info: ListingItem): unknown[] {
  return [JSON.stringify(info), info.modifiedMs, JSON.stringify(info.cwd), info.messageCount]
}

export class PgJournal implements Journal {
  readonly tenant: string
  readonly id: string
  readonly #ctx: PgJournalContext
  #version: number
  #saved: boolean
  #lines: number
  /** The last line lacks its `"\n"`: an append completes it first. */
  #torn: boolean
  readonly #prefix: SessionPrefix

  constructor (ctx: PgJournalContext, start: JournalStart, prefix: SessionPrefix) {
    this.#ctx = ctx
    this.tenant = start.tenant
    this.id = start.id
    this.#version = start.version
    this.#saved = start.saved
    this.#lines = start.lines
    this.#torn = start.torn
    this.#prefix = prefix
  }

  get version (): Version { return this.#version }
  get saved (): boolean { return this.#saved }

  /** The session's text was read: it starts with `start`. */
  loaded (start: string): void { this.#prefix.reset(start) }

  async append (batch: AppendBatch): Promise<WriteOutcome> {
    const lines = batch.lines.map((l) => l.line)
    const text = textOf(lines)
    const name = this.#prefix.name()
    this.#prefix.grow(text)
    const recent = this.#prefix.name()
    const status = await this.#ctx.appends.submit({
      tenant: this.tenant,
      id: this.id,
      expect: this.#version,
      save: batch.save,
      info: JSON.stringify(batch.info),
      cwd: JSON.stringify(batch.info.cwd),
      recent: recent === name ? null : JSON.stringify(recent),
      modified: batch.info.modifiedMs,
      messages: batch.info.messageCount,
      bytes: Buffer.byteLength(text, 'utf8') + (this.#torn ? 1 : 0),
      lines,
      answers: batch.answers,
    })
    if (status.status === 'ok') {
      this.#version = status.version
      this.#lines += lines.length
      this.#saved ||= batch.save
      this.#torn = false
      return OK
    }
    if (status.status === 'answered') return { ok: false, answered: status.answers }
    return { ok: false, stale: status.status === 'missing' ? { kind: 'removed' } : await this.#newer() }
  }

  async rewriteHeader (header: string, info: ListingItem): Promise<WriteOutcome> {
    return await this.#change(async (client) => {
      const head = header + '\n'
      const { rows } = await client.query<{ version: string }>(`UPDATE ss_sessions SET head = $3, version = nextval('ss_version'),
        reset_version = currval('ss_version'), info = $4, modified = $5, cwd = $6, messages = $7, recent = $8,
        size = size - octet_length(head) + octet_length($3) WHERE tenant = $1 AND id = $2 RETURNING version`,
      [this.tenant, this.id, head, ...listingColumns(info), JSON.stringify(this.#nameWithHead(head))])
      return Number(rows[0]?.version)
    })
  }

  async replace (lines: readonly StoredLine[], info: ListingItem): Promise<WriteOutcome> {
    const all = lines.map((l) => l.line)
    const h = headLineCount(all)
    const head = textOf(all.slice(0, h))
    const body = all.slice(h)
    return await this.#change(async (client) => {
      await client.query('DELETE FROM ss_lines WHERE tenant = $1 AND session = $2', [this.tenant, this.id])
      const text = textArray(3, body)
      await client.query(`INSERT INTO ss_lines (tenant, session, pos, line) SELECT $1, $2, l.o, l.line
        FROM unnest(${text.sql}) WITH ORDINALITY AS l (line, o)`, [this.tenant, this.id, text.value])
      this.#prefix.reset(textOf(all))
      const { rows } = await client.query<{ version: string }>(`UPDATE ss_sessions SET head = $3, lines = $4, torn = false,
        version = nextval('ss_version'), reset_version = currval('ss_version'), info = $5, modified = $6, cwd = $7, messages = $8,
        recent = $9, size = $10 WHERE tenant = $1 AND id = $2 RETURNING version`,
      [this.tenant, this.id, head, body.length, ...listingColumns(info), JSON.stringify(this.#prefix.name()), Buffer.byteLength(textOf(all), 'utf8')])
      this.#lines = body.length
      this.#torn = false
      return Number(rows[0]?.version)
    })
  }

  async refresh (): Promise<Newer | undefined> {
    const newer = await this.#newer()
    return newer.kind === 'appended' && newer.lines.length === 0 ? undefined : newer
  }

  async remove (): Promise<WriteOutcome> {
    return await this.#change(async (client) => {
      const { rows } = await client.query<{ info: string | null }>('DELETE FROM ss_sessions WHERE tenant = $1 AND id = $2 RETURNING info', [this.tenant, this.id])
      this.#ctx.forget(this)
      return { version: this.#version, info: rows[0]?.info }
    }, 'removed')
  }

  async close (): Promise<void> { this.#ctx.forget(this) }

  /** The display name once the head is `head`. */
  #nameWithHead (head: string): string {
    this.#prefix.setHead(head)
    return this.#prefix.name()
  }

  /**
   * Runs `write` in a transaction while the row is at this journal's version (locked), then
   * notifies; stale (and nothing written) otherwise.
   */
  async #change (write: (client: pg.PoolClient) => Promise<number | { version: number, info?: string | null }>, kind = 'replaced'): Promise<WriteOutcome> {
    const written = await transaction(this.#ctx.pool, async (client) => {
      const { rows } = await client.query<{ version: string }>('SELECT version FROM ss_sessions WHERE tenant = $1 AND id = $2 FOR UPDATE', [this.tenant, this.id])
      if (rows[0] === undefined) return 'removed' as const
      if (Number(rows[0].version) !== this.#version) return 'stale' as const
      const done = await write(client)
      const { version, info } = typeof done === 'number' ? { version: done, info: undefined } : done
      await notifyChange(client, this.tenant, this.id, version, kind, this.#ctx.origin, info)
      return version
    })
    if (written === 'removed') return { ok: false, stale: { kind: 'removed' } }
    if (written === 'stale') return { ok: false, stale: await this.#newer() }
    this.#version = written
    return OK
  }

  /** What changed since this journal's version, read in one statement; the journal moves on to it. */
  async #newer (): Promise<Newer> {
    const { rows } = await query<{ version: string, reset_version: string, lines: number, saved: boolean, tail: string[] | null }>(this.#ctx.pool, `
      SELECT s.version, s.reset_version, s.lines, s.saved, CASE WHEN s.reset_version <= $3 THEN
        (SELECT coalesce(array_agg(l.line ORDER BY l.pos), '{}') FROM ss_lines l WHERE l.tenant = s.tenant AND l.session = s.id AND l.pos > $4)
      END AS tail FROM ss_sessions s WHERE s.tenant = $1 AND s.id = $2`, [this.tenant, this.id, this.#version, this.#lines])
    const row = rows[0]
    if (row === undefined) return { kind: 'removed' }
    if (row.tail === null) return { kind: 'replaced' }
    this.#version = Number(row.version)
    this.#lines = row.lines
    this.#saved = row.saved
    this.#torn = false // another server's append completed a torn line
    this.#prefix.grow(textOf(row.tail))
    return { kind: 'appended', lines: row.tail }
  }
}
