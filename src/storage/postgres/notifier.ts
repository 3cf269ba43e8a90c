/**
 * Wakes this instance's readers when any instance commits entries. One dedicated connection
 * LISTENs on `ss_entries`; a notification carries only `[tenant, session, lastSeq]`, and a woken
 * reader re-reads the table, so a notification that is lost only delays an entry. Two things
 * cover lost ones: after the LISTEN connection is re-established (the database restarted) every
 * watcher is woken, and a periodic tail check compares each watched session's `entry_count` with
 * the last seq seen, which also covers a LISTEN connection that died silently.
 */
import type pg from 'pg'
import { silentLogger, type Logger } from '../../session/logger.js'
import { ListenConnection } from './listen-connection.js'
import { query } from './pool.js'
import { ENTRIES_CHANNEL } from './session-log.js'

export type SeqListener = (lastSeq: number) => void

export interface NotifierOptions {
  /** Milliseconds between tail checks (default 1000). */
  tailCheckMs?: number
  /** First delay before reconnecting the LISTEN connection, doubled up to 5 s (default 100). */
  reconnectMs?: number
  logger?: Logger
}

interface Watched {
  tenant: string
  session: string
  listeners: Set<SeqListener>
  /** The highest seq announced to the listeners so far. */
  seen: number
}

const keyOf = (tenant: string, session: string): string => `${tenant}\u0000${session}`

export class PgNotifier {
  readonly #pool: pg.Pool
  readonly #log: Logger
  readonly #tailCheckMs: number
  readonly #watched = new Map<string, Watched>()
  readonly #listen: ListenConnection
  #closed = false
  #timer: NodeJS.Timeout | undefined

  constructor (url: string, pool: pg.Pool, options: NotifierOptions = {}) {
    this.#pool = pool
    this.#log = options.logger ?? silentLogger
    this.#tailCheckMs = options.tailCheckMs ?? 1000
    this.#listen = new ListenConnection({
      url,
      channel: ENTRIES_CHANNEL,
      reconnectMs: options.reconnectMs ?? 100,
      logger: this.#log,
      onNotification: (payload) => { this.#onNotification(payload) },
      // Whatever was committed while not listening: every watcher re-reads.
      onReconnect: () => { void this.tailCheck() },
    })
  }

  /** Connections of LISTEN made so far (1 after start, +1 per reconnect). */
  get connections (): number { return this.#listen.connections }

  /** Connects and LISTENs (retrying in the background if the database is down), starts the tail check. */
  async start (): Promise<void> {
    this.#timer = setInterval(() => { void this.tailCheck() }, this.#tailCheckMs)
    this.#timer.unref()
    await this.#listen.connect()
  }

  /** Calls `listener` with the session's last seq whenever it may have grown. Returns the unwatch function. */
  watch (tenant: string, session: string, listener: SeqListener, seen = 0): () => void {
    const key = keyOf(tenant, session)
    let w = this.#watched.get(key)
    if (w === undefined) this.#watched.set(key, w = { tenant, session, listeners: new Set(), seen })
    w.listeners.add(listener)
    const watched = w
    return () => {
      watched.listeners.delete(listener)
      if (watched.listeners.size === 0 && this.#watched.get(key) === watched) this.#watched.delete(key)
    }
  }

  /** Compares every watched session's entry count with the seq last announced; announces growth. */
  async tailCheck (): Promise<void> {
    if (this.#watched.size === 0 || this.#closed) return
    const list = [...this.#watched.values()]
    try {
      const { rows } = await query<{ tenant: string, id: string, entry_count: string }>(this.#pool,
        'SELECT tenant, id, entry_count FROM ss_sessions WHERE (tenant, id) IN (SELECT unnest($1::text[]), unnest($2::text[]))',
        [list.map((w) => w.tenant), list.map((w) => w.session)])
      for (const r of rows) this.#announce(r.tenant, r.id, Number(r.entry_count))
    } catch (err) {
      this.#log.info({ err }, 'tail check failed; the next one retries')
    }
  }

  async close (): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#listen.close()
  }

  #announce (tenant: string, session: string, seq: number): void {
    const w = this.#watched.get(keyOf(tenant, session))
    if (w === undefined || seq <= w.seen) return
    w.seen = seq
    for (const listener of [...w.listeners]) listener(seq)
  }

  #onNotification (payload: string | undefined): void {
    try {
      const [tenant, session, seq] = JSON.parse(payload ?? '') as [string, string, number]
      this.#announce(tenant, session, seq)
    } catch {
      this.#log.warn({ payload }, 'Ignored a malformed entries notification')
    }
  }
}
