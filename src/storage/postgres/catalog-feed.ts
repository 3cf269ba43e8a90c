/**
 * Keeps a server's catalog (pg-session-storage.ts) current with what other servers on the same
 * database store. Every change of a stored file notifies `ss_files` with only
 * `[schema, path, version]` (schema.ts, migration 4); a path of this server's schema whose notified version is newer than the catalog's is
 * re-read from its row. A notification that is lost only delays a change: after the LISTEN
 * connection comes back, and every `resyncMs` (which also covers a connection that died
 * silently), the versions of every stored file are compared with the catalog's and the paths
 * that differ are re-read.
 */
import type pg from 'pg'
import { silentLogger, type Logger } from '../../session/logger.js'
import { ListenConnection } from './listen-connection.js'
import { query } from './pool.js'
import { storedVersions } from './stored-files.js'

export const FILES_CHANNEL = 'ss_files'

export interface CatalogFeedOptions {
  url: string
  pool: pg.Pool
  /** The catalog's version of the file at `rel`; undefined when it has none there. */
  known: (rel: string) => number | undefined
  /** Every path the catalog has a stored file at. */
  knownPaths: () => Iterable<string>
  /** Re-reads the file at `rel` into the catalog; `version`: the one a notification announced. */
  refresh: (rel: string, version?: number) => Promise<void>
  /** Milliseconds between full comparisons (default 5000). */
  resyncMs?: number
  reconnectMs?: number
  logger?: Logger
}

export class CatalogFeed {
  readonly #options: CatalogFeedOptions
  readonly #log: Logger
  readonly #listen: ListenConnection
  #timer: NodeJS.Timeout | undefined
  #closed = false
  /** Paths being re-read now, each with the versions notified meanwhile (undefined: a comparison asked). */
  readonly #refreshing = new Map<string, { wanted: Array<number | null | undefined>, done: Promise<void> }>()
  /** The schema this server's tables are in (notifications reach every schema's servers). */
  #schema = ''

  constructor (options: CatalogFeedOptions) {
    this.#options = options
    this.#log = options.logger ?? silentLogger
    this.#listen = new ListenConnection({
      url: options.url,
      channel: FILES_CHANNEL,
      reconnectMs: options.reconnectMs ?? 100,
      logger: this.#log,
      onNotification: (payload) => { this.#onNotification(payload) },
      onReconnect: () => { void this.resync() },
    })
  }

  /** LISTENs (waiting while the database is down) and starts the periodic comparison. */
  async start (): Promise<void> {
    this.#schema = (await query<{ schema: string }>(this.#options.pool, 'SELECT current_schema() AS schema')).rows[0]?.schema ?? ''
    this.#timer = setInterval(() => { void this.resync() }, this.#options.resyncMs ?? 5000)
    this.#timer.unref()
    await this.#listen.connect()
  }

  /** Re-reads every path whose stored version differs from the catalog's (failures are logged). */
  async resync (): Promise<void> {
    if (this.#closed) return
    const { known, knownPaths, pool } = this.#options
    try {
      const stored = await storedVersions(pool)
      const stale = new Set<string>()
      for (const [rel, version] of stored) if (known(rel) !== version) stale.add(rel)
      for (const rel of knownPaths()) if (!stored.has(rel)) stale.add(rel)
      await Promise.all([...stale].map(async (rel) => { await this.#refresh(rel) }))
    } catch (err) {
      this.#log.info({ err }, 'catalog comparison failed; the next one retries')
    }
  }

  async close (): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#listen.close()
  }

  #onNotification (payload: string | undefined): void {
    let schema: unknown, rel: unknown, version: unknown
    try {
      [schema, rel, version] = JSON.parse(payload ?? '') as unknown[]
    } catch {}
    if (typeof rel !== 'string' || (version !== null && typeof version !== 'number')) {
      this.#log.warn({ payload }, 'Ignored a malformed files notification')
      return
    }
    if (schema !== this.#schema || this.#knows(rel, version)) return
    void this.#refresh(rel, version)
  }

  /** The catalog already has `version` at `rel` (null: nothing there): this server's own change, or one re-read since. */
  #knows (rel: string, version: number | null): boolean {
    const known = this.#options.known(rel)
    return version === null ? known === undefined : known !== undefined && known >= version
  }

  /**
   * Re-reads `rel`. A request while it is being re-read resolves after that read, and after one
   * more only if the notified version (none: a comparison, always) is still not in the catalog
   * then: a commit notifies each change of a row (an append: two), and its re-reads are one.
   */
  async #refresh (rel: string, version?: number | null): Promise<void> {
    const running = this.#refreshing.get(rel)
    if (running !== undefined) {
      running.wanted.push(version)
      await running.done
      return
    }
    const wanted: Array<number | null | undefined> = []
    const done = (async () => {
      try {
        // The first read may be skipped by the store when it already has the notified version.
        let notified = version ?? undefined
        for (let read = true; read; read = wanted.splice(0).some((v) => v === undefined || !this.#knows(rel, v))) {
          try {
            await this.#options.refresh(rel, notified)
            notified = undefined
          } catch (err) {
            this.#log.info({ err, path: rel }, 'catalog re-read failed; the next comparison retries')
          }
        }
      } finally {
        this.#refreshing.delete(rel)
      }
    })()
    this.#refreshing.set(rel, { wanted, done })
    await done
  }
}
