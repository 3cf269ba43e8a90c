/**
 * What other servers change, heard on `ss_changes` (one LISTEN connection per server, kept up by
 * itself). A notification carries `[tenant, id, version, kind, origin]`; this server's own are
 * left out. Notifications sent while the connection was down are lost: on reconnecting, a change
 * is reported for every session open here that moved, and for every session changed since a
 * little before the connection was lost (removals meanwhile are not seen, except of open ones).
 */
import type pg from 'pg'
import type { Logger } from '../../session/logger.js'
import type { ListingItem, StoreChange } from '../store.js'
import { ListenConnection } from './listen-connection.js'
import type { PgJournal } from './pg-journal.js'
import { query } from './pool.js'

const KINDS: ReadonlySet<string> = new Set(['created', 'appended', 'replaced', 'removed'])

/** How far the servers' clocks may be apart: changes this long before a loss are reported again. */
const CLOCK_MARGIN_MS = 10_000

export interface FeedOptions {
  url: string
  /** This server's id: its own notifications are not reported. */
  origin: string
  logger: Logger
  pool: pg.Pool
  /** Longest wait for the database (the LISTEN connection's heartbeat). */
  timeoutMs: number
  /** The journals open on this server (checked after a reconnect). */
  open: () => ReadonlySet<PgJournal>
}

export class ChangeFeed {
  readonly #options: FeedOptions
  readonly #listeners = new Set<(change: StoreChange) => void>()
  readonly #connection: ListenConnection

  constructor (options: FeedOptions) {
    this.#options = options
    this.#connection = new ListenConnection({
      url: options.url,
      channel: 'ss_changes',
      reconnectMs: 100,
      timeoutMs: options.timeoutMs,
      logger: options.logger,
      onNotification: (payload) => { this.#heard(payload) },
      onReconnect: (lostAt) => { void this.#resync(lostAt) },
    })
  }

  async start (): Promise<void> { await this.#connection.connect() }
  async close (): Promise<void> { await this.#connection.close() }

  add (listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  #heard (payload: string | undefined): void {
    let change: StoreChange
    try {
      const [tenant, id, version, kind, origin, item] = JSON.parse(payload ?? '') as [string, string, number, string, string, ListingItem?]
      if (origin === this.#options.origin || !KINDS.has(kind)) return
      change = { tenant, id, version: Number(version), kind: kind as StoreChange['kind'] }
      if (item !== undefined) change.item = item
    } catch {
      return
    }
    this.#emit(change)
  }

  #emit (change: StoreChange): void {
    for (const listener of [...this.#listeners]) listener(change)
  }

  /** Reports the changes nothing was heard of since `lostAt` (less a margin for the servers' clocks). */
  async #resync (lostAt: number): Promise<void> {
    try {
      const { rows } = await query<{ tenant: string, id: string, version: string }>(this.#options.pool,
        'SELECT tenant, id, version FROM ss_sessions WHERE modified >= $1', [lostAt - CLOCK_MARGIN_MS])
      for (const r of rows) this.#emit({ tenant: r.tenant, id: r.id, version: Number(r.version), kind: 'appended', resync: true })
    } catch (err) {
      this.#options.logger.warn({ err }, 'Reading what changed while the change feed was cut failed')
    }
    await this.#checkOpen()
  }

  /** Reports a change for every open session that moved while nothing was heard. */
  async #checkOpen (): Promise<void> {
    const journals = [...this.#options.open()]
    if (journals.length === 0) return
    try {
      const { rows } = await query<{ tenant: string, id: string, version: string, reset_version: string }>(this.#options.pool,
        'SELECT s.tenant, s.id, s.version, s.reset_version FROM ss_sessions s JOIN unnest($1::text[], $2::text[]) AS u (t, i) ON s.tenant = u.t AND s.id = u.i',
        [journals.map((j) => j.tenant), journals.map((j) => j.id)])
      const stored = new Map(rows.map((r) => [`${r.tenant}\n${r.id}`, r]))
      for (const journal of journals) {
        const row = stored.get(`${journal.tenant}\n${journal.id}`)
        if (row === undefined) this.#emit({ tenant: journal.tenant, id: journal.id, version: journal.version + 1, kind: 'removed' })
        else if (Number(row.version) > journal.version) {
          const kind = Number(row.reset_version) > journal.version ? 'replaced' : 'appended'
          this.#emit({ tenant: journal.tenant, id: journal.id, version: Number(row.version), kind })
        }
      }
    } catch (err) {
      this.#options.logger.warn({ err }, 'Checking the open sessions after the change feed reconnected failed')
    }
  }
}
